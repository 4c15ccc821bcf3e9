"""The VM's operators (``vm.*``); this module is ``relay.op.vm``.

TVM's VM compiler lowers calls to ``vm.invoke_tvm_op`` (run a primitive function, writing
its results into pre-allocated output tensors), ``vm.shape_of`` and ``vm.reshape_tensor``.
The interpreter runs them with those meanings; see :mod:`.memory` for the allocations.
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Expr, Tuple
from ..ir.ty import Any, FuncType, TensorType, TupleType
from ..typing.relations import forward_relation
from ._common import call, register, schema, tensor, type_text
from .registry import register_column


@forward_relation("ShapeOf")
def shape_of_rel(inputs, attrs, reporter):
    """A 1-d tensor holding the input's dims."""
    data = tensor(inputs[0], "tensor")
    return TensorType((len(data.shape),), attrs["dtype"])


register(
    "vm.shape_of",
    1,
    shape_of_rel,
    attrs=schema("relay.attrs.ShapeOfAttrs", ("dtype", "dtype", "int32")),
    arg_names=("tensor",),
    doc="The shape of a tensor as a 1-d tensor (the VM's instruction for ``shape_of``).",
)


@forward_relation("InvokeTVMOp")
def invoke_tvm_op_rel(inputs, attrs, reporter):
    """``op`` takes the ``ins`` and returns what fits the ``outs``; the result is ``()``."""
    func, ins, outs = inputs
    if not isinstance(func, FuncType):
        raise RelayTypeError(f"the op to invoke must be a function, found {type_text(func)}")
    for t, what in ((ins, "inputs"), (outs, "outputs")):
        if not isinstance(t, TupleType):
            raise RelayTypeError(f"the {what} must be a tuple, found {type_text(t)}")
    if len(ins.fields) != len(func.arg_types):
        raise RelayTypeError(
            f"the op takes {len(func.arg_types)} inputs, the tuple has {len(ins.fields)}"
        )
    ret = func.ret_type
    expected_outs = ret if isinstance(ret, TupleType) else TupleType((ret,))
    if len(outs.fields) != len(expected_outs.fields):
        raise RelayTypeError(
            f"the op returns {len(expected_outs.fields)} tensors, the outputs tuple has "
            f"{len(outs.fields)}"
        )
    reporter.assign(ins, TupleType(func.arg_types))
    reporter.assign(outs, expected_outs)
    return TupleType(())


register(
    "vm.invoke_tvm_op",
    3,
    invoke_tvm_op_rel,
    arg_names=("op", "ins", "outs"),
    doc="Runs a primitive function on the ``ins`` and writes its results into the ``outs`` "
    "(destination-passing style); returns ``()``.",
)


@forward_relation("ReshapeTensor")
def reshape_tensor_rel(inputs, attrs, reporter):
    """data with the shape ``newshape`` (the shape tensor carries the same dims at run time)."""
    data = tensor(inputs[0], "data")
    shape_t = tensor(inputs[1], "shape")
    newshape = attrs["newshape"]
    if len(shape_t.shape) != 1:
        raise RelayTypeError(f"shape must be a 1-d tensor, found {type_text(shape_t)}")
    rank = shape_t.shape[0]
    if type(rank) is int and rank != len(newshape):
        raise RelayTypeError(
            f"the shape tensor has {rank} entries but newshape {list(newshape)} has "
            f"{len(newshape)}"
        )
    dims = tuple(Any if d < 0 else d for d in newshape)
    return TensorType(dims, data.dtype)


register(
    "vm.reshape_tensor",
    2,
    reshape_tensor_rel,
    attrs=schema("relay.attrs.ReshapeTensorAttrs", ("newshape", "ints")),
    arg_names=("data", "shape"),
    doc="Reshapes ``data`` to the dims held by the ``shape`` tensor (``newshape`` is the "
    "static form; ``-1`` there stands for a dynamic dim).",
)


def shape_of(expr) -> Expr:
    """The shape of ``expr`` as an int64 tensor: ``relay.op.vm.shape_of(x)``."""
    return call("vm.shape_of", expr, dtype="int64")


def invoke_tvm_op(func, inputs, outputs) -> Expr:
    """``vm.invoke_tvm_op(func, (ins...), (outs...))``."""
    ins = inputs if isinstance(inputs, Expr) else Tuple(tuple(inputs))
    outs = outputs if isinstance(outputs, Expr) else Tuple(tuple(outputs))
    return call("vm.invoke_tvm_op", func, ins, outs)


def reshape_tensor(data, shape, newshape) -> Expr:
    """``vm.reshape_tensor(data, shape)`` with the static ``newshape``."""
    return call("vm.reshape_tensor", data, shape, newshape=tuple(int(d) for d in newshape))


# Calls with effects (TVM's TOpIsStateful): passes must not drop, merge or reorder them.
for _name in ['vm.invoke_tvm_op']:
    register_column("TOpIsStateful", _name, True)

__all__ = ["invoke_tvm_op", "reshape_tensor", "shape_of"]
