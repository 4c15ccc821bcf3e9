"""CallGraph: who calls whom among a module's global functions.

For each global ``@g`` (by name): ``size[g]`` (nodes in its function), ``refers[g]``
(the globals its function mentions), ``sites[g]`` (call nodes ``@g(...)`` in the whole
module) and ``other[g]`` (other mentions of ``@g``: passed as a value, returned...);
``sccs`` (strongly connected components, callees first) and ``recursive`` (globals in
a cycle, including a global calling itself).

>>> cg = CallGraph(mod)
>>> cg.called_once("helper"), "loop" in cg.recursive

One walk over the module (a DAG node counts once), plus Tarjan's algorithm.
"""

from __future__ import annotations

from ..ir.expr import Call, GlobalVar
from ..ir.functor import expr_children, post_order
from ..ir.module import IRModule


class CallGraph:
    def __init__(self, mod: IRModule):
        from ..typing.infer import global_sccs

        self.size: dict[str, int] = {}
        self.refers: dict[str, set[str]] = {}
        self.sites: dict[str, int] = {}
        self.other: dict[str, int] = {}
        self_calls: set[str] = set()
        for gv, fn in mod.functions.items():
            n = 0
            refers: set[str] = set()
            for node in post_order(fn):
                n += 1
                for child in expr_children(node):
                    if type(child) is GlobalVar:
                        name = child.name_hint
                        table = (
                            self.sites if type(node) is Call and child is node.op else self.other
                        )
                        table[name] = table.get(name, 0) + 1
                        refers.add(name)
            self.size[gv.name_hint] = n
            self.refers[gv.name_hint] = refers
            if gv.name_hint in refers:
                self_calls.add(gv.name_hint)
        self.sccs: list[list[str]] = global_sccs(mod)
        self.recursive = {n for scc in self.sccs if len(scc) > 1 for n in scc} | self_calls

    def called_once(self, name: str) -> bool:
        """``@name`` is called from exactly one place and mentioned nowhere else."""
        return self.sites.get(name, 0) == 1 and not self.other.get(name)

    def unreferenced(self, candidates: set[str], roots: set[str] = frozenset({"main"})) -> set[str]:
        """The ``candidates`` that no other global refers to, once the unreferenced ones
        are gone (references from removed globals do not count); ``roots`` stay."""
        removable = set(candidates) - set(roots)
        while True:
            used = set().union(*(r for name, r in self.refers.items() if name not in removable))
            if not removable & used:
                return removable
            removable -= used


__all__ = ["CallGraph"]
