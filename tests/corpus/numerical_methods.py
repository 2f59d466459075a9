"""A second corpus: numerical methods as textbook Python writes them. Root finding,
quadrature, ODE steps, iterative linear algebra on lists, running statistics,
polynomials and series, written with tolerances, early exits and input checks.

Same record as ``tests/corpus/numerical.py``: ``CASES`` lists each function with
argument tuples of Python values and what ``autograph.to_graph`` gives when they are
passed as arrays (``SAME`` or ``Refused(reason)``).
"""

from __future__ import annotations

import math

from tests.corpus.numerical import SAME, Refused

# -- roots and minima ----------------------------------------------------------------


def bisection_root(a, b, tol=1e-6):
    """A root of x**3 - x - 2 in [a, b]."""
    fa = a ** 3 - a - 2
    fb = b ** 3 - b - 2
    if fa * fb > 0:
        raise ValueError("f(a) and f(b) must have opposite signs")
    while b - a > tol:
        mid = (a + b) / 2
        fm = mid ** 3 - mid - 2
        if fm == 0:
            return mid
        if fa * fm < 0:
            b = mid
        else:
            a, fa = mid, fm
    return (a + b) / 2


def secant_root(x0, x1, max_iter=50):
    """A root of cos(x) - x by the secant method."""
    for _ in range(max_iter):
        f0 = math.cos(x0) - x0
        f1 = math.cos(x1) - x1
        if f1 == f0:
            break
        x0, x1 = x1, x1 - f1 * (x1 - x0) / (f1 - f0)
        if abs(x1 - x0) < 1e-7:
            break
    return x1


def newton_cubic(c, x=1.0):
    """The real cube root of c by Newton's method, counting its steps."""
    steps = 0
    while True:
        step = (x ** 3 - c) / (3 * x ** 2)
        x -= step
        steps += 1
        if abs(step) < 1e-6 or steps >= 100:
            return x, steps


def golden_section_min(a, b, tol=1e-5):
    """The minimum of (x - 2)**2 + 1 on [a, b]."""
    ratio = (math.sqrt(5) - 1) / 2
    c = b - ratio * (b - a)
    d = a + ratio * (b - a)
    while abs(b - a) > tol:
        if (c - 2) ** 2 < (d - 2) ** 2:
            b = d
        else:
            a = c
        c = b - ratio * (b - a)
        d = a + ratio * (b - a)
    return (a + b) / 2


def fixed_point_iterations(x, tol=1e-3):
    """How many steps x -> cos(x) takes to settle."""
    count = 0
    while count < 200:
        nxt = math.cos(x)
        count += 1
        if abs(nxt - x) < tol:
            break
        x = nxt
    return count


# -- quadrature and ODEs -------------------------------------------------------------


def trapezoid(a, b, n):
    if n <= 0:
        raise ValueError("n must be positive")
    h = (b - a) / n
    total = 0.5 * (math.exp(-a * a) + math.exp(-b * b))
    for i in range(1, n):
        x = a + i * h
        total += math.exp(-x * x)
    return total * h


def simpson(a, b, n=10):
    if n % 2:
        raise ValueError("Simpson's rule needs an even number of intervals")
    h = (b - a) / n
    s = math.sin(a) + math.sin(b)
    for i in range(1, n):
        s += (4 if i % 2 else 2) * math.sin(a + i * h)
    return s * h / 3


def euler_decay(y0, rate, dt, steps):
    y = y0
    history = [y]
    for _ in range(steps):
        y = y - rate * y * dt
        history.append(y)
    return history


def rk4_oscillator(x, v, dt, steps=20):
    def accel(pos):
        return -pos

    for _ in range(steps):
        k1x, k1v = v, accel(x)
        k2x, k2v = v + 0.5 * dt * k1v, accel(x + 0.5 * dt * k1x)
        k3x, k3v = v + 0.5 * dt * k2v, accel(x + 0.5 * dt * k2x)
        k4x, k4v = v + dt * k3v, accel(x + dt * k3x)
        x += dt / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
        v += dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
    return x, v


def time_to_ground(height, dt=0.01):
    """Steps of a falling body until it reaches the ground."""
    if height < 0:
        raise ValueError("height must be non-negative")
    y, v, t = height, 0.0, 0.0
    while y > 0:
        v -= 9.81 * dt
        y += v * dt
        t += dt
    return round(t, 2)


# -- linear algebra on lists ----------------------------------------------------------


def dot(u, v):
    if len(u) != len(v):
        raise ValueError("vectors must have the same length")
    return sum(a * b for a, b in zip(u, v, strict=True))


def norm(u):
    return math.sqrt(sum(a * a for a in u))


def mat_vec(m, v):
    return [sum(row[j] * v[j] for j in range(len(v))) for row in m]


def power_iteration(m, steps=30):
    """The dominant eigenvalue of a 2x2 matrix given as a flat list."""
    a, b, c, d = m
    x, y = 1.0, 1.0
    eigenvalue = 0.0
    for _ in range(steps):
        nx, ny = a * x + b * y, c * x + d * y
        length = math.sqrt(nx * nx + ny * ny)
        if length == 0:
            return 0.0
        x, y = nx / length, ny / length
        eigenvalue = x * (a * x + b * y) + y * (c * x + d * y)
    return eigenvalue


def jacobi_2x2(a11, a12, a21, a22, b1, b2, iterations=25):
    if a11 == 0 or a22 == 0:
        raise ZeroDivisionError("zero on the diagonal")
    x1 = x2 = 0.0
    for _ in range(iterations):
        x1, x2 = (b1 - a12 * x2) / a11, (b2 - a21 * x1) / a22
    return x1, x2


def determinant_3x3(m):
    a, b, c, d, e, f, g, h, i = m
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)


def cosine_similarity(u, v):
    nu, nv = norm(u), norm(v)
    if nu == 0 or nv == 0:
        return 0.0
    return dot(u, v) / (nu * nv)


# -- statistics ----------------------------------------------------------------------


def mean_and_variance(xs):
    """Welford's running mean and (population) variance."""
    if not xs:
        raise ValueError("no data")
    mean = 0.0
    m2 = 0.0
    for n, x in enumerate(xs, start=1):
        delta = x - mean
        mean += delta / n
        m2 += delta * (x - mean)
    return mean, m2 / len(xs)


def moving_average(xs, window):
    if window <= 0:
        raise ValueError("window must be positive")
    out = []
    total = 0.0
    for i, x in enumerate(xs):
        total += x
        if i >= window:
            total -= xs[i - window]
        if i >= window - 1:
            out.append(total / window)
    return out


def exponential_smoothing(xs, alpha):
    if not 0 < alpha <= 1:
        raise ValueError("alpha must be in (0, 1]")
    smoothed = xs[0]
    for x in xs[1:]:
        smoothed = alpha * x + (1 - alpha) * smoothed
    return smoothed


def zscore_outliers(xs, threshold=1.5):
    mean = sum(xs) / len(xs)
    std = math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs))
    if std == 0:
        return 0
    return sum(1 for x in xs if abs(x - mean) / std > threshold)


def kahan_sum(xs):
    total = 0.0
    compensation = 0.0
    for x in xs:
        y = x - compensation
        t = total + y
        compensation = (t - total) - y
        total = t
    return total


def softmax_max(xs):
    """The largest softmax probability, stabilised by the maximum."""
    top = max(xs)
    exps = [math.exp(x - top) for x in xs]
    return max(exps) / sum(exps)


def log_sum_exp(xs):
    top = xs[0]
    for x in xs:
        if x > top:
            top = x
    return top + math.log(sum(math.exp(x - top) for x in xs))


def histogram_counts(xs, low, high):
    if high <= low:
        raise ValueError("empty range")
    bins = 4
    counts = [0] * bins
    width = (high - low) / bins
    for x in xs:
        if low <= x < high:
            counts[int((x - low) // width)] += 1
    return counts


# -- polynomials and series ----------------------------------------------------------


def horner(coefficients, x):
    result = 0
    for c in coefficients:
        result = result * x + c
    return result


def exp_series(x, terms=20):
    total, term = 1.0, 1.0
    for k in range(1, terms):
        term *= x / k
        total += term
    return total


def sine_series_until(x, tol=1e-8):
    """sin(x) by its Taylor series, summed until a term is below tol."""
    term, total, k = x, x, 1
    while abs(term) > tol:
        term *= -x * x / ((2 * k) * (2 * k + 1))
        total += term
        k += 1
    return total


def leibniz_pi(terms):
    total = 0.0
    sign = 1
    for k in range(terms):
        total += sign / (2 * k + 1)
        sign = -sign
    return 4 * total


def continued_fraction_sqrt2(depth):
    value = 2.0
    for _ in range(depth):
        value = 2 + 1 / value
    return value - 1


def polynomial_derivative_at(coefficients, x):
    """The derivative of sum(c[i] * x**i) at x."""
    return sum(i * c * x ** (i - 1) for i, c in enumerate(coefficients) if i > 0)


# -- finance and physics with loops -------------------------------------------------


def loan_months(principal, rate, payment):
    if payment <= principal * rate:
        raise ValueError("payment never repays the loan")
    months = 0
    while principal > 0:
        principal = principal * (1 + rate) - payment
        months += 1
    return months


def savings_goal_years(balance, rate, goal):
    years = 0
    while balance < goal and years < 100:
        balance *= 1 + rate
        years += 1
    return years if balance >= goal else -1


def projectile_max_height(v0, angle_degrees, dt=0.001):
    vy = v0 * math.sin(math.radians(angle_degrees))
    y = best = 0.0
    while vy > 0:
        y += vy * dt
        vy -= 9.81 * dt
        best = max(best, y)
    return best


def clipped_gradient_steps(w, lr, clip, steps=10):
    """Gradient descent on (w - 3)**2 with the gradient clipped to [-clip, clip]."""
    for _ in range(steps):
        grad = 2 * (w - 3)
        if grad > clip:
            grad = clip
        elif grad < -clip:
            grad = -clip
        w -= lr * grad
    return w


def early_stopping_epoch(losses, patience=2):
    best = math.inf
    waited = 0
    for epoch, loss in enumerate(losses):
        if loss < best:
            best = loss
            waited = 0
        else:
            waited += 1
            if waited >= patience:
                return epoch
    return len(losses)


CASES = [
    (bisection_root, [(1.0, 2.0), (1.5, 1.6), (0.0, 1.0)], SAME),
    (secant_root, [(0.0, 1.0), (0.5, 0.7)], SAME),
    (newton_cubic, [(27.0,), (2.0,)], SAME),
    (golden_section_min, [(0.0, 5.0), (-3.0, 1.0)], SAME),
    (fixed_point_iterations, [(1.0,), (0.7390851,)], SAME),
    (trapezoid, [(0.0, 1.0, 10), (-1.0, 1.0, 4), (0.0, 1.0, 0)], SAME),
    (simpson, [(0.0, 3.0), (0.0, 1.0, 4), (0.0, 1.0, 3)], SAME),
    (euler_decay, [(1.0, 0.5, 0.1, 5), (2.0, 1.0, 0.2, 3)], Refused("history")),
    (rk4_oscillator, [(1.0, 0.0, 0.1), (0.0, 1.0, 0.05)], SAME),
    (time_to_ground, [(1.0,), (0.0,), (-1.0,)], SAME),
    (dot, [([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), ([1.0], [1.0, 2.0])], SAME),
    (norm, [([3.0, 4.0],), ([0.0, 0.0, 0.0],)], SAME),
    (mat_vec, [([[1.0, 2.0], [3.0, 4.0]], [1.0, -1.0])], SAME),
    (power_iteration, [([2.0, 1.0, 1.0, 3.0],), ([0.0, 0.0, 0.0, 0.0],)], SAME),
    (jacobi_2x2, [(4.0, 1.0, 2.0, 5.0, 1.0, 2.0), (0.0, 1.0, 1.0, 1.0, 1.0, 1.0)], SAME),
    (determinant_3x3, [([2.0, 0.0, 1.0, 1.0, 3.0, 2.0, 1.0, 1.0, 1.0],)], SAME),
    (cosine_similarity, [([1.0, 0.0], [1.0, 1.0]), ([0.0, 0.0], [1.0, 1.0])], SAME),
    (mean_and_variance, [([1.0, 2.0, 3.0, 4.0],), ([5.0],)], Refused("ambiguous")),
    (moving_average, [([1.0, 2.0, 3.0, 4.0, 5.0], 2), ([1.0, 2.0], 0)],
     Refused("length is traced")),
    (exponential_smoothing, [([1.0, 2.0, 3.0], 0.5), ([1.0, 2.0], 1.5)], SAME),
    (zscore_outliers, [([1.0, 1.0, 1.0, 10.0],), ([2.0, 2.0],)], SAME),
    (kahan_sum, [([0.1] * 10,), ([1.5, 2.25, -0.75, 1e-3],)], SAME),
    (softmax_max, [([1.0, 2.0, 3.0],), ([0.0, 0.0],)], SAME),
    (log_sum_exp, [([1.0, 2.0, 3.0],), ([-1.0, -5.0],)], SAME),
    (histogram_counts, [([0.1, 0.5, 0.9, 1.5, -0.2], 0.0, 1.0), ([0.5], 1.0, 1.0)],
     SAME),
    (horner, [([1.0, -2.0, 3.0], 2.0), ([2, 0, 1], 3)], SAME),
    (exp_series, [(1.0,), (-2.0,)], SAME),
    (sine_series_until, [(1.0,), (3.0,)], SAME),
    (leibniz_pi, [(10,), (100,)], SAME),
    (continued_fraction_sqrt2, [(5,), (12,)], SAME),
    (polynomial_derivative_at, [([1.0, 2.0, 3.0], 2.0), ([5.0], 1.0)], SAME),
    (loan_months, [(1000.0, 0.01, 100.0), (1000.0, 0.1, 50.0)], SAME),
    (savings_goal_years, [(100.0, 0.05, 200.0), (100.0, 0.0, 200.0)], SAME),
    (projectile_max_height, [(10.0, 45.0), (5.0, 90.0)], SAME),
    (clipped_gradient_steps, [(0.0, 0.1, 1.0), (10.0, 0.5, 2.0)], SAME),
    (early_stopping_epoch, [([1.0, 0.8, 0.9, 0.95, 0.7],), ([3.0, 2.0, 1.0],)], SAME),
]

__all__ = ["CASES", "Refused"]
