"""The README's library example says what its printout shows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_binding_the_comment_names_is_the_one_printed():
    text = README.read_text(encoding="utf-8")
    block = text.split("## As a library", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    upto = block[: block.index("print(mod)")] + "print(mod)\n"
    comment = re.search(r"print\(mod\)\s+# .*the shared (%\d+) is bound once", block)
    assert comment, "the README's print(mod) comment no longer names the shared binding"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(upto, "README.md", "exec"), {})
    name = comment.group(1)
    assert f"{name} = log(%x)" in printed.getvalue() and f"add({name}, {name})" in printed.getvalue()
