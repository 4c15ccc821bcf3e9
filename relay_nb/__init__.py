"""relay_nb: TVM's Relay IR in pure Python, for exploring compilers inside Jupyter.

Use it as TVM's ``relay``::

    import relay_nb as relay
    mod = relay.parse('def @main(%x: Tensor[(2), float32]) { add(%x, %x) }')
    mod = relay.transform.InferType()(mod)
    print(mod)

The public names are loaded on first use (PEP 562), so ``import relay_nb`` is cheap and
imports no Jupyter package.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _t

__version__ = "0.1.0"

# name -> "module:attribute" (or "module" for a submodule), relative to this package.
_LAZY: dict[str, str] = {
    # IR nodes and builders
    **{
        name: "ir.expr:" + name
        for name in (
            "Expr", "Var", "GlobalVar", "Constant", "MetaRef", "Tuple", "TupleGetItem", "Op",
            "Call", "Function", "Let", "If", "Constructor", "Pattern", "PatternWildcard",
            "PatternVar", "PatternConstructor", "PatternTuple", "Clause", "Match",
            "RefCreate", "RefRead", "RefWrite", "TempExpr", "TupleWrapper", "var", "const",
        )
    },
    "TypeData": "ir.adt:TypeData",
    "Span": "ir.span:Span",
    "Source": "ir.span:Source",
    "Attrs": "ir.attrs:Attrs",
    **{
        name: "ir.ty:" + name
        for name in (
            "Type", "TensorType", "TupleType", "FuncType", "TypeVar", "IncompleteType",
            "GlobalTypeVar", "TypeCall", "RefType", "TypeRelation", "Kind", "Any",
            "scalar_type",
        )
    },
    "IRModule": "ir.module:IRModule",
    "ExprVisitor": "ir.functor:ExprVisitor",
    "ExprMutator": "ir.functor:ExprMutator",
    "post_order_visit": "ir.functor:post_order_visit",
    # errors
    **{
        name: "errors:" + name
        for name in (
            "RelayError", "ParseError", "RelayTypeError", "TypeError_", "AttrError",
            "EvalError",
        )
    },
    # text format
    "parse": "syntax.parser:parse",
    "parse_expr": "syntax.parser:parse_expr",
    "fromtext": "syntax.parser:fromtext",
    "astext": "syntax.printer:astext",
    # structural comparison
    "structural_equal": "ir.structural:structural_equal",
    "structural_hash": "ir.structural:structural_hash",
    "assert_structural_equal": "ir.structural:assert_structural_equal",
    # evaluation
    "create_executor": "eval.executor:create_executor",
    "optimize": "transform.pipeline:optimize",
    "build": "backend.llvm.build:build",
    # relay.build_module.bind_params_by_name, as in TVM
    "build_module": "transform.bind_params",
    "testing": "testing",
    # subpackages used as namespaces, as in TVM
    "ir": "ir",
    "op": "op",
    "transform": "transform",
    "analysis": "analysis",
    "typing": "typing",
    "syntax": "syntax",
    "nn": "op.nn",
    "image": "op.image",
    "annotation": "op.annotation",
    "dyn": "op.dyn",
    "qnn": "op.qnn",
    "vision": "op.vision",
    "random": "op.random",
    "viz": "viz",
    "frontend": "frontend",
    "backend": "backend",  # relay.backend.clear_cache()
    # notebook layer (imports IPython / ipywidgets only when used)
    "notebook": "notebook",
    "PassStepper": "notebook.stepper:PassStepper",
}

# Operator builders (relay.add, relay.reshape, ...) come from the op package's `api`.
_OP_API_MODULE = "op.api"


def __getattr__(name: str) -> _t.Any:
    target = _LAZY.get(name)
    if target is None:
        if not name.startswith("_"):
            api = _importlib.import_module(f"{__name__}.{_OP_API_MODULE}")
            if hasattr(api, name):
                value = getattr(api, name)
                globals()[name] = value
                return value
        raise AttributeError(f"module 'relay_nb' has no attribute {name!r}")
    module_name, _, attr = target.partition(":")
    module = _importlib.import_module(f"{__name__}.{module_name}")
    value = getattr(module, attr) if attr else module
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    names = set(globals()) | set(_LAZY)
    try:
        api = _importlib.import_module(f"{__name__}.{_OP_API_MODULE}")
        names |= set(getattr(api, "__all__", ()))
    except ImportError:
        pass
    return sorted(names)


def load_ipython_extension(ipython: _t.Any) -> None:
    """``%load_ext relay_nb``: registers the ``%%relay`` magic (notebook layer)."""
    from .notebook.magic import load_ipython_extension as _load

    _load(ipython)
