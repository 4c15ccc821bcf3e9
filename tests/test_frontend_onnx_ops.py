"""The ONNX operator table, one tiny model per case: interpreter and JIT vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from onnx_models import check, single  # noqa: E402
from relay_nb.op.registry import has_op  # noqa: E402

rng = np.random.default_rng(0)


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype("float32")


def i64(values):
    return np.asarray(values, dtype="int64")


X4 = f32(1, 4, 6, 6)
X3 = f32(2, 3, 5)
POS = f32(2, 3, 5, lo=0.1, hi=2.0)

# (id, op_type, inputs, attrs, opset); "const:name" inputs are initializers
CASES = [
    ("relu", "Relu", {"x": X3}, {}, 17),
    ("leaky_relu", "LeakyRelu", {"x": X3}, {"alpha": 0.2}, 17),
    ("sigmoid", "Sigmoid", {"x": X3}, {}, 17),
    ("tanh", "Tanh", {"x": X3}, {}, 17),
    ("hard_sigmoid", "HardSigmoid", {"x": X3}, {"alpha": 0.3, "beta": 0.4}, 17),
    ("hard_swish", "HardSwish", {"x": f32(2, 3, 5, lo=-5, hi=5)}, {}, 17),
    ("elu", "Elu", {"x": X3}, {"alpha": 0.7}, 17),
    ("selu", "Selu", {"x": X3}, {}, 17),
    ("softplus", "Softplus", {"x": X3}, {}, 17),
    ("prelu", "PRelu", {"x": X4, "const:slope": f32(4, 1, 1)}, {}, 17),
    ("clip_attr", "Clip", {"x": X3}, {"min": -0.5, "max": 0.7}, 6),
    ("clip_input", "Clip", {"x": X3, "const:lo": np.float32(-0.5), "const:hi": np.float32(0.7)}, {}, 13),
    ("clip_max_only", "Clip", {"x": X3, "": None, "const:hi": np.float32(0.7)}, {}, 13),
    ("add", "Add", {"a": X3, "b": f32(3, 5)}, {}, 17),
    ("sub", "Sub", {"a": X3, "b": f32(1, 5)}, {}, 17),
    ("mul", "Mul", {"a": X3, "b": f32(2, 1, 5)}, {}, 17),
    ("div", "Div", {"a": X3, "b": POS}, {}, 17),
    ("div_int", "Div", {"a": i64([7, -7, 9]), "b": i64([2, 2, -4])}, {}, 17),
    ("pow", "Pow", {"a": POS, "const:e": np.float32(2.5)}, {}, 17),
    ("sqrt", "Sqrt", {"x": POS}, {}, 17),
    ("exp", "Exp", {"x": X3}, {}, 17),
    ("log", "Log", {"x": POS}, {}, 17),
    ("neg", "Neg", {"x": X3}, {}, 17),
    ("abs", "Abs", {"x": X3}, {}, 17),
    ("reciprocal", "Reciprocal", {"x": POS}, {}, 17),
    ("erf", "Erf", {"x": X3}, {}, 17),
    ("floor", "Floor", {"x": X3}, {}, 17),
    ("sum3", "Sum", {"a": X3, "b": X3, "c": f32(5)}, {}, 17),
    ("max2", "Max", {"a": X3, "b": f32(3, 5)}, {}, 17),
    ("mean2", "Mean", {"a": X3, "b": X3}, {}, 17),
    ("gelu", "Gelu", {"x": X3}, {}, 20),
    ("gelu_tanh", "Gelu", {"x": X3}, {"approximate": "tanh"}, 20),
    ("matmul_2d", "MatMul", {"a": f32(3, 4), "b": f32(4, 5)}, {}, 17),
    ("matmul_3d_2d", "MatMul", {"a": f32(2, 3, 4), "const:w": f32(4, 5)}, {}, 17),
    ("matmul_batched", "MatMul", {"a": f32(2, 2, 3, 4), "b": f32(2, 1, 4, 5)}, {}, 17),
    ("matmul_vec", "MatMul", {"a": f32(4), "b": f32(2, 4, 3)}, {}, 17),
    ("gemm", "Gemm", {"a": f32(3, 4), "const:b": f32(5, 4), "const:c": f32(5)}, {"transB": 1}, 17),
    ("gemm_trans_alpha_beta", "Gemm", {"a": f32(4, 3), "b": f32(4, 5), "c": f32(3, 5)},
     {"transA": 1, "alpha": 0.5, "beta": 2.0}, 17),
    ("conv", "Conv", {"x": X4, "const:w": f32(6, 4, 3, 3), "const:b": f32(6)}, {"pads": [1, 1, 1, 1]}, 17),
    ("conv_stride_dilation", "Conv", {"x": X4, "const:w": f32(4, 4, 3, 3)},
     {"strides": [2, 2], "dilations": [2, 1], "pads": [2, 0, 1, 1]}, 17),
    ("conv_groups", "Conv", {"x": X4, "const:w": f32(8, 2, 3, 3)}, {"group": 2}, 17),
    ("conv_depthwise", "Conv", {"x": X4, "const:w": f32(4, 1, 3, 3)}, {"group": 4, "pads": [1, 1, 1, 1]}, 17),
    ("conv_same_upper", "Conv", {"x": f32(1, 4, 7, 7), "const:w": f32(2, 4, 4, 4)},
     {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, 17),
    ("conv_same_lower", "Conv", {"x": f32(1, 4, 7, 7), "const:w": f32(2, 4, 4, 4)}, {"auto_pad": "SAME_LOWER"}, 17),
    ("conv1d", "Conv", {"x": f32(1, 3, 10), "const:w": f32(4, 3, 3)}, {"pads": [1, 2]}, 17),
    ("conv_transpose", "ConvTranspose", {"x": X4, "const:w": f32(4, 3, 3, 3), "const:b": f32(3)},
     {"strides": [2, 2]}, 17),
    ("conv_transpose_pads", "ConvTranspose", {"x": X4, "const:w": f32(4, 2, 3, 3)},
     {"strides": [2, 2], "pads": [1, 0, 0, 1], "output_padding": [1, 1]}, 17),
    ("batch_norm", "BatchNormalization", {"x": X4, "const:s": f32(4), "const:b": f32(4), "const:m": f32(4),
                                          "const:v": f32(4, lo=0.5, hi=1.5)}, {"epsilon": 1e-3}, 15),
    ("instance_norm", "InstanceNormalization", {"x": X4, "const:s": f32(4), "const:b": f32(4)}, {}, 17),
    ("layer_norm", "LayerNormalization", {"x": X3, "const:s": f32(5), "const:b": f32(5)}, {}, 17),
    ("layer_norm_axis1", "LayerNormalization", {"x": X3, "const:s": f32(3, 5)}, {"axis": 1}, 17),
    ("lrn", "LRN", {"x": f32(1, 6, 4, 4, lo=0, hi=2)}, {"size": 3, "alpha": 0.01, "beta": 0.75, "bias": 1.5}, 17),
    ("maxpool", "MaxPool", {"x": X4}, {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, 17),
    ("maxpool_ceil", "MaxPool", {"x": f32(1, 2, 7, 7)}, {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, 17),
    ("maxpool_same", "MaxPool", {"x": f32(1, 2, 7, 7)}, {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}, 17),
    ("avgpool", "AveragePool", {"x": X4}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, 17),
    ("avgpool_count_pad", "AveragePool", {"x": X4}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
                                                     "count_include_pad": 1, "strides": [2, 2]}, 17),
    ("avgpool1d", "AveragePool", {"x": f32(1, 2, 9)}, {"kernel_shape": [3], "strides": [2]}, 17),
    ("global_avg", "GlobalAveragePool", {"x": X4}, {}, 17),
    ("global_max", "GlobalMaxPool", {"x": X4}, {}, 17),
    ("global_avg_1d", "GlobalAveragePool", {"x": X3}, {}, 17),
    ("flatten", "Flatten", {"x": X4}, {"axis": 2}, 17),
    ("reshape", "Reshape", {"x": X4, "const:s": i64([0, -1, 3])}, {}, 17),
    ("transpose", "Transpose", {"x": X4}, {"perm": [0, 2, 3, 1]}, 17),
    ("transpose_default", "Transpose", {"x": X3}, {}, 17),
    ("concat", "Concat", {"a": X3, "b": f32(2, 1, 5)}, {"axis": 1}, 17),
    ("softmax", "Softmax", {"x": X3}, {"axis": 1}, 17),
    ("softmax_v11", "Softmax", {"x": X3}, {"axis": 1}, 11),
    ("log_softmax", "LogSoftmax", {"x": X3}, {}, 17),
    ("reduce_mean", "ReduceMean", {"x": X4}, {"axes": [2, 3]}, 17),
    ("reduce_mean_v18", "ReduceMean", {"x": X4, "const:a": i64([1])}, {"keepdims": 0}, 18),
    ("reduce_sum", "ReduceSum", {"x": X4, "const:a": i64([-1])}, {}, 13),
    ("reduce_sum_all", "ReduceSum", {"x": X3}, {"keepdims": 0}, 13),
    ("reduce_max", "ReduceMax", {"x": X4}, {"axes": [1], "keepdims": 0}, 17),
    ("reduce_min", "ReduceMin", {"x": X4}, {"axes": [0, 2]}, 17),
    ("reduce_prod", "ReduceProd", {"x": f32(2, 3, lo=0.5, hi=1.5)}, {"axes": [1]}, 17),
    ("reduce_l2", "ReduceL2", {"x": X3}, {"axes": [2]}, 17),
    ("reduce_logsumexp", "ReduceLogSumExp", {"x": X3}, {"axes": [1], "keepdims": 0}, 17),
    ("argmax", "ArgMax", {"x": X3}, {"axis": 1}, 17),
    ("argmin", "ArgMin", {"x": X3}, {"axis": -1, "keepdims": 0}, 17),
    ("cast", "Cast", {"x": X3}, {"to": TensorProto.INT32}, 17),
    ("where", "Where", {"c": X3 > 0, "a": X3, "b": f32(5)}, {}, 17),
    ("equal", "Equal", {"a": i64([1, 2, 3]), "b": i64([1, 0, 3])}, {}, 17),
    ("less", "Less", {"a": X3, "b": f32(5)}, {}, 17),
    ("greater", "Greater", {"a": X3, "b": f32(3, 5)}, {}, 17),
    ("not", "Not", {"x": X3 > 0}, {}, 17),
    ("and", "And", {"a": X3 > 0, "b": X3 > 0.5}, {}, 17),
    ("or", "Or", {"a": X3 > 0, "b": X3 > 0.5}, {}, 17),
    ("pad", "Pad", {"x": X4, "const:p": i64([0, 0, 1, 2, 0, 0, 2, 1]), "const:v": np.float32(0.5)}, {}, 17),
    ("pad_reflect", "Pad", {"x": X4, "const:p": i64([0, 0, 1, 2, 0, 0, 2, 1])}, {"mode": "reflect"}, 17),
    ("pad_edge", "Pad", {"x": X4, "const:p": i64([0, 0, 1, 1, 0, 0, 1, 1])}, {"mode": "edge"}, 17),
    ("pad_negative", "Pad", {"x": X4, "const:p": i64([0, 0, -1, 2, 0, 0, 1, -2])}, {}, 17),
    ("pad_axes", "Pad", {"x": X4, "const:p": i64([1, 2, 3, 0]), "const:v": np.float32(-1), "const:a": i64([1, -1])}, {}, 18),
    ("pad_v2", "Pad", {"x": X4}, {"pads": [0, 0, 1, 1, 0, 0, 1, 1], "value": 1.5}, 2),
    ("split_equal", "Split", {"x": f32(2, 6)}, {"axis": 1, "_n": 3}, 17),
    ("split_sizes", "Split", {"x": f32(2, 6), "const:s": i64([1, 5])}, {"axis": 1, "_n": 2}, 17),
    ("split_attr", "Split", {"x": f32(6, 2)}, {"split": [2, 4], "_n": 2}, 11),
    ("slice", "Slice", {"x": X4, "const:s": i64([1, 0]), "const:e": i64([3, 100]), "const:a": i64([1, 3]),
                        "const:st": i64([1, 2])}, {}, 17),
    ("slice_negative", "Slice", {"x": X4, "const:s": i64([-1]), "const:e": i64([-100]), "const:a": i64([2]),
                                 "const:st": i64([-2])}, {}, 17),
    ("slice_v1", "Slice", {"x": X4}, {"starts": [0, 1], "ends": [1, -1], "axes": [0, 2]}, 9),
    ("squeeze", "Squeeze", {"x": f32(1, 3, 1, 5), "const:a": i64([0, 2])}, {}, 17),
    ("squeeze_attr", "Squeeze", {"x": f32(1, 3, 1, 5)}, {"axes": [2]}, 11),
    ("unsqueeze", "Unsqueeze", {"x": X3, "const:a": i64([0, -1])}, {}, 17),
    ("unsqueeze_attr", "Unsqueeze", {"x": X3}, {"axes": [1]}, 11),
    ("gather", "Gather", {"x": X3, "const:i": i64([[0, -1], [2, 1]])}, {"axis": 1}, 17),
    ("gather_input", "Gather", {"x": f32(6, 4), "i": i64([5, -2, 0])}, {}, 17),
    ("shape", "Shape", {"x": X4}, {}, 17),
    ("shape_slice", "Shape", {"x": X4}, {"start": 1, "end": -1}, 17),
    ("size", "Size", {"x": X4}, {}, 17),
    ("constant_of_shape", "ConstantOfShape", {"const:s": i64([2, 3])},
     {"value": helper.make_tensor("v", TensorProto.FLOAT, [1], [0.5])}, 17),
    ("identity", "Identity", {"x": X3}, {}, 17),
    ("dropout", "Dropout", {"x": X3}, {}, 17),
    ("expand", "Expand", {"x": f32(3, 1), "const:s": i64([2, 1, 4])}, {}, 17),
    ("tile", "Tile", {"x": f32(2, 3), "const:r": i64([2, 1])}, {}, 17),
    ("range", "Range", {"const:a": np.float32(1), "const:b": np.float32(4), "const:c": np.float32(0.5)}, {}, 17),
    ("trilu_lower", "Trilu", {"x": f32(4, 5), "const:k": i64(1)}, {"upper": 0}, 17),
    ("trilu_upper", "Trilu", {"x": f32(2, 4, 5)}, {}, 17),
    ("depth_to_space_dcr", "DepthToSpace", {"x": f32(1, 8, 2, 3)}, {"blocksize": 2}, 17),
    ("depth_to_space_crd", "DepthToSpace", {"x": f32(1, 8, 2, 3)}, {"blocksize": 2, "mode": "CRD"}, 17),
    ("space_to_depth", "SpaceToDepth", {"x": f32(1, 2, 4, 6)}, {"blocksize": 2}, 17),
    ("resize_nearest", "Resize", {"x": X4, "": None, "const:sc": np.array([1, 1, 2, 2], "float32")}, {}, 17),
    ("resize_linear", "Resize", {"x": X4, "": None, "const:sc": np.array([1, 1, 1.5, 2], "float32")},
     {"mode": "linear"}, 17),
    ("resize_sizes_align", "Resize", {"x": X4, "": None, " ": None, "const:sz": i64([1, 4, 9, 4])},
     {"mode": "linear", "coordinate_transformation_mode": "align_corners"}, 17),
    ("resize_pytorch_half_pixel", "Resize", {"x": X4, "": None, "const:sc": np.array([1, 1, 2, 2], "float32")},
     {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, 17),
    ("resize_cubic", "Resize", {"x": X4, "": None, "const:sc": np.array([1, 1, 2, 2], "float32")},
     {"mode": "cubic"}, 17),
    ("resize_nearest_asym", "Resize", {"x": X4, "": None, "const:sc": np.array([1, 1, 2, 3], "float32")},
     {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}, 17),
    ("dequantize", "DequantizeLinear", {"x": rng.integers(0, 255, (2, 3, 4)).astype("uint8"),
                                        "const:s": np.float32(0.05), "const:z": np.uint8(128)}, {}, 17),
    ("dequantize_axis", "DequantizeLinear", {"x": rng.integers(-100, 100, (2, 3, 4)).astype("int8"),
                                             "const:s": f32(3, lo=0.01, hi=0.1), "const:z": np.zeros(3, "int8")}, {"axis": 1}, 17),
    ("quantize", "QuantizeLinear", {"x": f32(2, 3, 4, lo=-3, hi=3), "const:s": np.float32(0.02),
                                    "const:z": np.int8(3)}, {}, 17),
    ("round", "Round", {"x": np.array([0.5, 1.5, -2.5, 2.4], "float32")}, {}, 17),
    ("ceil", "Ceil", {"x": X3}, {}, 17),
    ("sin", "Sin", {"x": X3}, {}, 17),
    ("cos", "Cos", {"x": X3}, {}, 17),
    ("sign", "Sign", {"x": X3}, {}, 17),
    ("isnan", "IsNaN", {"x": np.array([1.0, np.nan], "float32")}, {}, 17),
    ("min2", "Min", {"a": X3, "b": f32(5)}, {}, 17),
    ("mod", "Mod", {"a": i64([7, -7, 9]), "b": i64([3, 3, -4])}, {}, 17),
    ("fmod", "Mod", {"a": X3, "b": POS}, {"fmod": 1}, 17),
    ("xor", "Xor", {"a": X3 > 0, "b": X3 > 0.5}, {}, 17),
    ("less_equal", "LessOrEqual", {"a": X3, "b": f32(5)}, {}, 17),
    ("greater_equal", "GreaterOrEqual", {"a": X3, "b": f32(5)}, {}, 17),
    ("cast_like", "CastLike", {"a": X3, "const:b": i64([1])}, {}, 17),
    ("reduce_l1", "ReduceL1", {"x": X3}, {"axes": [1]}, 17),
    ("reduce_sum_square", "ReduceSumSquare", {"x": X3}, {"axes": [0, 2], "keepdims": 0}, 17),
    ("reduce_log_sum", "ReduceLogSum", {"x": POS}, {"axes": [2]}, 17),
    ("constant", "Constant", {}, {"value": helper.make_tensor("v", TensorProto.FLOAT, [2], [1.5, -2])}, 17),
    ("constant_ints", "Constant", {}, {"value_ints": [3, 4]}, 17),
    ("upsample", "Upsample", {"x": X4, "const:sc": np.array([1, 1, 2, 2], "float32")}, {}, 9),
    ("qlinear_conv", "QLinearConv", {
        "x": rng.integers(0, 255, (1, 4, 6, 6)).astype("uint8"), "const:xs": np.float32(0.02),
        "const:xz": np.uint8(120), "const:w": rng.integers(-60, 60, (6, 4, 3, 3)).astype("int8"),
        "const:ws": f32(6, lo=0.005, hi=0.02), "const:wz": np.zeros(6, "int8"), "const:ys": np.float32(0.05),
        "const:yz": np.uint8(100), "const:b": rng.integers(-500, 500, 6).astype("int32")},
     {"pads": [1, 1, 1, 1], "strides": [2, 2]}, 17),
    ("qlinear_conv_int8_depthwise", "QLinearConv", {
        "x": rng.integers(-128, 127, (1, 4, 5, 5)).astype("int8"), "const:xs": np.float32(0.03),
        "const:xz": np.int8(-3), "const:w": rng.integers(-100, 100, (4, 1, 3, 3)).astype("int8"),
        "const:ws": np.float32(0.01), "const:wz": np.int8(0), "const:ys": np.float32(0.04),
        "const:yz": np.int8(5)}, {"group": 4}, 17),
    ("qlinear_matmul", "QLinearMatMul", {
        "a": rng.integers(0, 255, (2, 3, 8)).astype("uint8"), "const:as": np.float32(0.02),
        "const:az": np.uint8(128), "const:b": rng.integers(0, 255, (8, 5)).astype("uint8"),
        "const:bs": np.float32(0.03), "const:bz": np.uint8(120), "const:ys": np.float32(0.1),
        "const:yz": np.uint8(110)}, {}, 17),
    ("conv_integer", "ConvInteger", {"x": rng.integers(0, 255, (1, 2, 5, 5)).astype("uint8"),
                                     "const:w": rng.integers(0, 255, (3, 2, 3, 3)).astype("uint8"),
                                     "const:xz": np.uint8(128), "const:wz": np.uint8(127)}, {}, 17),
    ("matmul_integer", "MatMulInteger", {"a": rng.integers(0, 255, (3, 4)).astype("uint8"),
                                         "b": rng.integers(0, 255, (4, 2)).astype("uint8"),
                                         "const:az": np.uint8(120),
                                         "const:bz": np.uint8(126)}, {}, 17),
    ("tan", "Tan", {"x": f32(2, 3, lo=-1, hi=1)}, {}, 17),
    ("asin", "Asin", {"x": f32(2, 3, lo=-0.9, hi=0.9)}, {}, 17),
    ("acos", "Acos", {"x": f32(2, 3, lo=-0.9, hi=0.9)}, {}, 17),
    ("atan", "Atan", {"x": X3}, {}, 17),
    ("sinh", "Sinh", {"x": X3}, {}, 17),
    ("cosh", "Cosh", {"x": X3}, {}, 17),
    ("asinh", "Asinh", {"x": X3}, {}, 17),
    ("acosh", "Acosh", {"x": f32(2, 3, lo=1.1, hi=3)}, {}, 17),
    ("atanh", "Atanh", {"x": f32(2, 3, lo=-0.9, hi=0.9)}, {}, 17),
    ("bitwise_not", "BitwiseNot", {"x": i64([0, 5, -3])}, {}, 18),
    ("bitwise_and", "BitwiseAnd", {"a": i64([12, 5, -3]), "b": i64([10, 3, 7])}, {}, 18),
    ("bitwise_or", "BitwiseOr", {"a": i64([12, 5, -3]), "b": i64([10, 3, 7])}, {}, 18),
    ("bitwise_xor", "BitwiseXor", {"a": i64([12, 5, -3]), "b": i64([10, 3, 7])}, {}, 18),
    ("bit_shift", "BitShift", {"a": np.array([1, 4, 255], "uint8"), "b": np.array([1, 2, 3], "uint8")},
     {"direction": "RIGHT"}, 17),
    ("bit_shift_left", "BitShift", {"a": np.array([1, 4, 9], "uint32"), "b": np.array([1, 2, 3], "uint32")},
     {"direction": "LEFT"}, 17),
    ("softsign", "Softsign", {"x": X3}, {}, 17),
    ("mish", "Mish", {"x": X3}, {}, 18),
    ("celu", "Celu", {"x": X3}, {"alpha": 0.8}, 17),
    ("thresholded_relu", "ThresholdedRelu", {"x": X3}, {"alpha": 0.5}, 17),
    ("shrink", "Shrink", {"x": X3}, {"lambd": 0.6, "bias": 0.2}, 17),
    ("isinf", "IsInf", {"x": np.array([1.0, np.inf, -np.inf, np.nan], "float32")}, {}, 17),
    ("isinf_negative", "IsInf", {"x": np.array([1.0, np.inf, -np.inf], "float32")}, {"detect_positive": 0}, 17),
    ("lp_norm", "LpNormalization", {"x": X3}, {"axis": 1}, 17),
    ("lp_norm_l1", "LpNormalization", {"x": X3}, {"p": 1}, 17),
    ("mvn", "MeanVarianceNormalization", {"x": X4}, {}, 17),
    ("scatter_elements", "ScatterElements", {"x": f32(3, 4), "const:i": i64([[1, 0, 2, 0]]),
                                             "u": f32(1, 4)}, {"axis": 0}, 17),
    ("scatter_v10", "Scatter", {"x": f32(3, 4), "const:i": i64([[1, 0, 2, 0]]), "u": f32(1, 4)}, {"axis": 0}, 10),
    ("scatter_nd", "ScatterND", {"x": f32(4, 3), "const:i": i64([[1], [3]]), "u": f32(2, 3)}, {}, 17),
    ("hardmax", "Hardmax", {"x": X3}, {"axis": 1}, 17),
    ("topk", "TopK", {"x": X3, "const:k": i64([2])}, {"axis": -1, "_n": 2}, 17),
    ("cumsum", "CumSum", {"x": X3, "const:a": i64(1)}, {}, 17),
    ("cumsum_reverse_exclusive", "CumSum", {"x": X3, "const:a": i64(2)}, {"reverse": 1, "exclusive": 1}, 17),
    ("gather_elements", "GatherElements", {"x": X3, "const:i": i64(rng.integers(0, 3, (2, 2, 5)))}, {"axis": 1}, 17),
    ("gather_nd", "GatherND", {"x": X3, "const:i": i64([[0, 1], [1, 2]])}, {}, 17),
    ("one_hot", "OneHot", {"i": i64([0, -1, 2, 1]), "const:d": i64(4), "const:v": np.array([0, 1], "float32")}, {}, 17),
    ("einsum", "Einsum", {"a": f32(2, 3, 4), "b": f32(2, 4, 5)}, {"equation": "bij,bjk->bik"}, 17),
]

# ONNX op -> the Relay operator it needs that another branch adds
from relay_nb.frontend.onnx_ops import NEEDS  # noqa: E402


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_op(case):
    name, op_type, inputs, attrs, opset = case
    for needed in NEEDS.get(op_type, ()):
        if not has_op(needed):
            pytest.skip(f"Relay operator {needed!r} is not registered yet (added on another branch)")
    attrs = dict(attrs)
    n_out = attrs.pop("_n", 1)
    model = single(op_type, inputs, attrs, opset=opset, n_out=n_out)
    feeds = {k: np.asarray(v) for k, v in inputs.items() if v is not None and k.strip() and not k.startswith("const:")}
    check(model, feeds)


def test_every_table_op_has_a_case():
    from relay_nb.frontend.onnx_ops import ONNX_OPS

    tested = {c[1] for c in CASES}
    # covered through the whole-model tests (tests/onnx_models.py)
    tested |= {"LSTM", "GRU", "RNN"}
    assert set(ONNX_OPS) <= tested, sorted(set(ONNX_OPS) - tested)
