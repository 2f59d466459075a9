"""Static analysis of a function's AST: names read and modified, liveness, definedness.

Each pass stores its results as annotations on the nodes (see ``annos``); the
converters read them. The passes work on the structured AST directly: Python has
no ``goto``, so data flow follows the nesting of statements.
"""

from autograph.analysis import annos
from autograph.analysis.activity import (
    bound_names,
    items_assigned,
    local_names,
    modified_names,
    mutated_objects,
    read_names,
)
from autograph.analysis.definedness import annotate_definedness
from autograph.analysis.liveness import annotate_liveness
from autograph.analysis.python_only import first_yield, stays_python
from autograph.analysis.scopes import SCOPES, assigns_in_scope, walk_same_scope

__all__ = [
    "SCOPES",
    "annos",
    "assigns_in_scope",
    "annotate_definedness",
    "annotate_liveness",
    "bound_names",
    "first_yield",
    "items_assigned",
    "local_names",
    "modified_names",
    "mutated_objects",
    "read_names",
    "walk_same_scope",
    "stays_python",
]
