"""The Pygments lexer for Relay: registered by name, total on real text, right token classes."""

from __future__ import annotations

from pathlib import Path

import pytest

pygments = pytest.importorskip("pygments")  # a dependency of IPython, not of relay_nb itself
from pygments import lex  # noqa: E402
from pygments.lexers import get_lexer_by_name  # noqa: E402
from pygments.token import Error, Keyword, Name, Number, Operator  # noqa: E402

import relay_nb as relay  # noqa: E402
from relay_nb.syntax.pygments_lexer import RelayLexer  # noqa: E402

SEEDS = sorted((Path(__file__).parent / "seeds").glob("*.relay"))


def tokens(text: str) -> list:
    return [(t, v) for t, v in lex(text, RelayLexer()) if v.strip()]


def test_registered_as_relay():
    assert isinstance(get_lexer_by_name("relay"), RelayLexer)
    from relay_nb.notebook.kernel import RelayKernel

    assert RelayKernel.language_info["pygments_lexer"] == "relay"


@pytest.mark.parametrize("path", SEEDS, ids=lambda p: p.stem)
def test_seed_examples_lex_without_errors(path):
    text = path.read_text()
    toks = list(lex(text, RelayLexer()))
    assert "".join(v for _, v in toks) == text + ("" if text.endswith("\n") else "\n")
    assert not [v for t, v in toks if t in Error], path.name


def test_token_classes_of_a_printout():
    mod, params = relay.testing.mlp.get_workload(1)
    text = relay.transform.InferType()(
        relay.IRModule.from_expr(relay.build_module.bind_params_by_name(mod["main"], params))
    ).astext()  # a real printout: types in comments, meta constants, a #[metadata] section
    toks = tokens(text)
    assert not [v for t, v in toks if t in Error]
    kinds = dict((v, t) for t, v in toks)
    assert kinds["def"] in Keyword and kinds["@main"] in Name.Function
    assert kinds["%data"] in Name.Variable and kinds["nn.dense"] in Name.Builtin
    assert kinds["meta[relay.Constant][0]"] in Name.Constant
    assert kinds["units"] in Name.Attribute and kinds["float32"] in Keyword.Type
    assert any(v == "#[metadata]" for _, v in toks)


@pytest.mark.parametrize(
    "text, value, kind",
    [
        ("%joint_net.2.weight", "%joint_net.2.weight", Name.Variable),
        ("%0.1", "%0", Name.Label),
        ("%0.1", ".1", Number.Integer),
        ("-2.5e-3f16", "-2.5e-3f16", Number),
        ("match? (%x) { _ => 1 }", "match?", Keyword),
        ("Tensor[(?, 3), int8]", "?", Keyword.Type),
        ("Cons(1, Nil)", "Cons", Name.Class),
        ("fn (%a) -> int32 { %a }", "->", Operator),
    ],
)
def test_token_classes(text, value, kind):
    assert any(v == value and t in kind for t, v in tokens(text)), tokens(text)
