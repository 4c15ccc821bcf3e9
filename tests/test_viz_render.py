"""SVG rendering (relay_nb.viz.render, compare): with pygraphviz, no system Graphviz.

pygraphviz is installed through the notebook extra; the tests that draw skip without a
renderer.  Timings are asserted with generous bounds (CI machines are slow and shared);
the measured medians are reported by ``benchmarks`` runs, not here.
"""

from __future__ import annotations

import importlib
import re
import sys
import time
from pathlib import Path

import pytest
from strategies import big_dag
from test_printer_cases import CASES

import relay_nb as relay
from relay_nb.errors import RelayError
from relay_nb.viz import build_graph, compare, render
from relay_nb.viz.render import available_engine, render_dot, svg_or_error_html
from relay_nb.viz.style import op_color

# The module (``relay_nb.viz.render`` is also the name of the function the package exports).
render_mod = importlib.import_module("relay_nb.viz.render")
needs_renderer = pytest.mark.skipif(available_engine() is None, reason="no Graphviz renderer")

SEED_DAG = """def @main(%x: Tensor[(2, 3), float32]) {
  %1 = log(%x);
  %2 = add(%1, %1);
  %2
}"""


def svg_ids(svg: str, cls: str) -> list[str]:
    return re.findall(rf'<g id="([^"]+)" class="{cls}"', svg)


@needs_renderer
def test_render_a_dag_keeps_every_node_id():
    mod = relay.parse(SEED_DAG)
    g = build_graph(mod)
    svg = render(mod)
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    assert sorted(svg_ids(svg, "node")) == sorted(g.nodes)
    assert sorted(svg_ids(svg, "cluster")) == sorted(g.clusters)
    assert ">log</text>" in svg and "shared: used 2×" in svg
    # The types are on hover too: the tooltip becomes the SVG link title.
    assert 'xlink:title="call: log' in svg


@needs_renderer
def test_render_anf_and_every_kind():
    for name in ("seed004_if_scope", "seed004_closure", "all_node_kinds"):
        for mode in ("dag", "anf"):
            g = build_graph(CASES[name](), mode=mode)
            svg = render(g)
            assert sorted(svg_ids(svg, "node")) == sorted(g.nodes), (name, mode)


@needs_renderer
def test_render_accepts_dot_and_relay_text():
    svg = render("digraph { a [id=\"only\"]; }")
    assert svg_ids(svg, "node") == ["only"]
    svg = render("fn (%x: float32) { log(%x) }")  # Relay text is parsed and drawn
    assert ">log</text>" in svg


@needs_renderer
def test_graph_displays_as_svg():
    bundle = build_graph(relay.parse(SEED_DAG))._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
    assert bundle["text/plain"].startswith("<relay_nb.viz.Graph dag: 4 nodes")


@needs_renderer
def test_compare_shows_both_views_in_the_same_colours():
    mod = relay.parse(SEED_DAG)
    c = compare(mod)
    html = c._repr_mimebundle_()["text/html"]
    assert html.count("<svg") == 2 and "<script" not in html.lower() and "<?xml" not in html
    dag_ids, anf_ids = svg_ids(html, "node"), []
    anf_ids = [i for i in dag_ids if i.startswith("anf_")]
    dag_ids = [i for i in dag_ids if i.startswith("dag_")]
    assert sorted(dag_ids) == sorted(c.dag.nodes) and sorted(anf_ids) == sorted(c.anf.nodes)
    assert "Dataflow graph (DAG)" in html and "A-normal form" in html
    # log is drawn in the same colour on both sides (and in the legend).
    dag_part, anf_part = html.split("A-normal form</b>", 1)
    colour = op_color("log")
    assert f'fill="{colour}"' in dag_part and f'fill="{colour}"' in anf_part
    assert ("log", colour) in c.legend()
    plain = c._repr_mimebundle_()["text/plain"]
    assert "%0 = log(%x);" in plain and "let %x1 = log(%x);" in plain


@needs_renderer
def test_resnet50_renders_in_seconds():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from programs import resnet50_module

    mod = relay.parse(resnet50_module().relay)
    start = time.perf_counter()
    g = build_graph(mod)
    svg = render_dot(g.dot)
    seconds = time.perf_counter() - start
    convs = sum(1 for n in g.nodes.values() if n.label.startswith("nn.conv2d"))
    assert convs == 53 and not g.summarized
    assert len(svg_ids(svg, "node")) == len(g.nodes)
    assert seconds < 20, seconds  # ~0.3 s measured; generous for a loaded CI machine


@needs_renderer
def test_a_5000_node_graph_is_summarized_and_renders():
    mod = big_dag(5000)
    start = time.perf_counter()
    g = build_graph(mod, max_nodes=500)
    svg = render(g)
    seconds = time.perf_counter() - start
    assert g.summarized and "more" in svg_ids(svg, "node")
    assert re.search(r">… \d+ more nodes</text>", svg)
    assert seconds < 30, seconds


@needs_renderer
def test_a_weight_read_everywhere_does_not_slow_the_layout():
    from test_viz_graph import chain_reading_w

    start = time.perf_counter()
    svg = render(chain_reading_w(145))  # 13 s with one %w and its long edges; ~0.1 s now
    seconds = time.perf_counter() - start
    assert svg.count('class="node"') == 1 + 1 + 145 + 145 + 1  # %x, %w, adds, copies, fn
    assert seconds < 10, seconds


@needs_renderer
def test_big_graphs_render_in_a_child_process_with_a_timeout(monkeypatch):
    monkeypatch.setattr(render_mod, "INPROCESS_LIMIT", 0)
    render_mod._render_cached.cache_clear()
    dot = build_graph(relay.parse(SEED_DAG)).dot
    try:
        if available_engine() == "pygraphviz":
            assert "<svg" in render_dot(dot, engine="pygraphviz")
            with pytest.raises(RelayError, match="took longer than"):
                render_dot(build_graph(big_dag(2000)).dot, engine="pygraphviz", timeout=0.01)
    finally:
        render_mod._render_cached.cache_clear()


ENGINE_CASES = [
    pytest.param("pygraphviz", marks=pytest.mark.skipif(
        not render_mod._has_pygraphviz(), reason="pygraphviz not installed")),
    pytest.param("graphviz-pure", marks=pytest.mark.skipif(
        render_mod._graphviz_pure() is None, reason="graphviz-pure not installed")),
]  # fmt: skip


@pytest.mark.parametrize("engine", ENGINE_CASES)
def test_every_installed_engine_draws_every_node_and_cluster(engine):
    for name in ("seed004_if_scope", "all_node_kinds"):
        g = build_graph(CASES[name](), mode="anf")
        svg = render_dot(g.dot, engine=engine)
        assert sorted(svg_ids(svg, "node")) == sorted(g.nodes), (name, engine)
        assert sorted(svg_ids(svg, "cluster")) == sorted(g.clusters), (name, engine)


@pytest.mark.parametrize("engine", ENGINE_CASES)
def test_labels_are_drawn_as_written(engine):
    """Quotes, backslashes and ``<...>`` in a label are literal text; newlines break lines."""
    from relay_nb.viz.dotwriter import Drawing, write_dot

    label = 'say "hi" \\n <lambda>\nnext line'
    d = Drawing(nodes=[("a", {"id": "a", "label": label}, None)])
    svg = render_dot(write_dot(d), engine=engine)
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert texts == ["say &quot;hi&quot; \\n &lt;lambda&gt;", "next line"]


def test_without_pygraphviz_graphviz_pure_is_the_fallback(monkeypatch):
    monkeypatch.setattr(render_mod.shutil, "which", lambda name: None)
    monkeypatch.setattr(render_mod, "_has_pygraphviz", lambda: False)
    monkeypatch.setattr(render_mod, "_graphviz_pure", lambda: "/opt/graphviz-pure")
    assert available_engine() == "graphviz-pure"
    monkeypatch.setattr(render_mod, "_has_pygraphviz", lambda: True)
    assert available_engine() == "pygraphviz"
    monkeypatch.setattr(render_mod.shutil, "which", lambda name: f"/usr/bin/{name}")
    assert available_engine() == "dot"  # a system Graphviz is preferred


def test_bad_dot_is_a_relay_error():
    if available_engine() is None:
        pytest.skip("no Graphviz renderer")
    with pytest.raises(RelayError, match="could not draw"):
        render("digraph { a -> }")


def test_unknown_engine():
    with pytest.raises(RelayError, match="unknown render engine"):
        render_dot("digraph {}", engine="neato")


def test_without_a_renderer_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setattr(render_mod.shutil, "which", lambda name: None)
    monkeypatch.setattr(render_mod, "_has_pygraphviz", lambda: False)
    monkeypatch.setattr(render_mod, "_graphviz_pure", lambda: None)
    render_mod._render_cached.cache_clear()
    try:
        with pytest.raises(RelayError, match="pip install pygraphviz"):
            render(relay.parse(SEED_DAG))
        with pytest.raises(RelayError, match="`dot` on PATH"):
            render_dot("digraph {}", engine="dot")
        svg, html = svg_or_error_html("digraph { a }")
        assert svg is None and "pip install pygraphviz" in html and "digraph { a }" in html
        # Displaying still works: the notebook shows the note and the DOT source.
        bundle = build_graph(relay.parse(SEED_DAG))._repr_mimebundle_()
        assert "image/svg+xml" not in bundle and "DOT source" in bundle["text/html"]
        assert "DOT source" in compare(relay.parse(SEED_DAG))._repr_html_()
    finally:
        render_mod._render_cached.cache_clear()


def test_import_relay_nb_imports_no_graphviz_or_jupyter():
    """``import relay_nb`` loads no drawing or Jupyter package; ``to_dot`` needs only the
    pure-Python ``graphviz`` DOT builder (a runtime dependency), no renderer or Jupyter."""
    import subprocess

    watched = "('pygraphviz', 'graphviz', 'IPython', 'ipywidgets')"
    code = (
        "import sys, relay_nb as relay\n"
        f"print(sorted(m for m in {watched} if m in sys.modules))\n"
        "dot = relay.viz.to_dot(relay.parse_expr('fn (%x: float32) { log(%x) }'))\n"
        "assert 'label=\"log' in dot, dot\n"
        f"print(sorted(m for m in {watched} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "['graphviz']"]


# --- Fontconfig's warnings from the bundled Graphviz ---------------------------------------------

NEWER_FONTCONFIG = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <reset-dirs />
  <dir>/usr/share/fonts</dir>
</fontconfig>
"""


@pytest.mark.skipif(not render_mod._has_pygraphviz(), reason="needs the pygraphviz wheel")
def test_bundled_graphviz_writes_nothing_to_stderr_on_a_newer_fontconfig_setup(tmp_path):
    """A system configuration with an element the wheel's older libfontconfig does not know
    (``FONTCONFIG_PATH`` stands for /etc/fonts here) made it print a warning from C, which a
    notebook shows as a stderr box; drawing now writes nothing to stderr at all."""
    import os
    import subprocess

    (tmp_path / "fonts.conf").write_text(NEWER_FONTCONFIG)
    code = (
        "import relay_nb as relay\n"
        "svg = relay.viz.render(relay.parse_expr('fn (%x) { %1 = log(%x); add(%1, %1) }'), engine='pygraphviz')\n"
        "assert svg.lstrip().startswith('<?xml')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "FONTCONFIG_FILE"}
    env.update(FONTCONFIG_PATH=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_other_native_stderr_output_still_reaches_stderr(capfd):
    import os

    with render_mod._without_font_noise():
        os.write(2, b'Fontconfig warning: "x.conf", line 6: unknown element "reset-dirs"\n')
        os.write(2, b"Error: something Graphviz wants you to see\n")
    err = capfd.readouterr().err
    assert err == "Error: something Graphviz wants you to see\n"
