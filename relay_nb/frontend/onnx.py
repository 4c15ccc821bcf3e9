"""``relay.frontend.from_onnx``: an ONNX model as a Relay module, as TVM's importer.

The conversion is a walk over the ONNX graph in its (topological) node order; each node
is converted by the function its ``op_type`` names in :data:`ONNX_OPS`
(:mod:`.onnx_ops`), which maps ``(inputs, attrs, opset)`` to Relay expressions.  After
each node, outputs whose leaves are all constants are folded, so the ``Shape -> Gather ->
Concat -> Reshape`` chains of exported models become static reshapes.

Names survive: graph inputs become parameters named as in the model, initializers either
constants (``freeze_params=True``) or parameters named by the initializer
(``%layer1.0.conv1.weight``; floating-point initializers only — integer ones are shapes,
axes and indices and stay constants so shape arithmetic still folds), and every call made for a node carries a span into a
:class:`~relay_nb.ir.span.Source` named ``onnx:<graph name>`` whose line *i* is the name of
node *i* — so the views show ``line i`` for the node, error excerpts quote its name, and
``relay.frontend.node_name(call)`` returns it.

Nothing from the file is executed: it is parsed as protobuf, checked with ONNX's checker,
and only its tensors are read.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from ..ir.expr import Constant, Expr, Function, Tuple, TupleGetItem, TupleWrapper, Var, const
from ..ir.module import IRModule
from ..ir.ty import Any as AnyDim
from ..ir.ty import TensorType, TupleType
from .common import FrontendError, fold, node_source, node_span, type_of


def _onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise FrontendError(
            "from_onnx needs the onnx package: pip install 'relay_nb[onnx]'"
        ) from None
    return onnx


# --- loading ------------------------------------------------------------------------------


def load_model(model: Any) -> Any:
    """An ``onnx.ModelProto`` from a ModelProto, a path or bytes; a FrontendError if bad."""
    onnx = _onnx()
    if isinstance(model, onnx.ModelProto):
        return model
    where = "the bytes given"
    if isinstance(model, (str, os.PathLike)):
        where = os.fspath(model)
        try:
            with open(where, "rb") as f:
                model = f.read()
        except OSError as e:
            raise FrontendError(f"cannot read {where}: {e.strerror or e}") from None
    if not isinstance(model, (bytes, bytearray)):
        raise FrontendError(
            f"from_onnx expects an onnx.ModelProto or a path, got {type(model).__name__}"
        )
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(bytes(model))
    except Exception as e:  # protobuf's DecodeError and friends
        raise FrontendError(f"{where} is not a valid ONNX model (truncated or corrupt?): {e}") from None
    if not proto.HasField("graph") or not proto.graph.node and not proto.graph.output:
        raise FrontendError(f"{where} is not a valid ONNX model: it has no graph")
    if isinstance(model, (bytes, bytearray)) and where != "the bytes given":
        _load_external_data(onnx, proto, where)
    return proto


def _load_external_data(onnx: Any, proto: Any, path: str) -> None:
    """Read weights stored next to the model (``save_as_external_data``); data, not code."""
    from onnx.external_data_helper import uses_external_data

    if not any(uses_external_data(t) for t in proto.graph.initializer):
        return
    try:
        onnx.external_data_helper.load_external_data_for_model(proto, os.path.dirname(os.path.abspath(path)))
    except Exception as e:  # a missing data file, or a location outside the model's folder
        raise FrontendError(f"cannot read the external weights of {path}: {e}") from None


def _check(model: Any) -> None:
    """ONNX's checker on the graph's structure.

    It runs on a skeleton whose initializers are declared as inputs: serializing the
    weights for the C++ checker would cost more than the whole conversion (and fails past
    2 GB); the weights themselves are read, and checked, by ``numpy_helper.to_array``.
    """
    onnx = _onnx()
    g = model.graph
    skeleton = onnx.ModelProto(ir_version=model.ir_version, producer_name=model.producer_name)
    skeleton.opset_import.extend(model.opset_import)
    sg = skeleton.graph
    sg.name = g.name
    sg.node.extend(g.node)
    sg.input.extend(g.input)
    sg.output.extend(g.output)
    sg.value_info.extend(g.value_info)
    declared = {i.name for i in g.input}
    for t in g.initializer:
        if t.name not in declared:
            sg.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    try:
        onnx.checker.check_model(skeleton)
    except Exception as e:  # onnx.checker.ValidationError, or a C++ error text
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise FrontendError(f"the ONNX model is malformed: {first}") from None


def default_opset(model: Any) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    return 1


# --- the converter ------------------------------------------------------------------------

_ELEM_TYPES = {
    1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
    9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
}


def elem_dtype(elem_type: int) -> str:
    try:
        return _ELEM_TYPES[elem_type]
    except KeyError:
        raise FrontendError(f"ONNX element type {elem_type} is not supported") from None


class Inputs:
    """The inputs of one node, for a converter: expressions, static values, shapes.

    ``inputs[i]`` is the Relay expression of input *i* (``None`` when the optional input is
    absent); ``inputs.value(i)`` its numpy value when it is a constant (initializers count
    even when they are not frozen, so shapes given as initializers stay static).
    """

    def __init__(self, graph: "_Graph", names: Sequence[str]):
        self.graph = graph
        self.names = list(names)

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i: int) -> Optional[Expr]:
        if i >= len(self.names) or not self.names[i]:
            return None
        return self.graph.expr(self.names[i])

    def has(self, i: int) -> bool:
        return i < len(self.names) and bool(self.names[i])

    def value(self, i: int) -> Optional[np.ndarray]:
        if not self.has(i):
            return None
        name = self.names[i]
        if name in self.graph.inits:
            return self.graph.inits[name]
        e = fold(self.graph.expr(name))
        return e.data if isinstance(e, Constant) else None

    def shape(self, i: int) -> tuple:
        t = type_of(self[i])
        return tuple(t.shape)

    def dtype(self, i: int) -> str:
        return type_of(self[i]).dtype


class _Graph:
    def __init__(self, graph: Any, shape: Mapping, dtype: Any, opset: int, freeze: bool):
        onnx = _onnx()
        self.g = graph
        self.opset = opset
        self.freeze = freeze
        self.inits: dict[str, np.ndarray] = {}
        for t in graph.initializer:
            try:
                self.inits[t.name] = onnx.numpy_helper.to_array(t)
            except Exception as e:
                raise FrontendError(f"initializer {t.name!r} cannot be read: {e}") from None
        self.values: dict[str, Expr] = {}
        self.params: dict[str, Var] = {}
        self.param_values: dict[str, np.ndarray] = {}
        self.inputs: list[Var] = []
        for inp in graph.input:
            if inp.name in self.inits:
                continue
            v = Var(inp.name, self._input_type(inp, shape, dtype))
            self.values[inp.name] = v
            self.inputs.append(v)

    def _input_type(self, inp: Any, shape: Mapping, dtype: Any) -> TensorType:
        tt = inp.type.tensor_type
        dt = dtype.get(inp.name) if isinstance(dtype, Mapping) else None
        if dt is None:
            dt = elem_dtype(tt.elem_type) if tt.elem_type else (dtype if isinstance(dtype, str) else "float32")
        if inp.name in shape:
            dims = tuple(AnyDim if d is None or (isinstance(d, int) and d < 0) else int(d) for d in shape[inp.name])
        elif tt.HasField("shape"):
            dims = tuple(int(d.dim_value) if d.HasField("dim_value") else AnyDim for d in tt.shape.dim)
        else:
            raise FrontendError(f"input {inp.name!r} has no shape in the model; pass shape={{{inp.name!r}: (...)}}")
        return TensorType(dims, dt)

    def expr(self, name: str) -> Expr:
        e = self.values.get(name)
        if e is not None:
            return e
        if name in self.inits:
            array = self.inits[name]
            # integer/bool initializers are shapes, axes and indices, not weights: they stay
            # constants so the shape arithmetic that uses them still folds
            if self.freeze or array.dtype.kind not in "fc":
                e = const(array)
            else:
                e = Var(name, TensorType(tuple(int(d) for d in array.shape), str(array.dtype)))
                self.params[name] = e
                self.param_values[name] = array
            self.values[name] = e
            return e
        raise FrontendError(f"the value {name!r} is used before any node produces it")

    def run(self, ops: Mapping) -> IRModule:
        from onnx import helper

        nodes = list(self.g.node)
        names = [n.name or f"{n.op_type}_{i}" for i, n in enumerate(nodes)]
        source = node_source(f"onnx:{self.g.name or 'graph'}", names)
        for i, node in enumerate(nodes):
            span = node_span(source, i, names[i])
            attrs = {a.name: _attr(helper, a) for a in node.attribute}
            attrs["_op"], attrs["_outputs"] = node.op_type, len(node.output)
            inputs = Inputs(self, node.input)
            try:
                self._bind(node, ops[node.op_type](inputs, attrs, self.opset), span)
            except FrontendError as e:
                raise FrontendError(f"{node.op_type} node {names[i]!r}: {e.message}", span) from None
            except Exception as e:  # a RelayError from type inference, or a converter bug
                msg = getattr(e, "message", None) or f"{type(e).__name__}: {e}"
                raise FrontendError(f"{node.op_type} node {names[i]!r} could not be converted: {msg}", span) from None
        outputs = [self.expr(o.name) for o in self.g.output]
        body = outputs[0] if len(outputs) == 1 else Tuple(tuple(outputs))
        params = self.inputs + list(self.params.values())
        return IRModule.from_expr(Function(params, body))

    def _bind(self, node: Any, out: Any, span: Any) -> None:
        if isinstance(out, TupleWrapper):
            out = [out[i] for i in range(len(out))]
        elif isinstance(out, Expr) and isinstance(type_of(out), TupleType):
            n = len(type_of(out).fields)
            out = [TupleGetItem(out, i) for i in range(n)]
        if isinstance(out, Expr):
            out = [out]
        for name, e in zip(node.output, out):
            if not name or e is None:
                continue
            _stamp(e, span)
            self.values[name] = fold(e)


def _stamp(expr: Expr, span: Any) -> None:
    """Give the new nodes of a converted fragment the node's span (older nodes have one)."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if e.span is not None or isinstance(e, (Var, Constant)):
            continue
        object.__setattr__(e, "span", span)  # a node made moments ago, seen by no one yet
        if hasattr(e, "args"):
            stack.extend(e.args)
        elif isinstance(e, Tuple):
            stack.extend(e.fields)
        elif isinstance(e, TupleGetItem):
            stack.append(e.tuple_value)


def _attr(helper: Any, a: Any) -> Any:
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, list) and v and isinstance(v[0], bytes):
        return [x.decode("utf-8", "replace") for x in v]
    if a.type == a.TENSOR:
        from onnx import numpy_helper

        return numpy_helper.to_array(v)
    return v


def _unsupported(model: Any, ops: Mapping, opset: int, needs: Mapping[str, list]) -> None:
    missing: dict[str, list[str]] = {}
    domains = {imp.domain: imp.version for imp in model.opset_import}
    for i, n in enumerate(model.graph.node):
        key = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"
        if n.domain in ("", "ai.onnx") and n.op_type in ops:
            continue
        missing.setdefault(key, []).append(n.name or f"{n.op_type}_{i}")
    if not missing:
        return
    lines = []
    for key, nodes in sorted(missing.items()):
        shown = ", ".join(nodes[:5]) + (f", ... ({len(nodes)} nodes)" if len(nodes) > 5 else "")
        dom = key.rpartition(".")[0]
        ver = opset if not dom else domains.get(dom, "?")
        why = f" [needs the Relay operator(s) {', '.join(needs[key])}]" if key in needs else ""
        lines.append(f"  {key} (opset {ver}): {shown}{why}")
    raise FrontendError(
        f"the model uses {len(missing)} operator type(s) relay_nb cannot import:\n" + "\n".join(lines)
    )


def from_onnx(
    model: Any,
    shape: Optional[Mapping[str, Sequence[int]]] = None,
    dtype: Union[str, Mapping[str, str]] = "float32",
    opset: Optional[int] = None,
    freeze_params: bool = True,
) -> tuple[IRModule, dict[str, np.ndarray]]:
    """Convert an ONNX model into a Relay module, as ``tvm.relay.frontend.from_onnx``.

    Parameters
    ----------
    model : onnx.ModelProto, str or path
        The model, or the path of a ``.onnx`` file (only parsed, never executed).
    shape : dict, optional
        Input name -> shape, overriding the model's (``-1``/``None`` for a dynamic dim).
    dtype : str or dict
        Input dtype when the model does not declare one.
    opset : int, optional
        Convert as this opset instead of the model's own.
    freeze_params : bool
        True: initializers become constants and ``params`` is ``{}``.  False: floating-point
        initializers become parameters named by the initializer and ``params`` maps those
        names to arrays (integer initializers stay constants).

    Returns
    -------
    (IRModule, dict)
        The type-checked module (``@main`` takes the graph inputs, then the parameters)
        and the parameter values.

    Examples
    --------
    >>> mod, params = relay.frontend.from_onnx("resnet18.onnx", freeze_params=False)
    >>> relay.create_executor("jit", mod).evaluate()(image, *params.values())
    """
    from ..transform.infer_type import InferType
    from .onnx_ops import ONNX_OPS, missing_relay_ops

    proto = load_model(model)
    opset = int(opset) if opset is not None else default_opset(proto)
    missing = missing_relay_ops()
    table = {k: v for k, v in ONNX_OPS.items() if k not in missing}
    _unsupported(proto, table, opset, missing)
    _check(proto)
    g = _Graph(proto.graph, dict(shape or {}), dtype, opset, freeze_params)
    mod = g.run(table)
    mod = InferType()(mod)
    return mod, dict(g.param_values)


__all__ = ["from_onnx", "load_model", "Inputs"]
