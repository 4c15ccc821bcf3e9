"""FuseOps: group operator calls into ``Primitive=1`` functions, as TVM fuses them.

Input: any module (type-checked first if it is not).  Output: the same program in which
every operator call sits inside a primitive function, called where the group's result is
used::

    %0 = fn (%p0: Tensor[(1, 16, 8, 8), float32], %p1: ..., Primitive=1) -> ... {
      %1 = nn.conv2d(%p0, %p1, padding=[1, 1]);
      %2 = nn.bias_add(%1, %p2);
      nn.relu(%2)
    };
    %3 = %0(%data, %w, %b);

Parameters are named ``p0, p1, ...`` in order of first use and annotated with their
types; non-scalar constants and variables become arguments, scalar constants of the
simple dtypes are fused in.  The kernels a backend compiles are exactly these functions.

The algorithm is TVM's (``src/relay/transforms/fuse_ops.cc``), on the dataflow graph of
each function, with each op's fusion pattern (``TOpPattern``) read from the registry:

1. **Graph.**  Nodes in post order; each edge producer -> consumer carries the consumer's
   pattern (a BROADCAST edge whose operand already has the result's shape counts as
   ELEMWISE).  Values used across ``let``, ``if``, ``match``, references, function bodies
   and the function's result are *external*: nothing fuses through them.
2. **Post-dominator tree**, in one reverse-topological sweep: a node's immediate
   post-dominator is the least common ancestor of its consumers, and the tree edge
   remembers the worst pattern met on the way.
3. **Grouping** by union-find, in three phases over the nodes in post order, each node
   trying to join the group of its post-dominator when *every* path to it qualifies:
   phase 0 — OUT_ELEMWISE_FUSABLE ops (conv2d, dense, pools) take an elementwise /
   broadcast epilogue (bias_add, relu, a residual add); ELEMWISE / BROADCAST ops fuse into
   consumers that are injective, reductions or an anchored group; phase 1 — INJECTIVE ops
   and tuples fuse along injective paths; phase 2 — injective ops fuse into tuples that
   were themselves fused into a following injective op (concatenate).  Reductions never
   take an epilogue, OPAQUE ops stay alone.  A group never exceeds
   ``relay.FuseOps.max_depth`` (default 256) nodes.
4. **Rewrite**: each group becomes a function at its root (its single escaping node).

``fuse_opt_level`` (default: the PassContext's opt_level) 0 puts each op alone in its
own primitive function.  Unlike TVM, a value used in two scopes (e.g. in both branches of
an ``if``, or in a closure and outside it) is external too, so fusion never moves a
computation into a branch or closure it was not already confined to; and an op call whose
types are not concrete (a polymorphic ``fn (%x: A, %y: B) { add(%x, %y) }``) is left as
it is, since no kernel can take a type variable (TVM requires concrete types here).

Invariants: types kept (every new node gets a checked_type; the result re-type-checks to
the same types), evaluation results unchanged, DAG sharing kept (a node is computed in
one group), existing primitive functions untouched, untouched subtrees are the same
objects, nothing recurses per node.
"""

from __future__ import annotations

from ..ir.attrs import Attrs
from ..ir.expr import (
    Call,
    Constant,
    Constructor,
    Expr,
    Function,
    If,
    Match,
    Op,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.functor import expr_children, pattern_vars
from ..ir.module import IRModule
from ..ir.ty import AnyDim, FuncType, TensorType, TupleType
from ..op.registry import OpPattern, get_column
from ..util import paused_gc
from .infra import FunctionPass, PassContext, PassInfo, register_pass
from .typed import TypedMutator, ensure_typed

ELEMWISE, BROADCAST, INJECTIVE, COMM_REDUCE, OUT_EWISE, TUPLE, OPAQUE = (
    int(OpPattern.ELEMWISE), int(OpPattern.BROADCAST), int(OpPattern.INJECTIVE),
    int(OpPattern.COMM_REDUCE), int(OpPattern.OUT_ELEMWISE_FUSABLE), int(OpPattern.TUPLE),
    int(OpPattern.OPAQUE),
)  # fmt: skip
_SIMPLE_CONST = {"int32", "int64", "float32", "float64", "bool"}
MAX_DEPTH_KEY = "relay.FuseOps.max_depth"


# --- 1. the indexed forward graph ----------------------------------------------------------


class Graph:
    """Nodes (post order), their patterns, output edges ``[(consumer, edge pattern)]``,
    and which nodes are external (their value escapes the fusible dataflow)."""

    def __init__(self, root: Function):
        self.nodes: list[Expr] = _post_order(root)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        n = len(self.nodes)
        self.pattern = [OPAQUE] * n
        self.outputs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.extern = [False] * n
        self.skip: set[Expr] = set()  # op calls on non-concrete types: not fused, not wrapped
        self.extern[n - 1] = True
        # Scope regions, consumers first: a value used in two regions is external.
        region: list[object] = [None] * n
        region[n - 1] = root
        for i in range(n - 1, -1, -1):
            node, r = self.nodes[i], region[i]
            for child, edge, boundary in self._children(i, node):
                c = self.index.get(child)
                if c is None:
                    continue
                if edge is None:
                    self.extern[c] = True
                else:
                    self.outputs[c].append((i, edge))
                want = (node, boundary) if boundary is not None else r
                if region[c] is None:
                    region[c] = want
                elif region[c] != want and region[c] != ("mixed", c):
                    region[c], self.extern[c] = ("mixed", c), True

    def _children(self, i: int, node: Expr):
        """(child, edge pattern or None for external, scope boundary or None); sets the pattern."""
        t = type(node)
        if t is Call:
            ty = node._checked_type
            if (
                type(node.op) is Op
                and _concrete(ty)
                and all(_concrete(a._checked_type) for a in node.args)
            ):
                pat = int(_PATTERNS.get(node.op.name, OPAQUE))
                self.pattern[i] = pat
                for a in node.args:
                    # a broadcast operand that already has the result's shape is elementwise
                    same = pat == BROADCAST and _shape(a._checked_type) == _shape(ty)
                    yield a, ELEMWISE if same else pat, None
            else:  # a call of a function, or of an op on polymorphic types: left alone
                if type(node.op) is Op:
                    self.skip.add(node)
                yield node.op, OPAQUE, None
                for a in node.args:
                    yield a, OPAQUE, None
        elif t is Tuple:
            self.pattern[i] = TUPLE
            for f in node.fields:
                yield f, INJECTIVE if _concrete(f._checked_type, tensor=True) else None, None
        elif t is TupleGetItem:
            tt = node.tuple_value._checked_type
            if isinstance(tt, TupleType) and all(_concrete(f, tensor=True) for f in tt.fields):
                self.pattern[i] = INJECTIVE
                yield node.tuple_value, INJECTIVE, None
            else:
                yield node.tuple_value, None, None
        elif t is Constant:
            ty = node._checked_type
            if node.data.ndim == 0 and isinstance(ty, TensorType) and ty.dtype in _SIMPLE_CONST:
                self.pattern[i] = ELEMWISE
        elif t is Function:
            for c in (*node.params, node.body):
                yield c, None, "body"
        elif t is If:
            yield node.cond, None, None
            yield node.true_branch, None, "then"
            yield node.false_branch, None, "else"
        elif t is Match:
            yield node.data, None, None
            for k, clause in enumerate(node.clauses):
                for c in (*pattern_vars(clause.lhs), clause.rhs):
                    yield c, None, k
        else:  # Let, references, ...: every child is external
            for c in expr_children(node):
                yield c, None, None


_PATTERNS = get_column("TOpPattern")


def _concrete(ty: object, tensor: bool = False) -> bool:
    """A type a kernel can take: tensors (tuples of them unless ``tensor``) without type
    variables; dynamic dimensions ``?`` are fine."""
    if isinstance(ty, TensorType):
        return (
            isinstance(ty.shape, tuple)
            and isinstance(ty.dtype, str)
            and all(type(d) is int or d is AnyDim() for d in ty.shape)
        )
    return not tensor and isinstance(ty, TupleType) and all(_concrete(f) for f in ty.fields)


def _shape(ty: object):
    return ty.shape if isinstance(ty, TensorType) else ()


def _post_order(root: Function) -> list[Expr]:
    """Graph nodes, children first; ops and constructors are left out, and so are the
    insides of existing primitive functions."""
    out: list[Expr] = []
    seen: set[Expr] = set()
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            out.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        if type(node) is Function and node.is_primitive and node is not root:
            continue
        for child in reversed(expr_children(node)):
            if child not in seen and not isinstance(child, (Op, Constructor)):
                stack.append((child, False))
    return out


# --- 2. the post-dominator tree --------------------------------------------------------------


def post_dominators(g: Graph) -> tuple[list[int], list[int]]:
    """(parent, pattern): each node's immediate post-dominator (-1: none) and the combined
    pattern of the paths to it."""
    n = len(g.nodes)
    parent, depth, pattern = [-1] * n, [0] * n, [OPAQUE] * n
    # Skew-binary jump pointers (Myers 1983): jump[v] is an ancestor of v such that any
    # ancestor is reached in O(log depth) jumps, and top[v] the highest pattern of the
    # nodes from v up to (not including) jump[v].  A least common ancestor then costs
    # O(log n), not one step per tree level: a scalar constant used by every block of a
    # long chain made that quadratic.
    jump, top = [-1] * n, [OPAQUE] * n
    for i in range(n - 1, -1, -1):
        if g.extern[i] or not g.outputs[i]:
            depth[i] = 1
            continue
        pat, lca = ELEMWISE, -2
        for o, edge in g.outputs[i]:
            if lca == -2:
                lca = o
            else:
                lca, pat = _common_ancestor(lca, o, pat, parent, depth, pattern, jump, top)
            pat = max(pat, edge)
        parent[i], pattern[i] = lca, pat
        if lca < 0:
            depth[i], top[i] = 1, pat
            continue
        depth[i] = depth[lca] + 1
        j = jump[lca]
        jj = jump[j] if j >= 0 else -1
        if j >= 0 and depth[lca] - depth[j] == depth[j] - (depth[jj] if jj >= 0 else 0):
            jump[i], top[i] = jj, max(pat, top[lca], top[j])
        else:
            jump[i], top[i] = lca, pat
    return parent, pattern


def _common_ancestor(a: int, b: int, pat: int, parent, depth, pattern, jump, top) -> tuple[int, int]:
    """The least common ancestor of ``a`` and ``b`` (-1: none) and ``pat`` raised by the
    pattern of every node passed on the way up from either."""
    da, db = depth[a], depth[b]
    while da > db:
        j = jump[a]
        dj = depth[j] if j >= 0 else 0
        if dj >= db:
            pat, a, da = max(pat, top[a]), j, dj
        else:
            pat, a, da = max(pat, pattern[a]), parent[a], da - 1
    while db > da:
        j = jump[b]
        dj = depth[j] if j >= 0 else 0
        if dj >= da:
            pat, b, db = max(pat, top[b]), j, dj
        else:
            pat, b, db = max(pat, pattern[b]), parent[b], db - 1
    while a != b:  # same depth: jumps of equal-depth nodes land at equal depths
        ja, jb = jump[a], jump[b]
        if ja != jb:
            pat, a, b = max(pat, top[a], top[b]), ja, jb
        else:
            pat, a, b = max(pat, pattern[a], pattern[b]), parent[a], parent[b]
    return a, pat


# --- 3. grouping ---------------------------------------------------------------------------------


class Partition:
    """Union-find over graph nodes; ``find(i)`` is the group (its root node's index)."""

    def __init__(self, g: Graph, opt_level: int, max_depth: int):
        n = len(g.nodes)
        self.g, self.max_depth = g, max_depth
        self.up = list(range(n))
        self.gpattern = list(g.pattern)
        self.anchor = [i if g.pattern[i] == OUT_EWISE else -1 for i in range(n)]
        self.size = [1] * n
        if opt_level > 0:
            dom, dom_pattern = post_dominators(g)
            for phase in range(3):
                self._run(phase, dom, dom_pattern)

    def find(self, i: int) -> int:
        root = i
        while self.up[root] != root:
            root = self.up[root]
        while self.up[i] != root:
            self.up[i], i = root, self.up[i]
        return root

    def _paths(self, src: int, sink: int):
        """Every node on a path from ``src`` (excluded) to its post-dominator ``sink``."""
        seen, stack = {src}, [src]
        while stack:
            for o, _ in self.g.outputs[stack.pop()]:
                if o not in seen:
                    seen.add(o)
                    yield o
                    if o != sink:
                        stack.append(o)

    def _check(self, src: int, sink: int, ok) -> bool:
        return all(ok(self.gpattern[self.find(v)], v == sink) for v in self._paths(src, sink))

    def _commit(self, src: int, sink: int) -> None:
        target = self.find(sink)
        for v in (src, *(v for v in self._paths(src, sink) if v != sink)):
            child = self.find(v)
            if child == target:
                continue
            self.up[child] = target
            self.size[target] += self.size[child]
            if self.anchor[child] >= 0:
                self.anchor[target] = self.anchor[child]
                self.gpattern[target] = max(self.gpattern[target], self.gpattern[child])

    def _too_big(self, src: int, sink: int) -> bool:
        target = self.find(sink)
        groups = {self.find(v) for v in (src, *self._paths(src, sink))} - {target}
        return self.size[target] + sum(self.size[x] for x in groups) > self.max_depth

    def _run(self, phase: int, dom: list[int], dom_pattern: list[int]) -> None:
        # gp[i] is the pattern of the group *created for* node i (TVM's groups_[nid]),
        # which may since have been merged into another group.
        gp, find = self.gpattern, self.find
        for i in range(len(self.g.nodes)):
            pat, sink = gp[i], dom[i]
            if pat == OPAQUE or sink < 0:
                continue
            if phase == 2:  # injective ops into a tuple already fused into its consumer
                root = gp[find(sink)]
                if not (
                    pat <= INJECTIVE and root != TUPLE and gp[sink] == TUPLE and root <= INJECTIVE
                ):
                    continue
                ok = _injective
            elif find(i) == find(sink) or gp[sink] == TUPLE:
                continue  # already fused; tuples are not fused into (yet)
            elif pat == OUT_EWISE:  # conv2d / dense take an elementwise epilogue
                if phase != 0 or dom_pattern[i] != ELEMWISE:
                    continue
                ok = _broadcast
            elif pat <= BROADCAST:  # into an injective op, a reduction or an anchored group
                if not (dom_pattern[i] <= INJECTIVE or dom_pattern[i] == COMM_REDUCE):
                    continue
                ok = _into_anchor
            elif pat in (INJECTIVE, TUPLE):  # deferred to phase 1, so conv2d finishes first
                if phase != 1:
                    continue
                ok = _injective
            else:  # a reduction takes no epilogue
                continue
            if not self._too_big(i, sink) and self._check(i, sink, ok):
                self._commit(i, sink)


def _injective(kind: int, is_sink: bool) -> bool:
    return kind <= INJECTIVE


def _broadcast(kind: int, is_sink: bool) -> bool:
    return kind <= BROADCAST


def _into_anchor(kind: int, is_sink: bool) -> bool:
    # Paths may go through injective ops; the sink may also be a reduction or an anchor.
    return kind <= INJECTIVE or (is_sink and kind in (COMM_REDUCE, OUT_EWISE))


# --- 4. the rewrite ---------------------------------------------------------------------------


class _Group:
    """A group being built: its parameters and the outside values passed for them."""

    __slots__ = ("args", "by_arg", "params")

    def __init__(self) -> None:
        self.params: list[Var] = []
        self.args: list[Expr] = []
        self.by_arg: dict[Expr, Var] = {}

    def param(self, arg: Expr, ty: object) -> Var:
        p = self.by_arg.get(arg)
        if p is None:
            p = Var(f"p{len(self.params)}", ty)  # type: ignore[arg-type]
            p.set_checked_type(ty)  # type: ignore[arg-type]
            self.params.append(p)
            self.args.append(arg)
            self.by_arg[arg] = p
        return p


class Fuser(TypedMutator):
    """Rewrites one function according to its partition.

    The memo of a node inside a group is its copy *inside* the group's function (only
    members of the same group use it); the memo of a group's root is the call of the
    group's function.
    """

    def __init__(self, g: Graph, part: Partition):
        super().__init__()
        self.g, self.part = g, part
        self.groups: dict[int, _Group] = {}

    def _group(self, e: Expr) -> int:
        i = self.g.index.get(e)
        return -1 if i is None else self.part.find(i)

    def _is_root(self, e: Expr) -> bool:
        return self.g.nodes[self._group(e)] is e

    def _args(self, args: tuple[Expr, ...], group: int) -> tuple[Expr, ...]:
        out = []
        for a in args:
            new = self.visit(a)
            if self._group(a) != group and self.g.index.get(a) is not None:
                new = self.groups.setdefault(group, _Group()).param(new, a._checked_type)
            out.append(new)
        return tuple(out)

    def _function(self, group: int, body: Expr, old: Expr) -> Expr:
        info = self.groups.pop(group, None) or _Group()
        ret = old._checked_type
        body.set_checked_type(ret)  # type: ignore[arg-type]
        has_call = any(type(n) is Call for n in _members(self.g, self.part, group))
        attrs = Attrs({"Primitive": 1 if has_call else 0})
        fn = Function(tuple(info.params), body, ret, (), attrs, span=old.span)
        fn.set_checked_type(FuncType(tuple(p._checked_type for p in info.params), ret))  # type: ignore[arg-type]
        call = Call(fn, tuple(info.args), span=old.span)
        call.set_checked_type(ret)  # type: ignore[arg-type]
        return call

    def visit_call(self, call: Call) -> Expr:
        if type(call.op) is not Op or call in self.g.skip:
            return super().visit_call(call)
        group = self._group(call)
        new = Call(
            call.op, self._args(call.args, group), call.attrs, call.type_args, span=call.span
        )
        new.set_checked_type(call._checked_type)  # type: ignore[arg-type]
        return self._function(group, new, call) if self._is_root(call) else new

    def visit_tuple(self, tup: Tuple) -> Expr:
        group = self._group(tup)
        if self._is_root(tup):
            return super().visit_tuple(tup)
        new = Tuple(self._args(tup.fields, group), span=tup.span)
        new.set_checked_type(tup._checked_type)  # type: ignore[arg-type]
        return new

    def visit_tuple_getitem(self, t: TupleGetItem) -> Expr:
        group = self._group(t)
        if self._is_root(t) and self._group(t.tuple_value) != group:
            return super().visit_tuple_getitem(t)  # a projection of another group's tuple
        new = TupleGetItem(self._args((t.tuple_value,), group)[0], t.index, span=t.span)
        new.set_checked_type(t._checked_type)  # type: ignore[arg-type]
        return self._function(group, new, t) if self._is_root(t) else new


def _members(g: Graph, part: Partition, group: int):
    """The nodes of a group (scans only when asked, i.e. for the rare call-less groups)."""
    root = g.nodes[group]
    if type(root) is Call:
        yield root
        return
    yield from (n for i, n in enumerate(g.nodes) if part.find(i) == group)


def fuse_function(func: Function, opt_level: int = 2, max_depth: int = 256) -> Function:
    """FuseOps on one (type-checked) function."""
    g = Graph(func)
    return Fuser(g, Partition(g, opt_level, max_depth)).visit(func)


class FuseOps(FunctionPass):
    """``relay.transform.FuseOps(fuse_opt_level=-1)``: a function pass at opt level 0.

    ``fuse_opt_level=-1`` takes the level of the current PassContext; 0 fuses nothing
    (each op alone in its primitive function).  The config key
    ``"relay.FuseOps.max_depth"`` bounds the size of a group (default 256).

    >>> mod = relay.transform.FuseOps()(mod)
    """

    preserves_types = True  # grouping changes no type (TypedMutator)

    def __init__(self, fuse_opt_level: int = -1) -> None:
        super().__init__(self._fuse, PassInfo("FuseOps", 0, ("InferType",)))
        self.fuse_opt_level = fuse_opt_level

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        with paused_gc():
            return super().transform_module(ensure_typed(mod), ctx)

    def _fuse(self, func: Function, mod: IRModule, ctx: PassContext) -> Function:
        level = self.fuse_opt_level if self.fuse_opt_level >= 0 else ctx.opt_level
        return fuse_function(func, level, int(ctx.config.get(MAX_DEPTH_KEY, 256)))

    def __repr__(self) -> str:
        return f"FuseOps(fuse_opt_level={self.fuse_opt_level})"


register_pass("FuseOps", FuseOps)

__all__ = [
    "MAX_DEPTH_KEY",
    "FuseOps",
    "Fuser",
    "Graph",
    "Partition",
    "fuse_function",
    "post_dominators",
]
