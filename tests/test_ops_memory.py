"""memory.* and vm.* ops: real storage in the interpreter, and passes that keep their effects."""

from __future__ import annotations

import numpy as np
import pytest

import relay_nb as relay
from relay_nb.op import memory, vm
from relay_nb.op.memory import STORAGE_TYPE


def _typed_main(body_fn):
    """A module whose @main(%x: float32[2, 3]) body is ``body_fn(x)``."""
    x = relay.var("x", shape=(2, 3))
    mod = relay.IRModule.from_expr(relay.Function([x], body_fn(x)))
    return relay.transform.InferType()(mod)


def _exp_kernel():
    p = relay.var("p", shape=(2, 3))
    return relay.Function([p], relay.exp(p))


def _run(mod, *args, executor="interpreter"):
    return relay.create_executor(executor, mod=mod).evaluate()(*args)


X = np.arange(6, dtype="float32").reshape(2, 3)


def _invoke_into_storage(x):
    """alloc a storage, place a tensor in it, run exp into it, return the tensor."""
    out = relay.var("out")
    done = relay.var("done")
    storage = memory.alloc_storage(24, 64)
    return relay.Let(
        out,
        memory.alloc_tensor(storage, 0, [2, 3]),
        relay.Let(done, vm.invoke_tvm_op(_exp_kernel(), [x], [out]), out),
    )


def test_invoke_tvm_op_writes_into_an_allocated_tensor():
    mod = _typed_main(_invoke_into_storage)
    body = mod["main"].body
    assert body.value.args[0].checked_type == STORAGE_TYPE
    assert str(body.body.value.checked_type) == "()"
    np.testing.assert_allclose(_run(mod, X), np.exp(X), rtol=1e-6)
    # The JIT runs the same program (the effectful let is not dropped as dead code).
    np.testing.assert_allclose(_run(mod, X, executor="jit"), np.exp(X), rtol=1e-6)


def test_tensors_at_overlapping_offsets_share_memory():
    """Two float32 views of one 24-byte storage, the second 8 bytes (2 floats) in."""

    def body(x):
        s, a, b, done = (relay.var(n) for n in ("s", "a", "b", "done"))
        return relay.Let(
            s,
            memory.alloc_storage(24, 8),
            relay.Let(
                a,
                memory.alloc_tensor(s, 0, [6]),
                relay.Let(
                    b,
                    memory.alloc_tensor(s, 8, [4]),
                    relay.Let(
                        done,
                        vm.invoke_tvm_op(_exp_kernel(), [x], [relay.reshape(a, (2, 3))]),
                        relay.Tuple([a, b]),
                    ),
                ),
            ),
        )

    # reshape(a) is a new tensor, not a view: writing into it leaves a and b untouched ...
    a, b = _run(_typed_main(body), X)
    np.testing.assert_array_equal(a, np.zeros(6, "float32"))

    def body_direct(x):
        s, a, b, done = (relay.var(n) for n in ("s", "a", "b", "done"))
        p = relay.var("p", shape=(6,))
        kernel = relay.Function([p], relay.add(p, relay.const(1.0)))
        flat = relay.reshape(x, (6,))
        return relay.Let(
            s,
            memory.alloc_storage(24, 8),
            relay.Let(
                a,
                memory.alloc_tensor(s, 0, [6]),
                relay.Let(
                    b,
                    memory.alloc_tensor(s, 8, [4]),
                    relay.Let(done, vm.invoke_tvm_op(kernel, [flat], [a]), relay.Tuple([a, b])),
                ),
            ),
        )

    # ... while writing into a shows through b, which starts two floats later.
    a, b = _run(_typed_main(body_direct), X)
    np.testing.assert_array_equal(a, [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(b, [3, 4, 5, 6])


def test_memory_program_prints_and_reads_back():
    mod = _typed_main(_invoke_into_storage)
    text = mod.astext()
    assert "memory.alloc_storage(24i64" in text and "vm.invoke_tvm_op(" in text
    again = relay.transform.InferType()(relay.parse(text))
    assert relay.structural_equal(again, mod)
    np.testing.assert_allclose(_run(again, X), np.exp(X), rtol=1e-6)


def test_passes_keep_effectful_memory_ops():
    """DCE must not drop the unused `let %done = invoke(...)`; CSE must not merge two
    allocations of the same size (they are two blocks of memory)."""
    mod = _typed_main(_invoke_into_storage)
    after = relay.transform.DeadCodeElimination()(mod)
    assert "vm.invoke_tvm_op" in after.astext()
    np.testing.assert_allclose(_run(after, X), np.exp(X), rtol=1e-6)

    def two_blocks(x):
        s1, s2 = memory.alloc_storage(24, 64), memory.alloc_storage(24, 64)
        return relay.Tuple([s1, s2])

    cse = relay.transform.EliminateCommonSubexpr()(_typed_main(two_blocks))
    assert cse.astext().count("memory.alloc_storage") == 2
    s1, s2 = _run(cse, X)
    assert s1 is not s2


def test_kill_returns_unit():
    mod = _typed_main(lambda x: memory.kill(x))
    assert str(mod["main"].body.checked_type) == "()"
    assert _run(mod, X) == ()


def test_shape_of_and_reshape_tensor():
    def body(x):
        shape = vm.shape_of(relay.reshape(x, (3, 2)))
        return relay.Tuple([shape, vm.reshape_tensor(x, shape, (3, 2))])

    mod = _typed_main(body)
    assert str(mod["main"].body.checked_type) == "(Tensor[(2), int64], Tensor[(3, 2), float32])"
    shape, y = _run(mod, X)
    assert shape.dtype == np.int64 and shape.tolist() == [3, 2]
    np.testing.assert_array_equal(y, X.reshape(3, 2))


@pytest.mark.parametrize(
    "size, alignment, offset, shape, message",
    [
        (24, 64, 4, [6], "24 bytes at offset 4 do not fit in a storage of 24 bytes"),
        (24, 64, 2, [2], "offset 2 is not a multiple of float32's size"),
        (24, 48, 0, [6], "alignment 48 is not a power of two"),
        (-1, 64, 0, [0], "cannot allocate -1 bytes"),
    ],
)
def test_bad_allocations_are_eval_errors(size, alignment, offset, shape, message):
    mod = _typed_main(
        lambda x: memory.alloc_tensor(memory.alloc_storage(size, alignment), offset, shape)
    )
    with pytest.raises(relay.RelayError, match=message):
        _run(mod, X)


def test_relation_errors():
    with pytest.raises(relay.RelayError, match="size must be an int64 scalar"):
        _typed_main(lambda x: memory.alloc_storage(relay.const(24, "int32"), 64))
    with pytest.raises(relay.RelayError, match="needs const_shape or assert_shape"):
        _typed_main(
            lambda x: memory.alloc_tensor(memory.alloc_storage(24, 64), 0, vm.shape_of(x))
        )
    with pytest.raises(relay.RelayError, match="the op returns 1 tensors, the outputs tuple has 2"):
        _typed_main(lambda x: vm.invoke_tvm_op(_exp_kernel(), [x], [x, x]))
    with pytest.raises(relay.RelayError, match="the shape tensor has 2 entries but newshape"):
        _typed_main(lambda x: vm.reshape_tensor(x, vm.shape_of(x), (6,)))


def test_assert_shape_gives_the_type_when_the_shape_is_computed():
    mod = _typed_main(
        lambda x: memory.alloc_tensor(
            memory.alloc_storage(24, 64), 0, vm.shape_of(x), assert_shape=(2, 3)
        )
    )
    assert str(mod["main"].body.checked_type) == "Tensor[(2, 3), float32]"
    assert _run(mod, X).shape == (2, 3)
