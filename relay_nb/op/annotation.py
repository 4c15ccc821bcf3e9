"""Annotation, device and call-wrapper operators; this module is ``relay.annotation``.

TVM's passes wrap expressions in these ops to carry information to later passes: where a
value lives (``on_device``, ``device_copy``), where fusion must stop (``stop_fusion``),
which external compiler owns a region (``compiler_begin`` / ``compiler_end``), which
function a lowered call invokes (``call_lowered``).  On one CPU every one of them is the
identity on values (``call_lowered`` calls its function); relay_nb registers them so the
printouts of TVM's passes read, type-check and run.

Two are internal to TVM's own machinery and are kept only so such text reads:
``parser.MetaRef`` (expanded by TVM's parser before type checking) and ``torch_op`` (a
serialized TorchScript function: running it would execute code stored in the program, which
relay_nb never does).  Their relations say so.
"""

from __future__ import annotations

from ..errors import RelayTypeError
from ..ir.expr import Expr, Tuple
from ..ir.ty import FuncType, TensorType, TupleType
from ..typing.relations import forward_relation, identity_rel
from ._common import call, register, schema, tensor, type_text
from .registry import OpPattern

# --- identity annotations -----------------------------------------------------------------

_IDENTITIES = {
    "annotation.stop_fusion": "Stops FuseOps from fusing the argument with what consumes it.",
    "annotation.bitpack_start": "Marks the start of a bit-packed region.",
    "annotation.bitpack_end": "Marks the end of a bit-packed region.",
    "annotation.checkpoint": "Marks a value to recompute instead of keeping it for the "
    "gradient (checkpointing memory optimization).",
}
for _name, _doc in _IDENTITIES.items():
    register(_name, 1, identity_rel, arg_names=("data",), doc=_doc + " The value is unchanged.")

register(
    "annotation.cast_hint",
    1,
    identity_rel,
    attrs=schema("relay.attrs.CastHintAttrs", ("dtype", "dtype")),
    arg_names=("data",),
    doc="Hints that the argument will be cast to ``dtype`` (the automatic quantizer's "
    "annotation). The value and its type are unchanged.",
)

_COMPILER = schema("relay.attrs.CompilerAttrs", ("compiler", "str"))
register(
    "annotation.compiler_begin",
    1,
    identity_rel,
    attrs=_COMPILER,
    arg_names=("data",),
    doc="Opens a region handled by the external ``compiler`` (BYOC). The value is unchanged.",
)
register(
    "annotation.compiler_end",
    1,
    identity_rel,
    attrs=_COMPILER,
    arg_names=("data",),
    doc="Closes a region handled by the external ``compiler`` (BYOC). The value is unchanged.",
)
register(
    "annotation.with_funcid",
    1,
    identity_rel,
    attrs=schema("relay.attrs.WithFuncIdAttrs", ("fid", "int", -1)),
    arg_names=("func",),
    doc="PartialEvaluate's tag naming a function by id. The value is unchanged.",
)

# --- devices --------------------------------------------------------------------------------

register(
    "on_device",
    1,
    identity_rel,
    attrs=schema(
        "relay.attrs.OnDeviceAttrs",
        ("virtual_device", "any", None),
        ("constrain_result", "bool", False),
        ("constrain_body", "bool", True),
    ),
    arg_names=("body",),
    doc="Says on which (virtual) device the body's value lives. relay_nb runs on one CPU: the "
    "value, of any type, is unchanged.",
)
register(
    "device_copy",
    1,
    identity_rel,
    attrs=schema(
        "relay.attrs.DeviceCopyAttrs",
        ("src_virtual_device", "any", None),
        ("dst_virtual_device", "any", None),
    ),
    arg_names=("data",),
    doc="Copies a tensor from one device to another. relay_nb runs on one CPU: the value is "
    "unchanged.",
)

# --- debugging ------------------------------------------------------------------------------

register(
    "debug",
    1,
    identity_rel,
    attrs=schema("relay.attrs.DebugAttrs", ("debug_func", "any", None)),
    arg_names=("data",),
    doc="Shows the value flowing through it when the program runs (the interpreter calls "
    "``relay_nb.op.impl.annotation.debug_hook``, which prints it by default) and passes it on "
    "unchanged.",
)

# --- call_lowered -----------------------------------------------------------------------------


@forward_relation("CallLoweredRel")
def call_lowered_rel(inputs, attrs, reporter):
    """``call_lowered(@f, (a, b))`` has the type of ``@f(a, b)``."""
    func, args = inputs
    if not isinstance(func, FuncType):
        raise RelayTypeError(f"the function to call must be a function, found {type_text(func)}")
    if not isinstance(args, TupleType):
        raise RelayTypeError(f"the arguments must be a tuple, found {type_text(args)}")
    if func.type_params:
        raise RelayTypeError("the function to call must not be polymorphic (it is lowered)")
    if len(args.fields) != len(func.arg_types):
        raise RelayTypeError(
            f"the function takes {len(func.arg_types)} arguments, the tuple has {len(args.fields)}"
        )
    reporter.assign(args, TupleType(func.arg_types))
    return func.ret_type


register(
    "call_lowered",
    2,
    call_lowered_rel,
    attrs=schema("relay.attrs.CallLoweredAttrs", ("metadata", "any", None)),
    arg_names=("func", "call_args"),
    doc="Calls a lowered (primitive) function with a tuple of arguments: "
    "``call_lowered(@f, (%a, %b))`` is ``@f(%a, %b)``, as TVM's LowerTE writes calls.",
)

# --- TVM-internal ops, registered so their text reads -----------------------------------------


@forward_relation("MetaRef")
def meta_ref_rel(inputs, attrs, reporter):
    raise RelayTypeError(
        "parser.MetaRef is a placeholder of TVM's parser for a meta-table entry; write the "
        "entry itself (meta[...][...]) instead"
    )


register(
    "parser.MetaRef",
    0,
    meta_ref_rel,
    attrs=schema(
        "relay.attrs.MetaRefAttrs", ("node_type_key", "str"), ("node_index", "int", 0)
    ),
    doc="TVM's parser's placeholder for a meta-table reference, expanded before type checking.",
)


@forward_relation("SimulatedQuantize")
def simulated_quantize_rel(inputs, attrs, reporter):
    """data keeps its type; dom_scale, clip_min and clip_max are float32 scalars."""
    data = tensor(inputs[0], "data")
    if data.shape == ():
        raise RelayTypeError("data must not be a scalar")
    for t, what in zip(inputs[1:], ("dom_scale", "clip_min", "clip_max")):
        reporter.assign(t, TensorType((), "float32"))
    return data


register(
    "relay.op.annotation.simulated_quantize",
    4,
    simulated_quantize_rel,
    attrs=schema(
        "relay.attrs.SimulatedQuantizeAttrs",
        ("kind", "int"),
        ("sign", "bool", True),
        ("rounding", "str", "round"),
    ),
    pattern=OpPattern.ELEMWISE,
    arg_names=("data", "dom_scale", "clip_min", "clip_max"),
    doc="The automatic quantizer's simulation of int rounding in float: "
    "``round(clip(data / dom_scale, clip_min, clip_max)) * dom_scale`` (kind 0, IDENTITY: "
    "data unchanged).",
)


@forward_relation("TorchOpRel")
def torch_op_rel(inputs, attrs, reporter):
    raise RelayTypeError(
        "torch_op holds a serialized TorchScript function; its type is found by running that "
        "code, which relay_nb never does for a program it reads"
    )


register(
    "torch_op",
    -1,
    torch_op_rel,
    attrs=schema(
        "relay.attrs.TorchFunctionAttrs",
        ("serialized_function", "str", ""),
        ("len", "int", -1),
    ),
    doc="TVM's libtorch BYOC op: a call into a serialized TorchScript function (read, not run).",
)

# --- builders, as in tvm.relay.annotation ----------------------------------------------------


def stop_fusion(data) -> Expr:
    """Stop fusion at ``data``: ``relay.annotation.stop_fusion(x)``."""
    return call("annotation.stop_fusion", data)


def checkpoint(data) -> Expr:
    """Mark ``data`` for recomputation in the gradient: ``relay.annotation.checkpoint(x)``."""
    return call("annotation.checkpoint", data)


def cast_hint(data, dtype) -> Expr:
    """Hint that ``data`` will be cast to ``dtype``."""
    return call("annotation.cast_hint", data, dtype=dtype)


def compiler_begin(data, compiler) -> Expr:
    """Open a region for the external ``compiler``."""
    return call("annotation.compiler_begin", data, compiler=compiler)


def compiler_end(data, compiler) -> Expr:
    """Close a region for the external ``compiler``."""
    return call("annotation.compiler_end", data, compiler=compiler)


def on_device(body, device=None, constrain_result=False, constrain_body=True) -> Expr:
    """Say where ``body`` lives: ``relay.annotation.on_device(x, "cpu")``.

    ``device`` is kept as given (a device name, or a meta-table object read from text).
    """
    return call(
        "on_device",
        body,
        virtual_device=device,
        constrain_result=constrain_result,
        constrain_body=constrain_body,
    )


def device_copy(data, src_device=None, dst_device=None) -> Expr:
    """Copy ``data`` between devices (the identity on one CPU)."""
    return call(
        "device_copy", data, src_virtual_device=src_device, dst_virtual_device=dst_device
    )


def debug(expr, debug_func=None) -> Expr:
    """Show ``expr``'s value when the program runs: ``relay.op.debug(x)``."""
    return call("debug", expr, debug_func=debug_func)


def call_lowered(func, inputs, metadata=None) -> Expr:
    """``call_lowered(@f, (a, b))``: call a lowered function with a tuple of arguments."""
    args = inputs if isinstance(inputs, Expr) else Tuple(tuple(inputs))
    return call("call_lowered", func, args, metadata=metadata)


__all__ = [
    "call_lowered",
    "cast_hint",
    "checkpoint",
    "compiler_begin",
    "compiler_end",
    "debug",
    "device_copy",
    "on_device",
    "stop_fusion",
]
