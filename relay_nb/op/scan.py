"""Scans: cumsum and cumprod (TVM's ``ScanopRel``), and their builders.

``axis=None`` scans the flattened tensor (the result is 1-D); ``exclusive=True`` leaves
out each position's own element, so the first one is the identity (0 for cumsum, 1 for
cumprod).  ``dtype`` is the accumulation and result dtype (the input's when unset).
"""

from __future__ import annotations

from ..ir.expr import Call
from ..ir.ty import TensorType
from ..typing.relations import forward_relation
from ._common import call, norm_axis, product, register, schema, tensor

__all__ = ["cumsum", "cumprod"]


@forward_relation("Scanop")
def scan_rel(inputs, attrs, reporter):
    data = tensor(inputs[0], "data")
    dtype = attrs["dtype"] or data.dtype
    if attrs["axis"] is None:
        return TensorType((product(data.shape),), dtype)
    norm_axis(attrs["axis"], len(data.shape))
    return TensorType(data.shape, dtype)


SCAN_ATTRS = schema(
    "relay.attrs.ScanopAttrs",
    ("axis", "optional_int", None),
    ("dtype", "dtype", ""),
    ("exclusive", "bool", False),
)

for _name, _what in (("cumsum", "sums"), ("cumprod", "products")):
    register(
        _name,
        1,
        scan_rel,
        attrs=SCAN_ATTRS,
        arg_names=("data",),
        doc=f"Running {_what} along ``axis`` (of the flattened tensor when None); "
        f"``exclusive`` leaves out each position's own element.",
    )


def cumsum(data, axis=None, dtype=None, exclusive=None) -> Call:
    """Running sums: ``relay.cumsum(x, axis=1)`` (TVM's ``relay.cumsum``)."""
    return call("cumsum", data, axis=axis, dtype=dtype or "", exclusive=bool(exclusive))


def cumprod(data, axis=None, dtype=None, exclusive=None) -> Call:
    """Running products: ``relay.cumprod(x, axis=0, exclusive=True)``."""
    return call("cumprod", data, axis=axis, dtype=dtype or "", exclusive=bool(exclusive))
