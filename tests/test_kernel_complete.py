"""Completion and inspection for Relay text (what the Relay kernel's Tab / Shift-Tab show)."""

from __future__ import annotations

import pytest

import relay_nb as relay
from relay_nb.notebook.complete import KEYWORDS, complete, enclosing_call, inspect, op_doc
from relay_nb.op.registry import get_column, list_ops


def at_bar(text: str):
    """(code, cursor) from a text with ``|`` marking the cursor."""
    pos = text.index("|")
    return text[:pos] + text[pos + 1 :], pos


def matches(text: str, **kw) -> list[str]:
    code, pos = at_bar(text)
    return complete(code, pos, **kw).matches


# --- operator names ------------------------------------------------------------------------


def test_op_prefix_gives_exactly_the_registered_ops_with_that_prefix():
    got = matches("nn.con|")
    assert got == sorted(n for n in list_ops() if n.startswith("nn.con"))
    assert "nn.conv2d" in got and "nn.dense" not in got


def test_replaced_range_is_the_whole_dotted_name_around_the_cursor():
    code, pos = at_bar("%0 = nn.so|ftmax(%x)")
    c = complete(code, pos)
    assert code[c.start : c.end] == "nn.softmax"
    assert "nn.softmax" in c.matches


def test_keywords_follow_op_names_and_empty_prefix_lists_every_op():
    assert matches("ma|")[-1:] == ["match"] and "max" in matches("ma|")
    everything = matches("|")
    assert everything[: len(list_ops())] == list_ops()
    assert not set(KEYWORDS) & set(everything)  # no keywords for an empty prefix


def test_constructors_defined_so_far_are_offered():
    assert matches("Co|", constructors=["Cons", "Nil"]) == ["Cons"]


# --- attributes of the called op -------------------------------------------------------------


def test_attribute_names_of_the_enclosing_op_come_first_with_equals():
    got = matches("nn.conv2d(%x, %w, pa|")
    assert got[0] == "padding="
    schema = get_column("attrs_schema")["nn.conv2d"]
    all_attrs = matches("nn.conv2d(%x, %w, |")
    assert all_attrs[: len(schema.fields)] == [f.name + "=" for f in schema.fields]


def test_attributes_already_given_are_not_offered_again():
    got = matches("nn.conv2d(%x, %w, padding=[1, 1], strides=[2, 2], |)")
    assert "padding=" not in got and "strides=" not in got and "groups=" in got


def test_nested_call_uses_the_innermost_open_call():
    assert matches("nn.conv2d(nn.softmax(%x, a|")[0] == "axis="
    # After the inner call is closed, the outer op's attributes are offered again.
    assert matches("nn.conv2d(nn.softmax(%x), %w, dil|")[0] == "dilation="


def test_ops_without_attributes_offer_no_attribute_names():
    got = matches("add(%x, |")
    assert not any(m.endswith("=") for m in got)


def test_parentheses_in_comments_and_strings_do_not_count():
    assert enclosing_call('nn.softmax(%x, /* ( */ "(" // (\n  ax', 40) == "nn.softmax"


@pytest.mark.parametrize(
    "text, callee",
    [
        ("add(%x, |", "add"),
        ("add(%x, nn.relu(%y), |", "add"),
        ("(%x, |", None),  # a tuple, not a call
        ("fn (%x) { add(%x, %x) } |", None),
        ("@f(%x, |", "@f"),
    ],
)
def test_enclosing_call(text, callee):
    code, pos = at_bar(text)
    assert enclosing_call(code, pos) == callee


# --- globals, locals, header options ---------------------------------------------------------


def test_globals_complete_with_their_sigil():
    assert matches("@ma|", globals_=["main", "mul3", "map"]) == ["@main", "@map"]
    assert matches("%1 = @|(%x)", globals_=["f"]) == ["@f"]


def test_globals_defined_in_the_cell_itself():
    assert matches("def @helper(%x) { %x }\ndef @main() { @he|", globals_=["hello"]) == ["@hello", "@helper"]


def test_locals_come_from_the_cell_text():
    got = matches("fn (%xs, %xy, %z) { add(%x|", globals_=["xs"])
    assert got == ["%xs", "%xy"]


def test_header_option_names():
    assert matches("// pa|") == ["passes"]
    assert set(matches("// |")) >= {"passes", "run", "show", "exec", "name", "time", "python"}


def test_header_pass_names_complete_each_item_of_the_list():
    code, pos = at_bar("// passes: FoldConstant, Fu|\nadd(1, 2)")
    c = complete(code, pos)
    assert c.matches == ["FuseOps"]
    assert code[c.start : c.end] == "Fu"
    assert matches("// passes: |", passes=["B", "A"]) == ["A", "B"]


def test_header_show_and_exec_values():
    assert matches("// show: gr|") == ["graph"]
    assert matches("// exec: |") == ["interpreter", "jit"]


def test_comment_after_code_is_not_a_header():
    # Only the cell's leading comment lines are options; later ones complete as code.
    assert "passes" not in matches("add(1, 2)\n// pa|")


# --- inspection --------------------------------------------------------------------------------


def test_op_doc_shows_signature_doc_attributes_relation_and_pattern():
    text = op_doc("nn.softmax")
    assert text.splitlines()[0] == "nn.softmax(data, axis=-1)"
    assert get_column("doc")["nn.softmax"] in text
    assert "axis: int, default -1" in text
    assert "Type relation: Softmax" in text
    assert f"Fusion pattern: {get_column('TOpPattern')['nn.softmax'].name}" in text


def test_inspect_the_op_under_the_cursor_or_the_enclosing_call():
    code = "%0 = nn.conv2d(%x, %w, padding=[1, 1]);\nadd(%0, %0)"
    on_name = inspect(code, code.index("conv2d") + 2)
    in_args = inspect(code, code.index("padding"))
    assert on_name == in_args == op_doc("nn.conv2d")
    assert "Type relation: Broadcast" in inspect(code, code.index("\nadd") + 2)


def test_inspect_a_global_shows_the_given_type():
    code = "@twice(%f, %x)"
    assert inspect(code, 2, {"twice": "fn [A](fn (A) -> A, A) -> A"}) == "@twice: fn [A](fn (A) -> A, A) -> A\n"


def test_inspect_nothing_known_is_none():
    assert inspect("%x", 1) is None
    assert inspect("", 0) is None


def test_user_registered_op_is_completed_and_inspected():
    relay.op.register_op(
        "test_complete.square", 1, type_rel=get_column("type_rel")["negative"], arg_names=("x",),
        doc="The square of x.", override=True,
    )
    assert matches("test_complete.sq|") == ["test_complete.square"]
    assert "The square of x." in inspect("test_complete.square(%x)", 3)


def test_cursor_positions_out_of_range_are_clamped():
    assert complete("add", 99).matches[0] == "add"
    assert complete("add", -5).start == 0


# --- long names: one scan, not one per position ---------------------------------------------------

LONG = 100_000


@pytest.mark.parametrize(
    "code",
    [
        "a" * LONG + " nn.so",  # a long name, then more text: the old search retried from each position
        "nn.softmax(" + "a" * LONG + ", ax",  # ... and as the enclosing call's name
        "%" + "x" * LONG,
        "@" + "f" * LONG,
    ],
    ids=["name-then-text", "long-callee", "long-local", "long-global"],
)
def test_a_100000_char_name_completes_and_inspects_at_once(code):
    """A search for ``[@%]?[A-Za-z0-9_.]*$`` was quadratic here: seconds per keypress at
    40,000 chars, a hang at 100,000.  The bound is generous (it takes milliseconds)."""
    import time

    complete("x")  # the op registry loads outside the timed part
    start = time.perf_counter()
    complete(code)
    inspect(code, len(code))
    assert time.perf_counter() - start < 1.0


def test_long_names_keep_their_spans():
    code = "a" * LONG + " nn.so"
    c = complete(code)
    assert code[c.start : c.end] == "nn.so" and "nn.softmax" in c.matches
    local = "%" + "x" * LONG
    assert complete(local + " %").matches == [local]
    c = complete(local)
    assert (c.start, c.end) == (0, len(local))
    assert enclosing_call("c" * LONG + "(%x, ", LONG + 5) == "c" * LONG
    assert enclosing_call("nn.softmax (" + "c" * LONG + ", ax", LONG + 16) == "nn.softmax"
