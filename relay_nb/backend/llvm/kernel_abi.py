"""How a compiled kernel is called, apart from the code generator: :class:`Lowered` (its
arguments, results, workspace and split), its constant arguments
(:func:`kernel_constants`) and the constants compiled in by value instead
(:func:`inlined_constants`).

The code generator (:mod:`.codegen.lower`) makes these; the kernel cache also needs them
when it loads a kernel from the disk cache or binds a compiled kernel to another function
of the same skeleton.  Kept apart from the generator, a warm build (every kernel from
the disk cache) imports neither the generator's modules (codegen.lower, context, index,
math; the kernels' drivers, GEMM and conv generators) nor the lowering rules: the least CPU
time of a warm ResNet-50 build went from 0.29 to 0.26 s here.  (``llvmlite.ir`` itself
still loads: ``llvmlite.binding`` imports it.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ...ir.expr import Call, Constant, Expr, Function, Op, Tuple, TupleGetItem, Var
from ...ir.functor import ExprMutator

ALIGN = 64  # workspace buffers start on cache lines

SMALL_EXPONENTS = (1, 2, 3, 4)
"""Constant float exponents that ``power`` computes by multiplying: ``llvm.pow`` is a libm
call per element that the vectorizer cannot widen (a LayerNorm's ``power(d, 2f)`` and
GPT-2's ``power(x, 3f)`` ran at ~40 ns per element), a product of 1-3 multiplies is exact
or within an ulp of ``powf`` and keeps its NaN, infinity and overflow cases."""


@dataclass
class Lowered:
    """A lowered kernel: the module and how to call its function."""

    module: Any  # the llvmlite.ir.Module (None for a kernel loaded from the disk cache)
    symbol: str
    inputs: list[tuple[str, Any]]  # (name, TensorType)
    constants: list[np.ndarray]
    outputs: list[Any]  # TensorTypes
    workspace_bytes: int
    uses_status: bool
    ops: list[str] = field(default_factory=list)
    errors: dict[int, str] = field(default_factory=dict)
    peeled: list[bool] = field(default_factory=list)  # per output: its loop peels to alignment (PEEL_BYTES)
    parallel: int = 0  # units of the loop split across threads (0: not splittable)
    unit_ns: float = 0.0  # estimated single-core time of one unit
    chunk_ns: float = 0.0  # estimated work each chunk of a split call repeats
    packings: dict = field(default_factory=dict)  # constant index -> how the kernel reads it packed
    # whether a ``rewrite`` rule decomposed an op first (None: not known): a kernel bound to
    # another function of its skeleton then finds that function's constants without loading
    # the rules (see kernel_constants), which a warm build otherwise imports only for this
    legalized: Optional[bool] = None

    @property
    def ir(self) -> str:
        return str(self.module)


def post_order(body: Expr) -> list[Expr]:
    """The nodes of a primitive function's body, operands first (raises the generator's
    ``Unsupported`` for what a primitive function may not hold)."""
    out: list[Expr] = []
    seen: set = set()
    stack: list[tuple[Expr, bool]] = [(body, False)]
    while stack:
        node, done = stack.pop()
        if done:
            out.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        t = type(node)
        if t is Call:
            if type(node.op) is not Op:
                raise _unsupported("a call of a function inside a primitive function")
            children = node.args
        elif t is Tuple:
            children = node.fields
        elif t is TupleGetItem:
            children = (node.tuple_value,)
        elif t in (Var, Constant):
            children = ()
        else:
            raise _unsupported(f"a {t.__name__} inside a primitive function")
        for c in reversed(children):
            if c not in seen:
                stack.append((c, False))
    return out


def _unsupported(reason: str) -> Exception:
    from .codegen.types import Unsupported

    return Unsupported(reason)


def kernel_constants(func: Function, legalized: Optional[bool] = None) -> list[np.ndarray]:
    """The constant arguments of ``func``'s kernel, in the order :func:`.codegen.lower.lower`
    passes them: a kernel compiled for one function runs any function of the same skeleton
    (equal but for constant values) when given that function's constants.  ``legalized``:
    the kernel's :attr:`Lowered.legalized` (None: look the op rules up)."""
    nodes = post_order(func.body)
    if legalized is None:
        legalized = bool(rewrite_rules(nodes))
    if legalized:  # the decompositions' constants too, in lower's order
        nodes = post_order(legalize(func).body)
    inlined = _inlined(nodes)
    return [constant_data(n) for n in nodes if type(n) is Constant and n not in inlined]


def inlined_constants(func: Function) -> set:
    """The constants of ``func`` compiled into its code by value rather than passed in:
    the kernel cache keeps them in the skeleton, so they key the compiled code."""
    return _inlined(post_order(func.body))


def _inlined(nodes: list) -> set:
    return {c for n in nodes if type(n) is Call and type(n.op) is Op for c in value_constants(n)}


def small_exponent(e) -> int | None:
    """The exponent as an int of :data:`SMALL_EXPONENTS` if ``e`` is a float scalar
    constant (compiled in by value: see :func:`value_constants`)."""
    if type(e) is not Constant or e.data.ndim != 0 or e._checked_type.dtype not in ("float32", "float64"):
        return None
    v = float(e.data)
    return int(v) if v in SMALL_EXPONENTS else None


def value_constants(call: Call) -> list:
    """The constants of ``call`` whose value its code depends on (not kernel arguments):
    a small integer exponent of a float ``power``."""
    if call.op.name == "power" and small_exponent(call.args[1]) is not None:
        return [call.args[1]]
    return []


def constant_data(c: Constant) -> np.ndarray:
    """``c``'s data in its inferred dtype (an unsuffixed literal takes its context's)."""
    from ...op.impl._util import convert

    return convert(c.data, c._checked_type.dtype)


class _Legalize(ExprMutator):
    def __init__(self, rules: dict):
        super().__init__()
        self.rules = rules

    def visit_call(self, call: Call) -> Expr:
        new = super().visit_call(call)
        r = self.rules.get(call.op.name) if type(call.op) is Op else None
        return new if r is None else r.fn(new)


def rewrite_rules(nodes: list) -> dict:
    """The ``rewrite`` rules of the ops called in ``nodes`` (empty: nothing to legalize)."""
    from .codegen.rules import llvm_rules

    rules = llvm_rules()
    out = {}
    for n in nodes:
        if type(n) is Call and type(n.op) is Op:
            r = rules.get(n.op.name)
            if r is not None and r.kind == "rewrite":
                out[n.op.name] = r
    return out


def legalize(func: Function) -> Function:
    """``func`` with each call of a ``rewrite``-rule op replaced by its decomposition, typed
    (``func`` itself when it has none).  Deterministic, so the kernel's constants (which a
    decomposition may add) come out the same for every function of one skeleton."""
    rules = rewrite_rules(post_order(func.body))
    if not rules:
        return func
    body = _Legalize(rules).visit(func.body)
    out = Function(func.params, body, None, func.type_params, func.attrs)
    from ...errors import RelayError
    from ...typing.infer import infer_type

    try:
        infer_type(out)
    except RelayError as exc:  # a decomposition that does not fit this call
        raise _unsupported(f"its decomposition does not type-check: {exc.message}") from None
    return out


__all__ = ["ALIGN", "Lowered", "inlined_constants", "kernel_constants", "legalize", "value_constants"]
