"""``image.resize2d`` against pixels computed by hand for 2x2 images."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from relay_nb.errors import EvalError
from relay_nb.op.registry import get_column, make_attrs


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def resize(x, size, **attrs):
    attrs = {"size": size, **attrs}
    out = get_column("impl")["image.resize2d"](
        [np.asarray(x)], make_attrs("image.resize2d", attrs), None
    )
    return out


IMG = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], "float32")


def plane(out):
    return out[0, 0].tolist()


def test_nearest_asymmetric_floor():
    # in = out * 2 / 4 = 0, 0.5, 1, 1.5 -> floor -> 0, 0, 1, 1
    got = resize(
        IMG,
        (4, 4),
        method="nearest_neighbor",
        coordinate_transformation_mode="asymmetric",
        rounding_method="",
    )
    assert plane(got) == [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]
    # 2 -> 3 is not an integer scale: in = 0, 0.667, 1.333 -> floor -> 0, 0, 1
    got = resize(
        IMG,
        (3, 3),
        method="nearest_neighbor",
        coordinate_transformation_mode="asymmetric",
        rounding_method="",
    )
    assert plane(got) == [[1, 1, 2], [1, 1, 2], [3, 3, 4]]


def test_nearest_half_pixel_roundings():
    # half_pixel: in = (out + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25
    got = resize(IMG, (4, 4), method="nearest_neighbor", rounding_method="round")
    assert plane(got) == [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]
    got = resize(IMG, (1, 4), method="nearest_neighbor", rounding_method="floor")
    # floor: -1 (clamped to 0), 0, 0, 1; the single row: in = 0.5 -> floor 0
    assert plane(got) == [[1, 1, 1, 2]]


def test_nearest_align_corners_rounds_halves_away_from_zero():
    # align_corners 2 -> 3: in = 0, 0.5, 1; TVM's round sends 0.5 to 1 (numpy would say 0)
    got = resize(
        IMG,
        (3, 3),
        method="nearest_neighbor",
        coordinate_transformation_mode="align_corners",
        rounding_method="",
    )
    assert plane(got) == [[1, 2, 2], [3, 4, 4], [3, 4, 4]]


@pytest.mark.parametrize(
    "rounding, row",
    [
        ("round_prefer_floor", [1, 1, 2]),
        ("round_prefer_ceil", [1, 2, 2]),
        ("floor", [1, 1, 2]),
        ("ceil", [1, 2, 2]),
        ("round", [1, 2, 2]),
    ],
)
def test_rounding_methods(rounding, row):
    got = resize(
        IMG,
        (1, 3),
        method="nearest_neighbor",
        coordinate_transformation_mode="align_corners",
        rounding_method=rounding,
    )
    assert plane(got) == [row]


def test_linear_half_pixel():
    # along W: in = -0.25, 0.25, 0.75, 1.25 -> 1, 1.25, 1.75, 2 (clamped at the border);
    # along H the step is 2, so the offsets double
    got = resize(IMG, (4, 4))
    cols = [0, 0.25, 0.75, 1]
    rows = [0, 0.5, 1.5, 2]
    np.testing.assert_allclose(plane(got), [[1 + r + c for c in cols] for r in rows], rtol=1e-6)


def test_linear_align_corners_and_asymmetric():
    got = resize(IMG, (3, 3), coordinate_transformation_mode="align_corners")
    np.testing.assert_allclose(plane(got), [[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]], rtol=1e-6)
    got = resize(IMG, (2, 4), coordinate_transformation_mode="asymmetric")
    np.testing.assert_allclose(plane(got), [[1, 1.5, 2, 2], [3, 3.5, 4, 4]], rtol=1e-6)


def test_cubic_align_corners():
    # at t = 1/3 with alpha = -0.5 the 4 weights are -2/27, 21/27, 9/27, -1/27 over the taps
    # (1, 1, 2, 2) (borders clamped): 1 + 8/27 for a unit step.  The image is 1 + x + 2y.
    got = resize(IMG, (4, 4), method="cubic", coordinate_transformation_mode="align_corners")
    g = 8 / 27
    offsets = [0, g, 1 - g, 1]
    expected = [[1 + ox + 2 * oy for ox in offsets] for oy in offsets]
    np.testing.assert_allclose(plane(got), expected, rtol=1e-6)


def test_cubic_exclude_renormalises():
    # the taps at -1 and 2 fall outside: weights 21/27 and 9/27 renormalised to 0.7, 0.3
    got = resize(
        IMG, (1, 4), method="cubic", coordinate_transformation_mode="align_corners", cubic_exclude=1
    )
    np.testing.assert_allclose(got[0, 0, 0, 1], 1 * 0.7 + 2 * 0.3, rtol=1e-6)


def test_integer_output_truncates():
    img = np.array([[[[0, 10], [20, 30]]]], "int32")
    got = resize(img, (1, 4))  # half_pixel along W; a single row reads y = 0.5 -> 10..
    assert got.dtype == np.int32
    # W: 0, 2.5, 7.5, 10 ; H: lerp 0.5 between rows 0 and 1 adds 10
    assert plane(got) == [[10, 12, 17, 20]]
    got = resize(IMG, (2, 2), out_dtype="int8")
    assert got.dtype == np.int8 and plane(got) == [[1, 2], [3, 4]]


def test_nhwc_layout():
    nhwc = IMG.transpose(0, 2, 3, 1)
    got = resize(nhwc, (3, 3), layout="NHWC", coordinate_transformation_mode="align_corners")
    assert got.shape == (1, 3, 3, 1)
    np.testing.assert_allclose(got[0, :, :, 0], [[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]], rtol=1e-6)


def test_tf_crop_and_resize_extrapolates():
    # W: start -1, end 1 -> in = -1, 0, 1 (the first column lies outside the image)
    # H: start 0, end 1 -> in = 0, 0.5, 1
    got = resize(
        IMG,
        (3, 3),
        coordinate_transformation_mode="tf_crop_and_resize",
        roi=(0.0, -1.0, 1.0, 1.0),
        extrapolation_value=-7.0,
    )
    np.testing.assert_allclose(plane(got), [[-7, 1, 2], [-7, 2, 3], [-7, 3, 4]], rtol=1e-6)


def test_pytorch_half_pixel_single_output():
    got = resize(IMG, (1, 1), coordinate_transformation_mode="pytorch_half_pixel")
    assert plane(got) == [[1]]


def test_bad_modes():
    with pytest.raises(EvalError):
        resize(IMG, (2, 2), coordinate_transformation_mode="diagonal")
    with pytest.raises(EvalError):
        resize(IMG, (2, 2), method="nearest_neighbor", rounding_method="sideways")
