"""One helper for pass tests (DESIGN.md §5): run a pass and check everything a pass owes.

``check_pass(pass_, before, expected=None, inputs=None, golden=None, case=None)``:

* parses ``before`` (text) or takes a module;
* runs ``pass_`` on it and checks the input module is left intact;
* (a) compares the result with ``expected`` text through ``structural_equal(...,
  map_free_vars=True)``, and/or writes the golden pair ``tests/golden/passes/<case>.out``
  (header line naming the pass, the text before and after);
* (b) evaluates ``@main`` before and after with the interpreter on ``inputs`` (or random
  inputs of the parameter types) and checks the results agree;
* (c) checks the result is well formed (each Var bound once, no free variables escape).

It returns the transformed module for further assertions.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

import relay_nb as relay
from relay_nb.eval.values import values_equal
from relay_nb.ir.ty import TensorType


def as_module(program: Union[str, relay.IRModule]) -> relay.IRModule:
    return relay.parse(program) if isinstance(program, str) else program


def random_inputs(mod: relay.IRModule, seed: int = 0) -> list[Any]:
    """Random arrays for @main's tensor parameters (ints small, floats in [-2, 2])."""
    rng = np.random.default_rng(seed)
    typed = relay.transform.InferType()(mod)
    out = []
    for p in typed["main"].params:
        ty = p.checked_type
        if not isinstance(ty, TensorType) or not isinstance(ty.shape, tuple):
            raise ValueError(f"cannot make a random input for %{p.name_hint}: {ty}")
        shape = tuple(d if isinstance(d, int) else 2 for d in ty.shape)
        if ty.dtype == "bool":
            out.append(rng.integers(0, 2, shape).astype("bool"))
        elif ty.dtype.startswith(("int", "uint")):
            out.append(rng.integers(-5 if ty.dtype.startswith("int") else 0, 6, shape).astype(ty.dtype))
        else:
            out.append(rng.uniform(-2, 2, shape).astype(ty.dtype))
    return out


def evaluate(mod: relay.IRModule, inputs: Sequence[Any]) -> Any:
    return relay.create_executor("interpreter", mod=mod).evaluate()(*inputs)


def results_agree(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """Equal values; float tensors within a tolerance (passes may reassociate)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype.kind == "f":
        return a.shape == b.shape and a.dtype == b.dtype and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(results_agree(x, y, rtol, atol) for x, y in zip(a, b))
    return values_equal(a, b)


def check_pass(
    pass_: Any,
    before: Union[str, relay.IRModule],
    expected: Union[str, relay.IRModule, None] = None,
    inputs: Optional[Sequence[Any]] = None,
    golden: Any = None,
    case: Optional[str] = None,
    evaluate_main: bool = True,
    well_formed: bool = True,
) -> relay.IRModule:
    mod = as_module(before)
    text_before = mod.astext()
    # Types that InferType records on shared nodes show up in printing, so compare the
    # program itself, without type comments.
    program_before = mod.astext(show_types=False)
    after = pass_(mod)
    assert mod.astext(show_types=False) == program_before, "the pass changed its input module"
    if expected is not None:
        relay.assert_structural_equal(after, as_module(expected), map_free_vars=True)
    if golden is not None:
        assert case, "golden checks need a case name"
        name = getattr(getattr(pass_, "info", None), "name", type(pass_).__name__)
        golden(f"passes/{case}.out", f"// pass: {name}\n// before:\n{text_before}\n// after:\n{after.astext()}\n")
    if well_formed:
        from relay_nb.analysis.well_formed import well_formed as is_well_formed

        for gv, func in after.functions.items():
            assert is_well_formed(func), f"@{gv.name_hint} is not well formed after {pass_}"
    if evaluate_main and "main" in mod:
        args = list(inputs) if inputs is not None else random_inputs(mod)
        want = evaluate(mod, args)
        got = evaluate(after, args)
        assert results_agree(want, got), f"{pass_} changed the result: {want!r} -> {got!r}"
    return after
