"""Helpers for the per-family operator tests (sorting, scan, indexing, signal, misc):
evaluate a builder through the public API, check text round trips and located type errors."""

from __future__ import annotations

import numpy as np
import pytest

import relay_nb as relay


def evaluate(build, *arrays, executor="interpreter"):
    """``build(*vars)`` evaluated on ``arrays`` (one typed parameter per array)."""
    arrays = [np.asarray(a) for a in arrays]
    params = [relay.var(f"p{i}", shape=a.shape, dtype=str(a.dtype)) for i, a in enumerate(arrays)]
    body = build(*params)
    if isinstance(body, relay.TupleWrapper):
        body = body.astuple()
    mod = relay.IRModule.from_expr(relay.Function(params, body))
    return relay.create_executor(executor, mod=mod).evaluate()(*arrays)


def result_type(build, *types):
    """The inferred result type of ``build(*vars)`` for ``(shape, dtype)`` parameters."""
    params = [relay.var(f"p{i}", relay.TensorType(tuple(s), d)) for i, (s, d) in enumerate(types)]
    body = build(*params)
    if isinstance(body, relay.TupleWrapper):
        body = body.astuple()
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, body)))
    return mod["main"].checked_type.ret_type


def check_roundtrip(text: str) -> str:
    """Parse, type-check and print ``text``; the printout parses to an equal program that
    prints identically.  Returns the printout."""
    mod = relay.transform.InferType()(relay.parse(text))
    printed = mod.astext()
    again = relay.transform.InferType()(relay.parse(printed))
    relay.assert_structural_equal(mod, again, map_free_vars=True)
    assert again.astext() == printed
    return printed


def check_type_error(text: str, match: str) -> relay.RelayError:
    """``text`` fails type checking with a located message containing ``match``."""
    with pytest.raises(relay.RelayError) as info:
        relay.transform.InferType()(relay.parse(text))
    msg = str(info.value)
    assert match in msg, msg
    assert "^" in msg and ":" in msg.splitlines()[0], msg  # line:column and a caret
    return info.value


@pytest.fixture(autouse=True)
def no_warnings():
    """Import this fixture into a test module to make every warning an error there (the
    implementations must neither warn nor spam a notebook)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def run_impl(name, *args, **attrs):
    """Op ``name``'s numpy implementation on ``args`` with ``attrs`` (defaults filled in)."""
    from relay_nb.op.registry import get_column, make_attrs

    return get_column("impl")[name]([np.asarray(a) for a in args], make_attrs(name, attrs), None)
