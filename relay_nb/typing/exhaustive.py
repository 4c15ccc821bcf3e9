"""Which values a complete ``match`` fails to handle (TVM's ``UnmatchedCases``).

The uncovered values are kept as a list of *candidate* patterns, starting from ``_``.  Each
clause subtracts its pattern from every candidate; a wildcard candidate meeting a
constructor pattern is first split into one candidate per constructor of the ADT:

    C(c1..cn) \\ C(p1..pn)  =  union over i of  C(c1, .., ci \\ pi, .., cn)

Whatever is left after the last clause is unmatched.  Patterns are small, so the recursion
here follows pattern depth only.
"""

from __future__ import annotations

from typing import Any, Optional

from ..ir.expr import Match, PatternConstructor, PatternTuple, PatternVar, PatternWildcard

_WILD = ("_",)
_LIMIT = 5000  # give up (assume exhaustive) rather than explode on huge pattern sets


def unmatched_cases(match: Match, mod: Any) -> Optional[list[str]]:
    """The text of patterns no clause of ``match`` covers ([] when exhaustive).

    None when the check could not be done (unknown ADT, too many cases).
    """
    cands: list = [_WILD]
    try:
        for clause in match.clauses:
            new: list = []
            for c in cands:
                new.extend(_subtract(c, clause.lhs, mod))
                if len(new) > _LIMIT:
                    return None
            cands = new
            if not cands:
                return []
    except (_GiveUp, RecursionError):
        return None
    return [_text(c) for c in cands]


class _GiveUp(Exception):
    pass


def _constructors(ctor: Any, mod: Any) -> tuple:
    if mod is None:
        raise _GiveUp
    tdata = mod.type_definitions.get(ctor.belong_to)
    if tdata is None:
        raise _GiveUp
    return tdata.constructors


def _subtract(cand: tuple, pat: Any, mod: Any) -> list:
    """Candidates covering ``cand`` minus the values ``pat`` matches."""
    if isinstance(pat, (PatternWildcard, PatternVar)):
        return []
    if cand is _WILD or cand[0] == "_":
        if isinstance(pat, PatternConstructor):
            out: list = []
            for c in _constructors(pat.constructor, mod):
                out.extend(_subtract(("C", c, (_WILD,) * len(c.inputs)), pat, mod))
            return out
        if isinstance(pat, PatternTuple):
            return _subtract(("T", None, (_WILD,) * len(pat.patterns)), pat, mod)
        raise _GiveUp
    kind, head, fields = cand
    if isinstance(pat, PatternConstructor):
        if kind != "C" or head.name_hint != pat.constructor.name_hint:
            return [cand]
    elif isinstance(pat, PatternTuple):
        if kind != "T":
            return [cand]
    else:
        raise _GiveUp
    if len(pat.patterns) != len(fields):
        raise _GiveUp
    out = []
    for i, (c, p) in enumerate(zip(fields, pat.patterns)):
        for rest in _subtract(c, p, mod):
            out.append((kind, head, fields[:i] + (rest,) + fields[i + 1 :]))
    return out


def _text(c: tuple) -> str:
    if c[0] == "_":
        return "_"
    kind, head, fields = c
    inner = ", ".join(_text(f) for f in fields)
    if kind == "T":
        return f"({inner},)" if len(fields) == 1 else f"({inner})"
    return f"{head.name_hint}({inner})" if fields else head.name_hint


__all__ = ["unmatched_cases"]
