"""image.resize2d: relation, attributes and builder."""

from __future__ import annotations

import pytest

import relay_nb as relay
from relay_nb.errors import RelayTypeError
from relay_nb.ir.ty import Any
from relay_nb.op.registry import OpPattern, get_op

try:
    from ._reporter import T, infer
except ImportError:
    from _reporter import T, infer


def test_resize2d_shapes():
    assert infer("image.resize2d", T((1, 3, 32, 32)), size=[64, 48]) == T((1, 3, 64, 48))
    assert infer("image.resize2d", T((1, 32, 32, 3)), size=[16, 16], layout="NHWC") == T(
        (1, 16, 16, 3)
    )
    assert infer("image.resize2d", T((Any, 3, 8, 8)), size=[4, 4], out_dtype="float16") == T(
        (Any, 3, 4, 4), "float16"
    )
    assert get_op("image.resize2d").get_attr("TOpPattern") == OpPattern.INJECTIVE


def test_resize2d_errors():
    with pytest.raises(
        RelayTypeError, match="resize2d: method must be one of nearest_neighbor, linear, cubic"
    ):
        infer("image.resize2d", T((1, 3, 8, 8)), size=[4, 4], method="bilinear")
    with pytest.raises(RelayTypeError, match="resize2d: size must be given"):
        infer("image.resize2d", T((1, 3, 8, 8)))
    with pytest.raises(RelayTypeError, match=r"data must have rank 4 \(NCHW\)"):
        infer("image.resize2d", T((3, 8, 8)), size=[4, 4])


def test_resize2d_builder_has_tvm_defaults():
    x = relay.var("x", shape=(1, 3, 8, 8))
    y = relay.image.resize2d(x, (16, 16), method="nearest_neighbor")
    assert y.op is get_op("image.resize2d")
    assert y.attrs.size == (16, 16)
    assert y.attrs.roi == (0.0, 0.0, 0.0, 0.0)
    assert y.attrs.method == "nearest_neighbor"
    assert y.attrs.coordinate_transformation_mode == "half_pixel"
    assert y.attrs.type_key == "relay.attrs.Resize2DAttrs"
