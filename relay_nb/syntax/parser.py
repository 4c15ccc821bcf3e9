"""The Relay text reader: ``parse`` (a module), ``parse_expr`` (an expression), ``fromtext``.

It reads TVM's v0.0.5 text as TVM's printer writes it, the older v0.0.4 form, text with
no header, and the docs' pseudo-syntax used in the seed documents (see
``shared/relay_text_format.md``: "read generously, write canonically").

How it works
------------
* ``relay.lark`` is the grammar.  lark computes its LALR(1) tables once per process;
  parsing then runs :meth:`_Converter.run`, a loop over the tokens of
  :class:`~relay_nb.syntax.lexer.Lexer` that shifts and reduces with those tables.  Each
  reduction calls the converter method named after the rule's alias, which builds the IR
  node right away: no parse tree is built, and nothing recurses, so a 100,000-deep
  ``let`` chain or a 100,000-line graph parses at Python's default recursion limit.
* Names are resolved by scope, never by spelling.  A scope is opened by a "head" rule
  that is reduced *before* the part it scopes is read (``let_head`` before a let's value,
  ``fn_kw`` / ``def_name`` before parameters, ``clause_head`` before an arm's body) and
  closed by the rule that ends the construct.  Bindings live in one ``name -> [Var...]``
  table with an undo log, so a lookup is one dict access however deep the nesting.
* Graph labels ``%N`` are global to the parse and first-binding-wins, as in TVM (the
  printer relies on it to refer to a node bound in another scope).  One refinement: a
  label bound again in a *later* ``def`` takes the new binding from there on, so seed 004's
  module, which reuses ``%1`` and ``%2`` in two functions, means what it says.
* A ``let`` variable is visible in its own value only when that value is a function
  (``let %f = fn (...) {... %f ...}``), as seed 000 states; so ``let %a = %a + %a;``
  reads the outer ``%a`` (seed 000's shadowing example).
* Outside a ``def``, an unbound ``%x`` is a free variable (as if ``free_var %x;`` had
  been written), so the seeds' fragments such as ``%1 = %a + %b`` parse; a bare module
  body gets its free variables as ``@main``'s parameters.  Inside a ``def`` (and in a bare
  ``fn``, which is ``@main`` itself) it is an "undefined variable" error.

Representation choices the other layers rely on:

* ``fn (...) where Rel`` / ``where Rel(T1, ..., Tn)`` (seed 000): the function's attribute
  ``type_constraints``, a tuple of :class:`~relay_nb.ir.ty.TypeRelation`.  ``args == ()``
  means "the parameters' types, then the return type" (``num_inputs`` = number of params);
  otherwise ``args`` are the written types and ``num_inputs = len(args) - 1``.
* ``%f<T1, T2>(...)``: :attr:`Call.type_args`.
* ``Constant(v, shape, dtype)``: a Constant of ``np.full(shape, v, dtype)``.
* Unsuffixed literals are int32 (int64 when too large) / float32 with ``is_literal=True``.

Errors are :class:`~relay_nb.errors.ParseError` (or :class:`~relay_nb.errors.AttrError`
for operator attributes) with a span, so the message shows ``source:line:column``, the
line and a caret.
"""

from __future__ import annotations

import bisect
import difflib
import math
import re
import sys
import threading
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

import numpy as np

from ..errors import AttrError, ParseError, RelayError
from ..ir.attrs import EMPTY_ATTRS, Attrs, UnresolvedAttrs, freeze_value
from ..ir.expr import (
    Call,
    Clause,
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    MetaRef,
    Op,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.span import Source, Span
from ..ir.ty import (
    Any as AnyDim,
)
from ..ir.ty import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    Kind,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeRelation,
    TypeVar,
    complex_dtype_message,
    is_complex_dtype,
)
from ..util import paused_gc
from .lexer import _G_GRAPHVAR, _G_IDENT, _G_PUNCT, _MASTER, _SKIP_RX, Lexer, brief, bracket_report, index_value

# ------------------------------------------------------------------------- tables


class _Tables:
    """LALR tables of relay.lark, in the shape the loop wants them.

    ``actions[state]`` maps a terminal or nonterminal name to ``n >= 0`` (shift / goto
    state ``n``) or ``~r`` (reduce by rule ``r``).  ``rules[r]`` is ``(size, name,
    origin, keep)``: the number of symbols, the callback name, the nonterminal produced,
    and the index of the only named child (used when there is no callback).
    """

    def __init__(self) -> None:
        from lark import Lark
        from lark.lexer import Lexer as LarkLexer
        from lark.parsers.lalr_analysis import Shift

        class _NoLexer(LarkLexer):  # the tables are all we take from lark
            def __init__(self, conf: Any) -> None:
                pass

            def lex(self, data: Any):  # pragma: no cover - never called
                raise NotImplementedError

        grammar = resources.files(__package__).joinpath("relay.lark").read_text(encoding="utf-8")
        lk = Lark(
            grammar, parser="lalr", lexer=_NoLexer, start=["module", "expr_only", "type_only"]
        )
        table = lk.parser.parser._parse_table
        self.rule_objects = list(lk.rules)
        index = {rule: i for i, rule in enumerate(self.rule_objects)}
        self.rules: list[tuple[int, str, str, int]] = []
        for rule in self.rule_objects:
            kept = [
                i
                for i, sym in enumerate(rule.expansion)
                if not (sym.is_term and getattr(sym, "filter_out", False))
            ]
            name = _plain(rule.alias or rule.origin.name)
            keep = kept[0] if len(kept) == 1 else -1
            self.rules.append((len(rule.expansion), name, _plain(rule.origin.name), keep))
        n_states = max(table.states) + 1
        self.actions: list[dict[str, int]] = [{} for _ in range(n_states)]
        for state, acts in table.states.items():
            out = self.actions[state]
            for sym, (action, arg) in acts.items():
                out[_plain(sym)] = arg if action is Shift else ~index[arg]
        self.start_states = dict(table.start_states)
        self.end_states = dict(table.end_states)
        # text of punctuation and keywords -> terminal name ('(' -> 'LPAR', 'let' -> 'LET')
        self.names: dict[str, str] = {
            _plain(t.pattern.value): _plain(t.name) for t in lk.terminals if t.pattern.type == "str"
        }
        self.names["inff"] = "NUMBER"
        self.literal_of = {name: text for text, name in self.names.items()}
        self.terminals = {t.name for t in lk.terminals} | {
            "LOCAL",
            "GRAPHVAR",
            "GLOBAL",
            "IDENT",
            "NUMBER",
            "NEGNUMBER",
            "PROJ",
            "STRING",
            "META",
            "TARGS_LT",
            "VERSION",
            "$END",
        }


def _plain(name: Any) -> str:
    """An exact, interned ``str`` (lark's names are Token objects, a str subclass whose
    Python-level ``__eq__`` would slow every table lookup)."""
    return sys.intern(str.__str__(name) if type(name) is not str else name)


_TABLES: _Tables | None = None
_TABLES_LOCK = threading.Lock()


def _tables() -> _Tables:
    global _TABLES
    if _TABLES is None:
        with _TABLES_LOCK:
            if _TABLES is None:
                _TABLES = _Tables()
    return _TABLES


# ------------------------------------------------------------------------- literals

_NUMBER_RX = re.compile(r"(\d+)(\.\d+)?([eE][-+]?\d+)?([A-Za-z_]\w*)?")
_INT_RANGE = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
_INT_SUFFIX = {"i": "int32", "i16": "int16", "i32": "int32", "i64": "int64", "i8": "int8"}
_FLOAT_SUFFIX = {"f": "float32", "f16": "float16", "f32": "float32", "f64": "float64"}
_NUM_CACHE: dict[str, tuple] = {}


def _read_number(text: str) -> tuple[Any, str, bool]:
    """``(python value, dtype, is_literal)`` of a numeric token; ValueError if bad.

    Unsuffixed integers are int32 (int64 when they do not fit), unsuffixed decimals
    float32, both flagged as literals whose dtype type inference may change.
    """
    body = text.lstrip("-")
    negative = (len(text) - len(body)) % 2 == 1
    if body == "inff":
        return (-math.inf if negative else math.inf), "float32", False
    m = _NUMBER_RX.fullmatch(body)
    if m is None:
        raise ValueError(f"invalid number {text!r}")
    digits, frac, exp, suffix = m.groups()
    if len(digits.lstrip("0")) > 20 and not (frac or exp or suffix in _FLOAT_SUFFIX):
        # no integer dtype holds 21 digits; int() would refuse past 4,300 with advice
        # about sys.set_int_max_str_digits
        raise ValueError(f"number too large: integer literal {brief(text)} does not fit in int64")
    if suffix is None:
        if frac or exp:
            value = float(digits + (frac or "") + (exp or ""))
            value = -value if negative else value
            if abs(value) > float(np.finfo(np.float32).max):
                raise ValueError(f"number too large: {brief(text)} is out of range for float32; write {brief(text)}f64")
            return value, "float32", True
        value = -int(digits) if negative else int(digits)
        lo, hi = _INT_RANGE["int32"]
        if lo <= value <= hi:
            return value, "int32", True
        lo, hi = _INT_RANGE["int64"]
        if lo <= value <= hi:
            return value, "int64", True
        raise ValueError(f"number too large: integer literal {brief(text)} does not fit in int64")
    if suffix in _INT_SUFFIX:
        if frac or exp:
            raise ValueError(f"invalid integer {text!r}: an integer suffix on a decimal number")
        dtype = _INT_SUFFIX[suffix]
        value = -int(digits) if negative else int(digits)
        lo, hi = _INT_RANGE[dtype]
        if not lo <= value <= hi:
            raise ValueError(f"number too large: integer literal {brief(text)} does not fit in {dtype}")
        return value, dtype, False
    if suffix in _FLOAT_SUFFIX:
        dtype = _FLOAT_SUFFIX[suffix]
        value = float(digits + (frac or "") + (exp or ""))
        value = -value if negative else value
        if abs(value) > float(np.finfo(dtype).max):
            raise ValueError(f"number too large: float literal {brief(text)} is out of range for {dtype}")
        return value, dtype, False
    raise ValueError(
        f"invalid numeric suffix {suffix!r} in {text!r} (use i16, i32, i64, f16, f32 or f64)"
    )


def _number_array(text: str) -> tuple[np.ndarray, bool]:
    """A read-only 0-d array for a numeric token (cached: constants share the buffer)."""
    hit = _NUM_CACHE.get(text)
    if hit is None:
        value, dtype, literal = _read_number(text)
        array = np.array(value, dtype=dtype)
        array.flags.writeable = False
        if len(_NUM_CACHE) > 50_000:
            _NUM_CACHE.clear()
        hit = _NUM_CACHE[text] = (array, literal)
    return hit


_ATTR_VALUES: dict[str, Any] = {}
_ATTR_ATOM_RX = re.compile(r'\s*(?:(\[)|(\])|(,)|("(?:[^"\\\n]|\\.)*")|([^\s,\[\]]+))')


def _attr_name_value(name: str) -> Any:
    """A bare name as an attribute value: None / nullptr, or a dtype (generously)."""
    if name in ("None", "nullptr"):
        return None
    if name == "True":
        return True
    if name == "False":
        return False
    from ..op.registry import is_valid_dtype

    if is_valid_dtype(name):
        return name  # dtype=float32 reads as dtype="float32"
    if is_complex_dtype(name):
        raise ValueError(complex_dtype_message(name))
    raise ValueError(
        f'an attribute value cannot be the bare name {name} (write a string: "{name}")'
    )


def _attr_value(text: str) -> Any:
    """The value of a fused ``key=value`` token: a literal or nested lists of literals."""
    from .lexer import unescape

    stack: list[list] = [[]]
    pos = 0
    n = len(text)
    while pos < n:
        m = _ATTR_ATOM_RX.match(text, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
        if m.group(1):
            stack.append([])
        elif m.group(2):
            done = tuple(stack.pop())
            stack[-1].append(done)
        elif m.group(3):
            continue
        elif m.group(4) is not None:
            stack[-1].append(unescape(m.group(4)[1:-1]))
        else:
            atom = m.group(5)
            if atom[0].isdigit() or atom[0] == "-" or atom == "inff":
                stack[-1].append(_read_number(atom)[0])
            else:
                stack[-1].append(_attr_name_value(atom))
    return stack[0][0]


_TRUE = np.array(True)
_TRUE.flags.writeable = False
_FALSE = np.array(False)
_FALSE.flags.writeable = False

# ------------------------------------------------------------------------- names

_BINOPS = {
    "op_mul": ("*", "multiply", 12),
    "op_div": ("/", "divide", 12),
    "op_add": ("+", "add", 10),
    "op_sub": ("-", "subtract", 10),
    "op_lt": ("<", "less", 8),
    "op_le": ("<=", "less_equal", 8),
    "op_gt": (">", "greater", 8),
    "op_ge": (">=", "greater_equal", 8),
    "op_eq": ("==", "equal", 7),
    "op_ne": ("!=", "not_equal", 7),
    "op_and": ("&&", "logical_and", 5),
    "op_or": ("||", "logical_or", 4),
}

# Operator spellings of the docs (seed 004 writes mul/sub; the langref plus<...>(...)).
OP_ALIASES = {"mul": "multiply", "sub": "subtract", "div": "divide", "plus": "add"}

_KINDS = {
    "Type": Kind.Type,
    "Shape": Kind.ShapeVar,
    "ShapeVar": Kind.ShapeVar,
    "BaseType": Kind.BaseType,
    "Constraint": Kind.Constraint,
}

_SCALAR_ALIASES = {"int": "int32", "uint": "uint32", "float": "float32", "bool": "bool"}
# A type written `complex64` is a dtype Relay lacks, not an ADT of that name.
_COMPLEX_RX = re.compile(r"complex(?:32|64|128)?")

_SPACES = re.compile(r"[ \t]+")
_GAP_RX = re.compile(r"(?:\s|\(|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
_ATTR_NAME_RX = re.compile(r"attribute (\S+?)\b")

_EXPR_START = {
    "LOCAL",
    "GLOBAL",
    "GRAPHVAR",
    "IDENT",
    "NUMBER",
    "NEGNUMBER",
    "META",
    "TRUE",
    "FALSE",
    "LPAR",
    "LBRACE",
    "FN",
    "IF",
    "REF",
    "REF_READ",
    "REF_WRITE",
    "CONSTANT",
    "LET",
    "MATCH",
    "FREE_VAR",
    "MINUS",
}
_CONTINUATIONS = {"LPAR", "PROJ", "DOT", "TARGS_LT", "NEGNUMBER"}
_TYPE_START = {"TENSOR", "LPAR", "FN", "IDENT", "UNDERSCORE", "REF"}
_BINOP_TOKENS = {"*", "/", "+", "-", "<", "<=", ">", ">=", "==", "!=", "&&", "||"}
_TOKEN_WORDS = {
    "LOCAL": "a variable (%name)",
    "GLOBAL": "a global (@name)",
    "GRAPHVAR": "a graph variable (%N)",
    "IDENT": "a name",
    "NUMBER": "a number",
    "NEGNUMBER": "a number",
    "STRING": "a string",
    "META": "a meta reference",
    "PROJ": "a projection (.N)",
    "TARGS_LT": "'<'",
    "VERSION": "a version header",
    "$END": "end of input",
}
# Punctuation listed first in "expected ..." messages: what usually closes something.
_PREFERRED = [";", "}", ")", "]", ",", "=", "=>", "->", ":", "{", "(", "[", ">", "else"]


class _Chain:
    """An infix chain ``a op b op c`` before precedence is applied (``chain_end``)."""

    __slots__ = ("operands", "ops")

    def __init__(self, operands: list, ops: list):
        self.operands = operands
        self.ops = ops


def _pattern_vars(pattern: Any) -> list[Var]:
    out: list[Var] = []
    stack = [pattern]
    while stack:
        p = stack.pop()
        if isinstance(p, PatternVar):
            out.append(p.var)
        elif isinstance(p, (PatternConstructor, PatternTuple)):
            stack.extend(reversed(p.patterns))
    return out


# ------------------------------------------------------------------------- converter


class _Converter:
    """One parse: the scopes, tables and module being built, and one method per rule."""

    def __init__(
        self,
        text: str,
        source_name: str,
        init_module: Any = None,
        init_meta_table: Mapping[str, Iterable[Any]] | None = None,
    ):
        from ..ir.module import IRModule

        self.T = _tables()
        self.text = text
        self.source = Source(source_name, text)
        self._line_starts: list[int] | None = None
        self.mod = init_module.copy() if init_module is not None else IRModule()
        # scopes: name -> stack of binders, with an undo log and marks
        self._names: dict[str, list[Var]] = {}
        self._tnames: dict[str, list[TypeVar]] = {}
        self._log: list[tuple[dict, str]] = []
        self._marks: list[int] = []
        self._lets: list[list] = []  # [var, end offset of its head, bound yet?]
        self._free: dict[str, Var] = {}
        self._implicit: dict[str, Span] = {}  # free variables nobody declared
        # names bound in the current definition (or bare expression), also after their
        # scope closed: a later use outside the scope is an error, not a free variable
        self._bound_once: dict[str, Var] = {}
        self._in_def = False
        self._labels: dict[str, tuple[Expr, int]] = {}
        self._def_index = 0
        # which definition bound the graph variables of each _def_index (labels are
        # local to it: one used elsewhere would be a free variable there)
        self._label_owner: dict[int, str] = {}
        self._defs_end = 0  # where the definitions end (a bare expression follows)
        self._bare_span: Span | None = None
        # globals
        self._defined: dict[str, Span | None] = {gv.name_hint: None for gv in self.mod.functions}
        self._first_use: dict[str, Span] = {}
        self._gvars: dict[str, GlobalVar] = {}
        # ADTs
        self._ctors: dict[str, Constructor] = dict(self.mod.constructors())
        self._types_defined: set[str] = {g.name_hint for g in self.mod.type_definitions}
        self._bare_ctor_calls: set[Call] = set()
        # operators and their attributes
        self._ops: dict[str, Op] = {}
        self._attrs_cache: dict[tuple, Any] = {}
        # meta table
        self._meta: dict[str, list] = {}
        self._meta_nodes: dict[tuple[str, int], Any] = {}
        self._init_meta = init_meta_table
        self.rules = [
            (size, getattr(self, name, None), origin, keep)
            for size, name, origin, keep in self.T.rules
        ]

    # -- spans -----------------------------------------------------------------------
    def span(self, start: int, end: int) -> Span:
        ls = self._line_starts
        if ls is None:
            ls = self._line_starts = [0]
            ls.extend(m.end() for m in re.finditer("\n", self.text))
        line = bisect.bisect_right(ls, start)
        column = start - ls[line - 1] + 1
        if self.text.find("\n", start, end) < 0:
            return Span(self.source, line, column, line, column + (end - start))
        end_line = bisect.bisect_right(ls, end - 1)
        return Span(self.source, line, column, end_line, end - ls[end_line - 1] + 1)

    def error(self, message: str, start: int, end: int, notes: tuple[str, ...] = ()) -> ParseError:
        return ParseError(message, self.span(start, end), notes)

    def _token_span(self, token_text: str, start: int) -> tuple[int, int]:
        """Offsets of ``token_text`` at or after ``start`` (a child token of a rule)."""
        at = self.text.find(token_text, start)
        if at < 0:  # pragma: no cover - defensive
            return start, start + len(token_text)
        return at, at + len(token_text)

    # -- scopes ----------------------------------------------------------------------
    def push_mark(self) -> None:
        self._marks.append(len(self._log))

    def pop_mark(self) -> None:
        mark = self._marks.pop()
        log = self._log
        while len(log) > mark:
            table, name = log.pop()
            table[name].pop()

    def bind(self, name: str, var: Var) -> None:
        self._bound_once.setdefault(name, var)
        stack = self._names.get(name)
        if stack is None:
            self._names[name] = [var]
        else:
            stack.append(var)
        self._log.append((self._names, name))

    def bind_type(self, name: str, tv: TypeVar) -> None:
        stack = self._tnames.get(name)
        if stack is None:
            self._tnames[name] = [tv]
        else:
            stack.append(tv)
        self._log.append((self._tnames, name))

    def lookup_type_var(self, name: str) -> TypeVar | None:
        stack = self._tnames.get(name)
        return stack[-1] if stack else None

    # -- the LALR loop ---------------------------------------------------------------
    def run(self, start_symbol: str, lexer: Lexer) -> Any:
        """Lex and parse ``lexer``'s text from ``start_symbol``; the value of the start rule.

        The lexer's loop is inlined here (one regex match per token, see lexer.py), and
        each reduction calls the rule's callback with ``(children, start, end)``
        offsets.  Rules without a callback pass their only named child through.
        """
        actions = self.T.actions
        rules = self.rules
        end_state = self.T.end_states[start_symbol]
        state = self.T.start_states[start_symbol]
        states = [state]
        values: list[Any] = []
        starts: list[int] = []
        last_end = 0
        text = lexer.text
        endpos = lexer.endpos
        pos = lexer.pos
        names = lexer.names
        valued = lexer.valued
        special = lexer.special
        lt = lexer.lt
        finditer = _MASTER.finditer
        g_punct = _G_PUNCT
        g_graphvar = _G_GRAPHVAR
        g_ident = _G_IDENT
        push_state = states.append
        push_value = values.append
        push_start = starts.append
        prev_type: str | None = None
        prev_start = prev_end = -1
        while True:
            restart = None
            for m in finditer(text, pos, endpos):
                k = m.lastindex
                if k == g_punct:
                    value = m.group(k)
                    t = names[value]
                    start, end = m.span(k)
                    if t == lt and lexer.type_args_follow(start, prev_type, prev_end):
                        t = "TARGS_LT"
                elif k == g_graphvar:
                    value = m.group(k + 1)
                    t = "GRAPHVAR" if m.group(k + 2) is None else "GRAPH_HEAD"
                    start, end = m.span(k)
                elif k == g_ident and m.group(k + 2) is None:
                    value = m.group(k + 1)
                    if " " in value or "\t" in value:
                        value = _SPACES.sub("", value)
                    t = names.get(value, "IDENT")  # keywords; 'inff' is a NUMBER
                    start, end = m.span(k)
                else:
                    t = valued[k]
                    if t is not None:
                        start, end = m.span(k)
                        value = m.group(k)
                    else:
                        t, value, start, end, restart = special(m, k, prev_type)
                        if t is None:
                            break
                        if t == "$END":
                            return self._finish(
                                state,
                                states,
                                values,
                                starts,
                                last_end,
                                end_state,
                                start,
                                (prev_type, None, prev_start, prev_end),
                            )
                # feed the token: reduce as long as the table says so, then shift it
                while True:
                    act = actions[state].get(t)
                    if act is None:
                        raise self.syntax_error(
                            state, (t, value, start, end), (prev_type, None, prev_start, prev_end)
                        )
                    if act >= 0:
                        state = act
                        push_state(act)
                        push_value(value)
                        push_start(start)
                        last_end = end
                        break
                    size, cb, origin, keep = rules[~act]
                    if size == 1:
                        if cb is not None:
                            values[-1] = cb([values[-1]], starts[-1], last_end)
                        state = states[-1] = actions[states[-2]][origin]
                        continue
                    if size:
                        rs = starts[-size]
                        children = values[-size:]
                        del values[-size:]
                        del states[-size:]
                        del starts[-size:]
                        re_ = last_end
                    else:
                        rs = re_ = start
                        children = []
                    value_r = children[keep] if cb is None else cb(children, rs, re_)
                    state = actions[states[-1]][origin]
                    push_state(state)
                    push_value(value_r)
                    push_start(rs)
                prev_type = t
                prev_start = start
                prev_end = end
                if restart is not None:
                    break
            else:  # pragma: no cover - the regex always ends with an EOF match
                return self._finish(
                    state,
                    states,
                    values,
                    starts,
                    last_end,
                    end_state,
                    endpos,
                    (prev_type, None, prev_start, prev_end),
                )
            pos = restart

    def _finish(self, state, states, values, starts, last_end, end_state, at, prev):
        """Feed the end of input: the remaining reductions (a long let chain or graph is
        closed here, one reduction per binding, still without recursion)."""
        actions = self.T.actions
        rules = self.rules
        while True:
            act = actions[state].get("$END")
            if act is None or act >= 0:
                raise self.syntax_error(state, ("$END", None, at, at), prev)
            size, cb, origin, keep = rules[~act]
            if size:
                rs = starts[-size]
                children = values[-size:]
                del values[-size:]
                del states[-size:]
                del starts[-size:]
                re_ = last_end
            else:
                rs = re_ = at
                children = []
            value = children[keep] if cb is None else cb(children, rs, re_)
            state = actions[states[-1]][origin]
            states.append(state)
            values.append(value)
            starts.append(rs)
            if state == end_state:
                return value

    # -- syntax errors -----------------------------------------------------------------
    def syntax_error(self, state: int, tok: tuple, prev: tuple | None) -> ParseError:
        T = self.T
        kind, _value, start, end = tok
        if kind == "RBRACE" and prev is not None and prev[0] == "SEMICOLON":
            return self.error(
                "unexpected ';' before '}': a ';' must be followed by another expression "
                "(remove the trailing ';', or add the expression that should follow)",
                prev[2],
                prev[3],
            )
        if kind == "$END":
            open_bracket = bracket_report(self.text, T.names, 0, start)
            if open_bracket is not None:
                ch, at = open_bracket
                closer = {"(": ")", "[": "]", "{": "}"}[ch]
                return self.error(
                    f"unexpected end of input: this '{ch}' is never closed (expected '{closer}')",
                    at,
                    at + 1,
                )
        expected = [s for s in T.actions[state] if s in T.terminals]
        found = "end of input" if kind == "$END" else f"'{self._token_text(tok)}'"
        message = f"expected {self._describe(expected)} but found {found}"
        notes: tuple[str, ...] = ()
        closers = {"RPAR": ")", "RBRACE": "}", "RSQB": "]"}
        if kind in closers:
            open_bracket = bracket_report(self.text, T.names, 0, start)
            if open_bracket is not None:
                ch, at = open_bracket
                want = {"(": ")", "[": "]", "{": "}"}[ch]
                if want != closers[kind]:
                    line = self.span(at, at + 1)
                    message = (
                        f"expected '{want}' to close the '{ch}' at line {line.line}, column "
                        f"{line.column}, but found {found}"
                    )
        if kind == "$END":
            message = f"unexpected end of input: expected {self._describe(expected)}"
        elif kind == "EQUAL" and prev is not None and prev[0] == "LOCAL":
            notes = ("to bind a variable write 'let %x = value;'",)
        if kind == "$END":
            # point just after the last token (where something is missing)
            at = prev[3] if prev is not None and prev[3] >= 0 else start
            return ParseError(message, self.span(at, at + 1), notes)
        return ParseError(message, self.span(start, max(end, start + 1)), notes)

    def _token_text(self, tok: tuple) -> str:
        _kind, value, start, end = tok
        return self.text[start:end] if end > start else str(value)

    def _describe(self, expected: list[str]) -> str:
        T = self.T
        exp = set(expected)
        words: list[str] = []
        if len(exp & _CONTINUATIONS) >= 3:
            # after an expression a call, projection or '-1' could always follow
            exp -= _CONTINUATIONS
        definitions = {T.names[w] for w in ("def", "type", "data", "extern")}
        if len(exp & definitions) >= 3:
            exp -= definitions
            words.append("a definition (def, type, data, extern)")
        expr_start = _EXPR_START | {T.names["match?"]}
        if len(exp & expr_start) >= 5:
            exp -= expr_start
            words.append("an expression")
        if "TENSOR" in exp and len(exp & _TYPE_START) >= 3:
            exp -= _TYPE_START
            words.append("a type")
        literal = {name: T.literal_of.get(name) for name in exp}
        binops = {n for n, lit in literal.items() if lit in _BINOP_TOKENS}
        if len(binops) >= 6:
            exp -= binops
            words.append("an operator")
        items: list[str] = []
        for text in _PREFERRED:
            name = T.names.get(text)
            if name in exp:
                items.append(f"'{text}'")
                exp.discard(name)
        for name in sorted(exp):
            lit = T.literal_of.get(name)
            if lit is not None:
                items.append(f"'{lit}'")
            else:
                items.append(_TOKEN_WORDS.get(name, name))
        items += words
        seen: list[str] = []
        for item in items:
            if item not in seen:
                seen.append(item)
        if len(seen) > 7:
            seen = seen[:6] + ["..."]
        if not seen:
            return "nothing more"
        if len(seen) == 1:
            return seen[0]
        return ", ".join(seen[:-1]) + " or " + seen[-1]

    # -- module & entry points -----------------------------------------------------
    def _check_version(self, version: str, start: int, end: int) -> None:
        if not version.startswith("0.0."):
            close = self.text.find("]", start, end)
            end = close + 1 if close >= 0 else start + 1 + len(version)
            raise self.error(
                f"unsupported version {version!r}: relay_nb reads 0.0.5 (and 0.0.4)", start, end
            )

    def module_defs(self, c, s, e):
        return None

    def module_defs_v(self, c, s, e):
        self._check_version(c[0], s, e)

    def module_expr(self, c, s, e):
        self._note_bare(e)
        return c[1]

    def module_expr_v(self, c, s, e):
        self._check_version(c[0], s, e)
        self._note_bare(e)
        return c[2]

    def _note_bare(self, end: int) -> None:
        """The span of the bare expression after the definitions: its node's own span may
        be elsewhere (an operator name, a global or a variable has none of its use)."""
        start = _SKIP_RX.match(self.text, self._defs_end).end()
        self._bare_span = self.span(start, max(end, start + 1))

    def expr_only_v(self, c, s, e):
        self._check_version(c[0], s, e)
        return c[1]

    def defs_empty(self, c, s, e):
        return None

    def defs_more(self, c, s, e):
        self._defs_end = e
        return None

    # -- generic lists -------------------------------------------------------------
    def list_first(self, c, s, e):
        return [c[0]]

    def list_more_sep(self, c, s, e):
        lst = c[0]
        lst.append(c[2])
        return lst

    def list_more(self, c, s, e):
        lst = c[0]
        lst.append(c[1])
        return lst

    def list_same(self, c, s, e):
        return c[0]

    def empty_tuple(self, c, s, e):
        return ()

    def none(self, c, s, e):
        return None

    # -- global function definitions -------------------------------------------------
    def def_name(self, c, s, e):
        name = c[1][1:]
        ns, ne = self._token_span(c[1], s)
        if name in self._defined:
            prev = self._defined[name]
            where = (
                f" (first defined at line {prev.line})"
                if prev is not None
                else " in the initial module"
            )
            raise self.error(
                f"duplicate global function @{name}: it is already defined{where}", ns, ne
            )
        span = self.span(ns, ne)
        self._defined[name] = span
        self._def_index += 1
        self._label_owner[self._def_index] = name
        self._in_def = True
        self._bound_once = {}
        self.push_mark()
        gv = self._gvars.get(name)
        if gv is None:
            gv = self._gvars[name] = self.mod.intern_global_var(name)
        return gv

    def def_sig(self, c, s, e):
        return self._signature(c[0], c[1], c[3], c[5], c[6], s)

    def def_end(self, c, s, e):
        gv, func = c[0][0], self._function(c[0], c[2], s, e)
        self.pop_mark()
        self._in_def = False
        self._bound_once = {}
        self._def_index += 1  # a bare expression after it sees none of its labels
        try:
            self.mod.add(gv, func, update=True)
        except RelayError as err:  # pragma: no cover - defensive
            raise self.error(err.message, s, e) from None

    def _signature(self, head, tparams, params, ret, where, start):
        plist, attrs = params
        seen: set[str] = set()
        for v in plist:
            if v.name_hint in seen:
                sp = v.span
                raise ParseError(f"duplicate parameter %{v.name_hint}", sp)
            seen.add(v.name_hint)
            self.bind(v.name_hint, v)
        return (head, tuple(tparams), tuple(plist), attrs, ret, where, start)

    def _function(self, sig, body, s, e) -> Function:
        _head, tparams, params, attrs, ret, where, _start = sig
        fields: dict[str, Any] = {}
        if attrs:
            for key, value, _, _ in attrs:
                fields[key] = value
        if where:
            relations = []
            for rel, args, rs, re_ in where:
                if args is None:
                    # no arguments: the relation holds over (param types..., return type)
                    relations.append(TypeRelation(rel, (), len(params)))
                else:
                    if len(args) < 1:
                        raise self.error("a type relation needs at least one type", rs, re_)
                    relations.append(TypeRelation(rel, tuple(args), len(args) - 1))
            fields["type_constraints"] = tuple(relations)
        fattrs = Attrs(fields, "DictAttrs") if fields else EMPTY_ATTRS
        return Function(params, body, ret, tparams, fattrs, span=self.span(s, e))

    def params_empty(self, c, s, e):
        return ([], None)

    def params_only(self, c, s, e):
        return (c[0], None)

    def params_attrs(self, c, s, e):
        return (c[0], c[2])

    def attrs_only(self, c, s, e):
        return ([], c[0])

    def param(self, c, s, e):
        return Var(c[0][1:], None, span=self.span(s, e))

    def param_typed(self, c, s, e):
        return Var(c[0][1:], _annotation(c[2]), span=self.span(s, e))

    def param_dev(self, c, s, e):
        # {virtual_device=...} is accepted and dropped: relay_nb has no device planning.
        return Var(c[0][1:], None, span=self.span(s, e))

    def param_dev_typed(self, c, s, e):
        return Var(c[0][1:], _annotation(c[5]), span=self.span(s, e))

    def ret(self, c, s, e):
        return c[1]

    def where(self, c, s, e):
        if c[0] != "where":
            raise self.error(f"expected '{{' but found '{c[0]}'", s, s + len(c[0]))
        return tuple(c[1])

    def relation_bare(self, c, s, e):
        return (self._relation(c[0], s, e), None, s, e)

    def relation_args(self, c, s, e):
        return (self._relation(c[0], s, e), tuple(c[2]), s, e)

    def _relation(self, name: str, s: int, e: int):
        from ..typing.relations import RELATIONS, lookup_relation

        rel = lookup_relation(name)
        if rel is None:
            close = difflib.get_close_matches(name, list(RELATIONS), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            known = ", ".join(sorted(RELATIONS))
            raise self.error(
                f"unknown type relation {name}{hint} (known: {known})", s, s + len(name)
            )
        return rel

    # -- type parameters ---------------------------------------------------------------
    def tparams(self, c, s, e):
        return tuple(c[1])

    tparams_t = tparams

    def tparam(self, c, s, e):
        tv = TypeVar(c[0], Kind.Type, span=self.span(s, e))
        self.bind_type(c[0], tv)
        return tv

    def tparam_kind(self, c, s, e):
        kind = _KINDS.get(c[2])
        if kind is None:
            ks, ke = self._token_span(c[2], s + len(c[0]))
            raise self.error(f"unknown kind {c[2]!r} (kinds are Type, Shape and BaseType)", ks, ke)
        tv = TypeVar(c[0], kind, span=self.span(s, e))
        self.bind_type(c[0], tv)
        return tv

    # -- ADT definitions ---------------------------------------------------------------
    def type_kw_name(self, c, s, e):
        return self._type_name(c[1], s)

    data_kw_name = type_kw_name

    def _type_name(self, name: str, s: int):
        ns, ne = self._token_span(name, s + 4)
        if name in self._types_defined:
            raise self.error(f"duplicate type definition {name}", ns, ne)
        clash = self._ctors.get(name)
        if clash is not None:  # types and constructors share one namespace (as in TVM)
            raise self.error(
                f"type {name} has the name of a constructor of type {clash.belong_to.name_hint}",
                ns,
                ne,
            )
        self._types_defined.add(name)
        self.push_mark()
        return (GlobalTypeVar(name), ns, ne)

    def type_head(self, c, s, e):
        gtv, _ns, _ne = c[0]
        return (gtv, tuple(c[1]), s)

    data_head = type_head

    def type_end(self, c, s, e):
        return self._finish_type(c[0], c[2], s, e)

    def type_end_empty(self, c, s, e):
        return self._finish_type(c[0], [], s, e)

    def extern_type_end(self, c, s, e):
        return self._finish_type(c[1], [], s, e)

    def data_end(self, c, s, e):
        gtv = c[0][0]
        for name, fields, cs, ce, ret in c[2]:
            head = ret.func if isinstance(ret, TypeCall) else None
            if head != gtv:
                raise self.error(
                    f"constructor {name} of data {gtv.name_hint} must return {gtv.name_hint}",
                    cs,
                    ce,
                )
        return self._finish_type(c[0], [spec[:4] for spec in c[2]], s, e)

    def _finish_type(self, head, specs, s, e):
        from ..ir.adt import TypeData

        gtv, tvars, _ = head
        ctors = []
        names: set[str] = set()
        for tag, (name, fields, cs, ce) in enumerate(specs):
            other = self._ctors.get(name)
            if name in names or (other is not None and other.belong_to.name_hint != gtv.name_hint):
                owner = gtv.name_hint if name in names else other.belong_to.name_hint
                raise self.error(f"constructor {name} is already defined by type {owner}", cs, ce)
            names.add(name)
            ctors.append(Constructor(name, tuple(fields), gtv, tag, span=self.span(cs, ce)))
        tdef = TypeData(gtv, tvars, tuple(ctors), span=self.span(s, e))
        self.pop_mark()
        try:
            self.mod.add_type(tdef, update=True)
        except RelayError as err:
            raise self.error(err.message, s, e) from None
        for ctor in ctors:
            self._ctors[ctor.name_hint] = ctor

    def ctor_plain(self, c, s, e):
        return (c[0], [], s, e)

    def ctor_fields(self, c, s, e):
        return (c[0], c[2], s, e)

    def data_ctor0(self, c, s, e):
        return (c[0], [], s, e, c[5])

    def data_ctorn(self, c, s, e):
        return (c[0], c[3], s, e, c[6])

    # -- statements --------------------------------------------------------------------
    def seq(self, c, s, e):
        # e1; e2  ->  let %"" = e1; e2
        return Let(Var("", None, span=self.span(s, s)), c[0], c[2], span=self.span(s, e))

    def let_head(self, c, s, e):
        return self._let_head(c[1], None, s, e)

    def let_head_typed(self, c, s, e):
        return self._let_head(c[1], _annotation(c[3]), s, e)

    def let_head_fused(self, c, s, e):
        return self._let_head(c[0], None, s, e)

    def _let_head(self, token: str, ann, s, e):
        vs, ve = self._token_span(token, s + 3)
        var = Var(token[1:], ann, span=self.span(vs, ve))
        self.push_mark()
        self._lets.append([var, e, False])
        return var

    def let_bind(self, c, s, e):
        entry = self._lets.pop()
        if not entry[2]:
            self.bind(entry[0].name_hint, entry[0])
        return (c[0], c[1])

    def let_end(self, c, s, e):
        var, value = c[0]
        self.pop_mark()
        return Let(var, value, c[1], span=self.span(s, e))

    def _bind_label(self, label: str, value: Expr) -> None:
        old = self._labels.get(label)
        # first binding wins (TVM), except that a later def may reuse a number
        if old is None or old[1] != self._def_index:
            self._labels[label] = (value, self._def_index)

    def gb_first(self, c, s, e):
        self._bind_label(c[0], c[1])

    def gb_first_sep(self, c, s, e):
        self._bind_label(c[0], c[2])

    def gb_more(self, c, s, e):
        self._bind_label(c[1], c[2])

    def gb_more_sep(self, c, s, e):
        self._bind_label(c[1], c[3])

    def graph_end(self, c, s, e):
        return c[1]

    def free_var(self, c, s, e):
        return self._free_var(c[1], None, s)

    def free_var_typed(self, c, s, e):
        return self._free_var(c[1], c[3], s)

    def _free_var(self, token: str, ann, s):
        vs, ve = self._token_span(token, s + 8)
        var = Var(token[1:], ann, span=self.span(vs, ve))
        self._free[var.name_hint] = var

    # -- infix operators ---------------------------------------------------------------
    def chain_start(self, c, s, e):
        return _Chain([(c[0], s), c[2]], [c[1]])

    def chain_start_negnum(self, c, s, e):
        right, op = self._split_negnum(c[1], e)
        return _Chain([(c[0], s), right], [op])

    def chain_more(self, c, s, e):
        chain = c[0]
        chain.ops.append(c[1])
        chain.operands.append(c[2])
        return chain

    def chain_more_negnum(self, c, s, e):
        chain = c[0]
        right, op = self._split_negnum(c[1], e)
        chain.ops.append(op)
        chain.operands.append(right)
        return chain

    def _split_negnum(self, text: str, end: int):
        # '%x -1' / '%x-1': TVM lexes -1 as one number; here it is a subtraction.
        start = end - len(text)
        positive = text[1:]
        array, literal = self._number(positive, start + 1, end)
        right = Constant(array, is_literal=literal, span=self.span(start + 1, end))
        return right, ("subtract", 10, start, start + 1)

    def chain_end(self, c, s, e):
        chain = c[0]
        operands = chain.operands
        ops = chain.ops
        text = self.text
        first, first_start = operands[0]
        n = len(ops)
        # operand i spans from after op i-1 to before op i
        bounds = []
        for i in range(n + 1):
            lo = first_start if i == 0 else ops[i - 1][3]
            hi = ops[i][2] if i < n else e
            while lo < hi and text[lo].isspace():
                lo += 1
            while hi > lo and text[hi - 1].isspace():
                hi -= 1
            bounds.append((lo, hi))
        out: list[tuple[Expr, int, int]] = [(first, *bounds[0])]
        pending: list[tuple[str, int]] = []

        def reduce() -> None:
            name, _ = pending.pop()
            b, _, b_end = out.pop()
            a, a_start, _ = out.pop()
            out.append(
                (
                    Call(
                        self.op(name, a_start, b_end), (a, b), None, span=self.span(a_start, b_end)
                    ),
                    a_start,
                    b_end,
                )
            )

        for i, (name, prec, _, _) in enumerate(ops):
            while pending and pending[-1][1] >= prec:
                reduce()
            pending.append((name, prec))
            out.append((operands[i + 1], *bounds[i + 1]))
        while pending:
            reduce()
        return out[0][0]

    def neg(self, c, s, e):
        x = c[1]
        if type(x) is Constant and x.data.ndim == 0 and x.data.dtype.kind in "if":
            data = np.array(np.negative(x.data), dtype=x.data.dtype)
            data.flags.writeable = False
            return Constant(data, is_literal=x.is_literal, span=self.span(s, e))
        return Call(self.op("negative", s, e), (x,), None, span=self.span(s, e))

    # -- references to names -----------------------------------------------------------
    def local_ref(self, c, s, e):
        name = c[0][1:]
        stack = self._names.get(name)
        if stack:
            return stack[-1]
        var = self._free.get(name)
        if var is not None:
            return var
        earlier = self._bound_once.get(name)
        if earlier is not None:
            # if (True) { let %x = (); () } else { %x }: TVM rejects it too
            where = ""
            if earlier.span is not None:
                where = f" (bound at line {earlier.span.line}, column {earlier.span.column})"
            raise self.error(f"%{name} is used outside the scope of its binding{where}", s, e)
        if not self._in_def:
            # Outside a def, an unbound %name is a free variable, as if `free_var %name;`
            # had been written: the seeds' fragments (`%1 = %a + %b`) read their inputs
            # this way, and a bare module body gets them as @main's parameters.
            var = Var(name, None, span=self.span(s, e))
            self._free[name] = var
            self._implicit.setdefault(name, var.span)
            return var
        visible = [n for n, st in self._names.items() if st] + list(self._free)
        close = difflib.get_close_matches(name, visible, n=1)
        hint = f"; did you mean %{close[0]}?" if close else ""
        raise self.error(f"undefined variable %{name}{hint}", s, e)

    def graph_ref(self, c, s, e):
        entry = self._labels.get(c[0])
        if entry is not None and entry[1] != self._def_index:
            # A label of an earlier definition stays visible (as in TVM) when its value is
            # closed; one using that definition's variables would make them free here.
            from ..analysis.free_vars import free_vars

            used = free_vars(entry[0])
            if used:
                owner = self._label_owner.get(entry[1])
                where = "@" + owner if owner else "another definition"
                raise self.error(
                    f"graph variable {brief(c[0])} is bound in {where} and uses its variable "
                    f"%{used[0].name_hint}, which is not in scope here",
                    s,
                    e,
                )
        if entry is None:
            raise self.error(
                f"graph variable {brief(c[0])} has not been defined yet (bind it first: {brief(c[0])} = ...;)",
                s,
                e,
            )
        return entry[0]

    def global_ref(self, c, s, e):
        name = c[0][1:]
        gv = self._gvars.get(name)
        if gv is None:
            gv = self._gvars[name] = self.mod.intern_global_var(name)
        if name not in self._defined and name not in self._first_use:
            self._first_use[name] = self.span(s, e)
        return gv

    def ident_ref(self, c, s, e):
        name = c[0]
        ctor = self._ctors.get(name)
        if ctor is not None:
            if not ctor.inputs:
                # a 0-ary constructor used as a value is a call with no arguments
                call = Call(ctor, (), None, span=self.span(s, e))
                self._bare_ctor_calls.add(call)
                return call
            return ctor
        return self.op(name, s, e)

    def op(self, name: str, s: int, e: int) -> Op:
        op = self._ops.get(name)
        if op is not None:
            return op
        from ..op.registry import get_op, has_op, list_ops

        if has_op(name):
            op = get_op(name)
        elif name in OP_ALIASES and has_op(OP_ALIASES[name]):
            op = get_op(OP_ALIASES[name])
        else:
            candidates = list_ops() + list(self._ctors)
            close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            if name[:1].isupper():
                message = f"undefined constructor or operator {name}{hint}"
            else:
                message = f"unknown operator {name}{hint}"
            notes = ()
            if name in self._tnames or name in _SCALAR_ALIASES:
                notes = ("a bare name in an expression is an operator or constructor",)
            raise self.error(message, s, e, notes)
        self._ops[name] = op
        return op

    # -- literals ------------------------------------------------------------------------
    def _number(self, text: str, s: int, e: int):
        try:
            return _number_array(text)
        except ValueError as err:
            raise self.error(str(err), s, e) from None

    def number(self, c, s, e):
        array, literal = self._number(c[0], s, e)
        return Constant(array, is_literal=literal, span=self.span(s, e))

    def true(self, c, s, e):
        return Constant(_TRUE, span=self.span(s, e))

    def false(self, c, s, e):
        return Constant(_FALSE, span=self.span(s, e))

    def constant_pseudo(self, c, s, e):
        # Constant(v, shape, dtype): the docs' pseudo-syntax for a filled tensor
        value, shape, dtype = c[2], c[4], c[6]
        dtype = self._dtype(dtype, s, e, what="Constant dtype")
        if any(not isinstance(d, int) for d in shape):
            raise self.error("a Constant(...) shape must be a list of integers", s, e)
        data = np.full(shape, value, dtype=dtype)
        return Constant(data, span=self.span(s, e))

    def cv_number(self, c, s, e):
        value, _, _ = self._read(c[0], s, e)
        return value

    def cv_true(self, c, s, e):
        return True

    def cv_false(self, c, s, e):
        return False

    def const_shape(self, c, s, e):
        return tuple(c[1])

    def const_shape1(self, c, s, e):
        return (self.dim_number(c, s, e),)

    def const_dtype_str(self, c, s, e):
        return c[0]

    def _read(self, text: str, s: int, e: int):
        try:
            return _read_number(text)
        except ValueError as err:
            raise self.error(str(err), s, e) from None

    # -- meta references -----------------------------------------------------------------
    def _meta_entry(self, key: str, index: int) -> Any:
        entries = self._meta.get(key)
        if entries is not None and 0 <= index < len(entries) and entries[index] is not None:
            return entries[index]
        return _MISSING  # (a null entry is a hole the printer left for a missing constant)

    def meta_ref(self, c, s, e):
        key, index, ty_text, ty_start = c[0]
        cached = self._meta_nodes.get((key, index))
        if cached is not None:
            return cached
        entry = self._meta_entry(key, index)
        if entry is _MISSING and not _TYPE_KEY.match(key):
            raise self.error(
                f"meta[{key}][{index}]: {key} is not a TVM type key (such as relay.Constant or "
                "VirtualDevice), and there is no meta table to look it up in",
                s,
                e,
            )
        attrs_arg = (
            ".attrs." in "." + key
            and not isinstance(entry, Expr)
            and self.text[e : e + 200].lstrip().startswith(")")
        )
        if entry is _MISSING or attrs_arg:
            # (an attrs object stands as a call's last argument; _call takes it from there)
            node: Any = MetaRef(
                key, index, self._comment_type(ty_text, ty_start), span=self.span(s, e)
            )
        elif isinstance(entry, Expr):
            node = entry
        elif isinstance(entry, np.ndarray) or np.isscalar(entry):
            node = Constant(np.asarray(entry), span=self.span(s, e))
        else:
            raise self.error(
                f"meta[{key}][{index}] is a {type(entry).__name__}, not an expression", s, e
            )
        self._meta_nodes[(key, index)] = node
        return node

    def _comment_type(self, text: str | None, start: int) -> Type | None:
        """The type written in a ``/* ty=... */`` comment, or None if it does not parse."""
        if not text:
            return None
        marks, log = len(self._marks), len(self._log)
        try:
            lexer = Lexer(self.text, self.T.names, pos=start, endpos=start + len(text))
            lexer.make_span = self.span
            return self.run("type_only", lexer)
        except RelayError:
            while len(self._marks) > marks:
                self.pop_mark()
            while len(self._log) > log:
                table, name = self._log.pop()
                table[name].pop()
            return None

    # -- tuples, functions, control flow -----------------------------------------------
    def unit(self, c, s, e):
        return Tuple((), span=self.span(s, e))

    def tuple1(self, c, s, e):
        return Tuple((c[1],), span=self.span(s, e))

    def tuple_n(self, c, s, e):
        return Tuple((c[1], *c[3]), span=self.span(s, e))

    def proj(self, c, s, e):
        try:
            index = index_value(c[1][1:])
        except ValueError as err:
            raise self.error(str(err), s, e) from None
        return TupleGetItem(c[0], index, span=self.span(s, e))

    def proj_dot(self, c, s, e):
        value, _dtype, _ = self._read(c[2], s, e)
        if not isinstance(value, int) or value < 0:
            raise self.error("a projection index must be a non-negative integer", s, e)
        return TupleGetItem(c[0], value, span=self.span(s, e))

    def fn_kw(self, c, s, e):
        lets = self._lets
        if lets:
            top = lets[-1]
            # `let %f = fn ...`: the let variable is visible in its own value (recursion)
            if not top[2] and _GAP_RX.fullmatch(self.text, top[1], s) is not None:
                self.bind(top[0].name_hint, top[0])
                top[2] = True
        self.push_mark()

    def fn_sig(self, c, s, e):
        return self._signature(None, c[1], c[3], c[5], c[6], s)

    def fn_end(self, c, s, e):
        func = self._function(c[0], c[2], s, e)
        self.pop_mark()
        return func

    def if_else(self, c, s, e):
        return If(c[1], c[3], c[7], span=self.span(s, e))

    def if_elif(self, c, s, e):
        return If(c[1], c[3], c[6], span=self.span(s, e))

    def ref_new(self, c, s, e):
        return RefCreate(c[2], span=self.span(s, e))

    def ref_read(self, c, s, e):
        return RefRead(c[2], span=self.span(s, e))

    def ref_write(self, c, s, e):
        return RefWrite(c[2], c[4], span=self.span(s, e))

    # -- calls and attributes ------------------------------------------------------------
    def args_empty(self, c, s, e):
        return ([], None)

    def args_only(self, c, s, e):
        return (c[0], None)

    def args_attrs(self, c, s, e):
        return (c[0], c[2])

    def call(self, c, s, e):
        return self._call(c[0], c[2], (), s, e)

    def ident_call(self, c, s, e):
        callee = self.ident_ref(c, s, s + len(c[0]))
        return self._call(callee, c[2], (), s, e)

    def ident_call_args(self, c, s, e):
        callee = self.ident_ref(c, s, s + len(c[0]))
        return self._call(callee, (c[2], None), (), s, e)

    def ident_call_attrs(self, c, s, e):
        callee = self.ident_ref(c, s, s + len(c[0]))
        return self._call(callee, (c[2], c[4]), (), s, e)

    def arg_graph_first(self, c, s, e):
        return [self.graph_ref(c, s, e)]

    def arg_local_first(self, c, s, e):
        return [self.local_ref(c, s, e)]

    def arg_graph_more(self, c, s, e):
        lst = c[0]
        entry = self._labels.get(c[2])
        if entry is None or entry[1] != self._def_index:
            lst.append(self.graph_ref([c[2]], e - len(c[2]), e))
            return lst
        lst.append(entry[0])
        return lst

    def arg_local_more(self, c, s, e):
        lst = c[0]
        stack = self._names.get(c[2][1:])
        lst.append(stack[-1] if stack else self.local_ref([c[2]], e - len(c[2]), e))
        return lst

    def call_targs(self, c, s, e):
        return self._call(c[0], c[5], tuple(c[2]), s, e)

    def _call(self, callee, arguments, type_args, s, e):
        args, attrs = arguments
        kind = callee.__class__
        if kind is Op:
            if args and type(args[-1]) is MetaRef and ".attrs." in "." + args[-1].type_key:
                # nn.batch_matmul(%a, %b, meta[relay.attrs.BatchMatmulAttrs][0])
                call_attrs: Any = self._meta_attrs(callee, args.pop(), attrs, s, e)
            else:
                call_attrs = self._op_attrs(callee, attrs, s, e)
        else:
            if kind is Call and callee in self._bare_ctor_calls:
                callee = callee.op  # `Z()` calls the constructor itself
            call_attrs = None
            if attrs:
                fields = {k: v for k, v, _, _ in attrs}
                type_key = fields.pop("attrs_type_key", None)
                if type_key is None:
                    _, _, a_s, a_e = attrs[0]
                    raise self.error(
                        "only operator calls take attributes (a call of a function or global "
                        'may carry them only with attrs_type_key="...")',
                        a_s,
                        a_e,
                    )
                call_attrs = Attrs(fields, str(type_key))
        return Call(callee, tuple(args), call_attrs, type_args, span=self.span(s, e))

    def _meta_attrs(self, op: Op, ref: MetaRef, attrs, s: int, e: int) -> Any:
        """A call's whole attrs object given as ``meta[relay.attrs.X][i]``: its fields from
        the #[metadata] section, or :class:`UnresolvedAttrs` when the text has none."""
        if attrs:
            raise self.error("attributes are given both as a meta reference and as key=value", s, e)
        entry = self._meta_entry(ref.type_key, ref.index)
        if entry is _MISSING:
            return UnresolvedAttrs(ref.type_key, ref.index)
        from .metadata import MetaObject, attrs_fields

        schema = _registry().get_column("attrs_schema").get(op.name)
        if schema is None or not isinstance(entry, MetaObject):
            raise self.error(f"{op.name} takes no attributes object", s, e)
        if entry.type_key != schema.type_key:
            raise self.error(
                f"{op.name} takes {schema.type_key}, but {ref.type_key}[{ref.index}] is a "
                f"{entry.type_key}",
                s,
                e,
            )
        try:
            return _registry().make_attrs(op, attrs_fields(entry, schema))
        except (RelayError, ValueError, TypeError) as exc:
            message = exc.message if isinstance(exc, RelayError) else str(exc)
            raise self.error(f"{ref.type_key}[{ref.index}]: {message}", s, e) from None

    def _op_attrs(self, op: Op, attrs, s: int, e: int):
        if attrs:
            key: Any = (op.name, tuple([(a[0], a[1]) for a in attrs]))
        else:
            key = op.name
        try:
            cached = self._attrs_cache.get(key, _MISSING)
        except TypeError:  # an unhashable value (never with parsed values)
            key, cached = None, _MISSING
        if cached is not _MISSING:
            return cached
        kwargs: dict[str, Any] = {}
        if attrs:
            for k, v, a_s, a_e in attrs:
                if k in kwargs:
                    raise self.error(f"attribute {k} is given twice", a_s, a_e)
                kwargs[k] = v
        try:
            result = _registry().make_attrs(op, kwargs)
        except AttrError as err:
            raise AttrError(err.message, self._attr_span(err.message, attrs, s, e)) from None
        except RelayError as err:  # pragma: no cover - defensive
            raise ParseError(err.message, self.span(s, e)) from None
        if key is not None:
            self._attrs_cache[key] = result
        return result

    def _attr_span(self, message: str, attrs, s: int, e: int) -> Span:
        """The span of the attribute an AttrError message is about (else the call)."""
        if attrs:
            names = {k: (a_s, a_e) for k, _, a_s, a_e in attrs}
            for m in _ATTR_NAME_RX.finditer(message):
                if m.group(1) in names:
                    return self.span(*names[m.group(1)])
            if "takes no attributes" in message:
                _, _, a_s, a_e = attrs[0]
                return self.span(a_s, a_e)
        return self.span(s, e)

    def attr(self, c, s, e):
        return (c[0], c[2], s, e)

    def _fused_attr(self, token, s: int, e: int):
        key, text = token
        value = _ATTR_VALUES.get(text, _MISSING)
        if value is _MISSING:
            try:
                value = _attr_value(text)
            except ValueError as err:
                raise self.error(str(err), s, e) from None
            if len(_ATTR_VALUES) > 50_000:
                _ATTR_VALUES.clear()
            _ATTR_VALUES[text] = value
        return (key, value, s, e)

    def attr_first_fused(self, c, s, e):
        return [self._fused_attr(c[0], s, e)]

    def attr_more_fused(self, c, s, e):
        key, text = c[2]
        # the ATTR token is the last child: it starts where its text does
        at = self.text.rfind(key, s, e - len(text))
        lst = c[0]
        lst.append(self._fused_attr(c[2], at, e))
        return lst

    def av_number(self, c, s, e):
        value = _ATTR_VALUES.get(c[0], _MISSING)
        if value is _MISSING:
            value, _, _ = self._read(c[0], s, e)
            _ATTR_VALUES[c[0]] = value
        return value

    def av_true(self, c, s, e):
        return True

    def av_false(self, c, s, e):
        return False

    def av_string(self, c, s, e):
        return c[0]

    def av_ident(self, c, s, e):
        try:
            return _attr_name_value(c[0])
        except ValueError as err:
            raise self.error(str(err), s, e) from None

    def av_meta(self, c, s, e):
        key, index, _, _ = c[0]
        entry = self._meta_entry(key, index)
        if entry is _MISSING:
            node = self._meta_nodes.get((key, index))
            if node is None:
                node = self._meta_nodes[(key, index)] = MetaRef(key, index, span=self.span(s, e))
            return node
        return freeze_value(entry) if isinstance(entry, (list, tuple)) else entry

    def av_empty_list(self, c, s, e):
        return ()

    def av_list(self, c, s, e):
        return tuple(c[1])

    # -- match ---------------------------------------------------------------------------
    def match_end(self, c, s, e):
        return Match(c[1], tuple(c[3]), c[0] == "match", span=self.span(s, e))

    def clause_head(self, c, s, e):
        self.push_mark()
        for var in _pattern_vars(c[0]):
            self.bind(var.name_hint, var)
        return (c[0], s)

    def case_head(self, c, s, e):
        return self.clause_head([c[1]], s, e)

    def arm(self, c, s, e):
        pattern, _ = c[0]
        self.pop_mark()
        return Clause(pattern, c[1], span=self.span(s, e))

    def case_arm(self, c, s, e):
        pattern, _ = c[0]
        self.pop_mark()
        return Clause(pattern, c[2], span=self.span(s, e))

    def pwild(self, c, s, e):
        return PatternWildcard(span=self.span(s, e))

    def pvar(self, c, s, e):
        span = self.span(s, e)
        return PatternVar(Var(c[0][1:], None, span=span), span=span)

    def pvar_typed(self, c, s, e):
        span = self.span(s, e)
        return PatternVar(Var(c[0][1:], c[2], span=span), span=span)

    def _ctor(self, name: str, s: int) -> Constructor:
        ctor = self._ctors.get(name)
        if ctor is None:
            close = difflib.get_close_matches(name, list(self._ctors), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            note = ("constructors must be defined (type ... { ... }) before they are used",)
            raise self.error(f"undefined constructor {name}{hint}", s, s + len(name), note)
        return ctor

    def pctor0(self, c, s, e):
        return PatternConstructor(self._ctor(c[0], s), (), span=self.span(s, e))

    pctor0p = pctor0

    def pctor(self, c, s, e):
        return PatternConstructor(self._ctor(c[0], s), tuple(c[2]), span=self.span(s, e))

    def ptuple0(self, c, s, e):
        return PatternTuple((), span=self.span(s, e))

    def ptuple(self, c, s, e):
        # (p) in a pattern is a one-element tuple pattern, unlike in expressions
        return PatternTuple(tuple(c[1]), span=self.span(s, e))

    # -- types ---------------------------------------------------------------------------
    def _dtype(self, name: str, s: int, e: int, what: str = "dtype"):
        from ..op.registry import _SCALAR_DTYPES, is_valid_dtype

        if is_valid_dtype(name):
            return name
        alias = _SCALAR_ALIASES.get(name)
        if alias is not None:
            return alias
        if is_complex_dtype(name):
            raise self.error(complex_dtype_message(name), s, e)
        close = difflib.get_close_matches(name, sorted(_SCALAR_DTYPES), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise self.error(f"unknown {what} {name!r}{hint}", s, e)

    def tensor_type(self, c, s, e):
        shape, name = c[2], c[4]
        tv = self.lookup_type_var(name)
        if tv is not None:
            dtype: Any = tv
        else:
            # the dtype is the last name before ']'
            ds = self.text.rfind(name, s, e)
            dtype = self._dtype(name, ds, ds + len(name))
        return TensorType(shape, dtype, span=self.span(s, e))

    def shape(self, c, s, e):
        return tuple(c[1])

    def shape_var(self, c, s, e):
        tv = self.lookup_type_var(c[0])
        if tv is None:
            raise self.error(
                f"a tensor shape must be (d1, d2, ...) or a shape type parameter; {c[0]} is "
                "not a type parameter in scope",
                s,
                e,
            )
        return tv

    def dim_number(self, c, s, e):
        value, _, _ = self._read(c[0], s, e)
        if not isinstance(value, int) or value < 0:
            raise self.error(f"a shape dimension must be a non-negative integer, not {c[0]}", s, e)
        return value

    def dim_any(self, c, s, e):
        return AnyDim

    def dim_meta(self, c, s, e):
        # meta[tir.SizeVar][i]: a symbolic dimension; relay_nb treats it as dynamic.
        return AnyDim

    def unit_type(self, c, s, e):
        return TupleType((), span=self.span(s, e))

    def tuple_type1(self, c, s, e):
        # (T) in a type is a one-element tuple type (as TVM reads it)
        return TupleType((c[1],), span=self.span(s, e))

    def tuple_type(self, c, s, e):
        return TupleType((c[1], *c[3]), span=self.span(s, e))

    def fn_type_kw(self, c, s, e):
        self.push_mark()

    def func_type0(self, c, s, e):
        self.pop_mark()
        return FuncType((), c[-1], tuple(c[1]), span=self.span(s, e))

    def func_type(self, c, s, e):
        self.pop_mark()
        return FuncType(tuple(c[3]), c[-1], tuple(c[1]), span=self.span(s, e))

    def type_name(self, c, s, e):
        name = c[0]
        tv = self.lookup_type_var(name)
        if tv is not None:
            return tv
        from ..op.registry import is_valid_dtype

        if is_valid_dtype(name):
            return TensorType((), name, span=self.span(s, e))
        alias = _SCALAR_ALIASES.get(name)
        if alias is not None:
            return TensorType((), alias, span=self.span(s, e))
        if _COMPLEX_RX.fullmatch(name):  # not an ADT that was never defined
            raise self.error(complex_dtype_message(name), s, e)
        # anything else names an ADT (defined later, or never: the type checker reports it)
        return TypeCall(GlobalTypeVar(name), (), span=self.span(s, e))

    def _type_head(self, name: str):
        tv = self.lookup_type_var(name)
        return tv if tv is not None else GlobalTypeVar(name)

    def type_call0(self, c, s, e):
        return TypeCall(self._type_head(c[0]), (), span=self.span(s, e))

    def type_call(self, c, s, e):
        return TypeCall(self._type_head(c[0]), tuple(c[2]), span=self.span(s, e))

    def incomplete_type(self, c, s, e):
        return IncompleteType()

    def ref_type(self, c, s, e):
        return RefType(c[2], span=self.span(s, e))

    # -- the end -----------------------------------------------------------------------
    def check_globals(self) -> None:
        """A global used but never defined is an error at its first use."""
        missing = [
            (span.line, span.column, name, span)
            for name, span in self._first_use.items()
            if name not in self._defined
        ]
        if missing:
            _, _, name, span = min(missing)
            defined = sorted(self._defined)
            close = difflib.get_close_matches(name, defined, n=1)
            hint = f"; did you mean @{close[0]}?" if close else ""
            raise ParseError(f"undefined global @{name}: it is used but never defined{hint}", span)


_MISSING = object()
_REGISTRY: Any = None


# TVM's type keys are dotted (relay.Constant, tir.SizeVar) or CamelCase (VirtualDevice)
_TYPE_KEY = re.compile(r"[A-Za-z_]\w*(?:\.\w+)+\Z|[A-Z]\w*\Z")


def _annotation(ty: Any) -> Any:
    """A variable's annotation: ``%x: _`` (the unknown type) is the same as none."""
    return None if type(ty) is IncompleteType else ty


def _registry():
    """relay_nb.op.registry, imported on first use (it imports every op family)."""
    global _REGISTRY
    if _REGISTRY is None:
        from ..op import registry

        _REGISTRY = registry
    return _REGISTRY


def _binop_rule(name: str, prec: int):
    def rule(self, c, s, e):
        return (name, prec, s, e)

    return rule


# The binary-operator rules (op_add -> ('add', 10, start, end), ...).
for _rule, (_text, _name, _prec) in _BINOPS.items():
    setattr(_Converter, _rule, _binop_rule(_name, _prec))


# ------------------------------------------------------------------------- public API


def _load_meta(conv: _Converter, text: str, init_meta_table) -> None:
    """Fill the meta table: the text's #[metadata] section, then ``init_meta_table``."""
    table: dict[str, list] = {}
    if "#[metadata]" in text or "METADATA:" in text or re.search(r"#\[\s*metadata", text):
        lexer = Lexer(text, conv.T.names)
        lexer.make_span = conv.span
        try:
            for _ in lexer:
                pass
        except ParseError:
            lexer.metadata = None  # the main pass reports the error
        if lexer.metadata is not None and lexer.metadata.strip():
            try:
                from .metadata import parse_metadata
            except ImportError:  # pragma: no cover - until syntax/metadata.py exists
                parse_metadata = None
            if parse_metadata is not None:
                at = lexer.eof
                marker = conv.span(at, lexer.metadata_start or at + 1)
                try:
                    parsed = parse_metadata(lexer.metadata, marker)
                except RelayError as err:
                    if err.span is not None:
                        raise
                    raise ParseError(f"bad #[metadata] section: {err.message}", marker) from None
                except (ValueError, KeyError, TypeError) as err:
                    raise ParseError(f"bad #[metadata] section: {err}", marker) from None
                for key, entries in (parsed or {}).items():
                    table.setdefault(key, []).extend(entries)
    if init_meta_table:
        for key, entries in init_meta_table.items():
            table.setdefault(key, []).extend(
                e
                if isinstance(e, Expr)
                else Constant(np.asarray(e))
                if isinstance(e, np.ndarray)
                else e
                for e in entries
            )
    conv._meta = table


def _prepare(text: Any, source_name: str, init_module, init_meta_table) -> tuple[_Converter, Lexer]:
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if not isinstance(text, str):
        raise TypeError(f"parse() expects a str, not {type(text).__name__}")
    conv = _Converter(text, source_name, init_module, init_meta_table)
    _load_meta(conv, text, init_meta_table)
    lexer = Lexer(text, conv.T.names)
    lexer.make_span = conv.span
    return conv, lexer


def _run_guarded(conv: _Converter, start: str, lexer: Lexer) -> Any:
    # The parse allocates many small objects and frees none: see util.paused_gc.
    with paused_gc():
        try:
            return conv.run(start, lexer)
        except RelayError:
            raise
        except RecursionError:  # pragma: no cover - the parser does not recurse
            raise ParseError("program too deeply nested") from None
        except Exception as exc:  # pragma: no cover - a bug: still no raw traceback for users
            raise ParseError(
                f"internal parser error ({type(exc).__name__}: {exc}); please report it"
            ) from exc


def parse(
    text: str,
    source_name: str = "from_string",
    init_module: Any = None,
    init_meta_table: Mapping[str, Iterable[Any]] | None = None,
    infer_type: bool = False,
):
    """Parse Relay text into an :class:`~relay_nb.ir.module.IRModule`.

    The text holds definitions (``def @f(...) {...}``, ``type T {...}``, ``extern type``,
    the docs' ``data T {...}``) and/or a bare expression, which becomes ``@main`` (a
    ``fn`` is ``@main`` itself; another expression is wrapped in a function of its free
    variables).  The ``#[version = "0.0.5"]`` header is optional.

    Parameters
    ----------
    text : str
        The program.
    source_name : str
        The name error messages and spans use.
    init_module : IRModule, optional
        Its globals, ADTs and constructors are visible; the result is a copy of it with
        the new definitions added (the argument itself is not changed).
    init_meta_table : dict, optional
        ``{"relay.Constant": [Constant or ndarray, ...], ...}``, appended after the
        entries of the text's own ``#[metadata]`` section.
    infer_type : bool
        Run ``relay.transform.InferType()`` on the result (TVM always does; relay_nb
        only on request, so ill-typed programs can still be read and viewed).

    Examples
    --------
    >>> mod = parse('def @main(%x: Tensor[(2), float32]) { add(%x, %x) }')
    >>> mod["main"].params[0].name_hint
    'x'
    """
    conv, lexer = _prepare(text, source_name, init_module, init_meta_table)
    body = _run_guarded(conv, "module", lexer)
    conv.check_globals()
    mod = conv.mod
    if body is not None:
        if conv._defined.get("main") is not None:
            span = conv._bare_span or body.span
            raise ParseError("the program has both a @main definition and a bare expression", span)
        if isinstance(body, Function) and conv._implicit:
            # a `fn` is @main itself: it cannot have inputs nobody binds
            name, span = min(conv._implicit.items(), key=lambda kv: (kv[1].line, kv[1].column))
            raise ParseError(f"undefined variable %{name}", span)
        if not isinstance(body, Function):
            from ..analysis.free_vars import free_vars

            body = Function(tuple(free_vars(body)), body, span=body.span)
        gv = conv._gvars.get("main") or mod.intern_global_var("main")
        mod.add(gv, body, update=True)
    if infer_type:
        from ..transform.infer_type import InferType

        mod = InferType()(mod)
    return mod


def parse_expr(
    text: str,
    source_name: str = "from_string",
    init_module: Any = None,
    init_meta_table: Mapping[str, Iterable[Any]] | None = None,
) -> Expr:
    """Parse one Relay expression (``free_var`` declarations allowed; header optional).

    >>> f = parse_expr("fn (%x) { %x }")
    >>> f.body is f.params[0]
    True
    """
    conv, lexer = _prepare(text, source_name, init_module, init_meta_table)
    return _run_guarded(conv, "expr_only", lexer)


def parse_type(text: str, source_name: str = "from_string") -> Type:
    """Parse a Relay type such as ``Tensor[(2, 3), float32]`` or ``fn (int32) -> bool``."""
    conv, lexer = _prepare(text, source_name, None, None)
    return _run_guarded(conv, "type_only", lexer)


fromtext = parse

__all__ = ["OP_ALIASES", "fromtext", "parse", "parse_expr", "parse_type"]
