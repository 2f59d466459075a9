"""What generated code calls while it runs or traces (imported there as ``ag__``).

Every operator asks one question of its operand: is the condition or iterable a
JAX tracer? If not, it runs the Python construct with Python semantics; if so, it
stages the construct with ``jax.lax``.
"""

from autograph.runtime import math_functions
from autograph.runtime.builtins import (
    bool_,
    float_,
    int_,
    len_,
    max_,
    min_,
    pow_,
    reversed_,
    round_,
    sum_,
)
from autograph.runtime.carried_state import dir_, locals_
from autograph.runtime.checks import (
    StagedAssertionError,
    assert_stmt,
    raise_if,
    raise_unless,
)
from autograph.runtime.chosen_text import chosen_text
from autograph.runtime.conditionals import if_exp, if_stmt
from autograph.runtime.handlers import (
    check_caught,
    check_try_inputs,
    current_exception,
    managed,
    set_stdout,
)
from autograph.runtime.intervals import counter_bound, loop_bound
from autograph.runtime.iterables import enumerate_, zip_
from autograph.runtime.joined_numbers import number_op, one_type
from autograph.runtime.lists import TensorList, list_append, list_pop, set_element_type
from autograph.runtime.logical import and_, compare_chain, is_, is_not, not_, or_
from autograph.runtime.lookups import list_item
from autograph.runtime.loops import TracedRange, for_stmt, range_, while_stmt
from autograph.runtime.printing import DeferredFormat, format_, percent_format, print_
from autograph.runtime.reductions import (
    all_,
    any_,
    count_,
    count_method,
    generator_,
    in_,
    not_in,
    sort_,
    sorted_,
)
from autograph.runtime.sequence_compare import compare_sequences
from autograph.runtime.sequence_index import index_method
from autograph.runtime.slices import augmented_assign, getitem, index, setitem
from autograph.runtime.types_of import format_builtin, isinstance_, repr_, str_, type_
from autograph.runtime.undefined import (
    Undefined,
    UndefinedReturn,
    Unset,
    ld,
    local_or_undefined,
)
from autograph.runtime.unstaged import comprehension_test, formattable

__all__ = [
    "number_op",
    "one_type",
    "managed",
    "set_stdout",
    "comprehension_test",
    "formattable",
    "DeferredFormat",
    "format_",
    "getitem",
    "percent_format",
    "StagedAssertionError",
    "TensorList",
    "assert_stmt",
    "bool_",
    "check_caught",
    "check_try_inputs",
    "is_",
    "is_not",
    "current_exception",
    "dir_",
    "compare_chain",
    "float_",
    "int_",
    "max_",
    "min_",
    "print_",
    "pow_",
    "raise_if",
    "raise_unless",
    "reversed_",
    "round_",
    "sum_",
    "TracedRange",
    "Undefined",
    "UndefinedReturn",
    "Unset",
    "and_",
    "augmented_assign",
    "enumerate_",
    "for_stmt",
    "if_exp",
    "chosen_text",
    "if_stmt",
    "index",
    "ld",
    "len_",
    "list_append",
    "list_item",
    "list_pop",
    "local_or_undefined",
    "counter_bound",
    "loop_bound",
    "locals_",
    "not_",
    "or_",
    "range_",
    "set_element_type",
    "setitem",
    "while_stmt",
    "zip_",
    "all_",
    "any_",
    "count_",
    "count_method",
    "index_method",
    "compare_sequences",
    "generator_",
    "in_",
    "not_in",
    "sort_",
    "sorted_",
    "format_builtin",
    "isinstance_",
    "repr_",
    "str_",
    "type_",
    *math_functions.__all__,
]
globals().update(math_functions.OPERATORS)
