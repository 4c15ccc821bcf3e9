"""Rich display of IR objects (relay_nb.viz.html): highlighted text, types on hover.

Checked through the objects' own ``_repr_html_`` / ``_repr_mimebundle_`` and through
IPython's display formatter, as a notebook calls them.
"""

from __future__ import annotations

import html as html_lib
import re

import pytest
from strategies import big_let_chain
from test_printer_cases import CASES

import relay_nb as relay
from relay_nb.ir.expr import Function
from relay_nb.viz import build_graph
from relay_nb.viz import html as viz_html
from relay_nb.viz.highlight import tokens
from relay_nb.viz.html import MAX_LINES, to_html

SEED_DAG = """def @main(%x: Tensor[(2, 3), float32]) {
  %1 = log(%x);
  %2 = add(%1, %1);
  %2
}"""

KEYWORD = "color:var(--jp-mirror-editor-keyword-color"


def spans(html: str, style_part: str) -> list[str]:
    """Texts of the spans whose style contains ``style_part``."""
    return [
        html_lib.unescape(m.group(1))
        for m in re.finditer(r'<span style="[^"]*' + re.escape(style_part) + r'[^"]*"[^>]*>([^<]*)</span>', html)
    ]


def text_of(html: str) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", html))


def test_module_html_is_the_printed_text_highlighted():
    mod = relay.parse(SEED_DAG)
    html = mod._repr_html_()
    assert text_of(html).strip() == str(mod).strip()
    assert spans(html, "keyword-color") == ["def"]
    assert spans(html, "variable-2-color") == ["%x", "%0", "%x", "%0", "%0"]
    assert spans(html, "def-color") == ["@main"]
    assert spans(html, "builtin-color") == ["log", "add"]
    assert spans(html, "variable-3-color") == ["Tensor", "float32"]
    assert "<script" not in html.lower()


def test_types_on_hover():
    mod = relay.parse(SEED_DAG)
    html = to_html(mod)
    t = "Tensor[(2, 3), float32]"
    assert re.search(rf'title="{re.escape(html_lib.escape(t))}">log<', html)
    assert re.search(rf'title="{re.escape(html_lib.escape(t))}">%0<', html)
    # Shown, not stored: the module is as untyped as before.
    assert "ty=" not in str(mod) and mod["main"].body._checked_type is None
    inline = to_html(mod, show_types=True)
    assert "/* ty=Tensor[(2, 3), float32] */" in spans(inline, "comment-color")
    assert "title=" not in to_html(mod, show_types=False)


def test_call_attributes_on_hover():
    expr = relay.parse_expr(
        "fn (%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) "
        "{ nn.conv2d(%x, %w, padding=[1, 1, 1, 1]) }"
    )
    html = to_html(expr)
    title = re.search(r'title="([^"]*)">nn.conv2d<', html).group(1)
    assert html_lib.unescape(title) == "Tensor[(1, 4, 8, 8), float32]\npadding=[1, 1, 1, 1]"
    assert spans(html, "attribute-color") == ["padding"]
    assert not text_of(html).startswith("#[version")  # str(expr) has no header


def test_markup_in_the_program_is_escaped():
    x = relay.var("x", "float32")
    fn = Function((x,), x).with_attr("Composite", "<script>alert('x')</script> & <b>")
    html = fn._repr_html_()
    assert "<script" not in html.lower() and "<b>" not in html
    assert "&lt;script&gt;" in html and "&amp; &lt;b&gt;" in html
    assert text_of(html).strip() == str(fn).strip()


def test_every_case_round_trips_through_the_highlighter():
    for name, build in CASES.items():
        obj = build()
        for form in ("graph", "anf"):
            html = to_html(obj, form=form)
            expected = relay.astext(obj, form=form, show_types=False, show_meta_data=False)
            if not isinstance(obj, relay.IRModule):
                expected = expected.split("\n", 1)[1]
            assert text_of(html) == expected, (name, form)
            assert "<script" not in html.lower()


def test_tokens_concatenate_back_to_the_text():
    text = "// a comment\n" + relay.astext(CASES["all_node_kinds"]())
    toks = list(tokens(text))
    assert "".join(t.text for t in toks) == text
    kinds = {t.kind for t in toks}
    assert {"keyword", "local", "global", "op", "type", "number", "ctor", "comment", "meta"} <= kinds
    lines = text.split("\n")
    for t in toks:
        if t.kind in ("local", "op"):
            assert lines[t.line - 1][t.column - 1 :].startswith(t.text)


def test_line_ids_match_the_graph_views_text_lines():
    mod = relay.parse(SEED_DAG)
    html = to_html(mod, line_id_prefix="L")
    g = build_graph(mod)
    log = next(n for n in g.nodes.values() if n.label.startswith("log"))
    line_html = re.search(rf'<span id="L{log.text_line}">(.*?)</span>\n', html).group(1)
    assert "log" in text_of(line_html) and "%0 = log(%x);" in text_of(line_html)
    assert len(re.findall(r'<span id="L\d+">', html)) == len(g.text.split("\n"))


def test_expressions_types_and_modules_display_in_ipython():
    pytest.importorskip("IPython")
    from IPython.core.formatters import DisplayFormatter

    fmt = DisplayFormatter()
    mod = relay.parse(SEED_DAG)
    for obj in (mod, mod["main"], mod["main"].body, relay.TensorType((2, 3), "float32")):
        data, _ = fmt.format(obj)
        assert data["text/plain"] == str(obj)
        assert "<pre" in data["text/html"] and "<script" not in data["text/html"].lower()
    data, _ = fmt.format(relay.TensorType((2, 3), "float32"))
    assert spans(data["text/html"], "variable-3-color") == ["Tensor", "float32"]


def test_a_huge_program_is_cut_for_display():
    mod = big_let_chain(5000)
    bundle = mod._repr_mimebundle_()
    html, plain = bundle["text/html"], bundle["text/plain"]
    shown, rest = html.split("<details>")  # the rest is small: a collapsed "show all"
    assert text_of(shown).count("\n") <= MAX_LINES + 2 and "3005 more lines" in text_of(rest)
    assert "show all" in rest and text_of(rest).rstrip().endswith("}")
    assert plain.count("\n") == MAX_LINES and plain.endswith("more lines")
    assert bundle.keys() == {"text/plain", "text/html"}
    assert mod._repr_mimebundle_(include={"text/plain"}).keys() == {"text/plain"}


def test_a_deeply_indented_program_is_cut_by_characters_too():
    from relay_nb.ir.expr import If

    x, c = relay.var("x", "float32"), relay.var("c", "bool")
    body = relay.log(x)
    for _ in range(3000):
        body = If(c, relay.add(body, x), relay.exp(x))
    fn = Function((x, c), body)
    assert len(str(fn)) > 1_000_000  # (indentation stops at doc.MAX_INDENT levels)
    bundle = fn._repr_mimebundle_()
    assert len(bundle["text/plain"]) < 500_000 and bundle["text/plain"].endswith("more lines")
    html = bundle["text/html"]
    assert len(html) < 1_000_000 and "more lines" in html
    # too much left for the page: no <details>, a note on how to get the whole text
    assert "<details>" not in html and "print(mod)" in html


def test_long_text_views_of_the_magic_are_cut_too():
    from relay_nb.notebook.magic import text_bundle

    small = text_bundle("line\n" * 10).data
    assert "<details>" not in small["text/html"] and small["text/plain"] == "line\n" * 10
    data = text_bundle("x" * 100 + "\n" + ("y" * 1000 + "\n") * 3_000).data  # 3 MB
    assert len(data["text/plain"]) < 500_000 and data["text/plain"].endswith("more lines")
    assert len(data["text/html"]) < 500_000 and "print(mod)" in data["text/html"]
    mid = text_bundle("z\n" * 5_000).data  # cut at MAX_LINES, the rest in a <details>
    assert mid["text/html"].replace("font-size", "").count("z") == 5_000 and "show all" in mid["text/html"]


def test_a_failing_highlighter_falls_back_to_plain_text(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(viz_html, "to_html", boom)
    mod = relay.parse(SEED_DAG)
    html = mod._repr_html_()
    assert "highlighting failed: boom" in html and "%0 = log(%x);" in html_lib.unescape(html)


def test_exported_notebooks_keep_static_svg_and_html():
    nbformat = pytest.importorskip("nbformat")
    nbconvert = pytest.importorskip("nbconvert")
    from IPython.core.formatters import DisplayFormatter

    from relay_nb.viz.render import available_engine

    if available_engine() is None:
        pytest.skip("no Graphviz renderer")
    mod = relay.parse(SEED_DAG)
    fmt = DisplayFormatter()
    outputs = []
    for obj in (mod, relay.viz.compare(mod), build_graph(mod)):
        data, _ = fmt.format(obj)
        outputs.append(nbformat.v4.new_output("display_data", data=data))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("mod", outputs=outputs)])
    body, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    assert "relay-nb-text" in body and "relay-nb-compare" in body
    assert body.count('class="node"') == 4 + 4  # compare: DAG and ANF inline
    assert "data:image/svg+xml;base64," in body  # the Graph's own SVG, as an image
    assert "%0" in body and "log" in body
