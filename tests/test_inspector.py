"""The graph inspector: node info and node -> line mapping, the assets, and the ESM
front end driven in Node with a minimal DOM."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import relay_nb as relay
from relay_nb.errors import RelayError
from relay_nb.notebook import _assets
from relay_nb.notebook.inspector import line_range, select_lines

NODE = shutil.which("node")

PROGRAM = """
def @main(%x: Tensor[(2, 3), float32], %c: bool) {
  %0 = log(%x);
  %1 = nn.softmax(%0, axis=1);
  if (%c) {
    add(%1, %1)
  } else {
    %1
  }
}
"""

# --- line_range / select_lines (plain functions) ------------------------------------------------

TEXT = """#[version = "0.0.5"]
def @main(%x: Tensor[(2), float32], %c: bool) {
  %0 = log(%x);
  %1 = fn (%y) {
    add(%y, 1f)
  };
  %2 = "a ; string { ";
  if (%c) {
    %1(%0)
  } else {
    %0 /* a } comment */
  }
}"""


def test_line_range_of_one_line_expressions():
    assert line_range(TEXT, 3, 3) == (3, 3)  # %0 = log(%x);
    assert line_range(TEXT, 3, 8) == (3, 3)  # log(%x)
    assert line_range(TEXT, 2, 11) == (2, 2)  # the parameter %x
    assert line_range(TEXT, 5, 5) == (5, 5)  # add(%y, 1f) inside the closure
    assert line_range(TEXT, 7, 3) == (7, 7)  # braces and ; inside a string do not count


def test_line_range_of_blocks():
    assert line_range(TEXT, 2, 1) == (2, 13)  # the whole def
    assert line_range(TEXT, 4, 8) == (4, 6)  # fn (%y) { ... }
    assert line_range(TEXT, 8, 3) == (8, 12)  # if ... else ... (a brace in a comment ignored)
    assert line_range(TEXT, 99, 1) == (99, 99)  # out of the text: just that line


def test_select_lines():
    nodes = {
        "n1": {"line": 3, "end_line": 3},
        "n2": {"line": 4, "end_line": 6},
        "n3": {"line": None},
    }
    assert select_lines(nodes, "n1") == (3, 3)
    assert select_lines(nodes, "n2") == (4, 6)
    assert select_lines(nodes, "n3") is None and select_lines(nodes, "nope") is None


# --- the widget's Python side -----------------------------------------------------------------


def test_inspector_nodes_map_to_types_attrs_and_lines():
    from relay_nb.notebook.inspector import GraphInspector

    mod = relay.parse(PROGRAM)
    view = GraphInspector.from_ir(mod, title="demo")
    lines = view.text.split("\n")
    by_label = {info["label"].split("\n")[0]: (nid, info) for nid, info in view.nodes.items()}
    nid, softmax = by_label["nn.softmax"]
    assert softmax["type"] == "Tensor[(2, 3), float32]" and softmax["attrs"] == "axis=1"
    assert (
        softmax["kind"] == "call" and softmax["shared"] and softmax["uses"] == 3
    )  # add(%1, %1) and the else branch
    # its line in the shown text is the binding `%1 = nn.softmax(%0, axis=1);`
    assert "nn.softmax(%0, axis=1)" in lines[softmax["line"] - 1]
    assert softmax["source"] == "4:8"  # where it was in the text it was parsed from
    view.selected = nid
    assert view.selected_lines == (softmax["line"], softmax["line"])
    # the if node spans its whole block
    if_id, if_info = next((k, v) for k, v in view.nodes.items() if v["kind"] == "if")
    first, last = select_lines(view.nodes, if_id)
    assert lines[first - 1].strip().startswith("if (%c)") and lines[last - 1].strip() == "}"
    assert any(line.strip() == "} else {" for line in lines[first - 1 : last])
    assert lines[last].strip() == "}"  # the next line closes @main
    # every node id is in the SVG, as the id of its <g>
    assert view.svg.startswith("<svg")
    for node_id in view.nodes:
        assert f'id="{node_id}"' in view.svg
    assert view.title == "demo"


def test_inspector_highlight_and_static_fallback():
    from relay_nb.notebook.inspector import GraphInspector

    mod = relay.parse(PROGRAM)
    target = next(
        n
        for n in relay.ir.functor.post_order(mod["main"])
        if isinstance(n, relay.Call) and n.op.name == "log"
    )
    view = GraphInspector.from_ir(mod, highlight=[target])
    lit = [v["label"].split("\n")[0] for v in view.nodes.values() if v["highlighted"]]
    assert lit == ["log"]
    bundle = view._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/html"].startswith("<svg")  # exported notebooks show the drawing


def test_two_views_have_distinct_ids():
    from relay_nb.notebook.inspector import GraphInspector

    mod = relay.parse(PROGRAM)
    a, b = GraphInspector.from_ir(mod), GraphInspector.from_ir(mod)
    assert set(a.nodes).isdisjoint(b.nodes)


# --- assets ------------------------------------------------------------------------------------------


def test_assets_found_in_the_checkout():
    folder = _assets.widgets_dir()
    assert (folder / "graph_inspector.js").is_file() and (folder / "graph_inspector.css").is_file()
    assert "export default { render }" in _assets.read_asset("graph_inspector.js")
    assert ".relay-gi" in _assets.read_asset("graph_inspector.css")
    with pytest.raises(RelayError, match="missing"):
        _assets.asset_path("nope.js")


def test_assets_found_inside_an_installed_package(tmp_path, monkeypatch):
    # A wheel puts widgets/ inside the package: relay_nb/widgets.
    pkg = tmp_path / "site-packages" / "relay_nb"
    (pkg / "widgets").mkdir(parents=True)
    (pkg / "widgets" / "graph_inspector.js").write_text("export default { render };\n")
    monkeypatch.setattr(_assets, "_PACKAGE", pkg)
    _assets.widgets_dir.cache_clear()
    try:
        assert _assets.widgets_dir() == pkg / "widgets"
        assert _assets.candidate_dirs()[0] == pkg / "widgets"
        monkeypatch.setattr(_assets, "_PACKAGE", tmp_path / "empty" / "relay_nb")
        _assets.widgets_dir.cache_clear()
        with pytest.raises(RelayError, match="assets are missing"):
            _assets.widgets_dir()
    finally:
        monkeypatch.undo()
        _assets.widgets_dir.cache_clear()


def test_wheel_config_force_includes_widgets():
    pyproject = (Path(__file__).parent.parent / "pyproject.toml").read_text()
    assert '"widgets" = "relay_nb/widgets"' in pyproject


# --- the ESM front end, in Node with a tiny DOM --------------------------------------------------

FAKE_DOM = r"""
class ClassList {
  constructor() { this.s = new Set(); }
  add(...c) { c.forEach((x) => this.s.add(x)); }
  remove(...c) { c.forEach((x) => this.s.delete(x)); }
  toggle(c, on) { if (on === undefined) on = !this.s.has(c); on ? this.s.add(c) : this.s.delete(c); return on; }
  contains(c) { return this.s.has(c); }
}
class El {
  constructor(tag) {
    this.tagName = tag; this.children = []; this.classList = new ClassList();
    this.dataset = {}; this.style = {}; this.listeners = {}; this._text = ""; this.id = "";
  }
  set className(v) { this.classList = new ClassList(); v.split(/\s+/).filter(Boolean).forEach((c) => this.classList.add(c)); }
  get className() { return [...this.classList.s].join(" "); }
  set textContent(v) { this.children = []; this._text = String(v); }
  get textContent() { return this._text + this.children.map((c) => c.textContent).join(" "); }
  append(...n) { this.children.push(...n); }
  replaceChildren(...n) { this.children = [...n]; }
  set innerHTML(html) {
    this.children = [];
    for (const m of html.matchAll(/<g id="([^"]+)"/g)) { const g = new El("g"); g.id = m[1]; this.children.push(g); }
  }
  querySelectorAll(sel) {
    if (sel !== "g[id]") throw new Error("unsupported selector " + sel);
    const out = [];
    const walk = (e) => { for (const c of e.children) { if (c.tagName === "g" && c.id) out.push(c); walk(c); } };
    walk(this);
    return out;
  }
  addEventListener(t, f) { (this.listeners[t] ||= []).push(f); }
  dispatch(t) { for (const f of this.listeners[t] || []) f({ stopPropagation() {} }); }
  scrollIntoView() { this.scrolled = true; }
}
globalThis.document = { createElement: (t) => new El(t) };
class Model {
  constructor(d) { this.d = d; this.h = {}; this.saved = 0; }
  get(k) { return this.d[k]; }
  set(k, v) { this.d[k] = v; (this.h["change:" + k] || []).forEach((f) => f()); }
  on(e, f) { (this.h[e] ||= []).push(f); }
  off(e, f) { this.h[e] = (this.h[e] || []).filter((x) => x !== f); }
  save_changes() { this.saved++; }
}
"""

DRIVER = r"""
const data = JSON.parse(require_fs.readFileSync(process.argv[2], "utf8"));
const mod = await import(process.argv[3]);
const model = new Model({ svg: data.svg, nodes: data.nodes, text: data.text, selected: "", title: "t" });
const el = new El("div");
const cleanup = mod.default.render({ model, el });
const gs = el.querySelectorAll("g[id]").filter((x) => x.id in data.nodes);
const g = gs.find((x) => x.id === data.target);
const lines = () => {
  const out = {};
  const walk = (e) => { for (const c of e.children) { if (c.dataset.line) out[c.dataset.line] = c.className; walk(c); } };
  walk(el);
  return out;
};
const result = { ids: gs.map((x) => x.id), nodeClass: g.className };
g.dispatch("mouseenter");
result.hoverInfo = el.textContent;
result.hoverLines = Object.entries(lines()).filter(([k, v]) => v.includes("relay-gi-line-hover")).map(([k]) => +k);
g.dispatch("mouseleave");
g.dispatch("click");
result.selected = model.d.selected;
result.saved = model.saved;
result.selectedLines = Object.entries(lines()).filter(([k, v]) => v.includes("relay-gi-line-selected")).map(([k]) => +k);
result.selectedClass = g.className;
g.dispatch("click");
result.deselected = model.d.selected;
result.afterDeselect = Object.values(lines()).filter((v) => v.includes("relay-gi-line-selected")).length;
model.set("selected", data.target);  // selection set from Python
result.fromPython = Object.entries(lines()).filter(([k, v]) => v.includes("relay-gi-line-selected")).map(([k]) => +k);
result.linesOf = mod.linesOf(data.nodes, data.target);
result.hasCleanup = typeof cleanup === "function";
cleanup();
result.handlersLeft = Object.values(model.h).reduce((n, l) => n + l.length, 0);
console.log(JSON.stringify(result));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_esm_exports_render():
    script = (
        f"const m = await import({json.dumps(str(_assets.asset_path('graph_inspector.js')))});"
        "console.log(typeof m.default.render, typeof m.linesOf);"
    )
    out = subprocess.run(
        [NODE, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["function", "function"]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_front_end_hover_click_and_line_selection(tmp_path):
    from relay_nb.notebook.inspector import GraphInspector

    view = GraphInspector.from_ir(relay.parse(PROGRAM))
    target = next(k for k, v in view.nodes.items() if v["kind"] == "if")
    expected = select_lines(view.nodes, target)
    data = tmp_path / "data.json"
    data.write_text(
        json.dumps({"svg": view.svg, "nodes": view.nodes, "text": view.text, "target": target})
    )
    script = tmp_path / "drive.mjs"
    script.write_text('import * as require_fs from "node:fs";\n' + FAKE_DOM + DRIVER)
    esm = _assets.asset_path("graph_inspector.js").as_uri()
    out = subprocess.run(
        [NODE, str(script), str(data), esm], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert sorted(r["ids"]) == sorted(view.nodes)
    assert "relay-gi-node" in r["nodeClass"]
    info = view.nodes[target]
    assert info["type"] in r["hoverInfo"] and "if" in r["hoverInfo"]
    span = list(range(expected[0], expected[1] + 1))
    assert r["hoverLines"] == span
    assert r["selected"] == target and r["saved"] == 1
    assert r["selectedLines"] == span and "relay-gi-selected" in r["selectedClass"]
    assert r["deselected"] == "" and r["afterDeselect"] == 0
    assert r["fromPython"] == span
    assert r["linesOf"] == list(expected)
    assert r["hasCleanup"] and r["handlersLeft"] == 0
