"""A RelayError raised in a plain notebook cell shows as its located message, no traceback."""

from __future__ import annotations

import pytest

IPython = pytest.importorskip("IPython")


def test_relay_error_renders_without_traceback(capsys):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    result = shell.run_cell("import relay_nb as relay\nrelay.parse('def @main() { add(1, }')")
    out = capsys.readouterr()
    text = out.out + out.err
    assert isinstance(result.error_in_exec, __import__("relay_nb").RelayError)
    assert "from_string:1:22" in text and "^" in text
    assert "Traceback" not in text and "parser.py" not in text
