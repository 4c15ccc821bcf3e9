"""relay.viz.hierarchy: which nodes fall in which group for each grouping source, the
visible graph for a set of open groups, search, and the static fallback (issue 15 §1-§3)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import relay_nb as relay
from relay_nb.ir.span import Source, Span
from relay_nb.viz.render import available_engine

ROOT = Path(__file__).resolve().parents[1]


def _paths(h) -> dict[str, str]:
    """{first label line: group path} (labels are unique in these small programs)."""
    return {n.label.split("\n")[0]: h.path(i) for i, n in h.nodes.items()}


def _ops_in(h, group: str) -> list[str]:
    return sorted(h.nodes[i].label for i in h.members(group) if h.nodes[i].kind == "call")


# -- grouping sources -----------------------------------------------------------------------


def test_global_functions_are_top_level_groups():
    mod = relay.parse(
        """
        def @helper(%a: Tensor[(2), float32]) { exp(%a) }
        def @main(%x: Tensor[(2), float32]) { %0 = @helper(%x); log(%0) }
        """
    )
    h = relay.viz.hierarchy(mod)
    paths = _paths(h)
    assert paths["exp"] == "/@helper"
    assert paths["log"] == "/@main"
    assert paths["@helper"] == "/@main"  # the call of @helper is in @main
    assert sorted(h.top_groups) == ["/@helper", "/@main"]
    assert h.groups["/@helper"].kind == "global" and h.groups["/@helper"].ops == 1


def test_fused_functions_are_groups_labelled_with_their_ops():
    mod = relay.parse(
        """
        def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {
          %0 = nn.conv2d(%x, %w, padding=[1, 1]);
          nn.relu(%0)
        }"""
    )
    mod = relay.transform.FuseOps(fuse_opt_level=2)(relay.transform.InferType()(mod))
    h = relay.viz.hierarchy(mod)
    (fused,) = [g for g in h.groups.values() if g.kind == "fused"]
    assert fused.label == "fused nn.conv2d+nn.relu"
    assert fused.parent == "/@main" and fused.ops == 2
    assert _ops_in(h, fused.id) == ["nn.conv2d", "nn.relu"]
    # The call of the fused function stays in @main, outside the group.
    call = h.find(mod["main"].body)
    assert h.path(call) == "/@main"


def test_if_branches_match_clauses_and_closures_are_scopes():
    mod = relay.parse(
        """
        #[version = "0.0.5"]
        type List[A] { Cons(A, List[A]), Nil }
        def @main(%c: bool, %x: Tensor[(2), float32], %l: List[Tensor[(2), float32]]) {
          %0 = if (%c) { exp(%x) } else { log(%x) };
          %1 = fn (%y: Tensor[(2), float32]) { sqrt(%y) };
          %2 = %1(%0);
          match (%l) {
            Cons(%h, _) => tanh(%h),
            Nil => %2,
          }
        }"""
    )
    h = relay.viz.hierarchy(mod)
    kinds = {g.kind for g in h.groups.values()}
    assert {"global", "then", "else", "function", "clause"} <= kinds
    paths = _paths(h)
    assert h.groups[paths["exp"]].kind == "then"
    assert h.groups[paths["log"]].kind == "else"
    assert h.groups[paths["sqrt"]].kind == "function"
    assert h.groups[paths["tanh"]].kind == "clause"
    assert h.groups[paths["tanh"]].parent == "/@main"
    # %0..%2 are used only in the Nil clause, so they are computed there (as in ANF).
    nil = h.groups[paths["sqrt"]].parent
    assert h.groups[nil].kind == "clause" and h.groups[nil].label == "Nil =>"
    assert h.groups[paths["exp"]].parent == h.groups[paths["log"]].parent == nil


def test_anf_mode_groups_the_let_scopes():
    mod = relay.parse(
        """
        def @main(%c: bool, %x: Tensor[(2), float32]) {
          %0 = exp(%x);
          if (%c) { %1 = log(%0); add(%1, %1) } else { %0 }
        }"""
    )
    h = relay.viz.hierarchy(mod, mode="anf")
    then = [g for g in h.groups.values() if g.kind == "then"]
    assert len(then) == 1
    labels = [h.nodes[i].label for i in h.members(then[0].id)]
    assert any("log(" in s for s in labels) and any("add(" in s for s in labels)
    (exp_binding,) = [i for i, n in h.nodes.items() if "exp(" in n.label]
    assert h.path(exp_binding) == "/@main"  # computed before the if: outside the branches


def _torch_style_block():
    """conv (weight, bias) -> relu -> dense, with PyTorch state-dict names."""
    x = relay.var("x", shape=(1, 8))
    w1 = relay.var("layer1.0.conv1.weight", shape=(8, 8))
    b1 = relay.var("layer1.0.conv1.bias", shape=(8,))
    w2 = relay.var("layer1.0.fc.weight", shape=(4, 8))
    h1 = relay.nn.bias_add(relay.nn.dense(x, w1), b1)
    r = relay.nn.relu(h1)
    out = relay.nn.dense(r, w2)
    return relay.IRModule.from_expr(relay.Function([x, w1, b1, w2], out))


def test_module_paths_from_importer_weight_names():
    h = relay.viz.hierarchy(_torch_style_block())
    paths = _paths(h)
    assert paths["nn.dense"] in ("/@main/layer1/0/conv1", "/@main/layer1/0/fc")
    assert paths["nn.bias_add"] == "/@main/layer1/0/conv1"
    assert paths["%layer1.0.conv1.weight"] == "/@main/layer1/0/conv1"
    # relu reads only conv1's output: it joins the module enclosing conv1.
    assert paths["nn.relu"] == "/@main/layer1/0"
    # layer1 holds nothing but layer1.0: one group, labelled with the full name.
    assert "/@main/layer1" not in h.groups
    assert h.groups["/@main/layer1/0"].label == "layer1.0"
    assert h.groups["/@main/layer1/0"].parent == "/@main"
    assert h.groups["/@main/layer1/0/conv1"].label == "layer1.0.conv1"
    # The fc group has the dense and its weight (2 nodes).
    assert len(h.members("/@main/layer1/0/fc")) == 2


def test_module_paths_from_tvm_zoo_names():
    mod, _ = relay.testing.resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    h = relay.viz.hierarchy(mod)
    params = {p.name_hint: p for p in mod["main"].params}
    where = {name: h.path(h.find(p)) for name, p in params.items()}
    assert where["stage1_unit1_conv1_weight"] == "/@main/stage1/unit1/conv1"
    assert where["stage1_unit1_bn1_moving_var"] == "/@main/stage1/unit1/bn1"
    assert where["stage4_unit2_conv2_weight"] == "/@main/stage4/unit2/conv2"
    assert where["fc1_bias"] == "/@main/fc1"
    assert h.groups["/@main/stage2/unit1"].label == "stage2_unit1"
    # Every conv2d sits in a conv or shortcut module named by its weight.
    for i, n in h.nodes.items():
        if n.label == "nn.conv2d":
            assert h.path(i).rsplit("/", 1)[-1] in ("conv0", "conv1", "conv2", "sc"), h.path(i)
    # The first view is readable: tens of items, not the 200+ nodes.
    view = h.view(h.initial())
    assert 10 <= len(view.items) <= 40


def test_module_paths_from_importer_span_names():
    x = relay.var("x", shape=(2,))

    def named(call, name):
        return relay.ir.expr.Call(call.op, call.args, call.attrs, span=Span(Source(name, ""), 0, 0))

    a = named(relay.exp(x), "/encoder/layer.0/attn/Exp")
    b = named(relay.log(a), "/encoder/layer.0/attn/Log")
    c = named(relay.tanh(b), "/encoder/layer.0/mlp/Tanh")
    d = named(relay.sqrt(c), "/encoder/layer.0/mlp/Sqrt")
    h = relay.viz.hierarchy(relay.Function([x], d))
    paths = _paths(h)
    assert paths["exp"] == paths["log"]
    assert paths["exp"].endswith("/encoder/layer.0/attn")
    assert paths["tanh"].endswith("/encoder/layer.0/mlp")
    assert h.groups[paths["exp"]].kind == "span"
    # Parsed programs' spans (a real line) are not importer names.
    parsed = relay.parse("def @main(%x: Tensor[(2), float32]) { exp(%x) }")
    assert _paths(relay.viz.hierarchy(parsed))["exp"] == "/@main"


def test_regions_named_by_the_user():
    x = relay.var("x", shape=(2,))
    a = relay.exp(x)
    b = relay.log(a)
    c = relay.tanh(b)
    d = relay.sqrt(c)
    fn = relay.Function([x], d)
    h = relay.viz.hierarchy(fn, regions=[relay.viz.Region("post/mid", [c], [a])])
    paths = _paths(h)
    assert paths["log"] == paths["tanh"] and paths["log"].endswith("/post/mid")
    assert h.groups[paths["log"]].kind == "region"
    assert not paths["exp"].endswith("/post/mid") and not paths["sqrt"].endswith("/post/mid")
    with pytest.raises(relay.RelayError):
        relay.viz.hierarchy(fn, regions=["post"])


def test_a_long_unnamed_program_is_cut_into_runs():
    x = relay.var("x", shape=(2,))
    y = x
    for k in range(300):
        y = relay.exp(y) if k % 2 else relay.log(y)
    h = relay.viz.hierarchy(relay.Function([x], y))
    runs = [g for g in h.groups.values() if g.kind == "range"]
    assert len(runs) >= 300 // 32
    assert all(len(g.nodes) <= 32 for g in runs)
    first = h.view(h.initial())
    assert len(first.items) <= 40
    full = h.view(h.expand_all())
    assert len(full.items) == len(h.nodes)


# -- collapse / expand ----------------------------------------------------------------------


def test_collapsed_groups_are_one_item_with_lifted_edges():
    h = relay.viz.hierarchy(_torch_style_block())
    conv = "/@main/layer1/0/conv1"
    v = h.view({"/@main", "/@main/layer1/0"})  # conv1 and fc closed
    assert conv in v.items and v.items[conv] == "/@main/layer1/0"
    assert not any(i in v.items for i in h.members(conv))
    relu = h.find(_first(h, "nn.relu"))
    # conv1 -> relu -> fc: one edge each way through the collapsed groups
    assert v.edges[(conv, relu)] == 1
    assert v.edges[(relu, "/@main/layer1/0/fc")] == 1
    assert set(v.clusters) == {"/@main", "/@main/layer1/0"}

    all_open = h.view(h.expand_all())
    assert set(all_open.items) == set(h.nodes)
    assert sum(all_open.edges.values()) == len(h.edges)
    top = h.view(h.to_level(0))
    assert list(top.items) == ["/@main"] and not top.edges
    level1 = h.view(h.to_level(1))
    assert "/@main/layer1/0" in level1.items and conv not in level1.items


def _first(h, label):
    for n in h.nodes.values():
        if n.label == label:
            return n.expr
    raise AssertionError(label)


def test_reveal_opens_the_groups_holding_a_node():
    h = relay.viz.hierarchy(_torch_style_block())
    node = h.find(_first(h, "nn.bias_add"))
    opened = h.reveal(set(), node)
    assert opened == {"/@main", "/@main/layer1/0", "/@main/layer1/0/conv1"}
    assert node in h.view(opened).items


def test_edges_between_collapsed_groups_count_every_edge():
    mod, _ = relay.testing.resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    h = relay.viz.hierarchy(mod)
    v = h.view({"/@main", "/@main/stage1"})
    assert ("/@main/stage1/unit1", "/@main/stage1/unit2") in v.edges
    # Every edge from a node in stage1 to a node in stage2 is counted on the lifted edges.
    inside = {"/@main/stage1": set(h.members("/@main/stage1")), "/@main/stage2": set(h.members("/@main/stage2"))}
    crossing = sum(1 for t, hd in h.edges if t in inside["/@main/stage1"] and hd in inside["/@main/stage2"])
    lifted = sum(n for (a, b), n in v.edges.items() if a.startswith("/@main/stage1/") and b == "/@main/stage2")
    assert crossing == lifted > 0
    total = sum(h.view(h.expand_all()).edges.values())
    assert total == len(h.edges)


# -- search ---------------------------------------------------------------------------------


def test_search_by_op_name_var_global_type_and_attribute():
    mod = relay.parse(
        """
        def @helper(%a: Tensor[(2, 7), float32]) { nn.softmax(%a, axis=1) }
        def @main(%x: Tensor[(2, 7), float32], %layer1.weight: Tensor[(7, 7), float32]) {
          %0 = nn.dense(%x, %layer1.weight);
          @helper(%0)
        }""".replace("layer1.weight", "layer1_weight")
    )
    h = relay.viz.hierarchy(mod)
    hits = h.search("softmax")
    assert [m.field for m in hits] == ["op"] and hits[0].path == "/@helper"
    names = {(m.field, m.text) for m in h.search("layer1_w")}
    assert ("name", "%layer1_weight") in names  # the variable (and the def reading it)
    assert all(f == "name" for f, _ in names)
    glob = {(m.field, m.text, m.path) for m in h.search("@helper")}
    assert ("name", "@helper", "/@main") in glob  # the call of the global
    assert ("name", "def @helper(%a)", "/@helper") in glob  # its definition
    typed = h.search("(2, 7)")
    assert {m.field for m in typed} == {"type"} and len(typed) >= 3
    attr = h.search("axis=1")
    assert [(m.field, h.nodes[m.id].label) for m in attr] == [("attrs", "nn.softmax")]
    assert h.search("   ") == []
    groups = h.search("helper")
    assert any(m.field == "group" and m.id == "/@helper" for m in groups)


# -- static fallback ------------------------------------------------------------------------

needs_graphviz = pytest.mark.skipif(available_engine() is None, reason="no Graphviz renderer")


@needs_graphviz
def test_static_fallback_is_the_collapsed_top_level_as_svg():
    mod, _ = relay.testing.resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    h = relay.viz.hierarchy(mod)
    bundle = h._repr_mimebundle_()
    svg = bundle["image/svg+xml"]
    assert "<svg" in svg
    first = h.view(h.initial())
    for item in first.items:
        assert f'id="{item}"' in svg
    # Collapsed: the members of a closed group are not drawn.
    closed = [i for i in first.items if i in h.groups]
    assert closed
    hidden = h.members(closed[0])
    assert not any(f'id="{n}"' in svg for n in hidden)
    assert re.search(r">\d+ ops?<", svg)  # a collapsed group says what it holds
    assert len(svg) < 150_000


@needs_graphviz
def test_the_explorer_widget_carries_the_static_svg_and_syncs_its_state():
    pytest.importorskip("anywidget")
    from relay_nb.notebook.explorer import GraphExplorer

    view = relay.viz.explore(_torch_style_block())
    assert isinstance(view, GraphExplorer)
    data = view._repr_mimebundle_()
    data = data[0] if isinstance(data, tuple) else data
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "<svg" in data["text/html"] and "relay-explore-static" in data["text/html"]
    # Python drives the same state the front end shows.
    view.collapse("/@main/layer1/0")
    assert "/@main/layer1/0" in view.visible()
    view.select(view.hierarchy.find(_first(view.hierarchy, "nn.bias_add")))
    assert "/@main/layer1/0/conv1" in view.expanded
    first, last = view.selected_lines
    assert "nn.bias_add" in view.data["text"].split("\n")[first - 1]
    assert [m.path for m in view.search("relu")] == ["/@main/layer1/0"] and view.query == "relu"
    # The payload is compact: one row per node, edges as index pairs.
    assert len(view.data["nodes"]) == len(view.hierarchy.nodes)
    assert len(view.data["edges"]) == 2 * len(view.hierarchy.edges)
    # Labels, kinds, types, attrs and fills are indices into one table of distinct strings.
    strings, rows = view.data["strings"], view.data["nodes"]
    assert len(set(strings)) == len(strings)
    assert [strings[r[1]] for r in rows] == [n.label.split("\n")[0] for n in view.hierarchy.nodes.values()]
    assert [strings[r[4]] for r in rows] == [n.type_text for n in view.hierarchy.nodes.values()]


def test_explorer_assets_ship_dagre_with_its_license():
    widgets = ROOT / "widgets"
    dagre = (widgets / "vendor" / "dagre.min.js").read_text()
    assert dagre.startswith('"use strict";var dagre=') and "dagre.LICENSE" in dagre
    assert "Permission is hereby granted" in (widgets / "vendor" / "dagre.LICENSE").read_text()
    js = (widgets / "graph_explorer.js").read_text() + (widgets / "explore_layout.js").read_text()
    assert "http://" not in js.replace("http://www.w3.org/2000/svg", "") and "https://" not in js


# -- the front end computes the same views (Node.js) -----------------------------------------


@pytest.mark.skipif(shutil.which("node") is None, reason="no Node.js")
def test_front_end_views_and_search_match_python(tmp_path):
    from relay_nb.viz.explore import explore_data

    mod, _ = relay.testing.resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    h = relay.viz.hierarchy(mod)
    data = explore_data(h)
    states = [sorted(h.initial()), [], sorted(h.to_level(2)), sorted(h.expand_all()),
              sorted(h.reveal(set(), h.find(mod["main"].params[20])))]  # fmt: skip
    queries = ["conv2d", "stage3_unit2", "(1, 64", "axis=1", "nothing-like-this"]
    (tmp_path / "data.json").write_text(json.dumps({"data": data, "states": states, "queries": queries}))
    lib = "\n".join((ROOT / "widgets" / f).read_text() for f in ("vendor/dagre.min.js", "explore_layout.js"))
    (tmp_path / "lib.mjs").write_text(lib + "\nexport { exploreModel, visibleView, layoutView, searchModel };\n")
    (tmp_path / "run.mjs").write_text(
        """
import fs from "fs";
import { exploreModel, visibleView, layoutView, searchModel } from "./lib.mjs";
const { data, states, queries } = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const m = exploreModel(data);
const views = states.map((ids) => {
  const v = visibleView(m, new Set(ids.map((id) => m.groupIndex.get(id))));
  const lay = layoutView(m, v);
  for (const key of v.items.keys()) if (!lay.pos.has(key)) throw new Error("not laid out: " + key);
  return { items: [...v.items.keys()].sort(), edges: [...v.edges.values()].map(([a, b, n]) => `${a}>${b}>${n}`).sort() };
});
const found = queries.map((q) => searchModel(m, q).map((x) => x.key));
console.log(JSON.stringify({ views, found }));
"""
    )
    out = subprocess.run(["node", str(tmp_path / "run.mjs"), str(tmp_path / "data.json")],
                         capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    got = json.loads(out.stdout)
    for ids, js in zip(states, got["views"]):
        v = h.view(ids)
        assert js["items"] == sorted(v.items)
        assert js["edges"] == sorted(f"{a}>{b}>{n}" for (a, b), n in v.edges.items())
    for q, keys in zip(queries, got["found"]):
        assert keys == [m.id for m in h.search(q)], q


def test_a_weight_read_by_every_layer_names_no_module():
    """An attention mask read in every layer (and an input named with "_") stays out of the
    module paths; the op comparing it joins the layer that uses the result."""
    x = relay.var("x", shape=(2, 2))
    mask = relay.var("attn_mask", shape=(2, 2))
    y = x
    for i in range(3):
        w = relay.var(f"h.{i}.attn.weight", shape=(2, 2))
        s = relay.nn.dense(y, w)
        y = relay.where(relay.greater(mask, relay.const(0.0)), s, y)
    h = relay.viz.hierarchy(relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(y), y)))
    greater = [i for i, n in h.nodes.items() if n.label == "greater"]
    assert sorted(h.path(i) for i in greater) == [f"/@main/h/{i}" for i in range(3)]
    assert h.path(h.find(mask)) == "/@main/h"
    from relay_nb.viz.hierarchy import var_module_path

    assert var_module_path("input_ids") == () and var_module_path("attn_mask") == ()
    assert var_module_path("bn_data_moving_var") == (("bn", "_"), ("data", "_"))
    assert var_module_path("layer1.0.downsample.1.running_mean") == tuple((p, ".") for p in ("layer1", "0", "downsample", "1"))


def test_explore_data_lines_are_the_inspector_rule():
    """Every node's (line, end_line) in the widget data is what line_range gives (the
    data computes the line offsets once; a 2,000-node program took seconds otherwise)."""
    from relay_nb.notebook.inspector import line_range
    from relay_nb.viz.explore import explore_data

    mod = relay.parse(
        """
        def @main(%c: bool, %x: Tensor[(2), float32]) {
          %0 = fn (%y: Tensor[(2), float32]) { exp(%y) };
          %1 = if (%c) { %0(%x) } else { log(%x) };
          add(%1, %1)
        }"""
    )
    h = relay.viz.hierarchy(mod)
    data = explore_data(h)
    text = data["text"]
    rows = {row[0]: row for row in data["nodes"]}
    for node_id, info in h.nodes.items():
        row = rows[node_id]
        assert row[6] == info.text_line
        if info.text_line:
            end = line_range(text, info.text_line, info.text_column or 1)[1]
            assert (row[7] or row[6]) == end and (row[7] == 0) == (end == row[6])
    spans = {h.nodes[i].label: (rows[i][6], rows[i][7] or rows[i][6]) for i in rows}
    first, last = next(v for k, v in spans.items() if k.startswith("if"))
    assert last > first  # an if spans its branches


def _residual_stack(layers: int):
    """``layers`` identical residual blocks with state-dict names (h.0.fc1.weight, ...)."""
    x = relay.var("x", shape=(4, 8))
    y = x
    for i in range(layers):
        w1 = relay.var(f"h.{i}.fc1.weight", shape=(8, 8))
        w2 = relay.var(f"h.{i}.fc2.weight", shape=(8, 8))
        a = relay.nn.relu(relay.nn.dense(y, w1))
        b = relay.nn.dense(relay.sigmoid(a), w2)
        y = relay.add(relay.multiply(y, a), relay.tanh(b))
    return relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(y), y))


@pytest.mark.skipif(shutil.which("node") is None, reason="no Node.js")
def test_front_end_lays_out_identical_groups_once(tmp_path):
    """Expand all: groups with the same shape (a model's repeated layers) share one dagre
    layout, so its cost does not grow with the number of layers (a 24-layer decoder took
    1-3 s in the browser otherwise), and each layer is drawn the same way."""
    from relay_nb.viz.explore import explore_data

    datas = [explore_data(relay.viz.hierarchy(_residual_stack(n))) for n in (2, 6)]
    (tmp_path / "data.json").write_text(json.dumps(datas))
    layout_js = (ROOT / "widgets" / "explore_layout.js").read_text()
    assert layout_js.count("dagre.layout(g);") == 1  # counted below
    layout_js = layout_js.replace("dagre.layout(g);", "dagre.layout(g); globalThis.calls += 1;")
    lib = (ROOT / "widgets" / "vendor" / "dagre.min.js").read_text() + "\n" + layout_js
    (tmp_path / "lib.mjs").write_text(lib + "\nexport { exploreModel, visibleView, layoutView };\n")
    (tmp_path / "run.mjs").write_text(
        """
import fs from "fs";
import { exploreModel, visibleView, layoutView } from "./lib.mjs";
const out = JSON.parse(fs.readFileSync(process.argv[2], "utf8")).map((data) => {
  const m = exploreModel(data);
  const v = visibleView(m, new Set(m.groups.map((g) => g.i)));
  globalThis.calls = 0;
  const lay = layoutView(m, v);
  // Each layer's nodes relative to its box, in program order.
  const layers = {};
  for (const [c, box] of lay.boxes) {
    const id = m.groups[c].id;
    if (!/^\\/@main\\/h\\/\\d+$/.test(id)) continue;
    layers[id] = m.nodes.filter((n) => n.group === c).map((n) => {
      const p = lay.pos.get(n.id);
      return [n.label, p.x - box.x, p.y - box.y];
    });
  }
  return { calls: globalThis.calls, layers, laidOut: [...v.items.keys()].every((k) => lay.pos.has(k)) };
});
console.log(JSON.stringify(out));
"""
    )
    out = subprocess.run(["node", str(tmp_path / "run.mjs"), str(tmp_path / "data.json")],
                         capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    two, six = json.loads(out.stdout)
    assert two["laidOut"] and six["laidOut"]
    assert len(six["layers"]) == 6 and two["calls"] > 0
    assert six["calls"] == two["calls"], (two["calls"], six["calls"])
    # Layer 0 also holds the input %x; the others are the same picture.
    second = six["layers"]["/@main/h/1"]
    assert len(second) == 5 and all(six["layers"][f"/@main/h/{i}"] == second for i in range(2, 6))


def test_a_very_wide_group_opens_to_runs_of_runs():
    """1,500 ops in one group: runs of 32 nodes, gathered in runs of runs, so no group
    opens to more than tens of items (an unrolled LSTM opened to 418 runs: a picture
    no one reads, and seconds of layout)."""
    x = relay.var("x", shape=(2,))
    y = x
    for k in range(1500):
        y = relay.exp(y) if k % 2 else relay.negative(y)
    h = relay.viz.hierarchy(relay.IRModule.from_expr(relay.Function([x], y)))
    widest = max(len(g.groups) + len(g.nodes) for g in h.groups.values())
    assert widest <= 40, widest
    runs = [g for g in h.groups.values() if g.kind == "range"]
    outer = [g for g in runs if g.groups]
    assert outer and all(h.groups[k].parent == g.id for g in outer for k in g.groups)
    assert all(len(g.nodes) <= 32 for g in runs)
    # Every node is in exactly one run, and the runs keep program order.
    placed = [i for g in runs for i in g.nodes]
    assert sorted(placed) == sorted(i for i in h.nodes if h.path(i).split("/")[-1].startswith("#"))
    assert len(h.view(h.initial()).items) <= 40


def test_search_finds_a_weight_by_its_importer_name_the_printer_respelled():
    """``3.2.conv2.weight`` (a torch Sequential's name) prints as ``%v3_2_conv2_weight``;
    the search and the node's details still know it by the name the user wrote."""
    w = relay.var("3.2.conv2.weight", shape=(2,))
    x = relay.var("data", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.add(x, w)))
    assert "%v3_2_conv2_weight" in mod.astext()
    h = relay.viz.hierarchy(mod)
    (hit,) = [m for m in h.search("3.2.conv2.weight") if m.field != "group"]
    assert h.nodes[hit.id].label.startswith("%v3_2_conv2_weight")
    assert hit.text == 'name_hint="3.2.conv2.weight"'
    assert not [m for m in h.search("data") if m.field == "attrs"]  # printed as written: nothing added


@pytest.mark.skipif(shutil.which("node") is None, reason="no Node.js")
def test_front_end_provisional_layout_runs_no_dagre_and_leaves_the_cache(tmp_path):
    """The provisional layout a slow "expand all" shows first (a fully open RNN-T: 37 dagre
    runs, about 1 s) places every item without dagre, keeps each group's children apart
    and edges pointing down, and the real layout that replaces it is the one computed
    without it (the provisional groups are not cached)."""
    from relay_nb.viz.explore import explore_data

    (tmp_path / "data.json").write_text(json.dumps(explore_data(relay.viz.hierarchy(_residual_stack(3)))))
    layout_js = (ROOT / "widgets" / "explore_layout.js").read_text()
    layout_js = layout_js.replace("dagre.layout(g);", "dagre.layout(g); globalThis.calls += 1;")
    lib = (ROOT / "widgets" / "vendor" / "dagre.min.js").read_text() + "\n" + layout_js
    (tmp_path / "lib.mjs").write_text(lib + "\nexport { exploreModel, visibleView, layoutView, layoutSteps };\n")
    (tmp_path / "run.mjs").write_text(
        """
import fs from "fs";
import { exploreModel, visibleView, layoutView, layoutSteps } from "./lib.mjs";
const m = exploreModel(JSON.parse(fs.readFileSync(process.argv[2], "utf8")));
const v = visibleView(m, new Set(m.groups.map((g) => g.i)));
const cache = new Map();
globalThis.calls = 0;
const steps = layoutSteps(m, v, cache, true);
let step = steps.next();
while (!step.done) step = steps.next();
const quick = step.value;
const quickCalls = globalThis.calls;
const cached = cache.size;
const rect = (k) => (typeof k === "number" ? quick.boxes.get(k) : quick.pos.get(k));
const overlaps = [];
for (const [c, kids] of v.tree.children) {
  for (let i = 0; i < kids.length; i++) for (let j = i + 1; j < kids.length; j++) {
    const [a, b] = [rect(kids[i]), rect(kids[j])];
    if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) overlaps.push([kids[i], kids[j]]);
  }
}
const upward = [];
for (const edges of v.tree.lifted.values()) for (const [a, b] of edges) if (rect(b).y <= rect(a).y) upward.push([a, b]);
const real = layoutView(m, v, cache);
const fresh = layoutView(m, visibleView(m, new Set(m.groups.map((g) => g.i))));
const same = [...fresh.pos].every(([k, p]) => JSON.stringify(real.pos.get(k)) === JSON.stringify(p));
console.log(JSON.stringify({ quickCalls, realCalls: globalThis.calls - quickCalls, cached, provisional: quick.provisional,
  placed: [...v.items.keys()].every((k) => quick.pos.has(k)), items: v.items.size, overlaps, upward, same,
  realProvisional: real.provisional }));
"""
    )
    out = subprocess.run(["node", str(tmp_path / "run.mjs"), str(tmp_path / "data.json")],
                         capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    r = json.loads(out.stdout)
    assert r["quickCalls"] == 0 and r["realCalls"] > 0  # the real layout needs dagre here
    assert r["provisional"] is True and r["realProvisional"] is False
    assert r["cached"] == 0 and r["placed"] and r["items"] > 20
    assert r["overlaps"] == [] and r["upward"] == []
    assert r["same"]
