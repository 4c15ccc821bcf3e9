"""relay.transform.gradient and the ``grad`` column (relay_nb/op/grad.py).

Every rule is checked against central finite differences of the interpreter: for a
function ``f`` and a random cotangent ``c`` we differentiate ``f_c = f * c`` (the
gradient program seeds ``ones_like``, so it yields d sum(f * c) / d p) and compare with
``(sum(f(p + eps e_i) * c) - sum(f(p - eps e_i) * c)) / 2 eps``, all in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relay_nb as relay
from relay_nb.errors import RelayError
from relay_nb.ir.ty import TensorType, TupleType
from relay_nb.op.grad import get_grad_rule, grad_rule

F64 = "float64"
EPS = 1e-6


# --- the harness -------------------------------------------------------------------------------


def run(func: relay.Function):
    return relay.create_executor("interpreter", mod=relay.IRModule.from_expr(func)).evaluate()


def check_program(gf: relay.Function) -> None:
    """The gradient program is well formed, typed, and survives print -> parse."""
    from relay_nb.analysis.well_formed import well_formed

    assert well_formed(gf)
    mod = relay.IRModule.from_expr(gf)
    text = mod.astext()
    back = relay.parse(text)
    relay.assert_structural_equal(back["main"], gf, map_free_vars=True)


def _random_like(ty, rng):
    if isinstance(ty, TupleType):
        return tuple(_random_like(f, rng) for f in ty.fields)
    return rng.standard_normal(ty.shape)


def _flat_leaves(value):
    if isinstance(value, tuple):
        out = []
        for v in value:
            out.extend(_flat_leaves(v))
        return out
    return [value]


def _weighted_sum(value, cot) -> float:
    return float(sum(np.sum(v * c) for v, c in zip(_flat_leaves(value), _flat_leaves(cot))))


def _cotangent_body(out: relay.Expr, ty, cot) -> relay.Expr:
    """``out * cot`` field by field (a tuple output gets a tuple of products)."""
    if isinstance(ty, TupleType):
        return relay.Tuple(
            [
                _cotangent_body(relay.TupleGetItem(out, i), f, c)
                for i, (f, c) in enumerate(zip(ty.fields, cot))
            ]
        )
    return relay.multiply(out, relay.const(np.asarray(cot, ty.dtype), ty.dtype))


def check_grad(
    build,
    shapes,
    inputs=None,
    low=-1.0,
    high=1.0,
    seed=0,
    rtol=1e-5,
    atol=1e-7,
    eps=EPS,
    max_checks=40,
    program_checks=True,
):
    """Differentiate ``build(*params)`` and compare with finite differences.

    Returns the gradient function.
    """
    rng = np.random.default_rng(seed)
    params = [relay.var(f"p{i}", shape=s, dtype=F64) for i, s in enumerate(shapes)]
    f = relay.Function(params, build(*params))
    out_ty = relay.transform.InferType()(relay.IRModule.from_expr(f))["main"].checked_type.ret_type
    cot = _random_like(out_ty, rng)
    # f_c(p) = f(p) * c, with fresh parameters so both functions stay well formed
    cparams = [relay.var(f"p{i}", shape=s, dtype=F64) for i, s in enumerate(shapes)]
    fc = relay.Function(cparams, _inline(f, cparams, out_ty, cot))
    gf = relay.transform.gradient(fc)
    if program_checks:
        check_program(gf)
    if inputs is None:
        inputs = [rng.uniform(low, high, s) for s in shapes]
    inputs = [np.asarray(x, F64) for x in inputs]
    value, grads = run(gf)(*inputs)
    forward = run(f)
    want_value = forward(*inputs)
    for got, want, c in zip(_flat_leaves(value), _flat_leaves(want_value), _flat_leaves(cot)):
        np.testing.assert_allclose(got, want * c, rtol=1e-10, atol=1e-12)
    assert len(grads) == len(shapes)
    for i, (x, gx) in enumerate(zip(inputs, grads)):
        assert gx.shape == x.shape and gx.dtype == x.dtype
        flat = list(range(x.size))
        if len(flat) > max_checks:
            flat = sorted(rng.choice(x.size, max_checks, replace=False))
        for j in flat:
            idx = np.unravel_index(j, x.shape)
            plus = [a.copy() for a in inputs]
            minus = [a.copy() for a in inputs]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            numeric = (_weighted_sum(forward(*plus), cot) - _weighted_sum(forward(*minus), cot)) / (
                2 * eps
            )
            assert abs(gx[idx] - numeric) <= atol + rtol * max(abs(numeric), 1.0), (
                f"d/dp{i}{list(idx)}: gradient {gx[idx]!r}, finite difference {numeric!r}"
            )
    return gf


def _inline(f: relay.Function, params, out_ty, cot) -> relay.Expr:
    """``f``'s body over ``params`` times the cotangent: the body rebuilt with the
    parameters substituted (gradient differentiates operator calls, not closures)."""
    mapping = dict(zip(f.params, params))

    class Subst(relay.ExprMutator):
        def visit_var(self, v):
            return mapping.get(v, v)

    body = Subst().visit(f.body)
    return _cotangent_body(body, out_ty, cot)


# --- elementwise -------------------------------------------------------------------------------

UNARY = [
    ("negative", relay.negative, -1, 1),
    ("exp", relay.exp, -1, 1),
    ("log", relay.log, 0.5, 2),
    ("log2", relay.log2, 0.5, 2),
    ("log10", relay.log10, 0.5, 2),
    ("sqrt", relay.sqrt, 0.5, 2),
    ("rsqrt", relay.rsqrt, 0.5, 2),
    ("sigmoid", relay.sigmoid, -2, 2),
    ("tanh", relay.tanh, -2, 2),
    ("erf", relay.erf, -1, 1),
    ("sin", relay.sin, -2, 2),
    ("cos", relay.cos, -2, 2),
    ("tan", relay.tan, -1, 1),
    ("sinh", relay.sinh, -1, 1),
    ("cosh", relay.cosh, -1, 1),
    ("asin", relay.asin, -0.8, 0.8),
    ("acos", relay.acos, -0.8, 0.8),
    ("atan", relay.atan, -2, 2),
    ("asinh", relay.asinh, -2, 2),
    ("acosh", relay.acosh, 1.5, 3),
    ("atanh", relay.atanh, -0.8, 0.8),
    ("abs", relay.abs, -1, 1),
    ("copy", relay.copy, -1, 1),
    ("floor", relay.floor, -3, 3),
    ("round", relay.round, -3, 3),
    ("sign", relay.sign, -1, 1),
    ("fast_exp", relay.fast_exp, -1, 1),
    ("fast_tanh", relay.fast_tanh, -1, 1),
    ("clip", lambda x: relay.clip(x, -0.5, 0.5), -1, 1),
    ("relu", relay.nn.relu, -1, 1),
    ("leaky_relu", lambda x: relay.nn.leaky_relu(x, 0.2), -1, 1),
    ("softmax", relay.nn.softmax, -2, 2),
    ("softmax_axis0", lambda x: relay.nn.softmax(x, axis=0), -2, 2),
    ("log_softmax", relay.nn.log_softmax, -2, 2),
    ("log_softmax_axis0", lambda x: relay.nn.log_softmax(x, axis=0), -2, 2),
    ("zeros_like", relay.zeros_like, -1, 1),
    ("cast", lambda x: relay.cast(x, "float64"), -1, 1),
]


@pytest.mark.parametrize("name,build,low,high", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, build, low, high):
    check_grad(build, [(3, 4)], low=low, high=high)


BINARY = [
    ("add", relay.add, [(2, 3), (2, 3)], -1, 1),
    ("add_broadcast", relay.add, [(2, 3), (3,)], -1, 1),
    ("add_broadcast_both", relay.add, [(2, 1, 3), (4, 1)], -1, 1),
    ("subtract", relay.subtract, [(2, 3), (2, 1)], -1, 1),
    ("multiply", relay.multiply, [(2, 3), (1, 3)], -1, 1),
    ("divide", relay.divide, [(2, 3), (3,)], 0.5, 2),
    ("power", relay.power, [(2, 3), (3,)], 0.5, 2),
    ("maximum", relay.maximum, [(2, 3), (3,)], -1, 1),
    ("minimum", relay.minimum, [(2, 3), (2, 3)], -1, 1),
    ("floor_mod", relay.floor_mod, [(2, 3), (3,)], 0.3, 2),
    ("mod", relay.mod, [(2, 3), (3,)], 0.3, 2),
]


@pytest.mark.parametrize("name,build,shapes,low,high", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, build, shapes, low, high):
    check_grad(build, shapes, low=low, high=high)


def test_operator_sugar_and_scalar_constants():
    def c(v):
        return relay.const(v, F64)

    check_grad(lambda x: (x * c(2.0) + c(1.0)) / (x * x + c(1.0)), [(5,)])


def test_literals_take_the_dtype_of_their_context():
    # unsuffixed literals (float32 by default) in a float64 program
    check_grad(lambda x: relay.multiply(relay.add(x, 2.0), 3), [(4,)], program_checks=False)


def test_where_broadcasts_and_has_no_condition_gradient():
    cond = relay.const(np.array([True, False, True]))
    check_grad(lambda x, y: relay.where(cond, x, y), [(2, 3), (2, 1)])


def test_where_on_a_computed_condition():
    check_grad(lambda x, y: relay.where(relay.greater(x, y), x * y, x - y), [(4,), (4,)])


def test_cast_through_float32():
    # a float32 detour: the gradient is cast back to float64
    check_grad(
        lambda x: relay.cast(relay.multiply(relay.cast(x, "float32"), 3.0), "float64"),
        [(4,)],
        eps=1e-3,
        rtol=1e-4,
        atol=1e-4,
    )


# --- reductions --------------------------------------------------------------------------------

REDUCE = [
    ("sum_all", lambda x: relay.sum(x)),
    ("sum_axis", lambda x: relay.sum(x, axis=1)),
    ("sum_keepdims", lambda x: relay.sum(x, axis=[0, 2], keepdims=True)),
    ("sum_exclude", lambda x: relay.sum(x, axis=1, exclude=True)),
    ("sum_negative_axis", lambda x: relay.sum(x, axis=-1)),
    ("mean_all", lambda x: relay.mean(x)),
    ("mean_axis", lambda x: relay.mean(x, axis=[1, 2])),
    ("mean_keepdims", lambda x: relay.mean(x, axis=0, keepdims=True)),
    ("max_axis", lambda x: relay.max(x, axis=1)),
    ("min_all", lambda x: relay.min(x)),
    ("max_keepdims", lambda x: relay.max(x, axis=2, keepdims=True)),
    ("variance", lambda x: relay.variance(x, axis=1)),
    ("variance_unbiased", lambda x: relay.variance(x, axis=[0, 2], unbiased=True)),
    ("std", lambda x: relay.std(x, axis=2)),
]


@pytest.mark.parametrize("name,build", REDUCE, ids=[r[0] for r in REDUCE])
def test_reduce(name, build):
    check_grad(build, [(2, 3, 4)])


def test_max_gradient_goes_to_the_maximum():
    x = relay.var("x", shape=(4,), dtype=F64)
    gf = relay.transform.gradient(relay.Function([x], relay.max(x)))
    _, (dx,) = run(gf)(np.array([1.0, 5.0, 2.0, 5.0]))
    np.testing.assert_allclose(dx, [0, 0.5, 0, 0.5])  # ties share


# --- shape ops ---------------------------------------------------------------------------------

SHAPE = [
    ("reshape", lambda x: relay.reshape(x, (4, -1)), [(2, 3, 2)]),
    ("reshape_special", lambda x: relay.reshape(x, (0, -1)), [(2, 3, 2)]),
    ("transpose", lambda x: relay.transpose(x, (2, 0, 1)), [(2, 3, 4)]),
    ("transpose_default", lambda x: relay.transpose(x), [(2, 3, 4)]),
    ("squeeze", lambda x: relay.squeeze(x, [1]), [(2, 1, 3)]),
    ("expand_dims", lambda x: relay.expand_dims(x, 1, 2), [(2, 3)]),
    ("batch_flatten", relay.nn.batch_flatten, [(2, 3, 2)]),
    ("concatenate", lambda x, y: relay.concatenate([x, y, x], axis=1), [(2, 3), (2, 2)]),
    ("stack", lambda x, y: relay.stack([x, y], axis=1), [(2, 3), (2, 3)]),
    (
        "split_sections",
        lambda x: relay.multiply(relay.split(x, 2, axis=1)[0], relay.split(x, 2, axis=1)[1]),
        [(3, 4)],
    ),
    (
        "split_indices_partly_used",
        lambda x: relay.exp(relay.split(x, [1, 3], axis=0)[2]),
        [(5, 2)],
    ),
    (
        "take_axis0",
        lambda x: relay.take(x, relay.const(np.array([2, 0, 2], "int32")), axis=0),
        [(3, 4)],
    ),
    (
        "take_axis1_2d_indices",
        lambda x: relay.take(x, relay.const(np.array([[1, 1], [0, 3]], "int32")), axis=1),
        [(2, 4, 3)],
    ),
    ("take_flat", lambda x: relay.take(x, relay.const(np.array([5, 0, 5, 7], "int32"))), [(2, 4)]),
    (
        "take_wrap",
        lambda x: relay.take(x, relay.const(np.array([-1, 4], "int32")), axis=0, mode="wrap"),
        [(3, 2)],
    ),
    ("strided_slice", lambda x: relay.strided_slice(x, [1, 0], [3, 2]), [(4, 3)]),
    ("strided_slice_step", lambda x: relay.strided_slice(x, [0, 1], [4, 3], [2, 1]), [(5, 3)]),
    ("strided_slice_reverse", lambda x: relay.strided_slice(x, [3], [0], [-1]), [(5, 2)]),
    ("strided_slice_axes", lambda x: relay.strided_slice(x, [1], [3], axes=[1]), [(2, 4)]),
    ("broadcast_to", lambda x: relay.broadcast_to(x, (2, 3, 4)), [(3, 1)]),
    ("broadcast_to_like", lambda x, y: relay.broadcast_to_like(x, y), [(3, 1), (2, 3, 4)]),
    ("collapse_sum_like", lambda x, y: relay.collapse_sum_like(x, y), [(2, 3, 4), (3, 1)]),
    ("tile", lambda x: relay.tile(x, (2, 1, 3)), [(2, 3)]),
    ("repeat", lambda x: relay.repeat(x, 3, 1), [(2, 3)]),
    ("reverse", lambda x: relay.reverse(x, 1), [(2, 3)]),
    ("layout_transform", lambda x: relay.layout_transform(x, "NCHW", "NHWC"), [(1, 2, 3, 2)]),
    ("pad", lambda x: relay.nn.pad(x, ((1, 0), (2, 1))), [(2, 3)]),
    (
        "pad_value",
        lambda x, v: relay.nn.pad(x, ((1, 1), (0, 2)), relay.reshape(v, ())),
        [(2, 3), (1,)],
    ),
    ("reshape_like", lambda x, y: relay.reshape_like(x, y), [(2, 3), (3, 2)]),
]


@pytest.mark.parametrize("name,build,shapes", SHAPE, ids=[s[0] for s in SHAPE])
def test_shape_ops(name, build, shapes):
    check_grad(build, shapes)


# --- nn ----------------------------------------------------------------------------------------

NN = [
    ("dense", lambda x, w: relay.nn.dense(x, w), [(3, 4), (5, 4)]),
    ("dense_rank3", lambda x, w: relay.nn.dense(x, w, units=2), [(2, 3, 4), (2, 4)]),
    ("matmul", lambda a, b: relay.nn.matmul(a, b), [(3, 4), (4, 2)]),
    ("matmul_ta", lambda a, b: relay.nn.matmul(a, b, transpose_a=True), [(4, 3), (4, 2)]),
    ("matmul_tb", lambda a, b: relay.nn.matmul(a, b, transpose_b=True), [(3, 4), (2, 4)]),
    (
        "matmul_ta_tb",
        lambda a, b: relay.nn.matmul(a, b, transpose_a=True, transpose_b=True),
        [(4, 3), (2, 4)],
    ),
    ("matmul_rank3", lambda a, b: relay.nn.matmul(a, b), [(2, 3, 4), (4, 2)]),
    ("batch_matmul", lambda a, b: relay.nn.batch_matmul(a, b), [(2, 3, 4), (2, 5, 4)]),
    (
        "batch_matmul_nt",
        lambda a, b: relay.nn.batch_matmul(a, b, transpose_b=False),
        [(2, 3, 4), (2, 4, 5)],
    ),
    (
        "batch_matmul_ta",
        lambda a, b: relay.nn.batch_matmul(a, b, transpose_a=True, transpose_b=False),
        [(2, 4, 3), (2, 4, 5)],
    ),
    (
        "batch_matmul_ta_tb",
        lambda a, b: relay.nn.batch_matmul(a, b, transpose_a=True),
        [(2, 4, 3), (2, 5, 4)],
    ),
    ("batch_matmul_broadcast", lambda a, b: relay.nn.batch_matmul(a, b), [(1, 3, 4), (3, 5, 4)]),
    ("bias_add", lambda x, b: relay.nn.bias_add(x, b), [(2, 3, 4), (3,)]),
    ("bias_add_last", lambda x, b: relay.nn.bias_add(x, b, axis=-1), [(2, 3, 4), (4,)]),
    ("prelu", lambda x, a: relay.nn.prelu(x, a), [(2, 3, 2), (3,)]),
    ("dropout", lambda x: relay.nn.dropout(x, 0.3), [(2, 3)]),
    (
        "batch_norm",
        lambda x, g, b, m, v: relay.nn.batch_norm(x, g, b, m, relay.exp(v))[0],
        [(2, 3, 2), (3,), (3,), (3,), (3,)],
    ),
    (
        "batch_norm_all_outputs",
        lambda x, g, b, m, v: relay.nn.batch_norm(
            x, g, b, m, relay.exp(v), axis=2, center=False
        ).astuple(),
        [(2, 3, 2), (2,), (2,), (2,), (2,)],
    ),
    ("layer_norm", lambda x, g, b: relay.nn.layer_norm(x, g, b), [(2, 3, 4), (4,), (4,)]),
    (
        "layer_norm_axis1",
        lambda x, g, b: relay.nn.layer_norm(x, g, b, axis=1, scale=False),
        [(2, 3, 4), (3,), (3,)],
    ),
    ("global_avg_pool2d", relay.nn.global_avg_pool2d, [(2, 3, 3, 2)]),
    ("global_max_pool2d", relay.nn.global_max_pool2d, [(2, 3, 3, 2)]),
    (
        "global_avg_pool2d_nhwc",
        lambda x: relay.nn.global_avg_pool2d(x, layout="NHWC"),
        [(2, 3, 3, 2)],
    ),
]


@pytest.mark.parametrize("name,build,shapes", NN, ids=[n[0] for n in NN])
def test_nn(name, build, shapes):
    check_grad(build, shapes)


CONV = [
    ("plain", {}, (1, 2, 5, 5), (3, 2, 3, 3)),
    ("padding", {"padding": 1}, (2, 2, 4, 4), (3, 2, 3, 3)),
    ("stride", {"strides": 2, "padding": 1}, (1, 2, 6, 6), (2, 2, 3, 3)),
    ("stride_uneven", {"strides": (2, 3), "padding": (1, 0, 0, 2)}, (1, 1, 6, 7), (2, 1, 2, 3)),
    ("dilation", {"dilation": 2, "padding": 2}, (1, 2, 5, 5), (2, 2, 3, 3)),
    ("groups", {"groups": 2, "padding": 1}, (1, 4, 4, 4), (6, 2, 3, 3)),
    ("depthwise", {"groups": 3}, (2, 3, 4, 4), (3, 1, 2, 2)),
    (
        "stride_dilation_groups",
        {"strides": 2, "dilation": 2, "groups": 2, "padding": 1},
        (1, 4, 7, 7),
        (4, 2, 2, 2),
    ),
]


@pytest.mark.parametrize("name,attrs,dshape,wshape", CONV, ids=[c[0] for c in CONV])
def test_conv2d(name, attrs, dshape, wshape):
    check_grad(lambda x, w: relay.nn.conv2d(x, w, **attrs), [dshape, wshape])


def test_conv2d_nhwc_hwio():
    check_grad(
        lambda x, w: relay.nn.conv2d(x, w, padding=1, data_layout="NHWC", kernel_layout="HWIO"),
        [(1, 4, 4, 2), (3, 3, 2, 3)],
    )


TRANSPOSED = [
    ("plain", {}, (1, 2, 3, 3), (2, 3, 2, 2)),
    ("stride_padding", {"strides": 2, "padding": 1}, (1, 2, 3, 3), (2, 2, 3, 3)),
    ("output_padding", {"strides": 2, "output_padding": 1}, (1, 1, 3, 3), (1, 2, 3, 3)),
    ("groups_dilation", {"groups": 2, "dilation": 2}, (1, 4, 3, 3), (4, 1, 2, 2)),
]


@pytest.mark.parametrize("name,attrs,dshape,wshape", TRANSPOSED, ids=[t[0] for t in TRANSPOSED])
def test_conv2d_transpose(name, attrs, dshape, wshape):
    check_grad(lambda x, w: relay.nn.conv2d_transpose(x, w, **attrs), [dshape, wshape])


POOL = [
    ("plain", {"pool_size": 2, "strides": 2}, (1, 2, 4, 4)),
    ("overlapping", {"pool_size": 3, "strides": 1}, (1, 2, 4, 5)),
    ("padding", {"pool_size": 3, "strides": 2, "padding": 1}, (2, 1, 5, 5)),
    ("uneven", {"pool_size": (2, 3), "strides": (1, 2), "padding": (0, 1, 1, 0)}, (1, 2, 4, 5)),
    ("ceil_mode", {"pool_size": 2, "strides": 2, "ceil_mode": True}, (1, 1, 5, 5)),
    ("dilation", {"pool_size": 2, "dilation": 2}, (1, 1, 5, 4)),
    ("not_reached", {"pool_size": 2, "strides": 3}, (1, 1, 7, 6)),
]


@pytest.mark.parametrize("name,attrs,shape", POOL, ids=[p[0] for p in POOL])
def test_max_pool2d(name, attrs, shape):
    check_grad(lambda x: relay.nn.max_pool2d(x, **attrs), [shape])


@pytest.mark.parametrize("name,attrs,shape", POOL, ids=[p[0] for p in POOL])
@pytest.mark.parametrize("include_pad", [False, True])
def test_avg_pool2d(name, attrs, shape, include_pad):
    check_grad(lambda x: relay.nn.avg_pool2d(x, count_include_pad=include_pad, **attrs), [shape])


POOL1D = [
    ("plain", {"pool_size": 2, "strides": 2}, (2, 2, 6)),
    (
        "padding_dilation",
        {"pool_size": 2, "strides": 2, "padding": (1, 2), "dilation": 2},
        (1, 2, 7),
    ),
    ("ceil_mode", {"pool_size": 3, "strides": 2, "ceil_mode": True}, (1, 1, 6)),
]


@pytest.mark.parametrize("name,attrs,shape", POOL1D, ids=[p[0] for p in POOL1D])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool1d(name, attrs, shape, kind):
    pool = relay.nn.max_pool1d if kind == "max" else relay.nn.avg_pool1d
    check_grad(lambda x: pool(x, **attrs), [shape])


def test_pool1d_nwc():
    check_grad(lambda x: relay.nn.max_pool1d(x, 2, 1, layout="NWC"), [(1, 5, 2)])


CONV1D = [
    ("plain", {}, (2, 2, 7), (3, 2, 3)),
    (
        "stride_padding_dilation",
        {"strides": 2, "padding": (1, 2), "dilation": 2},
        (1, 2, 8),
        (2, 2, 3),
    ),
    ("groups", {"groups": 2}, (1, 4, 5), (2, 2, 2)),
    ("nwc_wio", {"data_layout": "NWC", "kernel_layout": "WIO", "padding": 1}, (1, 5, 2), (3, 2, 3)),
]


@pytest.mark.parametrize("name,attrs,dshape,wshape", CONV1D, ids=[c[0] for c in CONV1D])
def test_conv1d(name, attrs, dshape, wshape):
    check_grad(lambda x, w: relay.nn.conv1d(x, w, **attrs), [dshape, wshape])


def test_upsampling_nearest():
    check_grad(lambda x: relay.nn.upsampling(x, 2, 3), [(1, 2, 2, 3)])
    check_grad(lambda x: relay.nn.upsampling(x, 2, 2, layout="NHWC"), [(1, 2, 3, 2)])


def test_pools_nhwc():
    check_grad(lambda x: relay.nn.max_pool2d(x, 2, 1, layout="NHWC"), [(1, 3, 3, 2)])
    check_grad(lambda x: relay.nn.avg_pool2d(x, 2, 2, padding=1, layout="NHWC"), [(1, 3, 3, 2)])


def test_max_pool_gradient_goes_to_the_first_maximum():
    # TVM's pool_grad: a tie gives the whole gradient to the first maximal element.
    x = relay.var("x", shape=(1, 1, 2, 2), dtype=F64)
    gf = relay.transform.gradient(relay.Function([x], relay.nn.max_pool2d(x, 2, 2)))
    _, (dx,) = run(gf)(np.array([[[[1.0, 3.0], [3.0, 0.0]]]]))
    np.testing.assert_array_equal(dx, [[[[0.0, 1.0], [0.0, 0.0]]]])


# --- whole programs ----------------------------------------------------------------------------


def test_mlp():
    # dense + bias_add + relu + softmax + log: a classifier's loss
    def mlp(x, w1, b1, w2, b2):
        h = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w1), b1))
        p = relay.nn.softmax(relay.nn.bias_add(relay.nn.dense(h, w2), b2))
        return relay.negative(relay.mean(relay.log(p)))

    check_grad(mlp, [(4, 5), (6, 5), (6,), (3, 6), (3,)], high=1.0)


def test_conv_net():
    # conv2d + relu + max pool + flatten + dense
    def net(x, w, b, wd):
        y = relay.nn.conv2d(x, w, padding=1, channels=3, kernel_size=3)
        y = relay.nn.relu(relay.nn.bias_add(y, b))
        y = relay.nn.max_pool2d(y, pool_size=2, strides=2)
        y = relay.nn.avg_pool2d(y, pool_size=2, strides=1)
        return relay.nn.log_softmax(relay.nn.dense(relay.nn.batch_flatten(y), wd))

    check_grad(net, [(2, 2, 6, 6), (3, 2, 3, 3), (3,), (4, 12)], max_checks=25)


def test_let_bound_and_shared_nodes_accumulate():
    def build(x, y):
        t = relay.var("t")
        u = relay.var("u")
        shared = relay.multiply(x, y)  # used three times below
        body = relay.Let(
            t,
            relay.exp(shared),
            relay.Let(u, relay.add(t, shared), relay.multiply(u, relay.add(shared, t))),
        )
        return body

    gf = check_grad(build, [(3,), (3,)])
    # the let-bound names survive; the shared multiply is computed once
    text = gf.astext()
    assert "let %t" in text and "let %u" in text
    assert text.count("multiply(%p0, %p1)") == 1


def test_parameter_used_twice():
    x = relay.var("x", shape=(3,), dtype=F64)
    gf = relay.transform.gradient(relay.Function([x], relay.multiply(x, x)))
    value, (dx,) = run(gf)(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(value, [1, 4, 9])
    np.testing.assert_allclose(dx, [2, 4, 6])


def test_tuple_output_and_tuple_plumbing():
    def build(x, y):
        pair = relay.Tuple([relay.exp(x), relay.multiply(x, y)])
        swapped = relay.Tuple([relay.TupleGetItem(pair, 1), relay.TupleGetItem(pair, 0)])
        return relay.Tuple(
            [relay.TupleGetItem(swapped, 0), relay.sin(relay.TupleGetItem(swapped, 1))]
        )

    check_grad(build, [(2,), (2,)])


def test_tuple_parameter():
    t = relay.var("t", relay.TupleType([TensorType((2,), F64), TensorType((2,), F64)]))
    f = relay.Function(
        [t], relay.multiply(relay.TupleGetItem(t, 0), relay.exp(relay.TupleGetItem(t, 1)))
    )
    gf = relay.transform.gradient(f)
    a, b = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    _value, ((da, db),) = run(gf)((a, b))
    np.testing.assert_allclose(da, np.exp(b))
    np.testing.assert_allclose(db, a * np.exp(b))


def test_unused_and_constant_parameters_get_zeros():
    x = relay.var("x", shape=(2,), dtype=F64)
    y = relay.var("y", shape=(2,), dtype=F64)
    n = relay.var("n", shape=(2,), dtype="int32")
    f = relay.Function([x, y, n], relay.multiply(x, relay.cast(n, F64)))
    gf = relay.transform.gradient(f)
    _, (dx, dy, dn) = run(gf)(np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5, 6], "int32"))
    np.testing.assert_allclose(dx, [5, 6])
    np.testing.assert_allclose(dy, [0, 0])
    np.testing.assert_array_equal(dn, [0, 0])
    assert dn.dtype == np.int32


def test_integer_paths_need_no_rule():
    # argmax has no gradient rule, but no gradient flows through its int32 result
    check_grad(lambda x: relay.take(x, relay.argmax(x, axis=1), axis=1), [(3, 4)])


def test_output_is_a_parameter():
    x = relay.var("x", shape=(2,), dtype=F64)
    gf = relay.transform.gradient(relay.Function([x], x))
    _, (dx,) = run(gf)(np.array([3.0, 4.0]))
    np.testing.assert_allclose(dx, [1, 1])


def test_result_type():
    x = relay.var("x", shape=(2, 3), dtype=F64)
    w = relay.var("w", shape=(4, 3), dtype=F64)
    gf = relay.transform.gradient(relay.Function([x, w], relay.nn.dense(x, w)))
    t = gf.checked_type
    assert t.ret_type == relay.TupleType(
        [
            TensorType((2, 4), F64),
            relay.TupleType([TensorType((2, 3), F64), TensorType((4, 3), F64)]),
        ]
    )
    assert list(gf.params) == [x, w]  # the same parameters


def test_from_text_with_module_and_modes():
    mod = relay.parse(
        """
        def @main(%x: Tensor[(3), float64], %y: Tensor[(3), float64]) {
          let %s = add(%x, %y);
          multiply(%s, %s)
        }
        """
    )
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.5, 0.5])
    for mode in ("higher_order", "first_order"):
        gf = relay.transform.gradient(mod["main"], mod=mod, mode=mode)
        _, (dx, dy) = run(gf)(x, y)
        np.testing.assert_allclose(dx, 2 * (x + y))
        np.testing.assert_allclose(dy, 2 * (x + y))
    by_name = relay.transform.gradient("main", mod=mod)
    relay.assert_structural_equal(by_name, relay.transform.gradient(mod["main"], mod=mod))


def test_float32_program():
    x = relay.var("x", shape=(3,), dtype="float32")
    gf = relay.transform.gradient(relay.Function([x], relay.sigmoid(relay.multiply(x, 2.0))))
    _, (dx,) = run(gf)(np.array([0.0, 1.0, -1.0], "float32"))
    s = 1 / (1 + np.exp(-2 * np.array([0.0, 1.0, -1.0])))
    np.testing.assert_allclose(dx, 2 * s * (1 - s), rtol=1e-6)
    assert dx.dtype == np.float32


def test_long_chain_needs_no_recursion():
    # 3,000 chained ops at the default recursion limit: nothing recurses per node
    x = relay.var("x", shape=(2,), dtype=F64)
    body = x
    for i in range(3000):
        body = relay.add(relay.multiply(body, 0.999), 0.001) if i % 2 else relay.sin(body)
    gf = relay.transform.gradient(relay.Function([x], body))
    _value, (dx,) = run(gf)(np.array([0.3, -0.2]))
    assert dx.shape == (2,) and np.all(np.isfinite(dx))


def test_long_let_chain():
    x = relay.var("x", shape=(), dtype=F64)
    vars_ = [relay.var(f"v{i}") for i in range(2000)]
    body = vars_[-1]
    for i in reversed(range(2000)):
        prev = vars_[i - 1] if i else x
        body = relay.Let(vars_[i], relay.add(prev, 1.0), body)
    gf = relay.transform.gradient(relay.Function([x], relay.multiply(body, x)))
    value, (dx,) = run(gf)(np.array(1.0))
    assert float(value) == 2001.0 and float(dx) == 2002.0


_H_UNARY = [relay.sin, relay.tanh, relay.sigmoid, relay.negative, relay.nn.relu, relay.atan]
_H_BINARY = [relay.add, relay.subtract, relay.multiply, relay.maximum]
_H_SHAPES = [(2, 3), (3,), (2, 1), (1, 3)]


@st.composite
def _programs(draw):
    """A random expression DAG over three parameters of broadcastable shapes."""
    shapes = [draw(st.sampled_from(_H_SHAPES)) for _ in range(3)]
    steps = draw(
        st.lists(
            st.tuples(st.booleans(), st.integers(0, 5), st.integers(0, 100), st.integers(0, 100)),
            min_size=1,
            max_size=8,
        )
    )
    return shapes, steps


@settings(max_examples=30, deadline=None)
@given(_programs())
def test_random_programs(program):
    shapes, steps = program

    def build(*params):
        nodes = list(params)  # later steps may reuse any earlier node: a DAG
        for unary, op, i, j in steps:
            a, b = nodes[i % len(nodes)], nodes[j % len(nodes)]
            if unary:
                nodes.append(_H_UNARY[op % len(_H_UNARY)](a))
            else:
                nodes.append(_H_BINARY[op % len(_H_BINARY)](a, b))
        return relay.Tuple([nodes[-1], nodes[(len(nodes) + len(params)) // 2]])

    check_grad(build, shapes, max_checks=10, program_checks=False)


def test_input_function_is_left_unchanged():
    x = relay.var("x", shape=(2,), dtype=F64)
    t = relay.var("t")
    f = relay.Function([x], relay.Let(t, relay.exp(x), relay.multiply(t, x)))
    before = f.astext(show_types=False)
    relay.transform.gradient(f)
    assert f.astext(show_types=False) == before  # (InferType records types in place)


# --- errors ------------------------------------------------------------------------------------


def _grad_error(f, match, mod=None):
    with pytest.raises(RelayError, match=match):
        relay.transform.gradient(f, mod=mod)


def test_missing_rule_is_a_clear_error():
    x = relay.var("x", shape=(2, 3), dtype=F64)
    _grad_error(relay.Function([x], relay.prod(x, axis=1)), "no gradient registered for prod")
    y = relay.var("y", shape=(1, 1, 2, 2), dtype=F64)
    bilinear = relay.nn.upsampling(y, 2, 2, method="bilinear")
    _grad_error(relay.Function([y], bilinear), "no gradient registered for nn.upsampling other")


def test_control_flow_is_rejected():
    x = relay.var("x", shape=(), dtype=F64)
    f = relay.Function([x], relay.If(relay.greater(x, relay.const(0.0, F64)), x, relay.negative(x)))
    _grad_error(f, "`if` cannot be differentiated")


def test_calls_of_functions_are_rejected():
    mod = relay.parse(
        """
        def @sq(%a: Tensor[(2), float64]) { multiply(%a, %a) }
        def @main(%x: Tensor[(2), float64]) { @sq(%x) }
        """
    )
    _grad_error(mod["main"], "only calls of operators.*@sq", mod=mod)


def test_bad_arguments():
    x = relay.var("x", shape=(2,), dtype=F64)
    f = relay.Function([x], x)
    with pytest.raises(RelayError, match="mode must be"):
        relay.transform.gradient(f, mode="forward")
    with pytest.raises(RelayError, match="expects a Function"):
        relay.transform.gradient(relay.exp(x))
    y = relay.var("y")
    with pytest.raises(RelayError, match="static shape|tensor"):
        relay.transform.gradient(relay.Function([y], relay.exp(y)))


def test_user_rule_from_a_notebook():
    from relay_nb.op import register_op
    from relay_nb.op.registry import OpPattern, register_column
    from relay_nb.op.tensor import elemwise_rel

    name = "test_gradient.square"
    op = register_op(name, 1, elemwise_rel, pattern=OpPattern.ELEMWISE, override=True)
    register_column("impl", name, lambda args, attrs, out: args[0] * args[0], override=True)

    @grad_rule(name, override=True)
    def _square_grad(call, g):
        x = call.args[0]
        return [relay.multiply(g, relay.multiply(x, relay.const(2.0, x.checked_type.dtype)))]

    assert get_grad_rule(name) is _square_grad
    check_grad(lambda x: relay.Call(op, [x]), [(3,)])


# --- golden ------------------------------------------------------------------------------------


def test_golden_tiny(golden):
    mod = relay.parse(
        """
        def @main(%x: Tensor[(2, 3), float32], %b: Tensor[(3), float32]) {
          let %y = add(%x, %b);
          multiply(%y, sigmoid(%y))
        }
        """
    )
    gf = relay.transform.gradient(mod["main"], mod=mod)
    out = relay.IRModule.from_expr(gf)
    golden(
        "passes/gradient_tiny.out",
        "// pass: gradient\n// before:\n" + mod.astext() + "\n// after:\n" + out.astext() + "\n",
    )
