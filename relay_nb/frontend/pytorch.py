"""``relay.frontend.from_pytorch``: a PyTorch module as a Relay module, through ``torch.export``.

``torch.export`` traces the module into an ATen graph; ``run_decompositions()`` lowers it
to the *core ATen* op set (about 180 ops instead of 2000), and each node of that graph is
converted by the function its op overload names in :data:`~.pytorch_ops.ATEN_OPS`.  The
FX graph records every node's output shape and dtype (``node.meta["val"]``), so
converters read static shapes from it instead of re-inferring them; constant sub-graphs
(the causal mask of a GPT-2 block, ``arange`` positions) are folded as in the ONNX
importer.

Names survive: user inputs keep the ``forward`` argument names, weights and buffers keep
their module paths (``%layer1.0.conv1.weight`` when ``freeze_params=False``), and every
call made for an FX node carries a span into a :class:`~relay_nb.ir.span.Source` named
``torch:<module class>`` whose line *i* is ``<module path>/<node name>`` of node *i*
(``layer1.0.conv1/convolution_3``; the module path comes from
``node.meta["nn_module_stack"]``) — ``relay.frontend.node_name(call)`` returns that line
and :func:`module_path` its module part, which views can group by.

torch is imported only when an importer is called; this module imports without it.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from ..ir.expr import Constant, Expr, Function, Tuple, TupleGetItem, TupleWrapper, Var, const
from ..ir.module import IRModule
from ..ir.ty import Any as AnyDim
from ..ir.ty import TensorType, TupleType
from .common import FrontendError, fold, node_name, node_source, node_span, type_of
from .onnx import _stamp


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise FrontendError(
            "from_pytorch needs PyTorch: "
            "pip install torch --index-url https://download.pytorch.org/whl/cpu"
        ) from None
    return torch


_DTYPES = {
    "float32": "float32", "float64": "float64", "float16": "float16", "int64": "int64",
    "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool",
}


def relay_dtype(dtype: Any) -> str:
    """The Relay dtype of a ``torch.dtype`` (``torch.float32`` -> ``"float32"``)."""
    name = str(dtype).replace("torch.", "")
    try:
        return _DTYPES[name]
    except KeyError:
        raise FrontendError(f"the PyTorch dtype {name} is not supported") from None


def _dims(shape: Sequence[Any]) -> tuple:
    # a SymInt (a dim torch.export was told is dynamic) is not an int: it becomes `?`
    return tuple(int(d) if isinstance(d, int) else AnyDim for d in shape)


def module_path(expr: Expr) -> Optional[str]:
    """The module an imported call came from (``"layer1.0.conv1"``; ``""`` for the root).

    >>> mod, _ = relay.frontend.from_pytorch(model, (x,))
    >>> relay.frontend.module_path(mod["main"].body)     # 'fc'
    """
    span = getattr(expr, "span", None)
    if span is None or span.source is None or not span.source.name.startswith("torch:"):
        return None
    return (node_name(expr) or "").rpartition("/")[0]


def _module_of(node: Any) -> str:
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    path = list(stack.values())[-1][0]
    return str(path)


def _line(node: Any) -> str:
    path = _module_of(node)
    return f"{path}/{node.name}" if path else node.name


# --- one node, as a converter sees it -------------------------------------------------------


class Args:
    """The arguments of one FX node, for a converter.

    ``a[i]`` (or ``a["name"]``) is schema argument *i* (or by name), with defaults filled
    in: a Relay expression for a tensor, a list for a tensor list, a Python value
    otherwise.  ``a.shape``/``a.dtype`` describe the node's (first) output, ``a.val(i)``
    the example value (FakeTensor) of argument *i*, and ``a.shape_of(i)`` its shape.
    """

    def __init__(self, graph: "_Graph", node: Any):
        self.node = node
        self.graph = graph
        schema = getattr(node.target, "_schema", None)
        # the op's base name ("add" for aten.add.Tensor), for converters shared by a family
        self.op = schema.name.partition("::")[2] if schema is not None else str(node.target)
        self.names = [arg.name for arg in schema.arguments] if schema is not None else []
        raw = list(node.args)
        for arg in schema.arguments[len(raw):] if schema is not None else ():
            if arg.name in node.kwargs:
                raw.append(node.kwargs[arg.name])
            elif arg.has_default_value():
                raw.append(arg.default_value)
            else:
                raw.append(None)
        self.raw = raw
        self.values = [graph.value(r) for r in raw]
        val = node.meta.get("val")
        first = val[0] if isinstance(val, (list, tuple)) and val else val
        self.out = val
        self.shape = _dims(first.shape) if hasattr(first, "shape") else ()
        self.dtype = relay_dtype(first.dtype) if hasattr(first, "dtype") else "float32"

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            key = self.names.index(key)
        return self.values[key] if key < len(self.values) else None

    def val(self, i: int) -> Any:
        r = self.raw[i]
        if isinstance(r, (list, tuple)):
            return [x.meta.get("val") if hasattr(x, "meta") else x for x in r]
        return r.meta.get("val") if hasattr(r, "meta") else r

    def shape_of(self, i: int) -> tuple:
        v = self.val(i)
        if hasattr(v, "shape"):
            return _dims(v.shape)
        return tuple(type_of(self[i]).shape)

    def dtype_of(self, i: int) -> str:
        v = self.val(i)
        return relay_dtype(v.dtype) if hasattr(v, "dtype") else type_of(self[i]).dtype


# --- the graph walk -------------------------------------------------------------------------


class _Graph:
    def __init__(self, ep: Any, freeze: bool):
        self.ep = ep
        self.freeze = freeze
        self.values: dict[Any, Any] = {}
        self.inputs: list[Var] = []
        self.params: dict[str, Var] = {}
        self.param_values: dict[str, np.ndarray] = {}
        self._targets: dict[str, tuple[str, Any]] = {}
        # ids of values whose leaves are all constants: a node is folded only when all its
        # inputs are, decided here in O(1) instead of searching the graph for a variable
        self._constant: set[int] = set()
        for spec in ep.graph_signature.input_specs:
            kind = spec.kind.name
            if kind in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR"):
                self._targets[spec.arg.name] = (kind, spec.target)

    def value(self, r: Any) -> Any:
        if isinstance(r, (list, tuple)):
            return [self.value(x) for x in r]
        if hasattr(r, "op") and hasattr(r, "meta"):  # an fx.Node
            if r not in self.values:
                raise FrontendError(f"the value {r.name!r} is used before any node produces it")
            return self.values[r]
        return r

    def placeholder(self, node: Any) -> None:
        if node.name in self._targets:
            kind, target = self._targets[node.name]
            tensor = self.ep.state_dict.get(target) if kind != "CONSTANT_TENSOR" else None
            if tensor is None:
                tensor = self.ep.constants.get(target)
            if tensor is None:
                raise FrontendError(f"the exported program has no value for {target!r}")
            array = _numpy(tensor, target)
            # integer and bool buffers are masks and indices: they stay constants (as the ONNX
            # importer keeps integer initializers), so what they feed still folds
            if self.freeze or kind == "CONSTANT_TENSOR" or array.dtype.kind not in "fc":
                self.values[node] = const(array, str(array.dtype))
            else:
                v = Var(target, TensorType(tuple(array.shape), str(array.dtype)))
                self.params[target] = v
                self.param_values[target] = array
                self.values[node] = v
            return
        val = node.meta.get("val")
        if not hasattr(val, "shape"):
            raise FrontendError(
                f"input {node.name!r} is a {type(val).__name__}, not a tensor; pass tensors only"
            )
        dims = _dims(val.shape)
        if not all(isinstance(d, int) for d in dims):
            # the converters read static shapes from the FX graph; `?` dims are not there yet
            raise FrontendError(
                f"input {node.name!r} has dynamic dimensions {tuple(val.shape)}; "
                "export with static shapes (no dynamic_shapes=) to import it"
            )
        v = Var(node.name, TensorType(dims, relay_dtype(val.dtype)))
        self.inputs.append(v)
        self.values[node] = v

    def run(self, ops: Mapping[Any, Callable]) -> IRModule:
        import operator

        nodes = list(self.ep.graph.nodes)
        source = node_source(f"torch:{_root_name(self.ep)}", [_line(n) for n in nodes])
        outputs: list[Any] = []
        for i, node in enumerate(nodes):
            if node.op == "placeholder":
                self.placeholder(node)
                continue
            if node.op == "output":
                out = node.args[0]
                outputs = list(out) if isinstance(out, (list, tuple)) else [out]
                continue
            if node.op != "call_function":
                raise FrontendError(f"FX node {node.name!r} ({node.op}) is not supported")
            span = node_span(source, i, _line(node))
            what = f"{_op_name(node.target)} node {_line(node)!r}"
            try:
                if node.target is operator.getitem:
                    self.values[node] = _getitem(self.values[node.args[0]], node.args[1], node)
                    continue
                args = Args(self, node)
                out = ops[node.target](args)
                foldable = all(self._is_constant(v) for v in _exprs(args.values))
                self.values[node] = self._bind(out, span, foldable)
            except FrontendError as e:
                raise FrontendError(f"{what}: {e.message}", span) from None
            except Exception as e:  # a RelayError from type inference, or a converter bug
                msg = getattr(e, "message", None) or f"{type(e).__name__}: {e}"
                raise FrontendError(f"{what} could not be converted: {msg}", span) from None
        results = [self._output(o) for o in outputs]
        body = results[0] if len(results) == 1 else Tuple(tuple(results))
        order = [s.target for s in self.ep.graph_signature.input_specs if s.target in self.params]
        return IRModule.from_expr(Function(self.inputs + [self.params[t] for t in order], body))

    def _is_constant(self, e: Expr) -> bool:
        return isinstance(e, Constant) or id(e) in self._constant

    def _bind(self, out: Any, span: Any, foldable: bool) -> Any:
        if out is None:
            return None
        if isinstance(out, TupleWrapper):
            out = [out[i] for i in range(len(out))]
        elif isinstance(out, Expr) and isinstance(type_of(out), TupleType):
            out = [TupleGetItem(out, i) for i in range(len(type_of(out).fields))]
        if isinstance(out, (list, tuple)):
            return [self._bind(o, span, foldable) for o in out]
        _stamp(out, span)
        # type each node as it is made: type_of only types what is not typed yet, and only
        # the fragment's root keeps its type, so the typed frontier must follow the walk
        type_of(out)
        if not foldable:
            return out
        # `full` stays a call (a fill value and a shape) rather than a big constant, and a
        # transposed weight stays `transpose(w)` (addmm reads w itself): folding would copy
        if getattr(getattr(out, "op", None), "name", None) not in ("full", "transpose"):
            out = fold(out)
        self._constant.add(id(out))
        return out

    def _output(self, o: Any) -> Expr:
        e = self.value(o)
        if not isinstance(e, Expr):
            raise FrontendError(f"output {getattr(o, 'name', o)!r} is not a tensor")
        return e


def _check_no_mutation(ep: Any) -> None:
    """A program that updates its buffers (batch-norm statistics) has side effects Relay drops."""
    mutated = [s.target for s in ep.graph_signature.output_specs if s.kind.name != "USER_OUTPUT"]
    if mutated:
        shown = ", ".join(map(str, mutated[:4])) + (", ..." if len(mutated) > 4 else "")
        raise FrontendError(
            f"the program updates {shown} (a module in training mode?); "
            "call module.eval() before exporting"
        )


def _exprs(values: list) -> list:
    """The expressions among a node's argument values (tensor lists flattened)."""
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(x for x in v if isinstance(x, Expr))
        elif isinstance(v, Expr):
            out.append(v)
    return out


def _getitem(value: Any, index: int, node: Any) -> Any:
    if not isinstance(value, list) or value[index] is None:
        raise FrontendError(f"output {index} of {node.args[0].name!r} is not supported")
    return value[index]


def _numpy(tensor: Any, name: str) -> np.ndarray:
    t = tensor.detach().cpu()
    relay_dtype(t.dtype)  # an unsupported dtype (bfloat16, complex) is an error here
    return t.numpy().copy()


def _root_name(ep: Any) -> str:
    for node in ep.graph.nodes:
        stack = node.meta.get("nn_module_stack")
        if stack:
            root = list(stack.values())[0][1]
            if isinstance(root, str):
                return root.rpartition(".")[2]  # 'torch_models.ResNet' -> 'ResNet'
            return getattr(root, "__name__", "module")
    return "module"


def _op_name(target: Any) -> str:
    """``aten.convolution.default`` for an op overload, the function name otherwise."""
    name = str(target)
    return name if name.startswith("aten.") or "." in name else getattr(target, "__name__", name)


def _unsupported(ep: Any, ops: Mapping[Any, Callable], needs: Mapping[Any, list]) -> None:
    import operator

    missing: dict[str, list[str]] = {}
    why: dict[str, list[str]] = {}
    for node in ep.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        if node.target not in ops:
            missing.setdefault(_op_name(node.target), []).append(_line(node))
            if node.target in needs:
                why[_op_name(node.target)] = needs[node.target]
    if not missing:
        return
    lines = []
    for op, where in sorted(missing.items()):
        shown = ", ".join(where[:5]) + (f", ... ({len(where)} nodes)" if len(where) > 5 else "")
        because = f" [needs the Relay operator(s) {', '.join(why[op])}]" if op in why else ""
        lines.append(f"  {op}: {shown}{because}")
    raise FrontendError(
        f"the program uses {len(missing)} ATen operator(s) relay_nb cannot import:\n"
        + "\n".join(lines)
    )


def from_exported_program(
    exported_program: Any, freeze_params: bool = True, decompose: bool = True
) -> tuple[IRModule, dict[str, np.ndarray]]:
    """Convert a ``torch.export.ExportedProgram`` into a Relay module.

    Parameters
    ----------
    exported_program : torch.export.ExportedProgram
        What ``torch.export.export(module, example_inputs)`` returns.
    freeze_params : bool
        True: weights and buffers become constants and ``params`` is ``{}`` (as
        ``from_onnx``).  False: floating-point weights and buffers become parameters named
        by their module path (``%layer1.0.conv1.weight``) and ``params`` maps those names to
        arrays; integer and bool buffers (masks, indices) stay constants.
    decompose : bool
        Run ``run_decompositions()`` first, so the graph uses only core ATen operators.

    Returns
    -------
    (IRModule, dict)
        The type-checked module (``@main`` takes the user inputs, then the parameters) and
        the parameter values.

    Examples
    --------
    >>> ep = torch.export.export(model.eval(), (x,))
    >>> mod, params = relay.frontend.from_exported_program(ep, freeze_params=False)
    >>> relay.create_executor("jit", mod).evaluate()(x.numpy(), *params.values())
    """
    torch = _torch()
    if not isinstance(exported_program, torch.export.ExportedProgram):
        raise FrontendError(
            "from_exported_program expects a torch.export.ExportedProgram, "
            f"got {type(exported_program).__name__}"
        )
    from ..transform.infer_type import InferType
    from .pytorch_ops import ATEN_OPS, missing_relay_ops

    ep = exported_program.run_decompositions() if decompose else exported_program
    _check_no_mutation(ep)
    needs = missing_relay_ops()
    table = {k: v for k, v in ATEN_OPS.items() if k not in needs}
    _unsupported(ep, table, needs)
    g = _Graph(ep, freeze_params)
    mod = InferType()(g.run(table))
    return mod, dict(g.param_values)


def from_pytorch(
    module: Any, example_inputs: Any, freeze_params: bool = True
) -> tuple[IRModule, dict[str, np.ndarray]]:
    """Convert a ``torch.nn.Module`` into a Relay module, through ``torch.export``.

    The module is exported with ``example_inputs`` (a tensor or a tuple of tensors; the
    Relay program has their static shapes), decomposed to core ATen operators and
    converted by :func:`from_exported_program`.  Put the module in eval mode first: a
    training-mode module updates its buffers, which is reported as an error.

    Examples
    --------
    >>> mod, params = relay.frontend.from_pytorch(model.eval(), (torch.randn(1, 3, 224, 224),))
    >>> relay.build(mod)(image)
    """
    torch = _torch()
    if not isinstance(module, torch.nn.Module):
        raise FrontendError(f"from_pytorch expects a torch.nn.Module, got {type(module).__name__}")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    if not isinstance(example_inputs, (tuple, list)):
        raise FrontendError("example_inputs must be a tensor or a tuple of tensors")
    try:
        ep = torch.export.export(module, tuple(example_inputs))
    except Exception as e:  # torch's export errors are long; the first line says what failed
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise FrontendError(f"torch.export could not trace the module: {first}") from None
    return from_exported_program(ep, freeze_params=freeze_params)


__all__ = ["from_pytorch", "from_exported_program", "module_path", "relay_dtype", "Args"]
