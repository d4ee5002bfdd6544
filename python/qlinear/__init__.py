"""qlinear: ONNX QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear on NumPy arrays.

Bit-exact with the ONNX semantics for every opset (10-25) and type, on the best SIMD target of
this CPU. A thin layer over the library's C ABI; see docs/python.md of the project.
"""
from ._qlinear import (
    NEWEST_OPSET,
    __version__,
    active_target,
    compiled_targets,
    dequantize_linear,
    dtype_name,
    dynamic_quantize_linear,
    dynamic_ranges,
    dynamic_scales,
    openmp_enabled,
    pack,
    quantize_dynamic,
    quantize_linear,
    quantize_linear_backward,
    quantize_linear_masked,
    set_target,
    supported_targets,
    unpack,
)

__all__ = [
    "NEWEST_OPSET",
    "__version__",
    "active_target",
    "compiled_targets",
    "dequantize_linear",
    "dtype_name",
    "dynamic_quantize_linear",
    "dynamic_ranges",
    "dynamic_scales",
    "openmp_enabled",
    "pack",
    "quantize_dynamic",
    "quantize_linear",
    "quantize_linear_backward",
    "quantize_linear_masked",
    "set_target",
    "supported_targets",
    "unpack",
]
