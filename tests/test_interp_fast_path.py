"""The interpreter's fast paths keep the reference semantics.

* every entry of the scalar table (relay_nb/eval/scalar_ops.py) equals the registry's numpy
  impl column on edge values (wrap-around, division by zero, INT_MIN / -1, NaN, negative
  exponents and shifts) for bool, int8..int64, uint8..uint64, float16..float64;
* the compiled and the interpreted tier agree with each other and with hand-computed
  values through the public API, including at the API boundary (0-d arrays out), deep
  recursion spilling from direct Python calls to the trampoline, max_depth, tail calls,
  sharing, refs, closures, matches and the ``primitive=`` hook.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from interrupts import ctrl_c_soon

import relay_nb as relay
from relay_nb.eval.interpreter import Interpreter
from relay_nb.eval.scalar_ops import _COMPARE, _SAME_DTYPE, scalar_op
from relay_nb.ir.ty import TensorType
from relay_nb.op.registry import get_column

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"]


def edge_values(dtype: str) -> list:
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return [False, True]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = {0, 1, 2, 3, 7, info.max, info.max - 1, info.min, info.min + 1, 31, 63, 64}
        if dt.kind == "i":
            vals |= {-1, -2, -3, -7, -64}
        return sorted(v for v in vals if info.min <= v <= info.max)
    info = np.finfo(dt)
    return [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, 7.0, -7.0, float(info.max), float(info.tiny), np.inf, -np.inf, np.nan, 1e-3, 3.0]


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        return bool(np.array_equal(a, b, equal_nan=True) and np.signbit(a) == np.signbit(b))
    return bool(np.array_equal(a, b))


def table_cases():
    for name in list(_SAME_DTYPE) + list(_COMPARE):
        for dtype in DTYPES:
            arity = 1 if name in ("negative", "abs", "logical_not", "bitwise_not", "copy") else 2
            out = "bool" if name in _COMPARE else dtype
            fast = scalar_op(name, (dtype,) * arity, out)
            if fast is not None:
                yield pytest.param(name, dtype, arity, out, id=f"{name}-{dtype}")


@pytest.mark.parametrize("name, dtype, arity, out", list(table_cases()))
def test_scalar_table_equals_the_impl_column_on_edge_values(name, dtype, arity, out):
    fast = scalar_op(name, (dtype,) * arity, out)
    impl = get_column("impl")[name]
    out_type = TensorType((), out)
    scalar_type = np.dtype(dtype).type
    checked = 0
    with np.errstate(all="ignore"):
        for args in itertools.product(edge_values(dtype), repeat=arity):
            arrays = [np.asarray(a, dtype=dtype) for a in args]
            expected = impl(arrays, None, out_type)
            got = fast.fn(*[scalar_type(a) for a in arrays])
            assert same(got, expected), f"{name}{tuple(args)} on {dtype}: fast {got!r}, impl {expected!r}"
            # 0-d arrays (from the user, or from an impl) take the same path.
            got_0d = fast.fn(*arrays)
            assert same(got_0d, expected), f"{name}{tuple(args)} on 0-d {dtype}: {got_0d!r} vs {expected!r}"
            checked += 1
    assert checked >= 2


def test_the_table_covers_the_ops_the_benchmarks_use():
    for name in ("add", "subtract", "multiply", "equal", "less", "divide", "floor_mod"):
        assert scalar_op(name, ("int32", "int32"), "bool" if name in _COMPARE else "int32") is not None
    assert scalar_op("add", ("int32", "int64"), "int64") is None  # mixed dtypes: the impl
    assert scalar_op("subtract", ("bool", "bool"), "bool") is None  # numpy refuses: the impl raises
    assert scalar_op("add", ("float32",), "float32") is None


@pytest.mark.parametrize("src, dst", [("float32", "int8"), ("float64", "uint8"), ("int32", "int8"), ("int64", "bool"), ("float32", "float16")])
def test_scalar_cast_equals_the_impl(src, dst):
    fast = scalar_op("cast", (src,), dst, {"dtype": dst})
    impl = get_column("impl")["cast"]
    attrs = relay.op.registry.make_attrs("cast", {"dtype": dst})
    with np.errstate(all="ignore"):
        for v in edge_values(src):
            a = np.asarray(v, dtype=src)
            assert same(fast.fn(a[()]), impl([a], attrs, TensorType((), dst))), (v, src, dst)


# --- the compiled tier against the node-by-node tier and hand-computed values ------------------


def typed(text: str) -> relay.IRModule:
    return relay.transform.InferType()(relay.parse(text))


def run_tier(mod: relay.IRModule, compiled: bool, *args, entry: str = "main", **options):
    """``entry`` evaluated by an Interpreter that compiles functions (or does not)."""
    interp = Interpreter(mod, compile=compiled, **options)
    return interp.call(interp.global_closure(entry), tuple(args)), interp


def both(mod: relay.IRModule, *args, entry: str = "main", **options):
    """The value from both tiers, after checking they agree and the compiled tier compiled."""
    fast, interp = run_tier(mod, True, *args, entry=entry, **options)
    slow, _ = run_tier(mod, False, *args, entry=entry, **options)
    assert values_agree(fast, slow), (fast, slow)
    assert all(u.tier != "interpreted" for u in interp._units.values())
    return fast


def values_agree(a, b) -> bool:
    """Equal values: same dtypes and shapes, NaNs equal, references compared by content."""
    from relay_nb.eval.values import Closure, ConstructorValue, RefValue

    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and same(x, y)):
                return False
        elif isinstance(x, tuple):
            if not isinstance(y, tuple) or len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif isinstance(x, ConstructorValue):
            if not isinstance(y, ConstructorValue) or x.constructor.name_hint != y.constructor.name_hint:
                return False
            stack.append((x.fields, y.fields))
        elif isinstance(x, RefValue):
            if not isinstance(y, RefValue):
                return False
            stack.append((x.value, y.value))
        elif isinstance(x, Closure):
            if not isinstance(y, Closure) or x.func is not y.func:
                return False
        elif x != y:
            return False
    return True


def is_api_value(v) -> bool:
    """No numpy scalar leaks out: tensors are ndarrays, inside tuples, ADTs and refs too."""
    from relay_nb.eval.values import ConstructorValue, RefValue

    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, np.generic):
            return False
        if isinstance(x, tuple):
            stack.extend(x)
        elif isinstance(x, ConstructorValue):
            stack.extend(x.fields)
        elif isinstance(x, RefValue):
            stack.append(x.value)
    return True


RECURSION = """
type List[A] { Cons(A, List[A]), Nil, }
def @fact(%n: int64) -> int64 { if (%n == 0i64) { 1i64 } else { %n * @fact(%n - 1i64) } }
def @ackermann(%m: int32, %n: int32) -> int32 {
  if (%m == 0) { %n + 1 } else { if (%n == 0) { @ackermann(%m - 1, 1) }
  else { @ackermann(%m - 1, @ackermann(%m, %n - 1)) } }
}
def @range(%i: int32, %n: int32) -> List[int32] { if (%i == %n) { Nil } else { Cons(%i, @range(%i + 1, %n)) } }
def @map_double(%l: List[int32]) -> List[int32] {
  match (%l) { Cons(%h, %t) => Cons(%h * 2, @map_double(%t)), Nil => Nil }
}
def @sum(%l: List[int32], %acc: int32) -> int32 { match (%l) { Cons(%h, %t) => @sum(%t, %acc + %h), Nil => %acc } }
def @list_job(%n: int32) -> int32 { @sum(@map_double(@range(0, %n)), 0) }
def @sum_to(%n: int64) -> int64 { if (%n == 0i64) { 0i64 } else { %n + @sum_to(%n - 1i64) } }
def @even(%n: int32) -> bool { if (%n == 0) { True } else { @odd(%n - 1) } }
def @odd(%n: int32) -> bool { if (%n == 0) { False } else { @even(%n - 1) } }
"""


def py_ack(m: int, n: int) -> int:
    while m:
        n = 1 if n == 0 else py_ack(m, n - 1)
        m -= 1
    return n + 1


def test_benchmark_programs_compile_and_give_the_python_answers():
    mod = typed(RECURSION)
    fact = both(mod, 20, entry="fact")
    assert isinstance(fact, np.ndarray) and fact.shape == () and fact.dtype == np.int64
    assert int(fact) == 2432902008176640000
    assert int(both(mod, 21, entry="fact")) == (51090942171709440000 + 2**63) % 2**64 - 2**63  # wraps
    assert int(both(mod, 2, 3, entry="ackermann")) == py_ack(2, 3) == 9
    assert int(both(mod, 3000, entry="list_job")) == sum(2 * i for i in range(3000))


def test_deep_non_tail_recursion_spills_to_the_trampoline():
    mod = typed(RECURSION)
    # 20,000 nested calls: the first ones are Python calls, the rest generators.
    assert int(both(mod, 20_000, entry="sum_to")) == 20_000 * 20_001 // 2
    out = both(mod, 0, 5_000, entry="range")
    assert is_api_value(out) and out.fields[0].dtype == np.int32
    assert repr(both(mod, 0, 3, entry="range")) == "Cons(0, Cons(1, Cons(2, Nil)))"


def test_mutual_tail_recursion_runs_in_constant_space():
    mod = typed(RECURSION)
    assert bool(both(mod, 100_001, entry="odd")) is True
    assert bool(both(mod, 100_001, entry="even")) is False


def test_let_bound_tail_recursion_loops_and_sees_its_closure():
    text = """
    def @main(%n: int32, %step: int32) {
      let %loop = fn (%i: int32, %acc: int32) -> int32 {
        if (%i == 0) { %acc } else { %loop(%i - 1, %acc + %step) }
      };
      %loop(%n, 0)
    }
    """
    assert int(both(typed(text), 100_000, 3)) == 300_000


@pytest.mark.parametrize("compiled", [True, False])
def test_max_depth_names_the_function_and_the_call_line_in_both_tiers(compiled):
    text = "def @main(%n: int64) -> int64 {\n  %n + @down(%n)\n}\ndef @down(%n: int64) -> int64 {\n  if (%n == 0i64) { 0i64 } else { 1i64 + @down(%n - 1i64) }\n}\n"
    mod = typed(text)
    for max_depth in (10, 100, 1000):
        with pytest.raises(relay.EvalError) as info:
            run_tier(mod, compiled, 5000, max_depth=max_depth)
        assert f"recursion deeper than {max_depth} calls in @down" in str(info.value)
        assert info.value.line == 5
        # Just inside the bound: fine.
        out, _ = run_tier(mod, compiled, max_depth - 3, max_depth=max_depth)
        assert int(out) == 2 * (max_depth - 3)


def test_a_node_first_computed_in_a_branch_is_not_recomputed_after_it():
    # %r is shared: evaluated inside the `if` when %c is true (one cell, written to 1),
    # and only at ref_read when %c is false (a fresh cell holding 0).
    c = relay.var("c", "bool")
    r = relay.RefCreate(relay.const(0))
    body = relay.Let(relay.var("u"), relay.If(c, relay.RefWrite(r, relay.const(1)), relay.Tuple(())), relay.RefRead(r))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([c], body)))
    assert int(both(mod, True)) == 1
    assert int(both(mod, False)) == 0


def test_evaluation_order_callee_then_arguments_left_to_right():
    text = """
    def @main() {
      let %r = ref(0);
      let %f = fn (%a: (), %b: ()) { (%a, %b) };
      %f(ref_write(%r, add(ref_read(%r), 1)), ref_write(%r, multiply(ref_read(%r), 10)));
      ref_read(%r)
    }
    """
    assert int(both(typed(text))) == 10  # (0 + 1) * 10, not 0 * 10 + 1


def test_results_are_0d_arrays_inside_tuples_adts_and_refs():
    text = RECURSION + """
    def @main(%x: float32) { (%x * 2f, Cons(%x, Nil), ref(%x + 1f), 7) }
    """
    out = both(typed(text), 1.5)
    assert is_api_value(out)
    assert out[0].dtype == np.float32 and float(out[0]) == 3.0
    assert out[2].value.shape == () and float(out[2].value) == 2.5 and out[3].dtype == np.int32


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "float16", "bool"])
def test_scalar_programs_equal_the_impl_column(dtype):
    """Every binary op of the table in one compiled program, on edge values."""
    ops = ["add", "multiply", "maximum", "minimum", "equal", "less"]
    if dtype != "bool":
        ops += ["subtract", "divide", "floor_divide", "floor_mod", "mod", "trunc_mod"]
    if dtype.startswith(("int", "uint")) or dtype == "bool":
        ops += ["bitwise_and", "bitwise_xor"]
    if dtype.startswith(("int", "uint")):
        ops += ["left_shift", "right_shift"]
    if dtype == "bool":
        ops += ["logical_and", "logical_or"]
    body = ", ".join(f"{op}(%a, %b)" for op in ops)
    mod = typed(f"def @main(%a: {dtype}, %b: {dtype}) {{ ({body}) }}")
    impl = get_column("impl")
    values = edge_values(dtype)
    for a, b in itertools.product(values[::2] + values[-1:], repeat=2):
        arrays = [np.asarray(a, dtype=dtype), np.asarray(b, dtype=dtype)]
        got = both(mod, *arrays)
        with np.errstate(all="ignore"):
            for op, value in zip(ops, got):
                out = "bool" if op in _COMPARE else dtype
                want = impl[op](arrays, None, TensorType((), out))
                assert same(value, want), f"{op}({a}, {b}) on {dtype}: {value!r} != {want!r}"


def test_no_numpy_warning_escapes_and_the_state_is_restored():
    import warnings

    mod = typed("def @main(%a: int32, %b: float32) { (%a * %a, divide(%b, 0f), divide(%a, 0)) }")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = both(mod, 2**30, 1.0)
    assert int(out[0]) == 0 and np.isinf(out[1]) and int(out[2]) == 0
    assert np.geterr()["over"] == "warn"  # the caller's numpy error state is untouched


def test_large_or_deeply_nested_functions_fall_back_to_the_node_machine():
    from relay_nb.eval import codegen

    n = codegen.MAX_LINES + 10
    lines = ["def @main(%x0: int32) {"] + [f"  let %x{k} = add(%x{k - 1}, 1);" for k in range(1, n + 1)] + [f"  %x{n}", "}"]
    mod = typed("\n".join(lines))
    out, interp = run_tier(mod, True, 5)
    assert int(out) == n + 5 and interp.global_unit("main").tier == "interpreted"
    depth = codegen.MAX_NESTING + 5
    text = "def @main(%x: int32) {\n" + "".join(f"if (%x == {i}) {{ {i * 10} }} else {{\n" for i in range(depth)) + "  -1\n" + "}" * depth + "\n}"
    mod = typed(text)
    for x in (0, 3, depth - 1, 1000):
        out, interp = run_tier(mod, True, x)
        assert int(out) == (x * 10 if x < depth else -1)
    assert interp.global_unit("main").tier == "interpreted"


def test_keyboard_interrupt_during_trampolined_recursion_leaves_the_interpreter_usable():
    text = "def @deep(%n: int64) -> int64 { if (%n == 0i64) { 0i64 } else { 1i64 + @deep(%n - 1i64) } }\n"
    text += "def @spin(%i: int64) -> int64 { add(@deep(100000i64), @spin(%i)) }\n"
    mod = typed(text)
    interp = Interpreter(mod)
    with pytest.raises((KeyboardInterrupt, relay.EvalError)), ctrl_c_soon():
        interp.call(interp.global_closure("spin"), (0,))
    assert int(interp.call(interp.global_closure("deep"), (1234,))) == 1234


def test_errors_from_compiled_code_name_the_line():
    text = """
    type List[A] { Cons(A, List[A]), Nil, }
    def @hd(%l: List[int32]) -> int32 {
      match? (%l) {
        Cons(%h, _) => %h,
      }
    }
    def @main() { @hd(Nil) }
    """
    for compiled in (True, False):
        with pytest.raises(relay.EvalError, match="no clause of match\\? matches Nil") as info:
            run_tier(typed(text), compiled)
        assert info.value.line == 4


def test_the_primitive_hook_is_asked_once_per_function_with_arrays():
    text = """
    def @main(%x: Tensor[(3), float32], %n: int32) {
      %0 = fn (%a: Tensor[(3), float32], %s: int32, Primitive=1) { multiply(%a, cast(%s, dtype="float32")) };
      %1 = %0(%x, %n);
      %2 = fn (%b: Tensor[(3), float32], Primitive=1) { add(%b, 1f) };
      %2(%1)
    }
    """
    mod = typed(text)
    asked, calls = [], []

    def hook(func):
        asked.append(func)
        if len(func.params) == 1:
            return None  # interpret this one

        def kernel(args):
            calls.append(args)
            return args[0] * np.float32(args[1])

        return kernel

    interp = Interpreter(mod, primitive=hook)
    main = interp.global_closure("main")
    x = np.array([1, 2, 3], "float32")
    for n in (2, 3):
        out = interp.call(main, (x, n))
        np.testing.assert_array_equal(out, x * n + 1)
    assert len(asked) == 2 and len(calls) == 2
    assert all(isinstance(a, np.ndarray) for args in calls for a in args)
    assert calls[0][1].shape == () and calls[0][1].dtype == np.int32


def test_closure_capture_and_shadowing_through_compiled_code():
    text = """
    def @main(%x: int32) {
      let %k = fn (%y: int32) { fn (%z: int32) { %x + %y + %z } };
      let %f = %k(10);
      let %x = 1000;
      (%f(100), %k(20)(200), %x)
    }
    """
    out = both(typed(text), 1)
    assert [int(v) for v in out] == [111, 221, 1000]


def test_compiled_and_node_tiers_agree_on_random_modules():
    """Sharing across scopes, closures, lets, ifs, refs, helper globals and a loop."""
    from hypothesis import given
    from pass_testing import random_inputs
    from strategies import FAST, modules

    @FAST
    @given(modules(max_nodes=40))
    def check(mod):
        mod = relay.transform.InferType()(mod)
        for seed in (0, 1):
            args = random_inputs(mod, seed)
            fast, interp = run_tier(mod, True, *args)
            slow, _ = run_tier(mod, False, *args)
            assert values_agree(fast, slow), (fast, slow, mod.astext())
            assert is_api_value(fast)
            assert all(u.tier == "compiled" for u in interp._units.values() if u.tier != "new")

    check()


# --- regressions found by benchmarks/bench_passes.py (superlinear analyses and passes) ---------


def nested_let_functions(levels: int, recursive_at: int = -1) -> relay.Function:
    """``let %f0 = fn (%y) { add(%y, <level below>) }; %f0(%x)``; level ``recursive_at``
    calls itself (a let-bound recursion deep inside)."""
    from relay_nb.ir.expr import Call, Let, Var
    from relay_nb.op.registry import get_op

    x = relay.var("x", "float32")
    body = x
    for i in range(levels):
        f, y = Var(f"f{i}"), relay.var("y", "float32")
        inner = Call(get_op("add"), (y, body))
        if i == recursive_at:
            inner = relay.If(relay.const(False), Call(f, (y,)), inner)
        body = Let(f, relay.Function((y,), inner), Call(f, (x,)))
    return relay.Function((x,), body)


def test_detect_feature_is_linear_on_nested_let_bound_functions():
    import time

    from relay_nb.analysis import Feature, detect_feature

    assert Feature.fLetRec in detect_feature(nested_let_functions(50, recursive_at=3))
    assert Feature.fLetRec not in detect_feature(nested_let_functions(50))
    # It walked each function's whole body per enclosing let: 4 s for 1,000 levels then.
    start = time.thread_time()
    found = detect_feature(nested_let_functions(20_000, recursive_at=10_000))
    assert Feature.fLetRec in found and time.thread_time() - start < 10


def naive_post_dominators(g):
    """The textbook climb, one tree level per step: the oracle for the jump pointers."""
    from relay_nb.transform.fuse_ops import ELEMWISE, OPAQUE

    n = len(g.nodes)
    parent, depth, pattern = [-1] * n, [0] * n, [OPAQUE] * n
    for i in range(n - 1, -1, -1):
        if g.extern[i] or not g.outputs[i]:
            depth[i] = 1
            continue
        pat, lca = ELEMWISE, -2
        for o, edge in g.outputs[i]:
            if lca == -2:
                lca = o
            else:
                a, b = lca, o
                while a != b and a >= 0 and b >= 0:
                    if depth[a] < depth[b]:
                        pat, b = max(pat, pattern[b]), parent[b]
                    elif depth[b] < depth[a]:
                        pat, a = max(pat, pattern[a]), parent[a]
                    else:
                        pat, a, b = max(pat, pattern[a], pattern[b]), parent[a], parent[b]
                lca = a if a == b else -1
            pat = max(pat, edge)
        parent[i], pattern[i] = lca, pat
        depth[i] = depth[lca] + 1 if lca >= 0 else 1
    return parent, pattern


def test_fuse_ops_post_dominators_equal_the_naive_climb():
    from hypothesis import given
    from strategies import FAST, big_dag, big_mixed, modules

    from relay_nb.transform.fuse_ops import Graph, post_dominators

    @FAST
    @given(modules(max_nodes=60))
    def check(mod):
        for func in relay.transform.InferType()(mod).functions.values():
            g = Graph(func)
            assert post_dominators(g) == naive_post_dominators(g)

    check()
    for mod in (big_dag(3000), big_mixed(3000), shared_constant_chain(300)):
        g = Graph(relay.transform.InferType()(mod)["main"])
        assert post_dominators(g) == naive_post_dominators(g)


def shared_constant_chain(blocks: int) -> relay.IRModule:
    """``%x`` through ``blocks`` blocks that all add the same scalar Constant object: the
    shape FoldConstant leaves behind, whose post-dominator search was quadratic."""
    three = relay.const(3.0)
    x = relay.var("x", shape=(1, 4))
    y = x
    for _ in range(blocks):
        y = relay.nn.relu(relay.add(relay.multiply(y, relay.const(0.5)), three))
    return relay.IRModule.from_expr(relay.Function([x], y))


def test_fuse_ops_is_fast_with_a_constant_shared_by_every_block():
    import time

    from relay_nb.transform.fuse_ops import Graph, post_dominators

    g = Graph(relay.transform.InferType()(shared_constant_chain(30_000))["main"])
    start = time.thread_time()
    post_dominators(g)
    assert time.thread_time() - start < 5  # the one-level-per-step climb took minutes
