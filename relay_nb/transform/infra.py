"""The pass infrastructure of seed 003: PassInfo, PassContext, ModulePass, FunctionPass,
Sequential, and the decorators that turn a Python function or class into a pass.

Every pass maps an IRModule to an IRModule under the current PassContext.  A context is
entered with ``with PassContext(opt_level=3): ...``; contexts nest on a thread-local stack
that starts from a default context (opt_level 2), exactly as TVM's
``RelayPassContextThreadLocalEntry``.  Observation (timing, printing, the notebook's
stepper) goes through *instruments* attached to the context.
"""

from __future__ import annotations

import functools
import inspect
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from ..errors import RelayError
from ..ir.expr import Function
from ..ir.module import IRModule


@dataclass(frozen=True)
class PassInfo:
    """A pass's name, the lowest opt level that enables it, and passes it requires."""

    name: str
    opt_level: int = 0
    required: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "required", tuple(self.required))


# --- the context -------------------------------------------------------------------------


class _ContextStack(threading.local):
    def __init__(self) -> None:
        self.default = PassContext()
        self.stack: list[PassContext] = []


@dataclass
class PassContext:
    """Settings every pass runs under, used as a ``with`` scope.

    ``opt_level`` enables passes whose own level is at most it; ``required_pass`` names
    passes that run whatever their level; ``disabled_pass`` names passes that never run;
    ``instruments`` observe every pass; ``config`` holds pass options
    (e.g. ``{"relay.FuseOps.max_depth": 10}``).
    """

    opt_level: int = 2
    required_pass: Sequence[str] = ()
    disabled_pass: Sequence[str] = ()
    instruments: Sequence[Any] = ()
    config: Mapping[str, Any] = field(default_factory=dict)
    fallback_device: Optional[str] = None

    def __post_init__(self) -> None:
        self.required_pass = tuple(self.required_pass or ())
        self.disabled_pass = tuple(self.disabled_pass or ())
        self.instruments = tuple(self.instruments or ())
        self.config = dict(self.config or {})
        if not isinstance(self.opt_level, int) or not 0 <= self.opt_level <= 4:
            raise RelayError(f"PassContext: opt_level must be an integer 0..4, got {self.opt_level!r}")

    # -- scope -------------------------------------------------------------------------------
    def __enter__(self) -> "PassContext":
        _STACK.stack.append(self)
        for inst in self.instruments:
            _call_hook(inst, "enter_pass_ctx")
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            for inst in self.instruments:
                _call_hook(inst, "exit_pass_ctx")
        finally:
            popped = _STACK.stack.pop()
            assert popped is self, "PassContext scopes must nest"

    @staticmethod
    def current() -> "PassContext":
        """The innermost entered context, or the thread's default one."""
        return _STACK.stack[-1] if _STACK.stack else _STACK.default

    # TVM spells it both ways.
    Current = current

    # -- decisions ---------------------------------------------------------------------------
    def pass_enabled(self, info: PassInfo) -> bool:
        """Seed 003's PassEnabled: not disabled, and required or within opt_level."""
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return info.opt_level <= self.opt_level

    def override_instruments(self, instruments: Iterable[Any]) -> None:
        """Replace the instruments of this (entered) context."""
        for inst in self.instruments:
            _call_hook(inst, "exit_pass_ctx")
        self.instruments = tuple(instruments)
        for inst in self.instruments:
            _call_hook(inst, "enter_pass_ctx")

    # Instrument protocol, as TVM's PassContext::InstrumentBeforePass/AfterPass.
    def _before(self, mod: IRModule, info: PassInfo) -> bool:
        if not all(_call_hook(inst, "should_run", mod, info, default=True) for inst in self.instruments):
            return False
        for inst in self.instruments:
            _call_hook(inst, "run_before_pass", mod, info)
        return True

    def _after(self, mod: IRModule, info: PassInfo) -> None:
        for inst in self.instruments:
            _call_hook(inst, "run_after_pass", mod, info)


def _call_hook(inst: Any, name: str, *args: Any, default: Any = None) -> Any:
    hook = getattr(inst, name, None)
    if hook is None:
        return default
    result = hook(*args)
    return default if result is None and default is not None else result


_STACK = _ContextStack()


# --- passes -----------------------------------------------------------------------------------


class Pass:
    """A transformation from IRModule to IRModule (seed 003's PassNode)."""

    info: PassInfo
    # True if, given a type-checked module, the pass returns one whose expressions keep
    # their types (a rewrite that replaces an expression by one of the same type, copying
    # it over, as TypedMutator does): a Sequential then need not run InferType again.
    preserves_types: bool = False

    def __call__(self, mod: IRModule) -> IRModule:
        """Run under the current context, with its instruments observing."""
        if not isinstance(mod, IRModule):
            raise RelayError(f"{self.info.name}: a pass takes an IRModule, not {type(mod).__name__}")
        ctx = PassContext.current()
        if not ctx._before(mod, self.info):
            return mod
        try:
            result = self.transform_module(mod, ctx)
        except RecursionError as e:  # a recursive helper (a user's pass): no crash, a RelayError
            from ..ir.functor import nesting_error

            raise nesting_error(self.info.name, getattr(e, "relay_nodes", [])) from None
        if not isinstance(result, IRModule):
            raise RelayError(f"pass {self.info.name} returned {type(result).__name__}, not an IRModule")
        ctx._after(result, self.info)
        return result

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:  # pragma: no cover
        raise NotImplementedError

    @property
    def pass_func(self) -> Callable:
        """The function the pass runs (module or function passes)."""
        f = self._pass_func
        return f.__get__(self) if self._own_method else f

    @pass_func.setter
    def pass_func(self, f: Callable) -> None:
        # A pass subclass hands over its own method (``self._run``): stored bound, it would
        # be a reference cycle pass -> method -> pass, and every pipeline a build makes
        # would wait for a full collection of the cyclic collector (20 ms on ResNet-50's
        # build) to be freed.  The plain function is kept and bound when asked for.
        self._own_method = getattr(f, "__self__", None) is self
        self._pass_func = f.__func__ if self._own_method else f

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.info.name} opt_level={self.info.opt_level}>"


class ModulePass(Pass):
    """A pass over the whole module: ``pass_func(mod, ctx) -> mod``."""

    def __init__(self, pass_func: Callable[[IRModule, PassContext], IRModule], info: PassInfo):
        self.pass_func = pass_func
        self.info = info

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return self.pass_func(mod, ctx)


class FunctionPass(Pass):
    """A pass applied to each function: ``pass_func(func, mod, ctx) -> func``.

    Functions that :meth:`skip_function` excludes (primitive or external functions) are
    left as they are, as TVM's ``FunctionPassNode::SkipFunction``.
    """

    def __init__(self, pass_func: Callable[[Function, IRModule, PassContext], Function], info: PassInfo):
        self.pass_func = pass_func
        self.info = info

    @staticmethod
    def skip_function(func: Function) -> bool:
        attrs = func.attrs
        return bool(attrs.get("Primitive", 0)) or bool(attrs.get("Compiler", ""))

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        updates = {}
        for gv, func in mod.functions.items():
            if self.skip_function(func):
                continue
            new = self.pass_func(func, mod, ctx)
            if not isinstance(new, Function):
                raise RelayError(
                    f"function pass {self.info.name} returned {type(new).__name__} for @{gv.name_hint}, "
                    "not a Function"
                )
            if new is not func:
                updates[gv] = new
        return mod.with_functions(updates) if updates else mod.copy()


class Sequential(Pass):
    """Run passes in order, like ``nn.Sequential`` (seed 003's SequentialPassNode).

    Each pass runs only if the current context enables it; a pass's ``required`` passes are
    looked up by name in :data:`PASSES` and run first — but for a required ``InferType``
    after InferType itself and passes that keep types (:attr:`Pass.preserves_types`), on a
    module whose every expression has its type: inference would find the same types.
    (The default pipeline ran InferType seven times on ResNet-50, 13 ms each.)
    """

    def __init__(
        self,
        passes: Optional[Sequence[Pass]] = None,
        opt_level: int = 0,
        name: str = "sequential",
        required: Sequence[str] = (),
    ):
        self.passes = list(passes or [])
        for p in self.passes:
            if not isinstance(p, Pass):
                raise RelayError(f"Sequential takes passes, got {type(p).__name__}")
        self.info = PassInfo(name, opt_level, tuple(required))

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        from .infer_type import InferType
        from .typed import fully_typed

        checked = False  # InferType ran in this sequence, and every pass since kept the types
        for p in self.passes:
            if not ctx.pass_enabled(p.info):
                continue
            for req in p.info.required:
                if req == "InferType" and checked and fully_typed(mod):
                    continue
                before = get_pass(req)
                mod = before(mod)
                checked = isinstance(before, InferType) or (checked and before.preserves_types)
            mod = p(mod)
            checked = isinstance(p, InferType) or (checked and p.preserves_types)
        return mod


# --- registry and decorators -----------------------------------------------------------------------

PASSES: dict[str, Callable[[], Pass]] = {}
"""Every pass by name -> a factory taking no arguments (feeds the CLI, %%relay, the stepper)."""


def register_pass(name: str, factory: Callable[[], Pass]) -> None:
    PASSES[name] = factory


def get_pass(name: str) -> Pass:
    """A new instance of the pass registered as ``name``."""
    factory = PASSES.get(name)
    if factory is None:
        import difflib

        close = difflib.get_close_matches(name, list(PASSES), n=2)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise RelayError(f"unknown pass {name}{hint}")
    return factory()


def _make_decorator(kind: type, arity: int):
    def decorator(
        pass_func: Union[Callable, type, None] = None,
        opt_level: int = 0,
        name: Optional[str] = None,
        required: Sequence[str] = (),
    ):
        def create(target: Union[Callable, type]):
            pass_name = name or target.__name__
            info = PassInfo(pass_name, opt_level, tuple(required))
            if inspect.isclass(target):
                method = "transform_module" if kind is ModulePass else "transform_function"
                if not hasattr(target, method):
                    raise RelayError(f"a {kind.__name__} class must define {method}()")

                @functools.wraps(target, updated=())
                class PassClass(kind):  # type: ignore[misc, valid-type]
                    def __init__(self, *args: Any, **kwargs: Any):
                        self.inst = target(*args, **kwargs)
                        kind.__init__(self, getattr(self.inst, method), info)

                    def __getattr__(self, attr: str) -> Any:
                        return getattr(self.__dict__["inst"], attr)

                PassClass.__name__ = target.__name__
                PassClass.__qualname__ = target.__qualname__
                return PassClass
            params = len(inspect.signature(target).parameters)
            if params != arity:
                raise RelayError(
                    f"@{kind.__name__.lower()[:-4]}_pass function {target.__name__} must take "
                    f"{arity} arguments, it takes {params}"
                )
            return kind(target, info)

        if pass_func is not None:
            return create(pass_func)
        return create

    return decorator


module_pass = _make_decorator(ModulePass, 2)
module_pass.__doc__ = """Make a ModulePass from ``f(mod, ctx)`` or a class with ``transform_module``.

    >>> @module_pass(opt_level=1, name="Nothing")
    ... def nothing(mod, ctx):
    ...     return mod
"""
function_pass = _make_decorator(FunctionPass, 3)
function_pass.__doc__ = """Make a FunctionPass from ``f(func, mod, ctx)`` or a class with
``transform_function``.

    >>> @function_pass(opt_level=1)
    ... def double_body(func, mod, ctx):
    ...     return relay.Function(func.params, relay.add(func.body, func.body))
"""

__all__ = [
    "PassInfo",
    "PassContext",
    "Pass",
    "ModulePass",
    "FunctionPass",
    "Sequential",
    "PASSES",
    "register_pass",
    "get_pass",
    "module_pass",
    "function_pass",
]
