"""``trace_passes``: run a pipeline one pass at a time and check every step still computes
the same thing.

This is the logic of the notebook's pass stepper, kept free of any front end (DESIGN.md
§4.11).  The passes run once under a :class:`~relay_nb.transform.PassRecorder` instrument
(so opt-level gating, ``required`` passes and nested ``Sequential`` behave exactly as in a
real compile); every recorded leaf pass becomes a :class:`Step`.  Each step's program is
then executed on the same inputs (given, or random ones of ``@main``'s parameter types from
a fixed seed) with the JIT and the interpreter, and compared with what the *original*
program computed on that executor: float tensors within a tolerance, everything else
exactly, tuples and ADT values structurally.  The first step whose result differs (or whose
pass crashed, or whose program no longer runs) is the trace's ``flagged`` step.

Nothing here raises into the notebook: a pass that throws or a program that fails to run
is recorded in ``Step.error``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from ..errors import RelayError
from ..eval.values import Closure, ConstructorValue, RefValue
from ..ir.expr import Expr
from ..ir.functor import post_order
from ..ir.module import IRModule
from ..ir.ty import TensorType, TupleType, Type
from ..transform.infra import PASSES, Pass, PassContext, PassInfo, Sequential, get_pass
from ..transform.instrument import PassRecord, PassRecorder

PassSpec = Union[str, int, Pass, Sequence[Union[str, Pass]]]
"""What ``passes=`` accepts: ``"O3"``/``3`` (the default pipeline at that opt level), a
comma list of registered pass names, a Pass, or a list of names and Pass objects."""

# --- passes ------------------------------------------------------------------------------


@dataclass
class Pipeline:
    """A resolved ``passes=`` argument: how to run it, and a label for the notebook."""

    label: str
    opt_level: Optional[int] = None  # set for "O0".."O3": relay.optimize at that level
    passes: list[Pass] = field(default_factory=list)

    def run(self, mod: IRModule, instruments: Sequence[Any] = ()) -> IRModule:
        """Apply the pipeline to ``mod`` with ``instruments`` observing every pass."""
        if self.opt_level is not None:
            from ..transform.pipeline import optimize

            with PassContext(opt_level=self.opt_level, instruments=instruments):
                return optimize(mod, opt_level=self.opt_level)
        # Passes the user names explicitly run whatever their opt level (TVM's required_pass).
        names = [p.info.name for p in self.passes]
        with PassContext(opt_level=3, required_pass=names, instruments=instruments):
            return Sequential(self.passes, name="pipeline")(mod)


def _opt_level(spec: Any) -> Optional[int]:
    if isinstance(spec, bool):
        return None
    if isinstance(spec, int):
        return spec
    if isinstance(spec, str):
        s = spec.strip()
        if len(s) == 2 and s[0] in "Oo" and s[1].isdigit():
            return int(s[1])
    return None


def unknown_pass_message(name: str) -> str:
    """'unknown pass X; did you mean Y?' and every name that would have worked."""
    import difflib

    close = difflib.get_close_matches(name, list(PASSES), n=2)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return f"unknown pass {name}{hint}\n  valid: {', '.join(sorted(PASSES))}, or an opt level O0..O3"


def resolve_passes(passes: PassSpec, namespace: Optional[Mapping[str, Any]] = None) -> Pipeline:
    """Turn ``passes=`` into a :class:`Pipeline`.

    A name is looked up in the pass registry (``relay.transform.PASSES``) and then in
    ``namespace`` (a notebook's variables), so a ``@function_pass`` defined in a cell can be
    named in ``%%relay --passes FoldConstant,my_pass``.

    >>> resolve_passes("O3").opt_level
    3
    >>> [p.info.name for p in resolve_passes("FoldConstant,DeadCodeElimination").passes]
    ['FoldConstant', 'DeadCodeElimination']
    """
    level = _opt_level(passes)
    if level is not None:
        if not 0 <= level <= 3:
            raise RelayError(f"opt level must be O0..O3, got {passes!r}")
        return Pipeline(f"O{level}", opt_level=level)
    if isinstance(passes, Pass):
        items: list[Any] = [passes]
    elif isinstance(passes, str):
        items = [p.strip() for p in passes.split(",") if p.strip()]
    elif isinstance(passes, Iterable):
        items = list(passes)
    else:
        raise RelayError(
            f"passes must be names, Pass objects or an opt level, not {type(passes).__name__}"
        )
    resolved: list[Pass] = []
    for item in items:
        if isinstance(item, Pass):
            resolved.append(item)
        elif isinstance(item, str):
            if item in PASSES:
                resolved.append(get_pass(item))
            elif namespace is not None and isinstance(namespace.get(item), Pass):
                resolved.append(namespace[item])
            else:
                raise RelayError(unknown_pass_message(item))
        else:
            raise RelayError(f"not a pass: {item!r} ({type(item).__name__})")
    if not resolved:
        raise RelayError("no passes given")
    return Pipeline(", ".join(p.info.name for p in resolved), passes=resolved)


# --- inputs and results ------------------------------------------------------------------------


def _random_value(ty: Type, rng: np.random.Generator, where: str, low: float) -> Any:
    if isinstance(ty, TupleType):
        return tuple(_random_value(f, rng, f"{where}.{i}", low) for i, f in enumerate(ty.fields))
    if (
        not isinstance(ty, TensorType)
        or not isinstance(ty.dtype, str)
        or not isinstance(ty.shape, tuple)
    ):
        from ..typing.text import type_text

        raise RelayError(
            f"cannot make a random input for {where} of type {type_text(ty)}; pass inputs="
        )
    shape = tuple(d if isinstance(d, int) else 2 for d in ty.shape)  # `?` dims: pick 2
    dtype = ty.dtype
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype("bool")
    if dtype.startswith("uint"):
        return rng.integers(0, 6, shape).astype(dtype)
    if dtype.startswith("int"):
        return rng.integers(-5, 6, shape).astype(dtype)
    if dtype.startswith(("float", "bfloat")):
        return rng.uniform(low, 2.0, shape).astype(dtype)
    raise RelayError(f"cannot make a random input for {where} of dtype {dtype}; pass inputs=")


def make_inputs(mod: IRModule, seed: int = 0, positive: bool = False) -> list[Any]:
    """Random arguments for ``@main`` from its parameter types (fixed seed: reproducible).

    Floats are uniform in [-2, 2] (in [0.1, 2] with ``positive``, e.g. for a batch norm's
    variance), signed ints in [-5, 5], unsigned in [0, 5]; a ``?`` dimension becomes 2;
    tuple parameters get tuples.

    >>> make_inputs(relay.parse("def @main(%x: Tensor[(2), int32]) { %x }"))[0].dtype
    dtype('int32')
    """
    from ..transform.infer_type import InferType

    typed = InferType()(mod)
    main = typed["main"]
    rng = np.random.default_rng(seed)
    low = 0.1 if positive else -2.0
    return [_random_value(p.checked_type, rng, "%" + p.name_hint, low) for p in main.params]


def _bind_inputs(mod: IRModule, inputs: Any) -> list[Any]:
    """``inputs`` as a positional list: a sequence as is, a dict by parameter name."""
    if isinstance(inputs, Mapping):
        params = [p.name_hint for p in mod["main"].params]
        missing = [n for n in params if n not in inputs]
        if missing:
            raise RelayError(f"inputs is missing {', '.join('%' + n for n in missing)}")
        return [inputs[n] for n in params]
    if isinstance(inputs, np.ndarray):
        return [inputs]
    return list(inputs)


def values_close(a: Any, b: Any, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
    """Two run-time values agree: float tensors within ``rtol``/``atol`` (NaN equals NaN),
    integer and bool tensors exactly, tuples and ADT values field by field (iterative).

    Two closures count as equal (functions cannot be compared by value).

    >>> values_close(np.float32([1, 2]), np.float32([1, 2.000001])), values_close(np.int32(1), np.int32(2))
    (True, False)
    """
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, ConstructorValue) or isinstance(y, ConstructorValue):
            if not (isinstance(x, ConstructorValue) and isinstance(y, ConstructorValue)):
                return False
            if x.constructor.name_hint != y.constructor.name_hint or len(x.fields) != len(y.fields):
                return False
            stack.extend(zip(x.fields, y.fields))
        elif isinstance(x, tuple) or isinstance(y, tuple):
            if not (isinstance(x, tuple) and isinstance(y, tuple)) or len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif isinstance(x, RefValue) or isinstance(y, RefValue):
            if not (isinstance(x, RefValue) and isinstance(y, RefValue)):
                return False
            stack.append((x.value, y.value))
        elif isinstance(x, Closure) or isinstance(y, Closure):
            if not (isinstance(x, Closure) and isinstance(y, Closure)):
                return False
        else:
            xa, ya = np.asarray(x), np.asarray(y)
            if xa.shape != ya.shape or xa.dtype != ya.dtype:
                return False
            if xa.dtype.kind in "fc":
                if not np.allclose(xa, ya, rtol=rtol, atol=atol, equal_nan=True):
                    return False
            elif not np.array_equal(xa, ya):
                return False
    return True


def _describe(exc: BaseException) -> str:
    if isinstance(exc, RelayError):
        return exc.render()
    return f"{type(exc).__name__}: {exc}"


def _runner(kind: str, mod: IRModule) -> Callable[..., Any]:
    from ..eval.executor import create_executor

    return create_executor(kind, mod=mod).evaluate()


def _diff(old_mod: IRModule, new_mod: IRModule) -> tuple[list[Expr], list[Expr]]:
    """(nodes of ``old_mod`` gone from ``new_mod``, nodes new in ``new_mod``), each
    children before parents, in its program's post order.

    A pass returns untouched subtrees as the same objects, so the walk of ``new_mod``
    stops at each node ``old_mod`` has: everything under it is old too.  What of
    ``old_mod`` survives is what lies under those stops; the rest was removed.
    """
    if old_mod is new_mod:
        return [], []
    old_order = _walk(old_mod.functions.values())
    old = set(old_order)
    kept: list[Expr] = []  # old nodes the new program reaches directly
    new = _walk(new_mod.functions.values(), stop=old, stopped=kept)
    survivors = set(_walk(kept))
    return [n for n in old_order if n not in survivors], new


def _walk(roots: Iterable[Expr], stop: Collection = (), stopped: Optional[list] = None) -> list:
    """The nodes reachable from ``roots`` once each, children before parents (as
    ``post_order`` of each root in turn, skipping what an earlier root reached), not
    entering nodes in ``stop`` (appended to ``stopped``)."""
    seen: set[Expr] = set()
    out: list[Expr] = []
    for root in roots:
        out.extend(post_order(root, seen=seen, stop=stop, stopped=stopped))
    return out


# --- steps -------------------------------------------------------------------------------------


@dataclass(eq=False)
class Step:
    """One pass of a traced pipeline.

    ``changed`` is structural (a pass that only fills in types did not change the program);
    ``results_match`` is True/False after validation, None when the program could not be
    validated (no inputs could be made); ``result`` is the value the main executor
    computed, ``results`` the value of every executor; ``error`` says why a pass or a run
    failed; ``executed`` is False for an unchanged program, whose validation is the
    previous step's (the same program computes the same value).
    """

    index: int
    name: str
    before: IRModule
    after: IRModule
    changed: bool
    seconds: float
    depth: int = 0
    results_match: Optional[bool] = None
    result: Any = None
    results: dict[str, Any] = field(default_factory=dict)
    error: Optional[str] = None
    executed: bool = False
    flagged: bool = False
    _diff: Optional[tuple[list[Expr], list[Expr]]] = field(default=None, repr=False)

    @property
    def changed_nodes(self) -> list[Expr]:
        """The expressions of ``after`` that are not in ``before`` (by identity: a pass
        returns untouched subtrees as the same objects), children before parents."""
        return self._removed_and_changed()[1]

    @property
    def removed_nodes(self) -> list[Expr]:
        """The expressions of ``before`` that are gone from ``after`` (what the pass
        replaced or dropped), children before parents."""
        return self._removed_and_changed()[0]

    def _removed_and_changed(self) -> tuple[list[Expr], list[Expr]]:
        if self._diff is None:  # both from one walk of each program
            self._diff = _diff(self.before, self.after)
        return self._diff

    @property
    def status(self) -> str:
        """One word for views: ``match``, ``mismatch``, ``error`` or ``unchecked``."""
        if self.results_match is None:
            return "error" if self.error else "unchecked"
        return "match" if self.results_match else ("error" if self.error else "mismatch")


class Trace(list):
    """The steps of :func:`trace_passes` (a list of :class:`Step`) plus what they were
    checked against: ``mod`` (the original), ``final``, ``inputs``, ``reference`` (the
    original's value per executor), ``executors`` and ``notes``."""

    def __init__(self, steps: Iterable[Step] = ()):
        super().__init__(steps)
        self.mod: Optional[IRModule] = None
        self.final: Optional[IRModule] = None
        self.pipeline: Optional[Pipeline] = None
        self.inputs: Optional[list[Any]] = None
        self.reference: dict[str, Any] = {}
        self.executors: list[str] = []
        self.notes: list[str] = []

    @property
    def flagged(self) -> Optional[Step]:
        """The first step whose result differs from the original's (or that failed)."""
        return next((s for s in self if s.flagged), None)

    first_mismatch = flagged

    @property
    def total_seconds(self) -> float:
        return sum(s.seconds for s in self)

    def summary(self) -> str:
        """One line: steps, how many changed the program, and the validation verdict."""
        changed = sum(s.changed for s in self)
        text = f"{len(self)} passes, {changed} changed the program"
        bad = self.flagged
        if bad is not None:
            text += f"; first mismatch: step {bad.index + 1} {bad.name}"  # counted from 1, as shown
        elif self.executors and self.inputs is not None:
            text += f"; results match the original ({', '.join(self.executors)})"
        return text


def program_changed(before: IRModule, after: IRModule) -> bool:
    """Did a pass change the program?  Structurally, or in its sharing: CSE turns
    ``add(log(%x), log(%x))`` into one shared ``log``, which structural equality (a tree
    comparison) does not see, so the number of distinct nodes is compared too."""
    if before is after:
        return False
    from ..ir.structural import structural_equal

    if not structural_equal(before, after):
        return True
    old_funcs = {gv.name_hint: f for gv, f in before.functions.items()}
    for gv, func in after.functions.items():
        old = old_funcs.get(gv.name_hint)
        if old is None:
            return True
        if old is not func and sum(1 for _ in post_order(old)) != sum(1 for _ in post_order(func)):
            return True
    return False


class _Recorder(PassRecorder):
    """The stock recorder, also remembering the innermost pass running, so a pass that
    raises can be reported as a step."""

    def __init__(self) -> None:
        super().__init__(leaves_only=True, changed=program_changed)
        self.pending: Optional[tuple[PassInfo, IRModule, float]] = None

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        super().run_before_pass(mod, info)
        self.pending = (info, mod, time.perf_counter())

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        super().run_after_pass(mod, info)
        self.pending = None


def _record_steps(mod: IRModule, pipeline: Pipeline) -> tuple[list[Step], IRModule, Optional[str]]:
    """Run the pipeline once; the steps, the final module and the error (if a pass raised)."""
    recorder = _Recorder()
    error = None
    final = mod
    try:
        final = pipeline.run(mod, instruments=[recorder])
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # a user's pass may raise anything: show it, do not crash
        error = _describe(exc)
    steps = [_step_from(i, r) for i, r in enumerate(recorder.records)]
    if error is not None:
        if recorder.pending is not None:
            info, before, start = recorder.pending
            name = info.name
        else:
            name, before, start = (
                pipeline.label,
                (steps[-1].after if steps else mod),
                time.perf_counter(),
            )
        failed = Step(len(steps), name, before, before, False, time.perf_counter() - start)
        failed.error = f"pass {name} failed: {error}"
        failed.results_match = False
        steps.append(failed)
        final = before
    return steps, final, error


def _step_from(index: int, record: PassRecord) -> Step:
    return Step(
        index,
        record.name,
        record.before,
        record.after,
        record.changed,
        record.seconds,
        record.depth,
    )


def _all_finite(value: Any) -> bool:
    """No NaN or infinity in any float tensor of ``value`` (iterative over tuples/ADTs)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, ConstructorValue):
            stack.extend(v.fields)
        elif isinstance(v, tuple):
            stack.extend(v)
        elif isinstance(v, RefValue):
            stack.append(v.value)
        elif (
            isinstance(v, (np.ndarray, np.generic))
            and v.dtype.kind in "fc"
            and not np.all(np.isfinite(v))
        ):
            return False
    return True


def _prefer_finite_inputs(trace: Trace, seed: int) -> None:
    """Random inputs in [-2, 2] can make the original compute NaN (a variance below zero
    under a square root), and NaN == NaN makes every check pass: try positive inputs then."""
    assert trace.mod is not None and trace.inputs is not None
    try:
        first = _runner("interpreter", trace.mod)(*trace.inputs)
        if _all_finite(first):
            trace.reference["interpreter"] = first  # _validate need not run it again
            return
        positive = make_inputs(trace.mod, seed, positive=True)
        second = _runner("interpreter", trace.mod)(*positive)
        if _all_finite(second):
            trace.inputs = positive
            trace.reference["interpreter"] = second
            trace.notes.append(
                "random inputs in [-2, 2] made the result NaN or infinite; floats are drawn from [0.1, 2]"
            )
        else:
            trace.notes.append(
                "the original program's result is NaN or infinite on random inputs: pass inputs= to check more"
            )
    except KeyboardInterrupt:
        raise
    except Exception:  # _validate reports a program that cannot run
        pass


def _validate(trace: Trace, kinds: list[str], rtol: float, atol: float) -> None:
    """Run the original and every changed step; set results, results_match and flagged."""
    args = trace.inputs
    assert args is not None and trace.mod is not None
    for kind in list(kinds):
        if kind in trace.reference:
            continue
        try:
            trace.reference[kind] = _runner(kind, trace.mod)(*args)
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            kinds.remove(kind)
            trace.notes.append(
                f"the {kind} cannot run the original program, so it checks no step: {_describe(exc)}"
            )
    trace.executors = kinds
    if not kinds:
        return
    if len(kinds) == 2 and not values_close(
        trace.reference[kinds[0]], trace.reference[kinds[1]], rtol, atol
    ):
        trace.notes.append(
            "the JIT and the interpreter disagree on the original program; each is compared with itself"
        )
    previous: Optional[Step] = None
    for step in trace:
        if step.error is not None:  # the pass itself failed
            continue
        if not step.changed and previous is not None:
            # Structurally the same program as the step before: the same value.
            step.results, step.results_match = dict(previous.results), previous.results_match
            step.error = previous.error
        elif not step.changed:
            step.results, step.results_match = dict(trace.reference), True
        else:
            step.executed = True
            step.results_match = True
            for kind in kinds:
                try:
                    value = _runner(kind, step.after)(*args)
                except KeyboardInterrupt:
                    raise
                except Exception as exc:
                    step.error = f"{kind}: {_describe(exc)}"
                    step.results_match = False
                    continue
                step.results[kind] = value
                if not values_close(value, trace.reference[kind], rtol, atol):
                    step.results_match = False
        step.result = step.results.get(kinds[0])
        previous = step


def trace_passes(
    mod: IRModule,
    passes: PassSpec,
    inputs: Any = None,
    executor: str = "jit",
    *,
    seed: int = 0,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    namespace: Optional[Mapping[str, Any]] = None,
) -> Trace:
    """Run ``passes`` on ``mod`` one step at a time, executing the program after each step.

    Parameters
    ----------
    mod : IRModule
        The program; ``@main`` is what gets executed.
    passes : str, int, Pass or list
        ``"O3"`` / ``3`` (the default pipeline at that opt level), a comma list of
        registered pass names, or a list of names and Pass objects (a ``@function_pass``
        written in a notebook cell is a Pass).
    inputs : sequence or dict, optional
        Arguments for ``@main`` (a dict maps parameter names to values); by default random
        values of the parameter types from ``seed``.
    executor : {"jit", "interpreter"}
        ``"jit"`` runs every step with the JIT *and* the interpreter; ``"interpreter"``
        only with the interpreter.  An executor that cannot run the original program is
        dropped with a note (``trace.notes``).
    rtol, atol : float
        Tolerance for float tensors (passes may reassociate arithmetic).
    namespace : dict, optional
        Where pass names not in the registry are looked up (a notebook's variables).

    Returns
    -------
    Trace
        A list of :class:`Step`; ``trace.flagged`` is the first step whose result differs.

    Examples
    --------
    >>> mod = relay.parse("def @main(%x: Tensor[(2), float32]) { add(%x, multiply(%x, 0f)) }")
    >>> steps = trace_passes(mod, ["SimplifyExpr", "FoldConstant"], executor="interpreter")
    >>> [(s.name, s.changed, s.results_match) for s in steps]   # doctest: +SKIP
    [('SimplifyExpr', True, True), ('FoldConstant', False, True)]
    """
    if not isinstance(mod, IRModule):
        raise RelayError(f"trace_passes takes an IRModule, not {type(mod).__name__}")
    if executor not in ("jit", "interpreter"):
        raise RelayError(f"unknown executor {executor!r}; use 'jit' or 'interpreter'")
    pipeline = resolve_passes(passes, namespace)
    steps, final, _error = _record_steps(mod, pipeline)
    trace = Trace(steps)
    trace.mod, trace.final, trace.pipeline = mod, final, pipeline
    try:
        if "main" not in mod:
            raise RelayError("the module has no @main to execute")
        trace.inputs = make_inputs(mod, seed) if inputs is None else _bind_inputs(mod, inputs)
    except RelayError as exc:
        trace.notes.append(f"steps are not executed: {exc.message}")
    if trace.inputs is not None and inputs is None:
        _prefer_finite_inputs(trace, seed)
    if trace.inputs is not None:
        _validate(
            trace, ["jit", "interpreter"] if executor == "jit" else ["interpreter"], rtol, atol
        )
    for step in trace:
        if step.results_match is False:
            step.flagged = True
            break
    return trace


__all__ = [
    "Pipeline",
    "Step",
    "Trace",
    "make_inputs",
    "resolve_passes",
    "trace_passes",
    "values_close",
]
