"""A corpus of everyday numerical Python, written the way textbook code is written:
number theory, dynamic programming over arrays, input-validated physics and
finance formulas, searches and sorts.

Each function is plain Python (no JAX). ``CASES`` lists, for each, a few argument
tuples of Python values and what ``autograph.to_graph`` gives when the same
arguments are passed as arrays: ``SAME`` (Python's value, or Python's exception
with its message, e.g. an input check that fails), or ``Refused(reason)``: a
``ConversionError`` whose message holds ``reason``, where staging cannot keep
Python's meaning. ``tests/corpus/test_numerical.py`` holds every function to its
record; ``benchmarks/numerical_corpus.py`` counts how many compile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# -- number theory ------------------------------------------------------------------


def is_prime(n):
    if n < 2:
        return False
    if n < 4:
        return True
    if n % 2 == 0 or n % 3 == 0:
        return False
    for i in range(5, int(math.sqrt(n) + 1), 6):
        if n % i == 0 or n % (i + 2) == 0:
            return False
    return True


def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def lcm(a, b):
    if a <= 0 or b <= 0:
        raise ValueError("lcm needs positive integers")
    return a // gcd(a, b) * b


def is_perfect(n):
    if n < 1:
        raise ValueError("n must be a positive integer")
    return sum(i for i in range(1, n) if n % i == 0) == n


def digit_sum(n):
    if n < 0:
        raise ValueError("digit_sum() only accepts non-negative values")
    total = 0
    while n > 0:
        total += n % 10
        n //= 10
    return total


def collatz_steps(n):
    if n <= 0:
        raise ValueError(f"collatz needs a positive integer, got {n}")
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def fibonacci(n):
    if n < 0:
        raise ValueError("negative index")
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def factorial(n):
    if n < 0:
        raise ValueError("factorial() not defined for negative values")
    result = 1
    for k in range(2, n + 1):
        result *= k
    return result


def triangular(n):
    return sum(range(n + 1))


def power_mod(base, exponent, modulus):
    if modulus <= 0:
        raise ValueError("modulus must be positive")
    result = 1
    base = base % modulus
    while exponent > 0:
        if exponent % 2 == 1:
            result = result * base % modulus
        base = base * base % modulus
        exponent //= 2
    return result


def integer_sqrt(n):
    if n < 0:
        raise ValueError("square root of a negative number")
    low, high = 0, n
    while low <= high:
        mid = (low + high) // 2
        if mid * mid <= n:
            low = mid + 1
        else:
            high = mid - 1
    return high


def binomial(n, k):
    if k < 0 or k > n:
        return 0
    result = 1
    for i in range(min(k, n - k)):
        result = result * (n - i) // (i + 1)
    return result


def count_primes_below(n):
    count = 0
    for m in range(2, n):
        is_p = True
        for d in range(2, m):
            if d * d > m:
                break
            if m % d == 0:
                is_p = False
                break
        if is_p:
            count += 1
    return count


def is_armstrong(n):
    digits = 0
    m = n
    while m > 0:
        digits += 1
        m //= 10
    total = 0
    m = n
    while m > 0:
        total += (m % 10) ** digits
        m //= 10
    return total == n


def small_factorials(n):
    table = [1, 1, 2, 6, 24, 120, 720, 5040]
    return table[n]


def sum_of_squares_is_square(a, b):
    c = math.isqrt(a * a + b * b)
    return c * c == a * a + b * b


def newton_sqrt(x, tolerance=1e-6):
    if x < 0:
        raise ValueError("cannot take the square root of a negative number")
    guess = x / 2 + 1
    for _ in range(100):
        better = (guess + x / guess) / 2
        if abs(better - guess) < tolerance:
            return better
        guess = better
    return guess


def harmonic_until(eps):
    total = 0.0
    for n in range(1, 1_000_000):
        if 1.0 / n < eps:
            return n
        total += 1.0 / n
    return -1


# -- dynamic programming over arrays ------------------------------------------------


def max_subarray(xs):
    best = xs[0]
    current = xs[0]
    for x in xs[1:]:
        current = max(x, current + x)
        best = max(best, current)
    return best


def climbing_stairs(n):
    if n < 1:
        raise ValueError("n must be at least 1")
    a, b = 1, 1
    for _ in range(n - 1):
        a, b = b, a + b
    return b


def prefix_sums_total(xs):
    total = 0
    running = 0
    for x in xs:
        running += x
        total += running
    return total


def longest_increasing_run(xs):
    best = 1
    run = 1
    for i in range(1, len(xs)):
        if xs[i] > xs[i - 1]:
            run += 1
            best = max(best, run)
        else:
            run = 1
    return best


def house_robber(values):
    take, skip = 0, 0
    for v in values:
        take, skip = skip + v, max(take, skip)
    return max(take, skip)


def min_cost_path(costs):
    n = len(costs)
    best = [0.0] * n
    best[0] = costs[0]
    if n > 1:
        best[1] = costs[1]
    for i in range(2, n):
        best[i] = costs[i] + min(best[i - 1], best[i - 2])
    return min(best[n - 1], best[n - 2]) if n > 1 else best[0]


def ways_to_make(target):
    coins = (1, 2, 5)
    ways = [1] + [0] * 20
    for coin in coins:
        for amount in range(coin, 21):
            ways[amount] += ways[amount - coin]
    return ways[target]


def trapped_water(heights):
    n = len(heights)
    total = 0
    for i in range(n):
        left = max(heights[: i + 1])
        right = max(heights[i:])
        total += min(left, right) - heights[i]
    return total


# -- input-validated physics and finance formulas ------------------------------------


def kinetic_energy(mass, velocity):
    if mass < 0:
        raise ValueError("The mass of a body cannot be negative")
    return 0.5 * mass * abs(velocity) * abs(velocity)


def ohms_current(voltage, resistance):
    if resistance <= 0:
        raise ValueError("Resistance must be positive")
    return voltage / resistance


def escape_velocity(mass, radius):
    if radius <= 0:
        raise ValueError("radius must be positive")
    if mass < 0:
        raise ValueError("mass cannot be negative")
    g = 6.674e-11
    return math.sqrt(2 * g * mass / radius)


def projectile_range(speed, angle_degrees):
    if speed < 0:
        raise ValueError("speed must be non-negative")
    if not 0 <= angle_degrees <= 90:
        raise ValueError("angle must be between 0 and 90 degrees")
    return speed ** 2 * math.sin(2 * math.radians(angle_degrees)) / 9.80665


def free_fall_time(height):
    if height < 0:
        raise ValueError(f"height must be non-negative, got {height}")
    return math.sqrt(2 * height / 9.80665)


def compound_interest(principal, rate, years):
    if principal <= 0:
        raise ValueError("principal must be > 0")
    if rate < 0:
        raise ValueError("rate must be >= 0")
    return principal * (1 + rate) ** years - principal


def ideal_gas_pressure(moles, kelvin, volume):
    if moles < 0 or kelvin < 0 or volume < 0:
        raise ValueError("Invalid inputs. Enter positive value.")
    return moles * kelvin * 8.314462 / volume


def decibels(intensity, reference=1e-12):
    if intensity <= 0:
        raise ValueError("intensity must be positive")
    return 10 * math.log10(intensity / reference)


def body_mass_category(weight, height):
    if height <= 0:
        raise ValueError("height must be positive")
    bmi = weight / height ** 2
    if bmi < 18.5:
        return 0
    elif bmi < 25:
        return 1
    elif bmi < 30:
        return 2
    return 3


def pendulum_period(length, gravity=9.80665):
    if length <= 0:
        raise ValueError("length must be positive")
    return 2 * math.pi * math.sqrt(length / gravity)


def hypotenuse_check(a, b):
    if a <= 0 or b <= 0:
        raise ValueError("sides must be positive")
    return math.hypot(a, b)


def centripetal_force(mass, velocity, radius):
    if mass < 0:
        raise ValueError("The mass of the body cannot be negative")
    if radius <= 0:
        raise ValueError("The radius is always a positive non zero integer")
    return mass * velocity ** 2 / radius


def resistors_in_parallel(r1, r2, r3):
    for r in (r1, r2, r3):
        if r <= 0:
            raise ValueError("every resistor must be positive")
    return 1 / (1 / r1 + 1 / r2 + 1 / r3)


def log_ratio(a, b):
    if a <= 0 or b <= 0:
        raise ValueError("logarithm of a non-positive number")
    return math.log2(a) - math.log2(b)


# -- searches and sorts --------------------------------------------------------------


def binary_search(xs, target):
    low, high = 0, len(xs) - 1
    while low <= high:
        mid = (low + high) // 2
        if xs[mid] == target:
            return mid
        if xs[mid] < target:
            low = mid + 1
        else:
            high = mid - 1
    return -1


def linear_search(xs, target):
    for i, x in enumerate(xs):
        if x == target:
            return i
    return -1


def bubble_sort(xs):
    xs = list(xs)
    n = len(xs)
    for i in range(n):
        for j in range(n - 1 - i):
            if xs[j] > xs[j + 1]:
                xs[j], xs[j + 1] = xs[j + 1], xs[j]
    return xs


def selection_sort_min(xs):
    xs = list(xs)
    n = len(xs)
    for i in range(n):
        smallest = i
        for j in range(i + 1, n):
            if xs[j] < xs[smallest]:
                smallest = j
        xs[i], xs[smallest] = xs[smallest], xs[i]
    return xs[0]


def count_inversions(xs):
    count = 0
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            if xs[i] > xs[j]:
                count += 1
    return count


def argmax(xs):
    best = 0
    for i in range(1, len(xs)):
        if xs[i] > xs[best]:
            best = i
    return best


def is_sorted(xs):
    return all(xs[i] <= xs[i + 1] for i in range(len(xs) - 1))


def has_negative(xs):
    return any(x < 0 for x in xs)


def median_of_three(a, b, c):
    return sorted([a, b, c])[1]


def is_small_or_unit(x):
    return x in (0, 1)


def zero_count(a, b, c):
    return (a, b, c).count(0)


def second_largest(xs):
    ordered = sorted(xs)
    return ordered[-2]


def median(values):
    values = list(values)
    values.sort()
    middle = len(values) // 2
    if len(values) % 2 == 1:
        return values[middle]
    return (values[middle - 1] + values[middle]) / 2


def smallest_magnitude(xs):
    return sorted(xs, key=abs)[0]


def clamp(x, low, high):
    if low > high:
        raise ValueError("low must not exceed high")
    return max(low, min(x, high))


# -- mixed results and strings -------------------------------------------------------


def safe_ratio(a, b):
    if b == 0:
        return 0
    return a / b


def scaled_or_halved(n, a):
    if n > 0:
        return n * a
    return n / 2


def to_binary(n):
    if n < 0:
        raise ValueError("negative numbers are not supported")
    digits = ""
    while n > 0:
        digits = str(n % 2) + digits
        n //= 2
    return digits or "0"


def modular_power_builtin(base, exponent, modulus):
    return pow(base, exponent, modulus)


# -- the record ----------------------------------------------------------------------


SAME = "same"


@dataclass(frozen=True)
class Refused:
    """``to_graph`` raises a ConversionError whose message holds ``reason``."""

    reason: str



def cube_root(c, tol=1e-6):
    x = c if c > 1 else 1.0
    i = 0
    while abs(x * x * x - c) > tol and i < 50:
        x = x - (x * x * x - c) / (3 * x * x)
        i += 1
    return x, i


def unit_or_small(xs):
    out = []
    for x in xs:
        if abs(x) > 1:
            out.append(x / abs(x))
        else:
            out.append(x)
    return sum(out), len(out)


def sign_changes(xs):
    changes = 0
    previous = xs[0]
    for x in xs[1:]:
        if (x > 0) != (previous > 0):
            changes += 1
        previous = x
    return changes


CASES = [
    (is_prime, [(1,), (2,), (25,), (29,), (97,), (7919,)], SAME),
    (gcd, [(12, 18), (17, 5), (0, 7)], SAME),
    (lcm, [(4, 6), (21, 6), (0, 3)], SAME),
    (is_perfect, [(6,), (28,), (12,), (0,)], SAME),
    (digit_sum, [(0,), (12345,), (-5,)], SAME),
    (collatz_steps, [(1,), (27,), (0,)], SAME),
    (fibonacci, [(0,), (10,), (-1,)], SAME),
    (factorial, [(0,), (5,), (10,), (-2,)], SAME),
    (triangular, [(0,), (10,), (100,)], SAME),
    (power_mod, [(2, 10, 1000), (3, 7, 13), (5, 3, 0)], SAME),
    (integer_sqrt, [(0,), (15,), (16,), (1000,), (-4,)], SAME),
    (binomial, [(5, 2), (10, 3), (4, 7)], SAME),
    (count_primes_below, [(10,), (30,)], SAME),
    (is_armstrong, [(153,), (154,), (9474,)], SAME),
    (small_factorials, [(0,), (5,), (7,)], SAME),
    (sum_of_squares_is_square, [(3, 4), (2, 3), (5, 12)], SAME),
    (newton_sqrt, [(2.0,), (9.0,), (-1.0,)], SAME),
    (harmonic_until, [(0.1,), (0.01,)], SAME),
    (max_subarray, [([1, -3, 4, -1, 2, 1, -5, 4],), ([-2, -1, -3],)], SAME),
    (climbing_stairs, [(1,), (5,), (10,), (0,)], SAME),
    (prefix_sums_total, [([1, 2, 3, 4],), ([5, -2, 7],)], SAME),
    (longest_increasing_run, [([1, 2, 3, 1, 2],), ([5, 4, 3],)], SAME),
    (house_robber, [([2, 7, 9, 3, 1],), ([1, 2, 3, 1],)], SAME),
    (min_cost_path, [([10.0, 15.0, 20.0],), ([1.0, 100.0, 1.0, 1.0, 1.0, 100.0],)], SAME),
    (ways_to_make, [(0,), (7,), (20,)], SAME),
    (trapped_water, [([0, 1, 0, 2, 1, 0, 1, 3, 2, 1, 2, 1],), ([3, 0, 2],)], SAME),
    (kinetic_energy, [(10.0, 10.0), (2.0, -3.0), (-1.0, 2.0)], SAME),
    (ohms_current, [(10.0, 5.0), (1.0, 0.0)], SAME),
    (escape_velocity, [(5.972e24, 6.371e6), (1.0, -1.0), (-1.0, 1.0)], SAME),
    (projectile_range, [(10.0, 45.0), (20.0, 30.0), (10.0, 120.0), (-1.0, 10.0)], SAME),
    (free_fall_time, [(10.0,), (0.0,), (-2.5,)], SAME),
    (compound_interest, [(1000.0, 0.05, 10), (0.0, 0.05, 1), (100.0, -0.1, 2)], SAME),
    (ideal_gas_pressure, [(2.0, 300.0, 0.5), (-1.0, 300.0, 1.0)], SAME),
    (decibels, [(1e-6,), (1.0,), (0.0,)], SAME),
    (body_mass_category, [(50.0, 1.8), (70.0, 1.75), (90.0, 1.8), (120.0, 1.7),
                          (70.0, 0.0)], SAME),
    (pendulum_period, [(1.0,), (2.5,), (0.0,)], SAME),
    (hypotenuse_check, [(3.0, 4.0), (5.0, 12.0), (0.0, 1.0)], SAME),
    (centripetal_force, [(15.5, -30.0, 10.0), (1.0, 2.0, 0.0), (-1.0, 2.0, 3.0)], SAME),
    (resistors_in_parallel, [(1.0, 2.0, 3.0), (1.0, -2.0, 3.0)], SAME),
    (log_ratio, [(8.0, 2.0), (1.0, 0.0)], SAME),
    (binary_search, [([1, 3, 5, 7, 9, 11], 7), ([1, 3, 5, 7, 9, 11], 4)], SAME),
    (linear_search, [([4, 8, 15, 16, 23, 42], 16), ([4, 8, 15], 5)], SAME),
    (bubble_sort, [([5, 1, 4, 2, 8],), ([3.0, -1.0, 2.0],)], SAME),
    (selection_sort_min, [([5, 1, 4, 2, 8],), ([3.0, -1.0, 2.0],)], SAME),
    (count_inversions, [([1, 3, 2, 4],), ([4, 3, 2, 1],)], SAME),
    (argmax, [([1, 5, 3, 5],), ([-1.0, -2.0],)], SAME),
    (is_sorted, [([1, 2, 2, 3],), ([3, 1, 2],)], SAME),
    (has_negative, [([1, 2, 3],), ([1, -2, 3],)], SAME),
    (median_of_three, [(3, 1, 2), (5.0, 9.0, 7.0)], SAME),
    (is_small_or_unit, [(0,), (1,), (2,)], SAME),
    (zero_count, [(0, 1, 0), (1, 2, 3)], SAME),
    (second_largest, [([3, 1, 4, 1, 5],), ([2.0, 7.0],)], SAME),
    (median, [([3, 1, 2],), ([4.0, 1.0, 3.0, 2.0],)], SAME),
    (smallest_magnitude, [([3, -1, 2],), ([2.5, -0.5, 0.5],)], SAME),
    (clamp, [(5, 0, 3), (-1, 0, 3), (2, 3, 1)], SAME),
    (safe_ratio, [(3.0, 2.0), (3, 0)], SAME),
    (scaled_or_halved, [(3, 2), (-4, 2)], SAME),
    (to_binary, [(5,), (0,)], Refused("str")),
    (modular_power_builtin, [(3, 7, 13), (2, 10, 1000)], SAME),
    (cube_root, [(27.0,), (2.0,), (0.5,)], SAME),
    (unit_or_small, [([0.5, -3.0, 2.0, 0.25],), ([1.0, -1.0],)], SAME),
    (sign_changes, [([1, -2, -3, 4, 5, -1],), ([1.0, 2.0],)], SAME),
]
