"""Explicit memory operators (``memory.*``); this module is ``relay.op.memory``.

TVM's ManifestAlloc pass makes allocation explicit for its VM: ``alloc_storage`` reserves a
block of bytes, ``alloc_tensor`` places a tensor in a block at an offset, ``kill`` releases
a value early, and ``vm.invoke_tvm_op`` (in :mod:`.vm`) writes a kernel's results into
tensors allocated this way.  relay_nb's interpreter gives them their real meaning on one
CPU: a storage is a numpy byte buffer and a tensor allocated from it is a view into it, so
two tensors placed at overlapping offsets really share memory, as in TVM's VM.

Storage values have the type ``Storage[]``, the ``extern type Storage`` of TVM's prelude
(``core.rly``).
"""

from __future__ import annotations

import numpy as np

from ..errors import RelayTypeError
from ..ir.expr import Constant, Expr
from ..ir.ty import GlobalTypeVar, TensorType, TupleType, TypeCall
from ..typing.relations import forward_relation
from ._common import call, register, schema, tensor, type_text
from .registry import register_column

STORAGE_TYPE = TypeCall(GlobalTypeVar("Storage"), ())
"""The type of a storage block: ``Storage[]`` (TVM declares ``extern type Storage``)."""


def _int64_scalar(t, what: str) -> None:
    t = tensor(t, what)
    if t.shape != () or (isinstance(t.dtype, str) and t.dtype != "int64"):
        raise RelayTypeError(f"{what} must be an int64 scalar, found {type_text(t)}")


@forward_relation("AllocStorage")
def alloc_storage_rel(inputs, attrs, reporter):
    """size and alignment are int64 scalars, shape a tensor; the result is a Storage."""
    _int64_scalar(inputs[0], "size")
    tensor(inputs[1], "shape")
    _int64_scalar(inputs[2], "alignment")
    return STORAGE_TYPE


register(
    "memory.alloc_storage",
    3,
    alloc_storage_rel,
    attrs=schema(
        "relay.attrs.AllocStorageAttrs",
        ("dtype", "dtype", "float32"),
        ("virtual_device", "any", None),
    ),
    arg_names=("size", "shape", "alignment"),
    doc="Allocates ``size`` bytes aligned to ``alignment`` bytes (``dtype`` is a hint). The "
    "interpreter allocates a numpy byte buffer.",
)


def const_shape_of(attrs) -> tuple[int, ...] | None:
    """The static shape ``alloc_tensor`` will make: ``const_shape`` (a constant), else
    ``assert_shape``; None when neither is given."""
    c = attrs["const_shape"]
    if isinstance(c, Constant):
        if c.data.ndim != 1 or c.data.dtype.kind not in "iu":
            raise RelayTypeError(
                f"const_shape must be a 1-d integer constant, found one of shape "
                f"{c.data.shape} and dtype {c.data.dtype}"
            )
        return tuple(int(v) for v in c.data)
    if c is not None:
        raise RelayTypeError(f"const_shape must be a constant tensor, found {c!r}")
    if attrs["assert_shape"] is not None:
        return tuple(attrs["assert_shape"])
    return None


@forward_relation("AllocTensor")
def alloc_tensor_rel(inputs, attrs, reporter):
    """A Storage, a scalar offset and a 1-d shape tensor; the tensor has the attrs' shape."""
    reporter.assign(inputs[0], STORAGE_TYPE)
    offset = tensor(inputs[1], "offset")
    if offset.shape != ():
        raise RelayTypeError(f"offset must be a scalar, found {type_text(offset)}")
    shape_t = tensor(inputs[2], "shape")
    if len(shape_t.shape) > 1:
        raise RelayTypeError(f"shape must be a 1-d tensor, found {type_text(shape_t)}")
    shape = const_shape_of(attrs)
    if shape is None:
        raise RelayTypeError("alloc_tensor needs const_shape or assert_shape to know its shape")
    rank = shape_t.shape[0] if shape_t.shape else 0
    if type(rank) is int and rank != len(shape):
        raise RelayTypeError(
            f"the shape tensor has {rank} entries but the static shape {list(shape)} has "
            f"{len(shape)}"
        )
    if any(d < 0 for d in shape):
        raise RelayTypeError(f"the shape {list(shape)} has a negative dimension")
    return TensorType(shape, attrs["dtype"])


register(
    "memory.alloc_tensor",
    3,
    alloc_tensor_rel,
    attrs=schema(
        "relay.attrs.AllocTensorAttrs",
        ("dtype", "dtype", "float32"),
        ("const_shape", "any", None),
        ("assert_shape", "optional_ints", None),
    ),
    arg_names=("storage", "offset", "shape"),
    doc="A tensor of ``dtype`` placed in ``storage`` at byte ``offset``. The interpreter "
    "returns a view into the storage's buffer (tensors at overlapping offsets share memory).",
)


@forward_relation("Kill")
def kill_rel(inputs, attrs, reporter):
    return TupleType(())


register(
    "memory.kill",
    1,
    kill_rel,
    arg_names=("to_free",),
    doc="Releases a value to the allocator early and returns ``()``; the interpreter leaves "
    "freeing to Python's reference counting.",
)


def alloc_storage(size, alignment, device=None, dtype_hint="float32", shape=None) -> Expr:
    """Allocate ``size`` bytes: ``relay.op.memory.alloc_storage(size, alignment, device)``.

    ``shape`` is TVM 0.19's extra shape argument (for texture memory); by default it is
    empty: a plain block of bytes.
    """
    if shape is None:
        shape = Constant(np.zeros((0,), "int64"))
    return call(
        "memory.alloc_storage",
        _i64(size),
        shape,
        _i64(alignment),
        dtype=dtype_hint,
        virtual_device=device,
    )


def alloc_tensor(storage, offset, shape, dtype="float32", assert_shape=None) -> Expr:
    """A tensor in ``storage`` at ``offset``; ``shape`` a constant (or give ``assert_shape``)."""
    if isinstance(shape, (list, tuple, np.ndarray)):
        shape = Constant(np.asarray(shape, "int64"))
    const_shape = shape if isinstance(shape, Constant) and assert_shape is None else None
    return call(
        "memory.alloc_tensor",
        storage,
        _i64(offset),
        shape,
        dtype=dtype,
        const_shape=const_shape,
        assert_shape=None if assert_shape is None else tuple(assert_shape),
    )


def kill(value) -> Expr:
    """Release ``value`` early: ``memory.kill(%x)``."""
    return call("memory.kill", value)


def _i64(value):
    if isinstance(value, (int, np.integer)):
        return Constant(np.asarray(value, "int64"))
    return value


# Calls with effects (TVM's TOpIsStateful): passes must not drop, merge or reorder them.
for _name in ['memory.alloc_storage', 'memory.alloc_tensor', 'memory.kill']:
    register_column("TOpIsStateful", _name, True)

__all__ = ["STORAGE_TYPE", "alloc_storage", "alloc_tensor", "kill"]
