"""``relay.build(mod)``: compile every kernel of a module now; call and inspect it later.

As TVM's ``relay.build``, it first runs the default optimization pipeline
(:func:`relay_nb.transform.pipeline.optimize` at the current PassContext's ``opt_level``:
``batch_norm`` becomes arithmetic that fuses into the convolution before it, constants
fold...), which ends with FuseOps.  A :class:`BuiltModule` holds that module, one
:class:`~.kernel.Kernel` per primitive function (compiled eagerly, through the
process-wide cache) and an executor running the module with them.  It is called like the function it was built from (``lib(x, w)`` runs
``@main``, ``lib["f"]`` any global), as many times as wanted, and shows in a notebook as
a table of its kernels; ``lib.report()`` says which ops ran natively and which fell back
to numpy (and why), with compile and run times.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ...ir.expr import Call, Function, Op
from ...ir.functor import post_order
from ...ir.module import IRModule
from .cache import KernelCache
from .executor import JITExecutor
from .heap import release_freed
from .offload import parallel_compiles
from .pool import prepare_native
from .kernel import Kernel
from .plan import PlanMemory


def _primitive_functions(mod: IRModule) -> list[Function]:
    """Every primitive function of the module, each once, in program order."""
    out: list[Function] = []
    seen: set = set()
    for gv in mod.get_global_vars():
        for node in post_order(mod[gv.name_hint]):
            if type(node) is Function and node.is_primitive and node not in seen:
                seen.add(node)
                out.append(node)
    return out


def _walk(root: Function):
    """Nodes outside primitive functions (iterative)."""
    from ...ir.functor import expr_children

    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        yield node
        if type(node) is Function and node.is_primitive:
            continue
        stack.extend(expr_children(node))


@dataclass
class BuildReport:
    """Which ops ran natively and which fell back, with the kernels' times."""

    kernels: list[Kernel]
    interpreted_ops: list[str] = field(default_factory=list)
    cache: str = ""  # the kernel cache's size line (KernelCache.summary)
    memory: Optional[PlanMemory] = None  # @main's planned memory, when it runs as a Plan

    @property
    def native_ops(self) -> list[str]:
        return sorted({op for k in self.kernels if k.ran_native for op in k.ops})

    @property
    def fallback_ops(self) -> dict[str, str]:
        """op name -> why it ran on numpy: its own missing lowering, or the op it is
        fused with (a kernel runs natively only if every op in it has a lowering)."""
        out: dict[str, str] = {}
        for k in self.kernels:
            if not k.ran_native:
                for op in k.ops:
                    if op == k.fallback_op or not k.fallback_op:
                        out[op] = k.reason
                    else:
                        out.setdefault(op, f"fused with {k.fallback_op}")
        return out

    def rows(self) -> list[tuple]:
        return [
            (k.name, ", ".join(k.ops), k.how(), _compile_seconds(k) * 1e3, k.calls, k.run_seconds * 1e3)
            for k in self.kernels
        ]

    def __str__(self) -> str:
        native = sum(k.ran_native for k in self.kernels)
        loaded = sum(k.from_disk for k in self.kernels)
        aside = sum(k.in_compile_process for k in self.kernels)
        lines = [f"{len(self.kernels)} kernels: {native} native, {len(self.kernels) - native} fell back to numpy"]
        if loaded:
            lines[0] += f"; {loaded} loaded from the disk cache"
        if aside:
            lines[0] += f"; {aside} compiled by a second process"
        lines.append(f"{'kernel':40} {'how':28} {'compile ms':>10} {'calls':>6} {'run ms':>9}")
        for name, ops, how, comp, calls, run in self.rows():
            lines.append(f"{name[:40]:40} {how[:28]:28} {comp:10.2f} {calls:6d} {run:9.3f}")
        lines.append("native ops: " + (", ".join(self.native_ops) or "none"))
        fb = self.fallback_ops
        lines.append("fell back: " + (", ".join(f"{op} ({why})" for op, why in fb.items()) or "none"))
        if self.interpreted_ops:
            lines.append("interpreted (scalar or polymorphic calls): " + ", ".join(sorted(set(self.interpreted_ops))))
        if self.memory is not None:
            lines.append(str(self.memory))
        if self.cache:
            lines.append(self.cache)
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{h}</th>" for h in ("kernel", "ops", "how", "compile ms", "calls", "run ms"))
        body = "".join(
            f"<tr><td>{html.escape(n)}</td><td>{html.escape(o)}</td><td>{html.escape(h)}</td>"
            f"<td>{c:.2f}</td><td>{k}</td><td>{r:.3f}</td></tr>"
            for n, o, h, c, k, r in self.rows()
        )
        fb = self.fallback_ops
        note = html.escape("fell back: " + (", ".join(f"{op} ({why})" for op, why in fb.items()) or "none"))
        cache = f"<p>{html.escape(self.cache)}</p>" if self.cache else ""
        memory = f"<p>{html.escape(str(self.memory))}</p>" if self.memory is not None else ""
        return f"<table><tr>{head}</tr>{body}</table><p>{note}</p>{memory}{cache}"


def _compile_seconds(k: Kernel) -> float:
    """A kernel's compile time; a specializing kernel's is that of its shapes so far."""
    shapes = getattr(k, "specialized", None)
    if shapes is not None:
        return sum(s.compile_seconds for s in shapes.values())
    return k.compile_seconds


class BuiltModule:
    """A module compiled by :func:`build`: callable, indexable by global name, inspectable.

    Examples
    --------
    >>> lib = relay.build(mod)
    >>> lib(x)                       # @main
    >>> lib["helper"](y)             # another global
    >>> lib.kernels[0].optimized_ir  # a kernel's LLVM IR after optimization
    >>> lib.report()                 # native / fallback ops, compile and run times
    """

    def __init__(self, mod: IRModule, executor: JITExecutor, kernels: list[Kernel]):
        self.mod = mod  # the fused module the kernels come from
        self.kernels = kernels
        self._executor = executor
        self._interpreter = executor.interpreter(mod)
        self._functions: dict[str, Callable[..., Any]] = {}
        self.threads = executor.threads  # what the kernels split across

    def __getitem__(self, name: str) -> Callable[..., Any]:
        """The compiled global ``name`` (``lib["main"]``) as a Python callable."""
        fn = self._functions.get(name)
        if fn is None:
            gv = self.mod.get_global_var(name)
            fn = self._functions[name] = self._executor._wrap(
                self._interpreter, self.mod[gv.name_hint], "@" + name, self.mod
            )
        return fn

    def __call__(self, *args: Any) -> Any:
        main = self._functions.get("main") or self["main"]
        return main(*args)

    def report(self) -> BuildReport:
        """Which ops ran natively, which fell back to numpy, the kernels' times, and the planned
        memory of ``@main`` (``.memory``: arena, weights, workspace, and the intermediates'
        bytes without buffer sharing) when it runs as a flat plan."""
        scalar_ops = [n.op.name for f in self._executor.interpreted for n in _walk_body(f)]
        plan = getattr(self["main"], "plan", None) if "main" in self.mod else None
        return BuildReport(
            list(self.kernels),
            _interpreted(self.mod) + scalar_ops,
            self._executor.cache.summary(),
            plan.memory() if plan is not None else None,
        )

    @property
    def compile_seconds(self) -> float:
        return sum(k.compile_seconds for k in self.kernels)

    def __repr__(self) -> str:
        native = sum(k.ran_native for k in self.kernels)
        lines = [f"<BuiltModule: {len(self.kernels)} kernels ({native} native), compiled in {self.compile_seconds * 1e3:.1f} ms>"]
        lines += ["  " + k.summary() for k in self.kernels]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        kernels = "".join(k._repr_html_() for k in self.kernels)
        return f"<div><b>BuiltModule</b>{self.report()._repr_html_()}{kernels}</div>"


def _walk_body(func: Function):
    from ...ir.functor import post_order as _po

    return [n for n in _po(func.body) if type(n) is Call and type(n.op) is Op]


def _interpreted(mod: IRModule) -> list[str]:
    out = []
    for gv in mod.get_global_vars():
        for node in _walk(mod[gv.name_hint]):
            if type(node) is Call and type(node.op) is Op:
                out.append(node.op.name)
    return out


def build(
    mod: IRModule,
    target: Any = "llvm",
    params: Optional[dict] = None,
    cache: Optional[KernelCache] = None,
    scalars: str = "interpret",
    threads: Optional[int] = None,
) -> BuiltModule:
    """Optimize, fuse and compile every primitive function of ``mod``.

    Parameters
    ----------
    mod : IRModule
        The program; ``@main`` is what calling the result runs.
    target : str
        Only ``"llvm"`` (the host CPU, through llvmlite).
    params : dict, optional
        Arrays for parameters of ``@main``, by name (as workloads and importers return
        them): bound as constants before optimization, so what depends only on weights is
        folded at build time; the built function then takes the remaining parameters.
    cache : KernelCache, optional
        Where kernels are looked up and stored (default: the process-wide cache).
    scalars : {"interpret", "native"}
        Whether primitive functions on scalars only run in the interpreter (default: a
        native call costs more than numpy's scalar arithmetic) or are compiled too.
    threads : int, optional
        How many threads a kernel splits its outer loops across (GEMM and conv tiles,
        rows of reductions, chunks of elementwise loops; small kernels run whole).
        Default: ``RELAY_NB_NUM_THREADS`` if set, else every core the process may run on
        (``os.sched_getaffinity``).  Results are the same for every thread count.

    Returns
    -------
    BuiltModule
        ``lib(*args)`` runs ``@main``; ``lib.kernels``, ``lib.report()``.

    Examples
    --------
    >>> lib = relay.build(relay.parse("def @main(%x: Tensor[(4), float32]) { exp(%x) }"))
    >>> lib(np.zeros(4, "float32"))
    array([1., 1., 1., 1.], dtype=float32)
    >>> lib.report().native_ops
    ['exp']
    """
    from ...errors import RelayError

    if target not in ("llvm", None) and str(target).split()[0] != "llvm":
        raise RelayError(f"build: only the 'llvm' target exists, got {target!r}")
    from ...transform.bind_params import bind_module_params
    from ...transform.infra import PassContext

    mod = bind_module_params(mod, params or {})
    from ...transform.pipeline import optimize
    from ...transform.typed import fully_typed

    optimized = optimize(mod, opt_level=PassContext.current().opt_level)
    del mod  # the bound copy: its folded-away constants can go before LLVM loads
    release_freed()
    executor = JITExecutor(optimized, cache=cache, scalars=scalars, threads=threads)
    # the pipeline's passes keep the types InferType gave (when a rewrite left a node
    # without one, inference runs again)
    fused = executor._typed(optimized, checked=fully_typed(optimized))
    kernels: list[Kernel] = []
    functions = _primitive_functions(fused)
    with parallel_compiles(len(functions)):  # LLVM on a second core while this one lowers
        for f in functions:
            k = executor.primitive(f)
            if k is not None and all(k is not other for other in kernels):
                kernels.append(k)
    prepare_native(kernels)
    return BuiltModule(fused, executor, kernels)


__all__ = ["BuildReport", "BuiltModule", "build"]
