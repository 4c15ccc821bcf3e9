"""Dynamic dims (``?``) through every relation of the tensor family: each accepted case of
the family tables, with every dim of every argument made ``?``, either types (a dim that
depends on a ``?`` is ``?``) or fails with a located RelayError — never a Python error."""

from __future__ import annotations

import pytest
import test_ops_indexing
import test_ops_misc
import test_ops_sorting
from ops_testing import result_type

import relay_nb as relay
from relay_nb.ir.ty import Any, TensorType, TupleType

CASES = [(f"sorting{i}", build, types) for i, (build, types, _) in enumerate(test_ops_sorting.TYPES)]
CASES += [(name, build, types) for name, build, types, _ in test_ops_indexing.TYPES + test_ops_misc.TYPES]


def _dims(ty):
    if isinstance(ty, TupleType):
        return [d for f in ty.fields for d in _dims(f)]
    return list(ty.shape)


@pytest.mark.parametrize("name,build,types", CASES, ids=[c[0] for c in CASES])
def test_dynamic_dims_never_crash(name, build, types):
    for k in range(len(types)):
        dynamic = [((Any,) * len(s), d) if i == k else (s, d) for i, (s, d) in enumerate(types)]
        try:
            out = result_type(build, *dynamic)
        except relay.RelayError:
            continue  # a message (located in text; these programs are built, without spans)
        assert isinstance(out, (TensorType, TupleType))


def test_dynamic_dims_flow_to_the_result():
    assert result_type(lambda x: relay.cumsum(x), ((Any, 3), "float32")) == TensorType((Any,), "float32")
    assert result_type(lambda x: relay.sliding_window(x, 0, [2], [2]), ((Any,), "float32")) == TensorType(
        (Any, 2), "float32"
    )
    assert result_type(lambda x: relay.topk(x, 2, ret_type="values"), ((Any, 5), "float32")) == TensorType(
        (Any, 2), "float32"
    )


def test_gather_nd_index_rank_types_a_dynamic_index_tuple():
    build = lambda d, i: relay.gather_nd(d, i, index_rank=2)  # noqa: E731
    assert result_type(build, ((2, 3, 4), "float32"), ((Any, 5), "int32")) == TensorType((5, 4), "float32")
