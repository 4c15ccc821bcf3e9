"""Property tests: the JIT's rules for qnn.add / subtract / mul / dense / contrib_dense_pack /
conv2d / avg_pool2d (issue 12) agree exactly with the interpreter, compile natively and fuse
with their neighbours.  Scales are parameters in most examples, so the kernel's run-time
fixed-point conversion of ``s_in / s_out`` meets many values (ties, tiny, huge, zero)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_testing import check, compares, random_array, tensor

import relay_nb as relay

PROPS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rng(data) -> np.random.Generator:
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


def _scale(data) -> np.float32:
    """A positive float32 scale: round numbers (exact ties in the ratio), spread exponents, 0."""
    kind = data.draw(st.sampled_from(["round", "any", "any", "zero"]))
    if kind == "zero":
        return np.float32(0)
    if kind == "round":
        return np.float32(data.draw(st.sampled_from([0.125, 0.25, 0.5, 1.0, 2.0, 3.0, 0.75])))
    m = data.draw(st.floats(0.5, 1.0, exclude_max=True))
    return np.float32(m * 2.0 ** data.draw(st.integers(-30, 30)))


def _scales(data, n: int) -> np.ndarray:
    return np.array([_scale(data) for _ in range(max(n, 1))], "float32").reshape(() if n == 0 else (n,))


def _zps(data, n: int, lo=-300, hi=300) -> np.ndarray:
    vals = [data.draw(st.integers(lo, hi)) for _ in range(max(n, 1))]
    return np.array(vals, "int32").reshape(() if n == 0 else (n,))


def _param_type(a: np.ndarray) -> str:
    return tensor(a.shape, str(a.dtype))


@pytest.mark.parametrize("op", ["qnn.add", "qnn.subtract", "qnn.mul"])
@compares(15)
@PROPS
@given(data=st.data())
def test_binary(op, data):
    rank = data.draw(st.integers(1, 3))
    out = tuple(data.draw(st.integers(1, 4)) for _ in range(rank))
    lshape = out
    rshape = tuple(d if data.draw(st.booleans()) else 1 for d in out)[data.draw(st.integers(0, rank - 1)) :]
    dtype = data.draw(st.sampled_from(["int8", "uint8", "int32"]))
    rdtype = dtype  # the relation wants one dtype
    per_channel = data.draw(st.booleans())
    rng = _rng(data)
    x, y = random_array(rng, lshape, dtype, special=True), random_array(rng, rshape, rdtype, special=True)
    if per_channel:  # one scale per element along an axis both operands have in full
        axis = rank - 1
        n = out[axis]
        rshape = lshape
        y = random_array(rng, rshape, rdtype, special=True)
        ls, lz, rs, rz = _scales(data, n), _zps(data, n), _scales(data, n), _zps(data, n)
        axes = f", lhs_axis={axis}, rhs_axis={axis}"
    else:
        ls, lz, rs, rz = _scales(data, 0), _zps(data, 0), _scales(data, 0), _zps(data, 0)
        axes = ""
    os_, oz = _scales(data, 0), _zps(data, 0, -20, 20)
    if os_ == 0:
        os_ = np.float32(1.5)  # dividing by a zero output scale is no quantization
    args = [x, y, ls, lz, rs, rz, os_, oz]
    names = ["x", "y", "ls", "lz", "rs", "rz", "os", "oz"]
    params = ", ".join(f"%{n}: {_param_type(np.asarray(a))}" for n, a in zip(names, args))
    prog = f"def @main({params}) {{ {op}(%x, %y, %ls, %lz, %rs, %rz, %os, %oz{axes}) }}"
    check(prog, *args)


def test_binary_with_constant_parameters_fuses_with_its_neighbours():
    """The common model form: literal scales and zero points; one native kernel."""
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (2, 8)).astype("int8")
    y = rng.integers(-128, 128, (8,)).astype("int8")
    ex = check(
        "def @main(%x: Tensor[(2, 8), int8], %y: Tensor[(8,), int8]) {"
        " %0 = qnn.mul(%x, %y, 0.05f, 3, 0.1f, -4, 0.02f, 1);"
        " %1 = qnn.add(%0, %x, 0.02f, 1, 0.05f, 3, 0.07f, 0);"
        " clip(qnn.subtract(%1, %y, 0.07f, 0, 0.1f, -4, 0.07f, 0), a_min=-50f, a_max=50f) }",
        x,
        y,
    )
    assert len(ex.kernels) == 1
    assert ex.kernels[0].ops == ["qnn.mul", "qnn.add", "qnn.subtract", "clip"]


def test_report_lists_qnn_add_as_native():
    x = relay.var("x", shape=(4,), dtype="int8")
    s, z = relay.const(0.5, "float32"), relay.const(0, "int32")
    y = relay.qnn.op.add(x, x, s, z, s, z, s, z)
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], y)))
    np.testing.assert_array_equal(lib(np.array([1, -3, 100, 127], "int8")), [2, -6, 127, 127])
    report = str(lib.report())
    assert "native ops: qnn.add" in report and "fell back: none" in report, report
    assert all(k.native for k in lib.kernels), report


@pytest.mark.parametrize("op", ["qnn.dense", "qnn.contrib_dense_pack"])
@compares(10)
@PROPS
@given(data=st.data())
def test_dense(op, data):
    m, k_in, units = (data.draw(st.integers(1, 5)) for _ in range(3))
    xdt = data.draw(st.sampled_from(["int8", "uint8"]))
    wdt = data.draw(st.sampled_from(["int8", "uint8"]))
    odt = data.draw(st.sampled_from(["int32", "int64"]))
    rng = _rng(data)
    x = random_array(rng, (m, k_in), xdt, special=True)
    per_unit = data.draw(st.booleans())
    if op == "qnn.dense":
        w = random_array(rng, (units, k_in), wdt, special=True)
        attrs = f"units={units}"
        n_units = units
    else:
        n, c = data.draw(st.integers(1, 3)), data.draw(st.sampled_from([c for c in (1, 2, 3) if k_in % c == 0]))
        w = random_array(rng, (units, k_in // c, n, c), wdt, special=True)
        attrs = f'weight_layout="NC{n}n{c}c"'
        n_units = units * n
    xz, wz = _zps(data, 0), _zps(data, n_units if per_unit else 0)
    prog = (
        f"def @main(%x: {_param_type(x)}, %w: {_param_type(w)}, %xz: int32, %wz: {_param_type(wz)}) {{"
        f' {op}(%x, %w, %xz, %wz, 0.5f, 0.25f, {attrs}, out_dtype="{odt}") }}'
    )
    check(prog, x, w, xz, wz)


@compares(10)
@PROPS
@given(data=st.data())
def test_conv2d(data):
    groups = data.draw(st.integers(1, 2))
    cg, og = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    n, h, w = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6))
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    pad = [data.draw(st.integers(0, 2)) for _ in range(4)]
    strides = [data.draw(st.integers(1, 2)) for _ in range(2)]
    dilation = [data.draw(st.integers(1, 2)) for _ in range(2)]
    # the padded input holds at least one window
    h = max(h, (kh - 1) * dilation[0] + 1 - pad[0] - pad[2])
    w = max(w, (kw - 1) * dilation[1] + 1 - pad[1] - pad[3])
    xdt, wdt = data.draw(st.sampled_from(["int8", "uint8"])), data.draw(st.sampled_from(["int8", "uint8"]))
    odt = data.draw(st.sampled_from(["int16", "int32", "int64"]))
    rng = _rng(data)
    x = random_array(rng, (n, cg * groups, h, w), xdt, special=True)
    wt = random_array(rng, (og * groups, cg, kh, kw), wdt, special=True)
    wz = _zps(data, og * groups if data.draw(st.booleans()) else 0)
    prog = (
        f"def @main(%x: {_param_type(x)}, %w: {_param_type(wt)}, %xz: int32, %wz: {_param_type(wz)}) {{"
        f" qnn.conv2d(%x, %w, %xz, %wz, 0.5f, 0.25f, strides={strides}, padding={pad}, dilation={dilation},"
        f' groups={groups}, channels={og * groups}, kernel_size=[{kh}, {kw}], out_dtype="{odt}") }}'
    )
    check(prog, x, wt, _zps(data, 0), wz)


def test_conv2d_fuses_its_epilogue_in_place():
    """qnn.conv2d is an anchor: a following elementwise op runs on each finished plane."""
    rng = np.random.default_rng(2)
    x = rng.integers(0, 256, (1, 3, 6, 6)).astype("uint8")
    w = rng.integers(-128, 128, (4, 3, 3, 3)).astype("int8")
    ex = check(
        "def @main(%x: Tensor[(1, 3, 6, 6), uint8], %w: Tensor[(4, 3, 3, 3), int8]) {"
        " %0 = qnn.conv2d(%x, %w, 128, 0, 0.5f, 0.25f, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3],"
        ' out_dtype="int32"); right_shift(%0, 3) }',
        x,
        w,
    )
    assert len(ex.kernels) == 1 and ex.kernels[0].ops == ["qnn.conv2d", "right_shift"]


@compares(10)
@PROPS
@given(data=st.data())
def test_avg_pool2d(data):
    layout = data.draw(st.sampled_from(["NCHW", "NHWC"]))
    n, c, h, w = 1, data.draw(st.integers(1, 3)), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6))
    ph, pw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    pad = [data.draw(st.integers(0, min(ph, pw) - 1)) for _ in range(4)]
    h, w = max(h, ph - pad[0] - pad[2]), max(w, pw - pad[1] - pad[3])  # one window fits
    strides = [data.draw(st.integers(1, 2)) for _ in range(2)]
    include = data.draw(st.booleans())
    ceil = data.draw(st.booleans())
    dims = {"N": n, "C": c, "H": h, "W": w}
    dtype = data.draw(st.sampled_from(["int8", "uint8"]))
    x = random_array(_rng(data), tuple(dims[a] for a in layout), dtype, special=True)
    s, os_ = _scale(data), _scale(data)
    if os_ == 0:
        os_ = np.float32(0.3)
    prog = (
        f"def @main(%x: {_param_type(x)}, %s: float32, %z: int32, %os: float32, %oz: int32) {{"
        f" qnn.avg_pool2d(%x, %s, %z, %os, %oz, pool_size=[{ph}, {pw}], strides={strides}, padding={pad},"
        f' layout="{layout}", count_include_pad={include}, ceil_mode={ceil}) }}'
    )
    check(prog, x, s, _zps(data, 0), os_, _zps(data, 0, -20, 20))


def test_scales_are_read_at_run_time_so_one_compiled_kernel_serves_every_scale():
    """Editing a literal scale compiles nothing (the fixed-point multiplier is computed in
    the kernel), and every value gives the interpreter's result."""
    from relay_nb.backend.llvm.cache import KernelCache
    from relay_nb.backend.llvm.executor import JITExecutor

    cache = KernelCache()
    x = np.arange(-128, 128, dtype="int8").reshape(16, 16)
    for scale in ("0.5f", "0.013f", "3.75f", "0.5f"):
        text = (
            "def @main(%x: Tensor[(16, 16), int8]) {"
            f" qnn.mul(%x, %x, {scale}, 2, 0.25f, -1, 0.1f, 3) }}"
        )
        ref = relay.create_executor("interpreter", mod=relay.parse(text)).evaluate()(x)
        ex = JITExecutor(relay.parse(text), cache=cache)
        np.testing.assert_array_equal(ex.evaluate()(x), ref)
        assert all(k.native for k in ex.kernels)
    assert cache.stats()["compiles"] == 1
