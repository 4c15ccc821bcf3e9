"""Helpers for the JIT tests: run a program through the interpreter (the oracle) and the
JIT, and compare the results exactly (integers, bools) or to a stated tolerance (floats)."""

from __future__ import annotations

import functools
from typing import Any, Union

import numpy as np

import relay_nb as relay
from relay_nb.backend.llvm.executor import JITExecutor

# The float tolerances the JIT promises against numpy: elementwise arithmetic is exact
# (IEEE, no contraction); float32 transcendentals are polynomials within a few ulp;
# reductions and contractions sum in another order.
RTOL = {"float32": 2e-6, "float64": 1e-12}
ATOL = {"float32": 1e-6, "float64": 1e-12}
REDUCE_RTOL = {"float32": 1e-4, "float64": 1e-10}


def module(program: Union[str, relay.IRModule]) -> relay.IRModule:
    return relay.parse(program) if isinstance(program, str) else program


def run_both(program, *args, scalars: str = "native", **options) -> tuple[Any, Any, JITExecutor]:
    """(interpreter result, JIT result, the JIT executor) of ``@main(*args)``."""
    mod = module(program)
    ref = relay.create_executor("interpreter", mod=mod).evaluate()(*args)
    ex = JITExecutor(mod, scalars=scalars, **options)
    out = ex.evaluate()(*args)
    return ref, out, ex


def assert_same(ref: Any, out: Any, rtol: float | None = None, atol: float | None = None) -> None:
    """Equal structure, shapes and dtypes; equal values (NaN equals NaN), floats to a tolerance."""
    if isinstance(ref, tuple):
        assert isinstance(out, tuple) and len(out) == len(ref), (ref, out)
        for r, o in zip(ref, out):
            assert_same(r, o, rtol, atol)
        return
    r, o = np.asarray(ref), np.asarray(out)
    assert o.shape == r.shape, (o.shape, r.shape)
    assert o.dtype == r.dtype, (o.dtype, r.dtype)
    if r.dtype.kind == "f":
        rt = RTOL.get(r.dtype.name, 1e-6) if rtol is None else rtol
        at = ATOL.get(r.dtype.name, 1e-6) if atol is None else atol
        np.testing.assert_allclose(o, r, rtol=rt, atol=at, equal_nan=True)
        # infinities and NaNs at the same places, with the same signs
        np.testing.assert_array_equal(np.isnan(o), np.isnan(r))
        np.testing.assert_array_equal(np.where(np.isinf(r), r, 0), np.where(np.isinf(r), o, 0))
    else:
        np.testing.assert_array_equal(o, r)


def assert_native(ex: JITExecutor) -> None:
    """Every kernel the executor used was compiled (none fell back to numpy)."""
    assert ex.kernels, "no kernel ran"
    bad = [(k.name, k.reason) for k in ex.kernels if not k.native]
    assert not bad, bad


def check(program, *args, rtol=None, atol=None, native: bool = True, **options) -> JITExecutor:
    """The JIT agrees with the interpreter on ``program(*args)`` (and compiled natively)."""
    ref, out, ex = run_both(program, *args, **options)
    assert_same(ref, out, rtol, atol)
    if native:
        assert_native(ex)
    COMPARED[0] += 1
    return ex


# How many ``check`` calls have passed in this process; ``compares`` reads it.
COMPARED = [0]


def compares(minimum: int):
    """Decorate a property test (above ``@given``) so that it fails unless at least
    ``minimum`` of its examples reached a passing ``check``: a property whose examples all
    bail out early (or are all filtered away) would otherwise pass without testing anything."""

    def wrap(test):
        @functools.wraps(test)
        def run(*args, **kwargs):
            before = COMPARED[0]
            test(*args, **kwargs)
            done = COMPARED[0] - before
            assert done >= minimum, f"only {done} examples were compared, expected >= {minimum}"

        return run

    return wrap


def shape_text(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def tensor(shape, dtype: str) -> str:
    """Relay text of a tensor type."""
    return f"Tensor[{shape_text(shape)}, {dtype}]"


def random_array(rng: np.random.Generator, shape, dtype: str, special: bool = False) -> np.ndarray:
    """Values exercising an op: normal floats (some large, with NaN/inf when ``special``),
    integers across the whole range including 0, -1 and the extremes."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt.kind == "f":
        a = rng.standard_normal(n) * rng.choice([1, 10, 100], n)
        if special and n:
            picks = rng.integers(0, n, size=max(1, n // 6))
            a[picks] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 88.0, -104.0], size=len(picks))
        return a.astype(dt).reshape(shape)
    if dt.kind == "b":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    info = np.iinfo(dt)
    lo = -9 if dt.kind == "i" else 0
    a = rng.integers(lo, 10, n, endpoint=True).astype(dt)
    if special and n:
        extremes = np.array([info.min, info.max, 0, -1 if dt.kind == "i" else 1], dtype=object).astype(dt)
        picks = rng.integers(0, n, size=max(1, n // 5))
        a[picks] = extremes[rng.integers(0, len(extremes), size=len(picks))]
    return a.reshape(shape)
