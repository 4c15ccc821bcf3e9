"""relay.testing: TVM's workload builders -- signatures, names, weights, and what they compute."""

from __future__ import annotations

import numpy as np
import pytest

import relay_nb as relay

T = relay.testing

# Small inputs keep these fast; every builder is called with TVM's own signature.
WORKLOADS = {
    "mlp": lambda: T.mlp.get_workload(1),
    "resnet-18": lambda: T.resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10),
    "resnet-50": lambda: T.resnet.get_workload(num_layers=50, batch_size=1),
    "resnet_3d-18": lambda: T.resnet_3d.get_workload(num_layers=18, image_shape=(3, 4, 32, 32), num_classes=5),
    "mobilenet": lambda: T.mobilenet.get_workload(image_shape=(3, 64, 64), num_classes=10),
    "squeezenet-1.0": lambda: T.squeezenet.get_workload(image_shape=(3, 96, 96), num_classes=10),
    "squeezenet-1.1": lambda: T.squeezenet.get_workload(version="1.1", image_shape=(3, 96, 96), num_classes=10),
    "vgg-11": lambda: T.vgg.get_workload(1, image_shape=(3, 32, 32), num_classes=10),
    "vgg-16-bn": lambda: T.vgg.get_workload(1, image_shape=(3, 32, 32), num_classes=10, num_layers=16, batch_norm=True),
    "densenet-121": lambda: T.densenet.get_workload(121, classes=10, batch_size=1),
    "inception_v3": lambda: T.inception_v3.get_workload(),
    "dqn": lambda: T.dqn.get_workload(1),
    "dcgan": lambda: T.dcgan.get_workload(1, ngf=8),
    "synthetic": lambda: T.synthetic.get_workload(),
    "lstm": lambda: T.lstm.get_workload(3, 8),
}

# (output type, number of parameters, a few parameter names and shapes, as TVM names them)
EXPECTED = {
    "mlp": ("Tensor[(1, 10), float32]", 6, {"fc1_weight": (128, 784), "fc3_bias": (10,)}),
    "resnet-18": ("Tensor[(1, 10), float32]", 95, {"conv0_weight": (64, 3, 3, 3), "stage3_unit1_sc_weight": (256, 128, 1, 1)}),
    "resnet-50": (
        "Tensor[(1, 1000), float32]",
        None,
        {"conv0_weight": (64, 3, 7, 7), "stage4_unit3_conv3_weight": (2048, 512, 1, 1), "fc1_weight": (1000, 2048)},
    ),
    "resnet_3d-18": ("Tensor[(1, 5), float32]", None, {"conv0_weight": (64, 3, 3, 3, 3)}),
    "mobilenet": ("Tensor[(1, 10), float32]", None, {"separable_conv_block_13_weight": (1024, 1, 3, 3)}),
    "squeezenet-1.0": ("Tensor[(1, 10), float32]", None, {"conv1_weight": (96, 3, 7, 7), "fire8_right_conv_weight": (256, 64, 3, 3)}),
    "squeezenet-1.1": ("Tensor[(1, 10), float32]", None, {"conv1_weight": (64, 3, 3, 3)}),
    "vgg-11": ("Tensor[(1, 10), float32]", 22, {"conv5_2_weight": (512, 512, 3, 3), "fc6_weight": (4096, 512)}),
    "vgg-16-bn": ("Tensor[(1, 10), float32]", None, {"bn3_3_gamma": (256,)}),
    "densenet-121": ("Tensor[(1, 10), float32]", None, {"conv2d_2_3_15_weight": (32, 128, 3, 3), "dense_weight": (10, 512)}),
    "inception_v3": ("Tensor[(1, 1000), float32]", None, {"mixed_10_tower_1_mixed_conv_1_conv1_weight": (384, 384, 3, 1), "fc2_bias": (1000,)}),
    "dqn": ("Tensor[(1, 18), float32]", 10, {"conv1_weight": (32, 4, 8, 8), "dense1_weight": (512, 3136)}),
    "dcgan": ("Tensor[(1, 3, 64, 64), float32]", None, {"dense_weight": (1024, 100), "g5_deconv_weight": (8, 3, 4, 4)}),
    "synthetic": ("Tensor[(1, 3, 24, 12), float32]", 9, {"conv2_weight": (3, 3, 3, 3)}),
    "lstm": ("Tensor[(1, 8), float32]", 12, {"i2h_2_weight": (32, 8), "h2h_0_bias": (32,)}),
}


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_workload_types_and_parameter_names(name):
    mod, params = WORKLOADS[name]()
    out, count, shapes = EXPECTED[name]
    assert str(mod["main"].checked_type.ret_type) == out
    if count is not None:
        assert len(params) == count
    for pname, shape in shapes.items():
        assert params[pname].shape == shape and params[pname].dtype == np.float32
    # every parameter but the inputs has a value, of exactly its type
    for p in mod["main"].params:
        if p.name_hint != "data":
            assert params[p.name_hint].shape == tuple(p.checked_type.shape)


def test_resnet_50_has_the_usual_size():
    _, params = WORKLOADS["resnet-50"]()
    # The convolutions and the classifier of every ResNet-50: torchvision's 25,557,032
    # weights less its batch norms' 2 x 26,560 (this one is pre-activation, so its batch
    # norms sit elsewhere and are counted apart).
    convs = sum(v.size for k, v in params.items() if k.endswith("_weight")) + params["fc1_bias"].size
    assert convs == 25_557_032 - 2 * 26_560


def test_weights_are_deterministic_and_xavier_bounded():
    _, a = T.mlp.get_workload(1)
    _, b = T.mlp.get_workload(1)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    w = a["fc1_weight"]  # fan_in 784, fan_out 128: bound sqrt(3 / 456)
    bound = np.sqrt(3 / ((784 + 128) / 2))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.mean()) < 0.01 * bound
    assert not a["fc1_bias"].any()
    mod, p2 = T.create_workload(T.mlp.get_net(1), seed=1)
    assert not np.array_equal(p2["fc1_weight"], w)
    _, r = WORKLOADS["resnet-18"]()
    assert (r["bn1_gamma"] == 1).all() and (r["bn1_moving_var"] == 1).all() and not r["bn1_moving_mean"].any()


def _softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_mlp_computes_what_numpy_computes():
    mod, params = T.mlp.get_workload(2)
    x = np.random.default_rng(0).standard_normal((2, 1, 28, 28)).astype("float32")
    h = x.reshape(2, -1).astype("float64")
    for i in (1, 2, 3):
        h = h @ params[f"fc{i}_weight"].T + params[f"fc{i}_bias"]
        if i < 3:
            h = np.maximum(h, 0)
    expected = _softmax(h)
    names = [p.name_hint for p in mod["main"].params]
    args = [x if n == "data" else params[n] for n in names]
    np.testing.assert_allclose(relay.create_executor("interpreter", mod=mod).evaluate()(*args), expected, rtol=1e-5)
    lib = relay.build(mod, params=params)  # weights bound: the library takes only data
    np.testing.assert_allclose(lib(x), expected, rtol=1e-5)


def test_lstm_computes_an_lstm():
    iterations, hidden = 3, 4
    mod, params = T.lstm.get_workload(iterations, hidden)
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((1, hidden)).astype("float32") for _ in range(iterations)]
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    h = c = np.zeros((1, hidden))
    for i, x in enumerate(xs):
        g = x @ params[f"i2h_{i}_weight"].T + params[f"i2h_{i}_bias"] + h @ params[f"h2h_{i}_weight"].T + params[f"h2h_{i}_bias"]
        i_g, f_g, t_g, o_g = np.split(g, 4, axis=1)
        c = sig(f_g) * c + sig(i_g) * np.tanh(t_g)
        h = sig(o_g) * np.tanh(c)
    data = iter(xs)
    args = [next(data) if p.name_hint == "data" else params[p.name_hint] for p in mod["main"].params]
    for executor in ("interpreter", "jit"):
        out = relay.create_executor(executor, mod=mod).evaluate()(*args)
        np.testing.assert_allclose(out, h, rtol=1e-5, atol=1e-6)


def test_resnet_runs_the_same_interpreted_jitted_and_built_with_params():
    mod, params = WORKLOADS["resnet-18"]()
    x = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype("float32")
    args = [x if p.name_hint == "data" else params[p.name_hint] for p in mod["main"].params]
    ref = relay.create_executor("interpreter", mod=mod).evaluate()(*args)
    assert ref.shape == (1, 10) and abs(float(ref.sum()) - 1) < 1e-5
    np.testing.assert_allclose(relay.create_executor("jit", mod=mod).evaluate()(*args), ref, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(relay.build(mod, params=params)(x), ref, rtol=1e-4, atol=1e-6)


def test_dcgan_makes_an_image_in_tanh_range():
    mod, params = WORKLOADS["dcgan"]()
    code = np.random.default_rng(3).standard_normal((1, 100)).astype("float32")
    img = relay.build(mod, params=params)(code)
    assert img.shape == (1, 3, 64, 64) and np.abs(img).max() <= 1 and img.std() > 0


def test_binding_a_wrong_array_is_an_error():
    mod, params = T.mlp.get_workload(1)
    bad = dict(params, fc1_weight=np.zeros((3, 3), "float32"))
    with pytest.raises(relay.RelayError, match=r"parameter %fc1_weight is Tensor\[\(128, 784\), float32\]"):
        relay.build(mod, params=bad)
    bound = relay.build_module.bind_params_by_name(mod["main"], {"fc1_bias": params["fc1_bias"], "nope": 1})
    assert [p.name_hint for p in bound.params] == ["data", "fc1_weight", "fc2_weight", "fc2_bias", "fc3_weight", "fc3_bias"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: T.resnet.get_workload(num_layers=17), "no ResNet of 17 layers"),
        (lambda: T.vgg.get_workload(1, num_layers=12), "invalid num_layers 12"),
        (lambda: T.squeezenet.get_workload(version="2.0"), "unsupported SqueezeNet version"),
        (lambda: T.dcgan.get_workload(1, oshape=(3, 32, 32)), "makes 64x64 images"),
    ],
)
def test_bad_workload_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()
