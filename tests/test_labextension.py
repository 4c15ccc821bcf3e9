"""The JupyterLab extension that highlights Relay (labextension/): shipped prebuilt in the
wheel, built from the current source, highlighting the words the Pygments lexer does, and
named by the Relay kernel.  No browser here (tests/test_e2e_highlight.py drives one)."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from relay_nb.syntax import pygments_lexer

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "labextension"
NAME = "relay-nb-highlight"


def _js_list(source: str, name: str) -> tuple[str, ...]:
    """The strings of ``export const NAME = [...]`` in JavaScript source."""
    body = re.search(rf"export const {name} = \[(.*?)\];", source, re.S)
    assert body, name
    return tuple(re.findall(r"'([^']*)'", body.group(1)))


def test_the_wheel_ships_the_prebuilt_extension(tmp_path):
    # What `pip install relay_nb` gets: the wheel pip builds from this checkout.
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = tmp_path.glob("relay_nb-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    data = next(n.split("/data/")[0] for n in names if ".data/data/" in n) + "/data"
    target = f"{data}/share/jupyter/labextensions/{NAME}"
    with zipfile.ZipFile(wheel) as z:
        package = json.loads(z.read(f"{target}/package.json"))
        install = json.loads(z.read(f"{target}/install.json"))
    assert package["name"] == NAME
    assert f"{target}/{package['jupyterlab']['_build']['load']}" in names  # the remote entry
    assert install["packageManager"] == "python" and install["packageName"] == "relay_nb"
    # Only the bundle: no node_modules, no TypeScript, no source maps.
    shipped = [n for n in names if n.startswith(target)]
    assert not [n for n in shipped if "node_modules" in n or n.endswith((".ts", ".map"))]
    assert sum(zipfile.ZipFile(wheel).getinfo(n).file_size for n in shipped) < 200_000


def test_the_prebuilt_bundle_is_built_from_the_current_source():
    spec = importlib.util.spec_from_file_location("labextension_hash", ROOT / "scripts" / "labextension_hash.py")
    hashing = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hashing)
    recorded = (FOLDER / "prebuilt.sha256").read_text().strip()
    assert recorded == hashing.source_hash(FOLDER), (
        "labextension/src changed since labextension/prebuilt was built: run scripts/build_labextension.sh"
    )
    built = json.loads((FOLDER / "prebuilt" / "package.json").read_text())
    source = json.loads((FOLDER / "package.json").read_text())
    assert (built["name"], built["version"]) == (source["name"], source["version"]) == (NAME, source["version"])


def test_the_editor_highlights_the_words_the_pygments_lexer_does():
    source = (FOLDER / "src" / "tokens.js").read_text()
    assert _js_list(source, "KEYWORDS") == pygments_lexer.KEYWORDS
    assert _js_list(source, "CONSTANTS") == pygments_lexer.CONSTANTS
    assert _js_list(source, "DTYPES") == pygments_lexer.DTYPES


def test_the_relay_kernel_names_the_language_the_extension_registers():
    pytest.importorskip("ipykernel")
    from relay_nb.notebook.kernel import RelayKernel

    info = RelayKernel.language_info
    index = (FOLDER / "src" / "index.ts").read_text()
    registered = re.search(r"addLanguage\(\{(.*?)\}\)", index, re.S).group(1)
    assert f"name: '{info['codemirror_mode']}'" in registered
    assert f"mime: '{info['mimetype']}'" in registered
    assert f"'{info['file_extension'].lstrip('.')}'" in registered
    kernelspec = json.loads((ROOT / "kernels" / "relay" / "kernel.json").read_text())
    assert kernelspec["language"] == info["name"] == "relay"


# Runs labextension/src/tokens.js line by line as CodeMirror's StreamLanguage does, with a
# StringStream that behaves as CodeMirror's; prints [line, start, end, style] per token.
_DRIVER = """
import { relayParser } from './tokens.mjs';
import { readFileSync } from 'node:fs';

class StringStream {
  constructor(string) { this.string = string; this.pos = 0; }
  eol() { return this.pos >= this.string.length; }
  sol() { return this.pos === 0; }
  next() { if (this.pos < this.string.length) return this.string.charAt(this.pos++); }
  eatSpace() { const s = this.pos; while (/[\\s\\u00a0]/.test(this.string.charAt(this.pos))) ++this.pos; return this.pos > s; }
  skipToEnd() { this.pos = this.string.length; }
  match(pattern, consume) {
    if (typeof pattern === 'string') {
      if (this.string.substr(this.pos, pattern.length) !== pattern) return null;
      if (consume !== false) this.pos += pattern.length;
      return true;
    }
    const m = this.string.slice(this.pos).match(pattern);
    if (m && m.index > 0) return null;
    if (m && consume !== false) this.pos += m[0].length;
    return m;
  }
}

const out = [];
for (const text of JSON.parse(readFileSync(0, 'utf8'))) {
  const state = relayParser.startState();
  const tokens = [];
  text.split('\\n').forEach((line, n) => {
    if (line === '') { relayParser.blankLine(state); return; }
    const stream = new StringStream(line);
    while (!stream.eol()) {
      const start = stream.pos;
      const style = relayParser.token(stream, state);
      if (stream.pos === start) throw new Error(`no progress at ${n}:${start}`);
      tokens.push([n, start, stream.pos, style]);
    }
  });
  out.push(tokens);
}
console.log(JSON.stringify(out));
"""


def _pygments_style(ttype) -> str | None:
    """The CodeMirror style tokens.js gives what the Pygments lexer calls ``ttype``."""
    from pygments import token as T

    table = [
        (T.Comment.Preproc, "meta"), (T.Comment, "comment"), (T.Name.Constant, "atom"),
        (T.Name.Function, "variableName.function.definition"), (T.Name.Label, "labelName"),
        (T.Name.Variable, "variableName.special"), (T.Name.Attribute, "attributeName"),
        (T.Name.Class, "className"), (T.Name.Builtin, "variableName.standard"),
        (T.Name, "variableName"), (T.Keyword.Type, "typeName"), (T.Keyword.Constant, "atom"),
        (T.Keyword, "keyword"), (T.Number, "number"), (T.String, "string"),
        (T.Operator, "operator"), (T.Punctuation, "punctuation"),
    ]  # fmt: skip
    return next((style for kind, style in table if ttype in kind), None)


def _char_styles_pygments(text: str) -> dict[tuple[int, int], str | None]:
    from relay_nb.syntax.pygments_lexer import RelayLexer

    styles, line, col = {}, 0, 0
    for _, ttype, value in RelayLexer().get_tokens_unprocessed(text):
        style = _pygments_style(ttype)
        for ch in value:
            if ch == "\n":
                line, col = line + 1, 0
                continue
            if not ch.isspace():
                styles[(line, col)] = style
            col += 1
    return styles


def test_the_editor_tokenizer_classifies_as_the_pygments_lexer(tmp_path):
    """tokens.js, run in Node.js, against the Pygments lexer on every seed example and a
    real printout (up to its #[metadata] JSON): the same class for every character."""
    pytest.importorskip("pygments")
    node = shutil.which("node")
    if node is None:
        pytest.skip("no Node.js to run labextension/src/tokens.js")
    import relay_nb as relay

    mod, params = relay.testing.mlp.get_workload(1)
    printout = relay.transform.InferType()(
        relay.IRModule.from_expr(relay.build_module.bind_params_by_name(mod["main"], params))
    ).astext()
    texts = [p.read_text() for p in sorted((ROOT / "tests" / "seeds").glob("*.relay"))]
    texts = [t.split("#[metadata]")[0] for t in [*texts, printout]]
    shutil.copy(FOLDER / "src" / "tokens.js", tmp_path / "tokens.mjs")
    (tmp_path / "driver.mjs").write_text(_DRIVER)
    done = subprocess.run(
        [node, str(tmp_path / "driver.mjs")], input=json.dumps(texts), capture_output=True,
        text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    checked = 0
    for text, tokens in zip(texts, json.loads(done.stdout)):
        want = _char_styles_pygments(text)
        lines = text.split("\n")
        for line, start, end, style in tokens:
            for col in range(start, end):
                if not lines[line][col].isspace():
                    assert style == want[(line, col)], (lines[line], col, style, want[(line, col)])
                    checked += 1
    assert checked > 1000
