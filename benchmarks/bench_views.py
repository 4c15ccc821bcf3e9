"""The graph explorer on real-model sizes (issue 15 §3): build, layout, payload.

    python benchmarks/bench_views.py              # GPT-2, ResNet-50, Inception v3, 24-layer decoder, RNN-T
    python benchmarks/bench_views.py --quick      # ResNet-50 only
    python benchmarks/bench_views.py --browser    # + the front end timed in headless Chromium

For each model, one row per view (the first, collapsed view; everything expanded):

* ``build s``     — graph + groups in Python (``relay.viz.hierarchy``) and the widget data,
                    packed as the widget sends it;
* ``payload KB``  — what a view adds to a notebook that saves widget state: the packed
                    widget data (base64, as stored) plus the static SVG fallback;
* ``svg s / KB``  — Graphviz drawing the collapsed top level (the static fallback);
* ``dagre ms``    — the front end's layout (dagre per open group, vendored) in Node.js;
* ``graphviz ms`` — the same per-group layouts with Graphviz (pygraphviz, in process):
                    the alternative the issue names;
* ``toggle ms``   — opening one group of the first view (median and max over its groups;
                    only the toggled group's ancestors are laid out again);
* with ``--browser`` (medians over ``--repeat`` fresh pages): first draw, a group toggle,
  a search jump and a zoom in Chromium; "expand all" once the background layout is done
  (``b.all``), back to the first view (``b.top``) and again (``b.all2``); in that open view
  a search jump, then closing the innermost group on screen (``b.deep``); "expand all"
  clicked at once (``b.cold``: the first frame after the click, showing the layout's
  progress; ``b.use``: everything drawn, in a provisional layout while dagre runs;
  ``b.done``: everything drawn in the real layout; ``b.ctask``: the longest task meanwhile); the background layout (``b.warm``) and the
  longest task meanwhile (``b.task``: how long the page may not answer a click).

For the RNN-T also the pass stepper's graph tab (``stepper_graph_tab``), opened on a step:
Python time until its first pane (the program after the step) shows and until both do,
in DAG and ANF mode (``--no-stepper`` skips it); with ``--browser`` also the wall time
from the click until Chromium has drawn them, in a real JupyterLab (``stepper_in_lab``).

Targets: first view <= 2 s, each toggle / search / zoom <= 200 ms, <= 2 MB per view.
The transformer is built with the builder API the way TVM's PyTorch importer prints
GPT-2 (Conv1D as reshape + dense + add + reshape, layer norm and GELU decomposed,
state-dict names such as ``h.0.attn.c_attn.weight``): about 100 calls per layer.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)  # run from a checkout without installing

import relay_nb as relay  # noqa: E402
from relay_nb.viz.explore import explore_data  # noqa: E402
from relay_nb.viz.hierarchy import hierarchy  # noqa: E402

WIDGETS = os.path.join(ROOT, "widgets")


# -- the models -------------------------------------------------------------------------------


def _conv1d(x, name, n_in, n_out, seq):
    """HF GPT-2's Conv1D as TVM's importer prints it: reshape, dense (weight transposed), add."""
    w = relay.var(f"{name}.weight", shape=(n_in, n_out))
    b = relay.var(f"{name}.bias", shape=(n_out,))
    flat = relay.reshape(x, (-1, n_in))
    y = relay.nn.dense(flat, relay.transpose(w, (1, 0)))
    return relay.reshape(relay.add(y, b), (1, seq, n_out))


def _layer_norm(x, name, d):
    g = relay.var(f"{name}.weight", shape=(d,))
    b = relay.var(f"{name}.bias", shape=(d,))
    mu = relay.mean(x, axis=-1, keepdims=True)
    c = relay.subtract(x, mu)
    var = relay.mean(relay.power(c, relay.const(2.0)), axis=-1, keepdims=True)
    y = relay.divide(c, relay.sqrt(relay.add(var, relay.const(1e-5))))
    return relay.add(relay.multiply(y, g), b)


def _gelu(x):
    """GPT-2's tanh GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    cube = relay.multiply(relay.const(0.044715), relay.power(x, relay.const(3.0)))
    inner = relay.multiply(relay.const(math.sqrt(2 / math.pi)), relay.add(x, cube))
    return relay.multiply(relay.multiply(relay.const(0.5), x), relay.add(relay.const(1.0), relay.tanh(inner)))


def _heads(x, seq, n_head, d):
    return relay.transpose(relay.reshape(x, (1, seq, n_head, d // n_head)), (0, 2, 1, 3))


def _matmul(a, b, shape_a, shape_b, out):
    """torch.matmul of 4-d tensors as TVM prints it: reshape, batch_matmul, reshape."""
    a3 = relay.reshape(a, (-1, *shape_a[-2:]))
    b3 = relay.reshape(relay.transpose(b, (0, 1, 3, 2)), (-1, shape_b[-1], shape_b[-2]))
    return relay.reshape(relay.nn.batch_matmul(a3, b3), out)


def decoder(layers: int = 12, d: int = 768, n_head: int = 12, seq: int = 64, vocab: int = 50257):
    """A GPT-2-shaped decoder (``layers`` blocks) with HF state-dict names."""
    ids = relay.var("input_ids", shape=(1, seq), dtype="int64")
    wte = relay.var("wte.weight", shape=(vocab, d))
    wpe = relay.var("wpe.weight", shape=(1024, d))
    mask = relay.var("attn_mask", shape=(1, 1, seq, seq))
    pos = relay.const(list(range(seq)), "int64")
    x = relay.add(relay.take(wte, ids, axis=0), relay.take(wpe, pos, axis=0))
    hd = d // n_head
    for i in range(layers):
        p = f"h.{i}"
        h = _layer_norm(x, f"{p}.ln_1", d)
        qkv = _conv1d(h, f"{p}.attn.c_attn", d, 3 * d, seq)
        q, k, v = (relay.strided_slice(qkv, (0, 0, j * d), (1, seq, (j + 1) * d)) for j in range(3))
        q, k, v = (_heads(t, seq, n_head, d) for t in (q, k, v))
        s = _matmul(q, k, (1, n_head, seq, hd), (1, n_head, seq, hd), (1, n_head, seq, seq))
        s = relay.divide(s, relay.const(math.sqrt(hd)))
        s = relay.where(relay.greater(mask, relay.const(0.0)), s, relay.const(-1e4))
        a = relay.nn.softmax(s, axis=-1)
        o = _matmul(a, relay.transpose(v, (0, 1, 3, 2)), (1, n_head, seq, seq), (1, n_head, hd, seq), (1, n_head, seq, hd))
        o = relay.reshape(relay.transpose(o, (0, 2, 1, 3)), (1, seq, d))
        x = relay.add(x, _conv1d(o, f"{p}.attn.c_proj", d, d, seq))
        h = _layer_norm(x, f"{p}.ln_2", d)
        m = _gelu(_conv1d(h, f"{p}.mlp.c_fc", d, 4 * d, seq))
        x = relay.add(x, _conv1d(m, f"{p}.mlp.c_proj", 4 * d, d, seq))
    out = _layer_norm(x, "ln_f", d)
    logits = relay.nn.dense(relay.reshape(out, (-1, d)), wte)
    fn = relay.Function(relay.analysis.free_vars(logits), logits)
    return relay.transform.InferType()(relay.IRModule.from_expr(fn))


def rnnt(frames: int = 320, labels: int = 40, feat: int = 240, enc: int = 1024, pred: int = 320,
         joint: int = 512, vocab: int = 29):
    """An RNN-T shaped like MLPerf's (the issue's 1.9 MB printout, not downloadable here),
    through the ONNX importer, which unrolls each LSTM over its sequence: encoder (2 LSTM
    layers, time stacked by 2, 3 more), predictor (embedding, 2 LSTM layers), joint net.
    320 frames and 40 labels print 1.8 MB: 18,000 calls.  Weights are graph inputs named
    as PyTorch's state dict (no arrays to make)."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from onnx_models import Builder

    b = Builder(0)
    x = b.input("features", [frames, 1, feat])
    y = b.input("labels", [labels, 1], elem=7)  # int64

    def lstm(x, din, hidden, prefix, layers):
        path = "/" + prefix.replace(".", "/")
        for i in range(layers):
            w = b.input(f"{prefix}.weight_ih_l{i}", [1, 4 * hidden, din if i == 0 else hidden])
            r = b.input(f"{prefix}.weight_hh_l{i}", [1, 4 * hidden, hidden])
            bias = b.input(f"{prefix}.bias_l{i}", [1, 8 * hidden])
            out, _, _ = b.op("LSTM", [x, w, r, bias], n_out=3, name=f"{path}/LSTM_{i}", hidden_size=hidden)
            x = b.op("Squeeze", [out, b.ints([1])], name=f"{path}/Squeeze_{i}")
        return x

    def linear(t, din, dout, prefix):
        w, bias = b.input(f"{prefix}.weight", [din, dout]), b.input(f"{prefix}.bias", [dout])
        path = "/" + prefix.replace(".", "/")
        return b.op("Add", [b.op("MatMul", [t, w], name=f"{path}/MatMul"), bias], name=f"{path}/Add")

    h = lstm(x, feat, enc, "encoder.pre_rnn.lstm", 2)
    # StackTime: (T, 1, H) -> (T/2, 1, 2H)
    h = b.op("Transpose", [h], perm=[1, 0, 2], name="/encoder/stack_time/Transpose")
    h = b.op("Reshape", [h, b.ints([1, frames // 2, 2 * enc])], name="/encoder/stack_time/Reshape")
    h = b.op("Transpose", [h], perm=[1, 0, 2], name="/encoder/stack_time/Transpose_1")
    h = lstm(h, 2 * enc, enc, "encoder.post_rnn.lstm", 3)
    g = b.op("Gather", [b.input("prediction.embed.weight", [vocab - 1, pred]), y], axis=0,
             name="/prediction/embed/Gather")  # fmt: skip
    g = lstm(g, pred, pred, "prediction.dec_rnn.lstm", 2)
    # joint: f (1, T, 1, J) + g (1, 1, U, J), relu, linear to the vocabulary
    f = linear(b.op("Transpose", [h], perm=[1, 0, 2], name="/joint/Transpose"), enc, joint, "joint_enc")
    f = b.op("Unsqueeze", [f, b.ints([2])], name="/joint/Unsqueeze")
    g = linear(b.op("Transpose", [g], perm=[1, 0, 2], name="/joint/Transpose_1"), pred, joint, "joint_pred")
    g = b.op("Unsqueeze", [g, b.ints([1])], name="/joint/Unsqueeze_1")
    z = b.op("Relu", [b.op("Add", [f, g], name="/joint/Add")], name="/joint/net/Relu")
    return relay.frontend.from_onnx(b.model(linear(z, joint, vocab, "joint.net.2")), freeze_params=False)[0]


def models(quick: bool) -> list[tuple[str, object]]:
    out = []
    if not quick:
        out.append(("GPT-2 (12-layer decoder)", lambda: decoder(12)))
    out.append(("ResNet-50", lambda: relay.testing.resnet.get_workload(num_layers=50)[0]))
    if not quick:
        out.append(("Inception v3", lambda: relay.testing.inception_v3.get_workload()[0]))
        out.append(("24-layer decoder (GPT-2 medium)", lambda: decoder(24, d=1024, n_head=16)))
        out.append(("RNN-T (ONNX, 1.8 MB printout)", rnnt))
    return out


# -- measurements -------------------------------------------------------------------------------

NODE_SCRIPT = r"""
import fs from "fs";
import { exploreModel, visibleView, layoutView, searchModel } from "./lib.mjs";
const data = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const m = exploreModel(data);
const idx = (ids) => new Set(ids.map((id) => m.groupIndex.get(id)));
const time = (f) => { const t = performance.now(); const r = f(); return [performance.now() - t, r]; };
const first = idx(data.expanded);
const [tFirst, lay] = time(() => layoutView(m, visibleView(m, first)));
const all = new Set(m.groups.map((g) => g.i));
const [tAll, layAll] = time(() => layoutView(m, visibleView(m, all)));
// Toggle: from the first view, open each closed group shown (cached layouts kept).
const cache = new Map();
const v0 = visibleView(m, first);
layoutView(m, v0, cache);
const toggles = [];
for (const [key, info] of v0.items) {
  if (!info.group || m.groups[info.index].kids.length + m.groups[info.index].nodes.length < 2) continue;
  const open = new Set(first); open.add(info.index);
  const c = new Map(cache); // the layouts of the first view, as the widget keeps them
  toggles.push(time(() => layoutView(m, visibleView(m, open), c))[0]);
  if (toggles.length >= 12) break;
}
const [tSearch, hits] = time(() => searchModel(m, "dense"));
console.log(JSON.stringify({ first: tFirst, all: tAll, toggles, search: tSearch, hits: hits.length,
  firstItems: v0.items.size, allItems: m.nodes.length, size: [layAll.width, layAll.height] }));
"""


def node_layout(data: dict) -> dict | None:
    """The front end's layout timings in Node.js (None without Node)."""
    if shutil.which("node") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        lib = "\n".join(open(os.path.join(WIDGETS, f), encoding="utf-8").read()
                        for f in ("vendor/dagre.min.js", "explore_layout.js"))  # fmt: skip
        with open(os.path.join(tmp, "lib.mjs"), "w") as f:
            f.write(lib + "\nexport { exploreModel, visibleView, layoutView, searchModel };\n")
        with open(os.path.join(tmp, "run.mjs"), "w") as f:
            f.write(NODE_SCRIPT)
        with open(os.path.join(tmp, "data.json"), "w") as f:
            json.dump(data, f)
        out = subprocess.run(["node", os.path.join(tmp, "run.mjs"), os.path.join(tmp, "data.json")],
                             capture_output=True, text=True, timeout=1800, check=True)  # fmt: skip
        return json.loads(out.stdout)


def graphviz_per_group(h, expanded) -> float:
    """Seconds Graphviz (pygraphviz, in process) takes for the same per-group layouts the
    front end does: each open group's direct items, boxes sized like the front end's."""
    import pygraphviz

    view = h.view(expanded)
    kids: dict = {None: []}
    for c, parent in view.clusters.items():
        kids.setdefault(c, [])
        kids.setdefault(parent, []).append(c)
    for item, where in view.items.items():
        kids.setdefault(where, []).append(item)
    def lift(item):
        out, c = [item], view.items[item]
        while c is not None:
            out.append(c)
            c = view.clusters[c]
        return out + [None]

    edges: dict = {}
    for t, hd in view.edges:
        a, b = lift(t), lift(hd)
        common = next(c for c in a[1:] if c in b[1:])
        x, y = a[a.index(common) - 1], b[b.index(common) - 1]
        if x != y:
            edges.setdefault(common, set()).add((x, y))
    start = time.perf_counter()
    for c, items in kids.items():
        g = pygraphviz.AGraph(directed=True, strict=False)
        g.graph_attr.update(rankdir="TB", nodesep="0.2", ranksep="0.35")
        for k in items:
            g.add_node(k, label="", shape="box", fixedsize="true", width="1.6", height="0.4")
        for x, y in edges.get(c, ()):
            g.add_edge(x, y)
        g.layout(prog="dot")
    return time.perf_counter() - start


def measure(name: str, build, browser) -> list[dict]:
    # Imported before timing: anywidget's import (~1 s here) is paid once per kernel.
    from relay_nb.notebook.explorer import pack_data, static_html

    t0 = time.perf_counter()
    mod = build()
    t_model = time.perf_counter() - t0
    t0 = time.perf_counter()
    h = hierarchy(mod)
    data = explore_data(h)
    packed = pack_data(data)
    t_build = time.perf_counter() - t0
    calls = sum(1 for n in h.nodes.values() if n.kind == "call")
    first = h.initial()
    t0 = time.perf_counter()
    svg = static_html(h, first)
    t_svg = time.perf_counter() - t0
    payload = len(base64.b64encode(packed)) + len(svg)
    js = node_layout(data)
    gv_first = graphviz_per_group(h, first)
    gv_all = graphviz_per_group(h, h.expand_all())
    rows = [
        dict(model=name, view="first", items=len(h.view(first).items), build_s=t_build,
             payload_kb=payload / 1024, svg_s=t_svg, svg_kb=len(svg) / 1024,
             dagre_ms=js and js["first"], graphviz_ms=gv_first * 1000,
             toggle_ms=js and (statistics.median(js["toggles"]) if js["toggles"] else 0),
             toggle_max_ms=js and (max(js["toggles"]) if js["toggles"] else 0),
             search_ms=js and js["search"]),
        dict(model=name, view="all", items=len(h.nodes), build_s=t_build, payload_kb=payload / 1024,
             svg_s=None, svg_kb=None, dagre_ms=js and js["all"], graphviz_ms=gv_all * 1000,
             toggle_ms=None, toggle_max_ms=None, search_ms=None),
    ]  # fmt: skip
    print(f"# {name}: {calls} calls, {len(h.nodes)} nodes, {len(h.groups)} groups; "
          f"model built in {t_model:.1f} s", flush=True)  # fmt: skip
    if browser is not None:
        # A fresh page per run (the first "expand all" lays out with nothing cached); medians.
        runs = [browser(data, svg) for _ in range(browser.repeat)]
        rows[0].update({k: statistics.median(r[k] for r in runs) for k in runs[0]})
    return rows


def stepper_graph_tab(build, repeat: int = 3) -> dict:
    """The pass stepper's graph tab, opened the way a user opens it: on the step of
    ``SimplifyExpr`` (so its text diff has printed both programs), click "graph".
    Python CPU time (``time.process_time``, robust to other jobs on the machine) until
    the first pane ("after") is shown and until both are, in each mode, in a fresh
    stepper each time; median of ``repeat``."""
    from relay_nb.notebook.stepper import PassStepper

    mod = build()
    times: dict[str, list[float]] = {f"{m}_{k}": [] for m in ("dag", "anf") for k in ("first", "both")}
    for _ in range(repeat):
        for mode in ("dag", "anf"):
            stepper = PassStepper(mod, passes=["SimplifyExpr"], executor="interpreter")
            step = stepper.steps[-1]
            stepper.go(step.index)
            stepper.graph_mode.value = mode  # the tab is closed: nothing is drawn yet
            shown: list[tuple[float, tuple]] = []  # (when, the panes), notes first
            stepper.graph_panes.observe(lambda c: shown.append((time.process_time(), c["new"])),
                                        names="children")  # fmt: skip
            t0 = time.process_time()
            stepper.tabs.selected_index = 1
            times[f"{mode}_both"].append(time.process_time() - t0)
            first = next(t for t, panes in shown if hasattr(panes[1], "hierarchy"))
            times[f"{mode}_first"].append(first - t0)
    return {k: statistics.median(ts) for k, ts in times.items()}


# -- the browser ------------------------------------------------------------------------------


def stepper_in_lab(repeat: int = 3) -> Optional[dict]:
    """The pass stepper's graph tab on the RNN-T in a real JupyterLab (``--browser``):
    wall time from the click on "graph" (then on "ANF"), as the page received it, until
    the first pane is drawn and until both are (``PANE_WATCH``), in fresh steppers
    (medians of ``repeat``); kernel, server and browser share this machine's cores as on
    a laptop.  None without a browser."""
    import tempfile
    from pathlib import Path

    tools = _browser_tools()
    if tools is None:
        return None
    launch, sync_playwright = tools
    try:
        import nbformat
        from e2e.lab import NOTEBOOK, error_outputs, open_notebook, run_all_cells, wait_until_executed
        from e2e.server import start_lab
    except ImportError:
        return None
    work = Path(tempfile.mkdtemp(prefix="relay_nb_lab_"))
    (work / "root").mkdir()
    nb = nbformat.v4.new_notebook()
    setup = (f"import sys; sys.path.insert(0, {HERE!r})\nfrom bench_views import rnnt\n"
             "from relay_nb.notebook.stepper import PassStepper\nmod = rnnt()")  # fmt: skip
    show = ('s = PassStepper(mod, passes=["SimplifyExpr"], executor="interpreter")\n'
            "s.go(s.steps[-1].index)\ns")  # fmt: skip
    nb.cells = [nbformat.v4.new_code_cell(setup)] + [nbformat.v4.new_code_cell(show) for _ in range(repeat)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}  # fmt: skip
    nbformat.write(nb, work / "root" / "stepper.ipynb")
    server = start_lab(work / "root", work / "lab", env={"PYTHONPATH": ROOT})
    pw = sync_playwright().start()
    chromium = launch(pw)
    times: dict[str, list[float]] = {f"{m}_{k}": [] for m in ("dag", "anf") for k in ("first", "both")}
    try:
        page = chromium.new_page(viewport={"width": 1400, "height": 1200})
        page.set_default_timeout(600_000)
        page.add_init_script(LONG_TASKS)
        open_notebook(page, server.url("/lab/tree/stepper.ipynb"))
        run_all_cells(page)
        wait_until_executed(page)
        errors = error_outputs(page)
        if errors:
            raise RuntimeError(errors[0][:2000])
        for k in range(repeat):
            stepper = page.locator(f"{NOTEBOOK} .relay-stepper").nth(k)
            stepper.scroll_into_view_if_needed()
            handle = stepper.element_handle()
            for mode in ("dag", "anf"):
                page.wait_for_function(SETTLED, polling=200, timeout=60_000)
                page.evaluate(PANE_WATCH, handle)
                if mode == "dag":
                    stepper.locator(".lm-TabBar-tab", has_text="graph").click()
                else:  # the DAG panes are replaced by notes, then by the ANF panes
                    stepper.locator("button", has_text="ANF").click()
                page.wait_for_function("() => window.__panes.both !== null", polling=100)
                w = page.evaluate("window.__panes")
                times[f"{mode}_first"].append((w["first"] - w["input"]) / 1000)
                times[f"{mode}_both"].append((w["both"] - w["input"]) / 1000)
    finally:
        chromium.close()
        pw.stop()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("# JupyterLab stepper runs:", {k: [round(t, 2) for t in ts] for k, ts in times.items()}, flush=True)
    return {k: statistics.median(ts) for k, ts in times.items()}


PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>{css}</style></head>
<body><div id="root" style="width:1300px"></div></body></html>"""

# A stand-in for anywidget's model: what render() reads and writes.
MODEL = r"""
window.__model = (state) => {
  const handlers = {};
  return {
    get: (k) => state[k],
    set: (k, v) => { state[k] = v; (handlers["change:" + k] || []).forEach((f) => f()); },
    save_changes: () => {},
    on: (e, f) => { (handlers[e] = handlers[e] || []).push(f); },
    off: () => {},
  };
};
"""


# The stepper's panes, timed in the page's clock: from the click's input event (its
# timestamp is when the input reached the page, so waiting behind a busy main thread
# counts) until the first explorer pane, and both, are drawn (the next frame after the
# DOM has them), checked every 20 ms in the page: polling from Playwright (with
# innerText) cost the page ~25% of a core while the kernel worked, and timing from
# Playwright's click() counted its 0.3-1.3 s of actionability checks.
PANE_WATCH = r"""(el) => {
  const w = (window.__panes = { input: null, first: null, both: null });
  const now = () => performance.timeOrigin + performance.now();
  el.addEventListener("pointerdown", (e) => (w.input = performance.timeOrigin + e.timeStamp),
                      { capture: true, once: true });
  let seen = false; // the "drawing the program ..." notes of this click
  let panes = null; // found once: a query through the stepper's diff takes ms
  let asked = false; // the first pane's frame
  const state = () => {
    panes = panes || el.querySelector(".relay-stepper-graph-panes");
    let drawn = 0, wait = false;
    for (const pane of panes ? panes.children : []) {
      if (pane.matches(".relay-ex") || pane.querySelector(".relay-ex")) drawn += pane.querySelector("g.relay-ex-node") ? 1 : 0;
      else wait = wait || pane.textContent.includes("drawing the program before");
    }
    return [drawn, wait];
  };
  const check = () => {
    if (w.input === null) return;
    const [n, wait] = state();
    seen = seen || wait;
    if (!seen) return;
    if (n >= 1 && !asked) {
      asked = true;
      requestAnimationFrame(() => (w.first = w.first ?? now()));
    }
    if (n === 2 && !wait) {
      clearInterval(timer);
      requestAnimationFrame(() => { w.first = w.first ?? now(); w.both = now(); });
    }
  };
  const timer = setInterval(check, 20);
}"""

# The long tasks (> 50 ms) of a page, [start, duration] in order: how long it stops
# responding (the explorer's timings), and when it last did (SETTLED).
LONG_TASKS = """window.__tasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__tasks.push([e.startTime, e.duration]);
}).observe({ type: "longtask", buffered: true });"""

# Each click comes when the page has settled, as a user's would after reading the last
# view: no task over 50 ms for a second and no explorer on screen still laying out
# "expand all" in the background.  Without it, a click measured the notebook's first
# rendering of three RNN-T diffs or the previous stepper's background layout.
SETTLED = """() => performance.now() - (window.__tasks.at(-1) || [0, 0]).reduce((a, b) => a + b) > 1000
  && [...document.querySelectorAll(".relay-ex")].every((x) => {
  const r = x.getBoundingClientRect();
  return x.dataset.warmed !== "" || r.bottom < 0 || r.top > innerHeight;
})"""


def _browser_tools():
    """(launch, sync_playwright) once Chromium is there (the tests' e2e helpers), or None."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    try:
        from e2e.browser import ensure_browser, launch
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if ensure_browser() is not None:
        return None
    return launch, sync_playwright


def browser_timer():
    """A function timing the explorer in headless Chromium, or None without a browser."""
    tools = _browser_tools()
    if tools is None:
        return None
    launch, sync_playwright = tools
    from relay_nb.notebook.explorer import explorer_esm
    from relay_nb.notebook._assets import read_asset

    pw = sync_playwright().start()
    chromium = launch(pw)
    esm = explorer_esm()
    css = read_asset("graph_explorer.css")

    def new_page():
        page = chromium.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(600_000)
        page.set_content(PAGE.format(css=css))
        page.add_script_tag(content=MODEL)
        page.add_script_tag(content=LONG_TASKS)
        page.evaluate(
            """async ([esm]) => {
                 const url = URL.createObjectURL(new Blob([esm], {type: "text/javascript"}));
                 window.__explorer = (await import(url)).default;
               }""",
            [esm],
        )
        return page

    def run(data: dict, svg: str) -> dict:
        # "expand all" at once, before the background layout of a big model has run.
        page = new_page()
        cold = page.evaluate(
            """([data]) => {
                 const model = window.__model({data, expanded: data.expanded, selected: "", query: "", title: ""});
                 window.__explorer.render({model, el: document.getElementById("root")});
                 const root = document.getElementById("root");
                 const items = root.dataset.items;
                 const drawn = root.dataset.shown;
                 const t = performance.now();
                 document.querySelector(".relay-ex-all").dispatchEvent(new MouseEvent("click", {bubbles: true}));
                 const click = performance.now() - t; // its task also rendered the page
                 // The first frame after the click (the drawing, or the layout's progress),
                 // the first frame with everything drawn (a provisional layout, or the real
                 // one), then the frame with the real layout drawn.
                 return new Promise((ok) => requestAnimationFrame(() => {
                   const shown = performance.now() - t;
                   let usable = null;
                   const done = () => {
                     if (usable === null && root.dataset.shown !== drawn) usable = performance.now() - t;
                     if (root.dataset.items !== items) {
                       // the click, then the tasks that ran after it
                       const tasks = window.__tasks.filter((e) => e[0] >= t).map((e) => e[1]);
                       ok([shown, usable, performance.now() - t, Math.max(click, ...tasks), root.dataset.quickPhases || ""]);
                     }
                     else requestAnimationFrame(done);
                   };
                   done();
                 }));
               }""",
            [data],
        )
        if os.environ.get("BENCH_PHASES"):
            print("cold expand all: provisional", cold[4] or "not drawn", flush=True)
        page.close()
        # The background layout after the first view: how long, and the longest task
        # meanwhile (the page not responding to events).
        page = new_page()
        warm = page.evaluate(
            """([data]) => {
                 const model = window.__model({data, expanded: data.expanded, selected: "", query: "", title: ""});
                 const root = document.getElementById("root");
                 window.__explorer.render({model, el: root});
                 return new Promise((ok) => requestAnimationFrame(() => setTimeout(() => {
                   const t = performance.now();
                   const wait = () => {
                     if (!root.dataset.warmed) return setTimeout(wait, 5);
                     const tasks = window.__tasks.filter((e) => e[0] >= t).map((e) => e[1]);
                     ok([performance.now() - t, Math.max(0, ...tasks)]);
                   };
                   wait();
                 }, 0)));
               }""",
            [data],
        )
        page.close()
        page = new_page()
        first = page.evaluate(
            """([data]) => {
                 const model = window.__model({data, expanded: data.expanded, selected: "", query: "", title: ""});
                 window.__m = model;
                 const t = performance.now();
                 window.__explorer.render({model, el: document.getElementById("root")});
                 return new Promise((ok) => requestAnimationFrame(() => setTimeout(() => ok(performance.now() - t), 0)));
               }""",
            [data],
        )
        toggle = page.evaluate(
            """() => {
                 const g = document.querySelector(".relay-ex-group");
                 const t = performance.now();
                 g.dispatchEvent(new MouseEvent("click", {bubbles: true}));
                 return performance.now() - t;
               }"""
        )
        search = page.evaluate(
            """() => {
                 const box = document.querySelector(".relay-ex-search");
                 box.value = "softmax";
                 const t = performance.now();
                 box.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true}));
                 return performance.now() - t;
               }"""
        )
        zoom = page.evaluate(
            """() => {
                 const s = document.querySelector(".relay-ex-stage");
                 const t = performance.now();
                 s.dispatchEvent(new WheelEvent("wheel", {deltaY: -200, clientX: 300, clientY: 300, bubbles: true, cancelable: true}));
                 return new Promise((ok) => requestAnimationFrame(() => ok(performance.now() - t)));
               }"""
        )
        # The background layout done, "expand all" the first time, back to the first view,
        # and again; the longest task after the first view (the page not responding).
        page.wait_for_function("() => document.getElementById('root').dataset.warmed")
        click_all, click_top = (
            """([sel]) => {
                 const t = performance.now();
                 document.querySelector(sel).dispatchEvent(new MouseEvent("click", {bubbles: true}));
                 return new Promise((ok) => requestAnimationFrame(() => setTimeout(() => ok(performance.now() - t), 0)));
               }""", ".relay-ex-all"), ".relay-ex-top"
        expand_all = page.evaluate(click_all[0], [click_all[1]])
        collapse = page.evaluate(click_all[0], [click_top])
        expand_again = page.evaluate(click_all[0], [click_all[1]])
        # In the open model, a search jump (zoomed in: zoomed out to the whole model, the
        # labels are not drawn), then close the innermost group shown. ResNet-50 has no
        # tanh: there the jump is to an add.
        page.evaluate(
            """() => {
                 const box = document.querySelector(".relay-ex-search");
                 for (const query of ["tanh", "add"]) {
                   box.value = query;
                   box.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true}));
                   if (!document.querySelector(".relay-ex-count").textContent.startsWith("0 ")) break;
                 }
               }"""
        )
        # the jump's zoom paints the labels in a later frame
        page.wait_for_selector(".relay-ex-cluster-label", state="attached", timeout=10_000)
        deep = page.evaluate(
            """() => {
                 const labels = document.querySelectorAll(".relay-ex-cluster-label");
                 const t = performance.now();
                 labels[labels.length - 1].dispatchEvent(new MouseEvent("click", {bubbles: true}));
                 return new Promise((ok) => requestAnimationFrame(() => setTimeout(() => ok(performance.now() - t), 0)));
               }"""
        )
        if os.environ.get("BENCH_PHASES"):
            page.wait_for_timeout(300)
            print("deep phases:", deep, page.evaluate("() => document.querySelector('[data-phases]').dataset.phases"), flush=True)
        page.close()
        return {"browser_first_ms": first, "browser_toggle_ms": toggle, "browser_search_ms": search,
                "browser_zoom_ms": zoom, "browser_all_ms": expand_all, "browser_top_ms": collapse,
                "browser_all2_ms": expand_again, "browser_deep_ms": deep, "browser_cold_ms": cold[0], "browser_cold_use_ms": cold[1], "browser_cold_done_ms": cold[2], "browser_cold_task_ms": cold[3],
                "browser_warm_ms": warm[0], "browser_task_ms": warm[1]}  # fmt: skip

    run.close = lambda: (chromium.close(), pw.stop())
    return run


def _letters(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="ResNet-50 only")
    ap.add_argument("--only", default="", help="only the models whose name contains this")
    ap.add_argument("--repeat", type=int, default=3, help="browser runs per model (medians)")
    ap.add_argument("--browser", action="store_true", help="also time the view in headless Chromium")
    ap.add_argument("--no-stepper", action="store_true",
                    help="skip the pass stepper's graph tab on the RNN-T")  # fmt: skip
    args = ap.parse_args()
    timer = browser_timer() if args.browser else None
    if timer is not None:
        timer.repeat = args.repeat
    if args.browser and timer is None:
        print("# no browser: Chromium or Playwright unavailable", flush=True)
    rows = []
    steppers = []
    in_lab = None  # the stepper's JupyterLab run: its own Playwright, once the timer's is closed
    try:
        for name, build in models(args.quick):
            if _letters(args.only) not in _letters(name):  # --only rnnt finds "RNN-T (ONNX ...)"
                continue
            rows.extend(measure(name, build, timer))
            if build is rnnt and not args.no_stepper:
                steppers.append((name, stepper_graph_tab(build)))
                in_lab = name if args.browser else None
    finally:
        if timer is not None:
            timer.close()
    if in_lab is not None:
        lab = stepper_in_lab(args.repeat)
        if lab is not None:
            steppers.append((in_lab + " in JupyterLab, wall s", lab))
    cols = [("model", "<32", "model"), ("view", "<6", "view"), ("items", ">6", "items"),
            ("build_s", ">8.2f", "build s"), ("payload_kb", ">11.0f", "payload KB"),
            ("svg_s", ">6.2f", "svg s"), ("svg_kb", ">7.0f", "svg KB"),
            ("dagre_ms", ">9.0f", "dagre ms"), ("graphviz_ms", ">12.0f", "graphviz ms"),
            ("toggle_ms", ">10.0f", "toggle ms"), ("toggle_max_ms", ">8.0f", "max ms"),
            ("search_ms", ">10.1f", "search ms")]  # fmt: skip
    if timer is not None:
        cols += [("browser_first_ms", ">12.0f", "browser 1st"), ("browser_toggle_ms", ">10.0f", "b.toggle"),
                 ("browser_search_ms", ">9.0f", "b.search"), ("browser_zoom_ms", ">7.0f", "b.zoom"),
                 ("browser_all_ms", ">7.0f", "b.all"), ("browser_top_ms", ">7.0f", "b.top"),
                 ("browser_all2_ms", ">7.0f", "b.all2"), ("browser_deep_ms", ">7.0f", "b.deep"), ("browser_cold_ms", ">7.0f", "b.cold"),
                 ("browser_cold_use_ms", ">7.0f", "b.use"), ("browser_cold_done_ms", ">7.0f", "b.done"),
                 ("browser_cold_task_ms", ">7.0f", "b.ctask"),
                 ("browser_warm_ms", ">7.0f", "b.warm"), ("browser_task_ms", ">7.0f", "b.task")]  # fmt: skip
    print(" ".join(format(title, spec.split(".")[0]) for _, spec, title in cols))
    for r in rows:
        print(" ".join(_fmt(r.get(k), spec) if k not in ("model", "view") else format(r[k], spec)
                       for k, spec, _ in cols))  # fmt: skip
    if steppers:
        print("\npass stepper graph tab: s until the after pane shows / both do (Python CPU, median "
              f"of 3; in JupyterLab, median of {args.repeat}: wall time from the click's input event "
              "until Chromium has drawn them)")
        print(f"{'model':<50} {'dag 1st':>7} {'dag':>6} {'anf 1st':>7} {'anf':>6}")
        for name, t in steppers:
            print(f"{name:<50} {t['dag_first']:>7.2f} {t['dag_both']:>6.2f} "
                  f"{t['anf_first']:>7.2f} {t['anf_both']:>6.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
