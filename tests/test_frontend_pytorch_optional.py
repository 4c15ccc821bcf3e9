"""Without PyTorch, relay_nb.frontend still imports and from_pytorch says how to install it."""

from __future__ import annotations

import sys

import pytest

import relay_nb as relay


def test_from_pytorch_without_torch_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails
    assert relay.frontend.module_path(relay.const(1.0)) is None
    with pytest.raises(relay.RelayError, match="pip install torch"):
        relay.frontend.from_pytorch(object(), ())
    with pytest.raises(relay.RelayError, match="pip install torch"):
        relay.frontend.from_exported_program(object())
