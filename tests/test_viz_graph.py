"""Structure of the graph views (relay_nb.viz.build_graph): what is drawn, once, where.

The assertions read the Graph's nodes / edges / clusters and the DOT text, and compare
with facts computed by hand from the program (seed 004's examples): a shared node appears
once with two out-edges and the shared marking; in ANF mode a value used only in one
branch (or only inside a closure) sits inside that cluster.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from strategies import big_dag, big_let_chain
from test_printer_cases import CASES

import relay_nb as relay
from relay_nb.errors import RelayError
from relay_nb.ir.adt import TypeData
from relay_nb.ir.expr import (
    Call,
    Clause,
    Constructor,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    MetaRef,
    PatternConstructor,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from relay_nb.ir.module import IRModule
from relay_nb.ir.ty import GlobalTypeVar, TensorType, TypeCall, TypeVar
from relay_nb.viz import build_graph, to_dot
from relay_nb.viz.style import HIGHLIGHT_COLOR

SEED_DAG = """#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) {
  %1 = log(%x);
  %2 = add(%1, %1);
  %2
}
"""


def head(info) -> str:
    return info.label.split("\n")[0]


def by_head(graph, text):
    found = [n for n in graph.nodes.values() if head(n) == text and n.ref_of is None]
    assert len(found) == 1, (text, [head(n) for n in graph.nodes.values()])
    return found[0]


def out_edges(graph, node_id, roles=None):
    return [e for e in graph.edges if e.tail == node_id and (roles is None or e.role in roles)]


def cluster_chain(graph, node):
    """Kinds/labels of the clusters around ``node``, innermost first."""
    out = []
    cid = node.cluster
    while cid is not None:
        c = graph.clusters[cid]
        out.append((c.kind, c.label))
        cid = c.parent
    return out


def dot_line(graph, node_id) -> str:
    (line,) = [ln for ln in graph.dot.splitlines() if ln.strip().startswith(f"{node_id} [")]
    return line


DOT_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')


def dot_attrs(graph, node_id) -> dict:
    """The attributes of node ``node_id``'s statement in ``graph.dot``, unquoted."""
    line = dot_line(graph, node_id)
    return {k: v[1:-1] if v.startswith('"') else v for k, v in DOT_ATTR.findall(line)}


# -- seed 004: a DAG node used twice ----------------------------------------------------


def test_shared_node_is_drawn_once_with_two_out_edges():
    g = build_graph(relay.parse(SEED_DAG), mode="dag")
    log = by_head(g, "log")
    add = by_head(g, "add")
    edges = out_edges(g, log.id)
    assert [(e.head, e.role) for e in edges] == [(add.id, "arg"), (add.id, "arg")]
    assert log.shared and log.uses == 2
    assert not add.shared
    attrs = dot_attrs(g, log.id)
    assert attrs["peripheries"] == "2" and "shared: used 2×" in attrs["label"]
    assert "peripheries" not in dot_attrs(g, add.id)
    # Each kind of node once: %x, log, add, the function.
    assert sorted(n.kind for n in g.nodes.values()) == ["call", "call", "function", "var"]


def test_shared_node_in_anf_is_one_binding_read_twice():
    g = build_graph(relay.parse(SEED_DAG), mode="anf")
    log = by_head(g, "%x1 = log(%x)")
    add = by_head(g, "%x2 = add(%x1, %x1)")
    assert [e.head for e in out_edges(g, log.id)] == [add.id, add.id]
    assert log.shared and log.kind == "let"
    # Same colour as the DAG's log node: the two views can be compared.
    dag_log = by_head(build_graph(relay.parse(SEED_DAG), mode="dag"), "log")
    assert log.fill == dag_log.fill


def test_op_names_label_the_calls():
    dot = to_dot(relay.parse(SEED_DAG), mode="dag")
    assert re.search(r'label="log\\n', dot) and re.search(r'label="add\\n', dot)
    conv = relay.parse_expr(
        "fn (%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) "
        "{ nn.conv2d(%x, %w, padding=[1, 1, 1, 1]) }"
    )
    g = build_graph(conv)
    node = by_head(g, "nn.conv2d")
    assert "padding=[1, 1, 1, 1]" in node.attrs_text
    assert node.type_text == "Tensor[(1, 4, 8, 8), float32]"


# -- seed 004: where is %1 computed? ---------------------------------------------------------


def test_anf_if_scoped_value_sits_inside_the_branch_cluster():
    fn = CASES["seed004_if_scope"]()  # log used by both branches, sqrt only by else
    g = build_graph(fn, mode="anf")
    sqrt = by_head(g, "%x4 = sqrt(%x)")
    log = by_head(g, "%x1 = log(%x)")
    exp = by_head(g, "%x3 = exp(%x1)")
    assert [k for k, _ in cluster_chain(g, sqrt)] == ["else", "function"]
    assert [k for k, _ in cluster_chain(g, exp)] == ["then", "function"]
    assert [k for k, _ in cluster_chain(g, log)] == ["function"]
    # The branch clusters are nested in the DOT text too, inside the function's cluster.
    dot = g.dot
    else_id = sqrt.cluster
    fn_id = log.cluster
    assert dot.index(f"subgraph cluster_{fn_id} {{") < dot.index(f"subgraph cluster_{else_id} {{")
    assert dot.index(f"subgraph cluster_{else_id} {{") < dot.index(f"\t{sqrt.id} [")
    assert g.clusters[else_id].label == "else (if %x2)"


def test_dag_places_a_node_in_the_innermost_scope_of_its_uses():
    g = build_graph(CASES["seed004_if_scope"](), mode="dag")
    assert [k for k, _ in cluster_chain(g, by_head(g, "sqrt"))] == ["else", "function"]
    assert [k for k, _ in cluster_chain(g, by_head(g, "log"))] == ["function"]
    assert by_head(g, "log").shared


def test_anf_closure_scope_inside_versus_outside():
    mod = CASES["seed004_closure"]()  # @dataflow: log only inside fn (%y); @with_let: let %v1
    g = build_graph(mod, mode="anf")
    logs = {n.text_line: n for n in g.nodes.values() if "= log(" in n.label}
    assert len(logs) == 2
    chains = {cluster_chain(g, n)[-1][1].split("(")[0]: cluster_chain(g, n) for n in logs.values()}
    # Without a let, ToANormalForm computes log where it is used: inside the closure.
    assert [k for k, _ in chains["def @dataflow"]] == ["function", "global"]
    # With `let %v1 = log(%x)` before the closure, it stays outside.
    assert [k for k, _ in chains["def @with_let"]] == ["global"]


def test_seed_closure_example_text():
    text = open(_seed("004_03_closure_scope.relay"), encoding="utf-8").read()
    expr = relay.parse_expr(text)
    g = build_graph(expr, mode="anf")
    log = next(n for n in g.nodes.values() if "= log(%x)" in n.label)
    assert [k for k, _ in cluster_chain(g, log)] == ["function", "function"]
    dag = build_graph(expr, mode="dag")
    assert [k for k, _ in cluster_chain(dag, by_head(dag, "log"))] == ["function", "function"]


def _seed(name):
    from pathlib import Path

    return Path(__file__).parent / "seeds" / name


# -- every kind of node ---------------------------------------------------------------------


def kinds_module() -> IRModule:
    """One module holding every kind of expression."""
    mod = IRModule()
    a = TypeVar("a")
    lst = GlobalTypeVar("List")
    cons = Constructor("Cons", (a, TypeCall(lst, (a,))), lst, 0)
    nil = Constructor("Nil", (), lst, 1)
    mod.add_type(TypeData(lst, (a,), (cons, nil)))
    y = relay.var("y", "float32")
    mod["inc"] = Function((y,), relay.add(y, relay.const(1.0)))
    inc = mod.get_global_var("inc")
    x = relay.var("x", "float32")
    c = relay.var("c", "bool")
    v, h, r = Var("v"), Var("h"), Var("r")
    lst_x = Call(cons, (x, Call(nil, ())))
    match = Match(
        lst_x,
        (
            Clause(PatternConstructor(cons, (PatternVar(h), PatternWildcard())), h),
            Clause(PatternWildcard(), x),
        ),
    )
    tup = Tuple((x, relay.const(np.ones((2,), "float32"))))
    body = Let(
        v,
        If(c, Call(inc, (x,)), relay.log(x)),
        Let(
            r,
            RefCreate(v),
            Tuple(
                (
                    RefRead(r),
                    RefWrite(r, match),
                    TupleGetItem(tup, 0),
                    Call(Function((relay.var("k", "float32"),), x), (v,)),
                    inc,  # a global used as a value
                    cons,  # a constructor used as a value
                    MetaRef("relay.Constant", 0, TensorType((), "float32")),
                )
            ),
        ),
    )
    mod["main"] = Function((x, c), body)
    return mod


def test_every_node_kind_is_drawn():
    mod = kinds_module()
    g = build_graph(mod, mode="dag")
    kinds = {n.kind for n in g.nodes.values()}
    assert kinds >= {
        "var", "constant", "meta", "global_var", "constructor", "call", "tuple", "tuple_get",
        "let", "function", "if", "match", "ref_create", "ref_read", "ref_write",
    }  # fmt: skip
    assert {c.kind for c in g.clusters.values()} == {"global", "function", "then", "else", "clause"}
    labels = {head(n) for n in g.nodes.values()}
    assert {"@inc", "Cons", "Nil", "log", "if", "match", "ref", "ref_read", "ref_write"} <= labels
    clause_labels = {c.label for c in g.clusters.values() if c.kind == "clause"}
    # `_ => %x` computes nothing in its clause (%x lives outside): no box for it.
    assert clause_labels == {"Cons(%h, _) =>"}
    match = by_head(g, "match")
    assert sorted(e.role for e in g.edges if e.head == match.id) == ["clause", "clause", "data"]
    # A call of a global gets a dashed edge from that global's definition.
    inc_def = next(n for n in g.nodes.values() if head(n).startswith("def @inc"))
    calls = out_edges(g, inc_def.id, ("calls",))
    assert len(calls) == 1 and g.nodes[calls[0].head].label.startswith("@inc")
    # The pattern variable %h is bound from the match's scrutinee.
    h = by_head(g, "%h")
    binds = [e for e in g.edges if e.head == h.id and e.role == "binds"]
    assert len(binds) == 1 and head(g.nodes[binds[0].tail]) == "Cons"


def test_every_node_kind_in_anf():
    g = build_graph(kinds_module(), mode="anf")
    labels = [head(n) for n in g.nodes.values()]
    assert any(re.fullmatch(r"%\w+ = if \(%c\)", lab) for lab in labels)
    assert any(re.fullmatch(r"%\w+ = ref\(%v\)", lab) for lab in labels)
    assert any(re.fullmatch(r"%\w+ = @inc\(%x1\)", lab) for lab in labels)  # @inc took %x
    assert any(re.fullmatch(r"%\w+ = Nil", lab) for lab in labels)
    if_node = next(n for n in g.nodes.values() if " = if (" in n.label)
    inc_call = next(n for n in g.nodes.values() if "= @inc(%x1)" in n.label)
    assert cluster_chain(g, inc_call)[0][0] == "then"
    # The let chain's order is drawn where no data edge orders two bindings.
    assert any(e.role == "next" for e in g.edges)
    assert if_node.cluster is not None and g.clusters[if_node.cluster].kind == "global"


def test_anf_colours_follow_the_original_nodes():
    mod = kinds_module()
    dag = build_graph(mod, mode="dag")
    anf = build_graph(mod, mode="anf")
    fills = {head(n): n.fill for n in dag.nodes.values() if n.kind == "call"}
    log = next(n for n in anf.nodes.values() if "= log(" in n.label)
    assert log.fill == fills["log"]
    assert log.origin is not None and log.origin.op.name == "log"


# -- ids, positions, highlight, types -------------------------------------------------------


def test_node_ids_are_stable_across_runs():
    a = build_graph(relay.parse(SEED_DAG))
    b = build_graph(relay.parse(SEED_DAG))  # a different parse: different objects
    assert a.dot == b.dot and list(a.nodes) == list(b.nodes)
    for node_id, info in a.nodes.items():
        assert dot_attrs(a, node_id)["id"] == node_id
        assert b.nodes[node_id].label == info.label


def test_node_id_lookup_by_expression():
    mod = relay.parse(SEED_DAG)
    fn = mod["main"]
    add = fn.body
    log = add.args[0]
    g = build_graph(mod)
    assert g.nodes[g.node_id(log)].label.startswith("log")
    anf = build_graph(mod, mode="anf")
    assert anf.nodes[anf.node_id(log)].label.startswith("%x1 = log")  # via the origin map


def test_positions_from_spans_and_from_the_printed_text():
    mod = relay.parse(SEED_DAG, source_name="cell")
    g = build_graph(mod)
    log = by_head(g, "log")
    assert (log.line, log.line_origin) == (3, "span")  # `%1 = log(%x);` is line 3
    built = CASES["seed004_if_scope"]()  # built in Python: no spans
    for mode in ("dag", "anf"):
        gb = build_graph(built, mode=mode)
        lines = gb.text.split("\n")
        for n in gb.nodes.values():
            assert n.line_origin == "text" and n.text_line is not None, n
            at = lines[n.text_line - 1][n.text_column - 1 :]
            if n.kind == "call":
                assert at.startswith(head(n)), (at, n)
            elif n.kind in ("var", "let"):
                assert at.startswith(head(n).split(" = ")[0]), (at, n)
        assert gb.text == relay.astext(built, form="graph" if mode == "dag" else "anf", show_types=False)


def test_highlight_marks_the_given_nodes():
    mod = relay.parse(SEED_DAG)
    log = mod["main"].body.args[0]
    g = build_graph(mod, highlight=[log])
    assert g.nodes[g.node_id(log)].highlighted
    attrs = dot_attrs(g, g.node_id(log))
    assert attrs["color"] == HIGHLIGHT_COLOR and attrs["penwidth"] == "3"
    assert sum(n.highlighted for n in g.nodes.values()) == 1
    anf = build_graph(mod, mode="anf", highlight={log})
    assert [head(n) for n in anf.nodes.values() if n.highlighted] == ["%x1 = log(%x)"]
    by_id = build_graph(mod, highlight=["n0"])
    assert [n.id for n in by_id.nodes.values() if n.highlighted] == ["n0"]


def test_types_are_shown_without_changing_the_program():
    mod = relay.parse(SEED_DAG)
    before = str(mod)
    g = build_graph(mod)
    assert by_head(g, "add").type_text == "Tensor[(2, 3), float32]"
    assert "Tensor[(2, 3), float32]" in dot_line(g, by_head(g, "add").id)
    assert str(mod) == before and "ty=" not in str(mod)
    assert mod["main"].body._checked_type is None
    untyped = build_graph(mod, show_types=False)
    assert "float32" not in dot_line(untyped, by_head(untyped, "log").id)


def test_an_ill_typed_program_is_drawn_without_types():
    expr = relay.parse_expr(
        "fn (%x: Tensor[(2, 3), float32], %y: Tensor[(4, 5), float32]) { add(%x, %y) }"
    )
    g = build_graph(expr)
    assert by_head(g, "add").type_text == ""
    assert by_head(g, "%x").type_text == "Tensor[(2, 3), float32]"  # from the annotation


# -- big programs ---------------------------------------------------------------------------


def test_a_big_graph_is_summarized():
    mod = big_dag(5000)
    g = build_graph(mod, max_nodes=300)
    drawn = [n for n in g.nodes.values() if n.ref_of is None and n.kind != "more"]
    assert len(drawn) == 300 and g.summarized
    assert g.nodes["more"].kind == "more" and g.nodes["more"].expr is None
    total = len(build_graph(mod, max_nodes=10**6, show_types=False).nodes)
    assert g.omitted == total - 300
    more = dot_attrs(g, "more")
    assert more["id"] == "more" and more["label"].startswith("… ")
    assert f"{g.omitted} more nodes" in more["label"]
    assert any(e.head == "more" for e in g.edges)
    graph_line = next(ln for ln in g.dot.splitlines() if ln.strip().startswith("graph ["))
    assert "nslimit=0.1" in graph_line and "splines=line" in graph_line  # fast layout


def test_small_graphs_use_the_default_layout():
    assert "nslimit" not in to_dot(relay.parse(SEED_DAG))


def chain_reading_w(n: int) -> IRModule:
    """``n`` adds in a chain, each reading the same %w (long edges from %w)."""
    lines = ["def @main(%x: Tensor[(4), float32], %w: Tensor[(4), float32]) {"]
    prev = "%x"
    for k in range(n):
        lines.append(f"  %{k} = add({prev}, %w);")
        prev = f"%{k}"
    lines.append(f"  {prev}\n}}")
    return relay.parse("\n".join(lines))


@pytest.mark.parametrize("n", [60, 200])  # below and above the fast-layout size
def test_many_reads_of_one_variable_repeat_it_next_to_each_reader(n):
    g = build_graph(chain_reading_w(n))
    w = by_head(g, "%w")
    ghosts = [x for x in g.nodes.values() if x.ref_of == w.id]
    assert len(ghosts) == n and not out_edges(g, w.id)
    heads = {g.nodes[e.head].id for gh in ghosts for e in out_edges(g, gh.id)}
    assert len(heads) == n  # one copy per reader
    assert all(dot_attrs(g, gh.id)["id"] == gh.id for gh in ghosts)
    # A short chain keeps %w once: its edges are short.
    small = build_graph(chain_reading_w(8))
    assert not any(x.ref_of for x in small.nodes.values())
    assert len(out_edges(small, by_head(small, "%w").id)) == 8


def test_anf_bindings_read_many_times_are_drawn_once():
    """A computed value read all over a big drawing is one node in both modes (repeating
    it would read as computing it again); only atoms (here ``%w``) are repeated."""
    lines = ["def @main(%x: Tensor[(4), float32], %w: Tensor[(4), float32]) {",
             "  %0 = log(%x);"]  # fmt: skip
    prev = "%x"
    for k in range(200):
        lines.append(f"  %{k + 1} = add(add({prev}, %0), %w);")
        prev = f"%{k + 1}"
    lines.append(f"  {prev}\n}}")
    mod = relay.parse("\n".join(lines))
    for mode in ("dag", "anf"):
        g = build_graph(mod, mode=mode, max_nodes=10**6)
        logs = [n for n in g.nodes.values() if "log(" in n.label or n.label == "log"]
        assert len(logs) == 1 and logs[0].ref_of is None, mode
        assert not [n for n in g.nodes.values() if n.ref_of == logs[0].id], mode
        assert len(out_edges(g, logs[0].id)) == 200, mode
        w = by_head(g, "%w")
        assert len([n for n in g.nodes.values() if n.ref_of == w.id]) == 200, mode


def test_a_100000_node_program_at_the_default_recursion_limit():
    assert sys.getrecursionlimit() <= 1000
    mod = big_let_chain(100_000)
    g = build_graph(mod, mode="anf", max_nodes=500)
    assert g.summarized and len([n for n in g.nodes.values() if n.kind == "let"]) == 500 - 1


def test_anf_view_of_a_long_binding_chain_is_linear():
    """The ANF of a 40,000-call DAG is one chain of 40,000 lets: each let is drawn as its
    chain's tail, found once for the chain (following it per let took ~25 s here)."""
    import time

    mod = big_dag(40000)
    start = time.process_time()
    g = build_graph(mod, mode="anf", max_nodes=10**9, with_dot=False, show_types=False)
    took = time.process_time() - start
    assert sum(n.kind == "let" for n in g.nodes.values()) == 40000
    assert took < 15.0, took  # ~3 s on the loaded 2-core test machine


def test_deeply_nested_scopes_are_drawn_to_a_bounded_depth():
    from relay_nb.viz.walk import MAX_CLUSTER_DEPTH

    x, c = relay.var("x", "float32"), relay.var("c", "bool")
    body = relay.log(x)
    for _ in range(3000):
        body = If(c, relay.add(body, x), relay.exp(x))
    for mode in ("dag", "anf"):
        g = build_graph(Function((x, c), body), mode=mode, max_nodes=300)
        depth = max(len(cluster_chain(g, n)) for n in g.nodes.values())
        assert depth == MAX_CLUSTER_DEPTH


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: build_graph(relay.parse(SEED_DAG), mode="tree"), "unknown graph mode"),
        (lambda: build_graph(TensorType((2,), "float32")), "a type has no graph"),
        (lambda: build_graph(42), "cannot draw a int"),
        (lambda: build_graph(relay.parse(SEED_DAG), max_nodes=0), "max_nodes"),
    ],
)
def test_bad_input_is_a_relay_error(call, message):
    with pytest.raises(RelayError, match=message):
        call()


def test_builder_values_are_accepted():
    x = relay.var("x", shape=(4,))
    parts = relay.split(x, 2)  # a TupleWrapper
    g = build_graph(parts)
    assert by_head(g, "split").type_text.startswith("(Tensor[(2), float32]")
    assert isinstance(build_graph(Var("free")).nodes["n0"].expr, Var)
    gv = GlobalVar("f")
    assert build_graph(Call(gv, ())).nodes  # a call of an unknown global: drawn, untyped
    assert If and Let  # (imported for kinds_module)


def test_a_big_drawing_writes_each_distinct_type_once(monkeypatch):
    """The drawing keeps one type-text cache: 400 nodes of two types write two texts,
    not one per node (type texts were a sixth of the RNN-T explorer's build time)."""
    import relay_nb.typing.text as text

    x = relay.var("x", shape=(4, 8))
    y = x
    for _ in range(200):
        y = relay.nn.relu(relay.sum(y, axis=1, keepdims=True) + y)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))
    written = []
    combine = text._type_combine
    monkeypatch.setattr(text, "_type_combine", lambda t, kids: written.append(t) or combine(t, kids))
    graph = relay.viz.build_graph(mod)
    assert len(graph.nodes) > 400
    assert sum(1 for n in graph.nodes.values() if n.type_text == "Tensor[(4, 8), float32]") >= 400
    assert len(written) < 10, len(written)
