"""Relay highlighting in a real JupyterLab, driven by headless Chromium (issue 15 §4).

The server loads the checkout's prebuilt extension (labextension/prebuilt, put on
JUPYTER_PATH as it is installed: share/jupyter/labextensions/relay-nb-highlight).  A
Python notebook holds a ``%%relay`` cell and the same text as a plain Python cell; a
Relay-kernel notebook holds the text as a cell of the Relay kernel, whose language_info
names the ``relay`` language.  The test reads what CodeMirror drew: the computed colour of
each token against the theme's --jp-mirror-editor-* colours.  It then types a ``%%relay``
line into the plain cell (it becomes Relay) and deletes it (it is Python again).
The %%relay cell's picture goes to docs/relay_highlighting.png.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from e2e.browser import browser  # noqa: F401  (the fixture)
from e2e.lab import NOTEBOOK, open_notebook
from e2e.server import start_lab

ROOT = Path(__file__).resolve().parents[1]
PREBUILT = ROOT / "labextension" / "prebuilt"
OUT = ROOT / "build" / "e2e"
SCREENSHOT = ROOT / "docs" / "relay_highlighting.png"

RELAY = """\
// a convolution, then a closure applied to it
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {
  let %y = nn.conv2d(%x, %w, padding=[1, 1]); /* same size */
  let %f = fn (%a) { nn.relu(%a) };
  %f(%y)
}"""
MAGIC = "%%relay -n conv --passes FoldConstant"

# token -> the theme colour it is drawn in as Relay (the class CodeMirror's tag maps to).
RELAY_COLOURS = {
    "fn": "keyword",
    "let": "keyword",
    "def": "keyword",
    "%x": "variable-2",  # a %local
    "@main": "def",  # a @global
    "nn.conv2d": "builtin",  # an operator with its namespace, one token
    "Tensor": "variable-3",  # types and dtypes
    "float32": "variable-3",
    "padding": "attribute",  # name=value
    "// a convolution, then a closure applied to it": "comment",
    "/* same size */": "comment",
}
# Python draws these differently: fn/let are names, % and // are operators.
NOT_AS_PYTHON = ["fn", "let", "%x", "nn.conv2d", "Tensor", "// a convolution, then a closure applied to it"]

# For each token: the element that draws its first character, that element's text and
# computed style, and the theme colours resolved to rgb() by a probe element.
_STYLES_JS = """(cell, [tokens, themeNames]) => {
  const content = cell.querySelector('.cm-content');
  const nodes = [];
  const walker = document.createTreeWalker(content, NodeFilter.SHOW_TEXT);
  let text = '';
  for (let n = walker.nextNode(); n; n = walker.nextNode()) { nodes.push([text.length, n]); text += n.data; }
  const found = {};
  for (const token of tokens) {
    const at = text.indexOf(token);
    if (at < 0) { found[token] = null; continue; }
    let el = null;
    for (const [start, n] of nodes) { if (start <= at && at < start + n.data.length) { el = n.parentElement; } }
    const style = getComputedStyle(el);
    found[token] = {text: el.textContent, color: style.color, weight: style.fontWeight, italic: style.fontStyle === 'italic'};
  }
  const probe = document.createElement('span');
  content.appendChild(probe);
  const theme = {};
  for (const name of themeNames) {
    probe.style.color = `var(--jp-mirror-editor-${name}-color)`;
    theme[name] = getComputedStyle(probe).color;
  }
  probe.style.color = '';
  theme.plain = getComputedStyle(probe).color;
  probe.remove();
  return {found, theme};
}"""

THEME = sorted({*RELAY_COLOURS.values(), "meta", "operator"})


def _styles(cell, tokens):
    return cell.evaluate(_STYLES_JS, [tokens, THEME])


def _wait_relay(page, cell, timeout_ms=60_000):
    """Wait until CodeMirror draws the cell as Relay (``fn`` keyword-coloured)."""
    page.wait_for_function(
        f"([cell, themeNames]) => {{ const r = ({_STYLES_JS})(cell, [['fn'], themeNames]);"
        " return r.found.fn && r.found.fn.color === r.theme.keyword; }",
        arg=[cell.element_handle(), THEME],
        timeout=timeout_ms,
    )


def _wait_python(page, cell, timeout_ms=60_000):
    """Wait until CodeMirror draws the cell as Python: ``def`` keyword-coloured (a keyword
    in both languages, so the cell is highlighted) while ``fn`` is a plain name."""
    page.wait_for_function(
        f"([cell, themeNames]) => {{ const r = ({_STYLES_JS})(cell, [['def', 'fn'], themeNames]);"
        " return r.found.def && r.found.def.color === r.theme.keyword"
        " && r.found.fn && r.found.fn.color !== r.theme.keyword; }",
        arg=[cell.element_handle(), THEME],
        timeout=timeout_ms,
    )


def _assert_relay(styles):
    found, theme = styles["found"], styles["theme"]
    for token, colour in RELAY_COLOURS.items():
        got = found[token]
        assert got is not None, f"{token!r} not in the cell"
        assert got["text"] == token, f"{token!r} is not one token: drawn in {got['text']!r}"
        assert got["color"] == theme[colour], f"{token!r}: {got['color']}, not {colour} {theme[colour]}"
    assert int(found["fn"]["weight"]) >= 600  # keywords are bold, operators' names are not
    assert int(found["nn.conv2d"]["weight"]) < 600
    assert found["/* same size */"]["italic"]


def _notebooks(root: Path) -> None:
    python = nbformat.v4.new_notebook()
    python.cells = [
        nbformat.v4.new_code_cell(f"{MAGIC}\n{RELAY}"),
        nbformat.v4.new_code_cell(RELAY),
    ]
    python.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(python, root / "magic.ipynb")
    relay = nbformat.v4.new_notebook()
    relay.cells = [nbformat.v4.new_code_cell(RELAY)]
    # No language_info: the Relay kernel's own reply names the language.
    relay.metadata["kernelspec"] = {"name": "relay", "display_name": "Relay", "language": "relay"}
    nbformat.write(relay, root / "relay.ipynb")


def test_relay_is_highlighted_in_magic_cells_and_relay_kernel_cells(browser, tmp_path):  # noqa: F811
    OUT.mkdir(parents=True, exist_ok=True)
    root = tmp_path / "nb"
    root.mkdir()
    _notebooks(root)
    data = tmp_path / "jupyter"
    shutil.copytree(PREBUILT, data / "labextensions" / "relay-nb-highlight")
    shutil.copy(ROOT / "labextension" / "install.json", data / "labextensions" / "relay-nb-highlight")
    server = start_lab(root, tmp_path / "lab", env={"JUPYTER_PATH": str(data)})
    context = None
    try:
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        page.set_default_timeout(120_000)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

        open_notebook(page, server.url("/lab/tree/magic.ipynb"))
        cells = page.locator(f"{NOTEBOOK} .jp-CodeCell")
        magic, plain = cells.nth(0), cells.nth(1)
        _wait_relay(page, magic)
        styles = _styles(magic, [MAGIC, *RELAY_COLOURS])
        _assert_relay(styles)
        # The magic line stays one readable meta-coloured line.
        assert styles["found"][MAGIC]["text"] == MAGIC
        assert styles["found"][MAGIC]["color"] == styles["theme"]["meta"]

        # The same text in a plain Python cell is Python: no Relay colours.
        _wait_python(page, plain)
        styles = _styles(plain, NOT_AS_PYTHON)
        for token in NOT_AS_PYTHON:
            got, relay_colour = styles["found"][token], styles["theme"][RELAY_COLOURS[token]]
            assert got["color"] != relay_colour, f"{token!r} in a Python cell is drawn as Relay"

        # Typing a %%relay line makes the plain cell Relay; deleting it makes it Python again.
        plain.locator(".cm-content").click()
        page.keyboard.press("Control+Home")
        page.keyboard.type("%%relay\n")
        _wait_relay(page, plain)
        _assert_relay(_styles(plain, list(RELAY_COLOURS)))
        page.keyboard.press("Control+Home")
        page.keyboard.press("Shift+ArrowDown")
        page.keyboard.press("Delete")
        assert plain.locator(".cm-line").first.inner_text().startswith("//")
        _wait_python(page, plain)
        # The picture for the README, with the %%relay cell not the active one (no toolbar).
        magic.locator(".jp-InputArea").screenshot(path=str(SCREENSHOT))

        # A Relay-kernel notebook: its cells are Relay because the kernel says so.  A
        # workspace of its own, so the notebook above is not restored next to it.
        open_notebook(page, server.url("/lab/workspaces/relay/tree/relay.ipynb"))
        assert page.locator(".jp-NotebookPanel").count() == 1
        assert "Relay |" in page.locator("#jp-main-statusbar").inner_text()  # the Relay kernel
        cell = page.locator(f"{NOTEBOOK} .jp-CodeCell").first
        assert cell.locator(".cm-line").first.inner_text() == RELAY.splitlines()[0]
        _wait_relay(page, cell)
        _assert_relay(_styles(cell, list(RELAY_COLOURS)))
        cell.screenshot(path=str(OUT / "relay_kernel_cell.png"))
        assert not [e for e in errors if "relay-nb-highlight" in e], errors
    except BaseException:
        if context is not None and context.pages:
            context.pages[0].screenshot(path=str(OUT / "highlight_failure.png"))
        print(f"jupyter lab log:\n{server.log_tail(60)}")
        raise
    finally:
        if context is not None:
            context.close()
        server.stop()
