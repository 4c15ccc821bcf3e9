"""Operators: the column-based registry and one module per op family.

Importing this package registers every built-in operator.
"""

from .registry import (  # noqa: F401
    AttrField,
    AttrSchema,
    OpPattern,
    get_column,
    get_op,
    has_op,
    list_ops,
    make_attrs,
    register_column,
    register_op,
    type_rule,
)

get = get_op  # relay.op.get("add"), as in TVM
