"""jax-autograph: eager-style Python control flow, staged into ``jax.lax``.

    import autograph

    @autograph.convert
    def collatz(n):
        steps = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps

    collatz(27)                          # plain Python, exactly as written
    autograph.to_graph(collatz)(27)      # staged into lax.while_loop and compiled
    print(autograph.to_code(collatz))    # the generated source
"""

from autograph.api import (
    convert,
    convert_modules,
    do_not_convert,
    do_not_convert_modules,
    set_debug,
    set_disk_cache,
    set_element_type,
    set_loop_options,
    stack,
    staged_effects,
    to_code,
    to_graph,
)
from autograph.errors import ConversionError
from autograph.fold import fold

__all__ = [
    "ConversionError",
    "convert",
    "convert_modules",
    "do_not_convert",
    "do_not_convert_modules",
    "fold",
    "set_debug",
    "set_disk_cache",
    "set_element_type",
    "set_loop_options",
    "stack",
    "staged_effects",
    "to_code",
    "to_graph",
]
__version__ = "0.1.0"
