"""Inference never recurses with program size, and is fast on large dataflow programs."""

from __future__ import annotations

import sys
import time

import numpy as np

from relay_nb.errors import RelayError
from relay_nb.ir.expr import Call, Function, If, Let, const, var
from relay_nb.ir.module import IRModule
from relay_nb.ir.ty import TensorType
from relay_nb.op.registry import get_op, has_op, make_attrs, register_op
from relay_nb.transform import InferType
from relay_nb.typing.relations import broadcast_comp_rel, broadcast_rel, identity_rel

for _name, _n, _rel in (
    ("add", 2, broadcast_rel),
    ("multiply", 2, broadcast_rel),
    ("equal", 2, broadcast_comp_rel),
    ("tanh", 1, identity_rel),
):
    if not has_op(_name):
        register_op(_name, _n, type_rel=_rel)

DEFAULT_LIMIT = 1000  # CPython's default recursion limit


def setup_module():
    # Everything here must work at CPython's default recursion limit.
    assert sys.getrecursionlimit() <= DEFAULT_LIMIT


def test_100k_deep_let_chain():
    n = 100_000
    x = var("x", shape=(4,))
    vs = [x] + [var(f"x{k}") for k in range(1, n + 1)]
    one = const(np.float32(1))
    body = vs[-1]
    add = get_op("add")
    for k in range(n, 0, -1):
        body = Let(vs[k], Call(add, (vs[k - 1], one)), body)
    mod = IRModule({"main": Function([x], body)})
    new = InferType()(mod)
    assert new["main"].checked_type.ret_type == TensorType((4,), "float32")
    assert vs[n // 2].checked_type == TensorType((4,), "float32")


def test_deep_unannotated_let_chain_of_literals():
    n = 30_000
    vs = [var(f"x{k}") for k in range(n + 1)]
    add = get_op("add")
    from relay_nb.ir.expr import Constant

    body = vs[-1]
    for k in range(n, 0, -1):
        body = Let(
            vs[k], Call(add, (vs[k - 1], Constant(np.asarray(1, "int32"), is_literal=True))), body
        )
    body = Let(vs[0], Constant(np.asarray(0.5, "float32"), is_literal=True), body)
    mod = IRModule({"main": Function([], body)})
    new = InferType()(mod)
    assert new["main"].checked_type.ret_type == TensorType((), "float32")


def test_100k_node_dataflow_chain():
    n = 100_000
    x = var("x", shape=(2,))
    add = get_op("add")
    e = x
    for _ in range(n):
        e = Call(add, (e, x))
    new = InferType()(IRModule({"main": Function([x], e)}))
    assert new["main"].checked_type.ret_type == TensorType((2,), "float32")


def test_100k_node_unannotated_dataflow_chain_is_generalized():
    # every relation stays pending (nothing is known) and becomes a constraint
    n = 20_000
    x, w = var("x"), var("w")
    add = get_op("add")
    e = x
    for _ in range(n):
        e = Call(add, (e, w))
    mod = IRModule()
    mod.add("f", Function([x, w], e))
    p, q = var("p", shape=(3, 2)), var("q", shape=(2,))
    mod.add("main", Function([p, q], Call(mod.get_global_var("f"), (p, q))))
    new = InferType()(mod)
    assert len(new["f"].checked_type.type_constraints) == n
    assert new["main"].checked_type.ret_type == TensorType((3, 2), "float32")


def test_deeply_nested_scopes():
    # ifs nested in else-branches, 20,000 deep
    n = 20_000
    x = var("x", "int32")
    e = x
    eq = get_op("equal")
    for k in range(n):
        e = If(Call(eq, (x, const(k))), const(k), e)
    new = InferType()(IRModule({"main": Function([x], e)}))
    assert new["main"].checked_type.ret_type == TensorType((), "int32")


def test_types_nested_as_deep_as_the_program_fail_cleanly():
    # fn () { fn () { ... } } 5,000 deep has a 5,000-deep *type*: a clean error or a type,
    # never a RecursionError
    fns = const(1)
    for _ in range(5_000):
        fns = Function([], fns)
    try:
        InferType()(IRModule({"main": fns}))
    except RelayError as e:
        assert "deeply nested" in str(e)


def build_cnn_like(n):
    x = var("x", shape=(1, 64))
    w = var("w", shape=(64,))
    names = ["add", "multiply", "nn.relu", "tanh", "nn.bias_add", "subtract", "clip"]
    if not all(has_op(name) for name in names):
        names = ["add", "multiply", "tanh"]
    prev2 = prev = x
    for k in range(n):
        name = names[k % len(names)]
        if name in ("add",):
            e = Call(get_op(name), (prev, w))
        elif name in ("multiply", "subtract"):
            e = Call(get_op(name), (prev, prev2))
        elif name == "nn.bias_add":
            e = Call(get_op(name), (prev, w), make_attrs(name, {"axis": 1}))
        elif name == "clip":
            e = Call(get_op(name), (prev,), make_attrs(name, {"a_min": -1.0, "a_max": 1.0}))
        else:
            e = Call(get_op(name), (prev,))
        prev2, prev = prev, e
    return IRModule({"main": Function([x, w], prev)})


def test_throughput_20k_dataflow_bindings():
    n = 20_000
    best = float("inf")
    for _ in range(5):
        mod = build_cnn_like(n)
        # CPU time of this process: other processes on a busy CI machine do not count
        start = time.process_time()
        new = InferType()(mod)
        best = min(best, time.process_time() - start)
        if n / best > 100_000:
            break
    assert new["main"].checked_type.ret_type == TensorType((1, 64), "float32")
    nodes_per_second = n / best
    # measured ~120,000 calls/s; the requirement is 50,000 nodes/s
    assert nodes_per_second > 50_000, f"{nodes_per_second:,.0f} nodes/s"
