"""IRModule: the ``Map<GlobalVar, Function>`` of seed 004, plus ADT definitions.

Global functions may refer to themselves and each other in any order (that is why a
call stores a ``GlobalVar`` rather than the Function).  Names are unique: the module
keeps one ``GlobalVar`` object per name, and ``mod["main"]`` looks a function up by name.

Like TVM's, the container supports in-place ``mod[name] = func``; passes never use that
on their input — they :meth:`copy` it, so a transformation returns a new module and leaves
the old one as it was.
"""

from __future__ import annotations

from typing import Iterator, Mapping, Optional, Union

from ..errors import RelayError
from .adt import TypeData
from .expr import Constructor, Expr, Function, GlobalVar
from .ty import GlobalTypeVar


class IRModule:
    """A set of global functions and type definitions."""

    __slots__ = ("functions", "type_definitions", "_gvars", "_tvars", "_ctors", "source_map")

    def __init__(
        self,
        functions: Optional[Mapping[Union[str, GlobalVar], Function]] = None,
        type_definitions: Optional[Mapping[Union[str, GlobalTypeVar], TypeData]] = None,
    ):
        self.functions: dict[GlobalVar, Function] = {}
        self.type_definitions: dict[GlobalTypeVar, TypeData] = {}
        self._gvars: dict[str, GlobalVar] = {}
        self._tvars: dict[str, GlobalTypeVar] = {}
        self._ctors: dict[str, Constructor] = {}
        self.source_map: dict[str, object] = {}
        for tdef in (type_definitions or {}).values():
            self.add_type(tdef)
        for key, func in (functions or {}).items():
            self.add(key, func)

    # -- construction ------------------------------------------------------------------
    @staticmethod
    def from_expr(
        expr: Expr,
        functions: Optional[Mapping[Union[str, GlobalVar], Function]] = None,
        type_defs: Optional[Mapping[Union[str, GlobalTypeVar], TypeData]] = None,
    ) -> "IRModule":
        """A module whose ``@main`` is ``expr``.

        A non-function expression is wrapped in a function whose parameters are its free
        variables, as TVM does.
        """
        mod = IRModule(functions, type_defs)
        if not isinstance(expr, Function):
            from ..analysis.free_vars import free_vars

            expr = Function(tuple(free_vars(expr)), expr, span=expr.span)
        mod.add("main", expr, update=True)
        return mod

    def copy(self) -> "IRModule":
        """A new module with the same definitions (nodes are shared, not copied)."""
        new = IRModule.__new__(IRModule)
        new.functions = dict(self.functions)
        new.type_definitions = dict(self.type_definitions)
        new._gvars = dict(self._gvars)
        new._tvars = dict(self._tvars)
        new._ctors = dict(self._ctors)
        new.source_map = dict(self.source_map)
        return new

    def with_functions(self, updates: Mapping[GlobalVar, Function]) -> "IRModule":
        """A copy of this module with some functions replaced (used by passes)."""
        new = self.copy()
        for gv, func in updates.items():
            new.add(gv, func, update=True)
        return new

    # -- global functions --------------------------------------------------------------
    def get_global_var(self, name: str) -> GlobalVar:
        """The GlobalVar named ``name`` (without ``@``); a RelayError if there is none."""
        try:
            return self._gvars[name]
        except KeyError:
            raise RelayError(
                f"module has no global function @{name}"
                + (f"; it has {', '.join('@' + n for n in self._gvars)}" if self._gvars else "")
            ) from None

    def get_global_vars(self) -> list[GlobalVar]:
        return list(self.functions)

    def intern_global_var(self, name: str) -> GlobalVar:
        """The module's GlobalVar for ``name``, created if new (for forward references)."""
        gv = self._gvars.get(name)
        if gv is None:
            gv = GlobalVar(name)
            self._gvars[name] = gv
        return gv

    def add(self, var: Union[str, GlobalVar], func: Function, update: bool = False) -> GlobalVar:
        """Define (or with ``update=True`` redefine) a global function."""
        if not isinstance(func, Function):
            raise RelayError(f"a global definition must be a Function, not {type(func).__name__}")
        name = var if isinstance(var, str) else var.name_hint
        existing = self._gvars.get(name)
        if existing is not None and existing in self.functions and not update:
            raise RelayError(f"duplicate global function @{name}", getattr(func, "span", None))
        if existing is None:
            existing = var if isinstance(var, GlobalVar) else GlobalVar(name)
            self._gvars[name] = existing
        self.functions[existing] = func
        return existing

    def remove(self, var: Union[str, GlobalVar]) -> None:
        gv = self.get_global_var(var if isinstance(var, str) else var.name_hint)
        del self.functions[gv]
        del self._gvars[gv.name_hint]

    # -- type definitions --------------------------------------------------------------
    def add_type(self, tdef: TypeData, update: bool = False) -> GlobalTypeVar:
        """Define an ADT and make its constructors visible by name."""
        name = tdef.header.name_hint
        if name in self._tvars and self._tvars[name] in self.type_definitions and not update:
            raise RelayError(f"duplicate type definition {name}", tdef.span)
        for ctor in tdef.constructors:
            other = self._ctors.get(ctor.name_hint)
            if other is not None and other.belong_to.name_hint != name:
                raise RelayError(
                    f"constructor {ctor.name_hint} is already defined by type {other.belong_to.name_hint}",
                    ctor.span,
                )
        self._tvars[name] = tdef.header
        self.type_definitions[tdef.header] = tdef
        for ctor in tdef.constructors:
            self._ctors[ctor.name_hint] = ctor
        return tdef.header

    def get_global_type_var(self, name: str) -> GlobalTypeVar:
        try:
            return self._tvars[name]
        except KeyError:
            raise RelayError(f"module has no type {name}") from None

    def get_global_type_vars(self) -> list[GlobalTypeVar]:
        return list(self.type_definitions)

    def get_type(self, name: str) -> TypeData:
        return self.type_definitions[self.get_global_type_var(name)]

    def get_constructor(self, name: str) -> Constructor:
        """The constructor named ``name`` (``mod.get_constructor("Cons")``)."""
        try:
            return self._ctors[name]
        except KeyError:
            raise RelayError(f"module has no constructor {name}") from None

    def constructors(self) -> dict[str, Constructor]:
        return dict(self._ctors)

    def lookup_type_data(self, gtv: GlobalTypeVar) -> TypeData:
        try:
            return self.type_definitions[gtv]
        except KeyError:
            raise RelayError(f"type {gtv.name_hint} is not defined in this module") from None

    # -- mapping protocol ------------------------------------------------------------------
    def __getitem__(self, key: Union[str, GlobalVar, GlobalTypeVar]):
        if isinstance(key, GlobalTypeVar):
            return self.lookup_type_data(key)
        if isinstance(key, GlobalVar):
            key = key.name_hint
        if key in self._tvars and key not in self._gvars:
            return self.get_type(key)
        gv = self.get_global_var(key)
        try:
            return self.functions[gv]
        except KeyError:
            raise RelayError(f"global @{key} is referenced but never defined") from None

    def __setitem__(self, key: Union[str, GlobalVar, GlobalTypeVar], value) -> None:
        if isinstance(value, TypeData):
            self.add_type(value, update=True)
        else:
            self.add(key, value, update=True)

    def __contains__(self, key: Union[str, GlobalVar]) -> bool:
        name = key.name_hint if isinstance(key, (GlobalVar, GlobalTypeVar)) else key
        gv = self._gvars.get(name)
        return (gv is not None and gv in self.functions) or name in self._tvars

    def __iter__(self) -> Iterator[GlobalVar]:
        return iter(self.functions)

    def __len__(self) -> int:
        return len(self.functions)

    def items(self):
        return self.functions.items()

    def update(self, other: "IRModule") -> None:
        """Add (overwriting) all definitions of ``other`` into this module."""
        for tdef in other.type_definitions.values():
            self.add_type(tdef, update=True)
        for gv, func in other.functions.items():
            self.add(gv, func, update=True)

    # -- text --------------------------------------------------------------------------------
    def astext(self, show_meta_data: bool = True, form: str = "graph", show_types: bool | None = None) -> str:
        """The module as Relay text with the ``#[version = "0.0.5"]`` header."""
        from ..syntax.printer import astext

        return astext(self, show_meta_data=show_meta_data, form=form, show_types=show_types)

    def __str__(self) -> str:
        # print(mod) of an imported model must not pour megabytes of base64 weights into a
        # notebook: past STR_METADATA_BYTES of constants it prints the program with meta
        # references and a note, as TVM's str() does; mod.astext() still writes everything.
        return self.astext(show_meta_data=_constant_bytes(self) <= STR_METADATA_BYTES)

    # -- notebook display (relay_nb.viz.html: highlighted text, types on hover) ---------
    def _repr_html_(self) -> str:
        from ..viz.html import repr_html

        return repr_html(self)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        from ..viz.html import mimebundle

        return mimebundle(self, include, exclude)

    def __repr__(self) -> str:
        names = ", ".join("@" + gv.name_hint for gv in self.functions)
        return f"<IRModule {names}>"


STR_METADATA_BYTES = 1 << 20
"""Constants above this many bytes (in all) are left out of ``str(mod)`` (``astext()`` keeps them)."""


def _constant_bytes(mod: "IRModule") -> int:
    """Bytes of the module's non-scalar constants (those a printout puts in #[metadata])."""
    from .expr import Constant
    from .functor import post_order

    seen: set = set()
    total = 0
    for func in mod.functions.values():
        for node in post_order(func):
            if type(node) is Constant and node.data.ndim and id(node) not in seen:
                seen.add(id(node))
                total += node.data.nbytes
    return total


__all__ = ["IRModule", "STR_METADATA_BYTES"]
