"""Type stubs for qlinear (ONNX QuantizeLinear / DequantizeLinear on NumPy arrays)."""
from typing import Any, List, Literal, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str
NEWEST_OPSET: int

# A type: ONNX name in lower case ("float32", "int4", "float8e4m3fn", "bfloat16", ...),
# TensorProto code (a Python or NumPy integer), or a NumPy dtype (for the types NumPy has).
DType = Union[str, int, np.integer[Any], np.dtype[Any], type]
# An array (or anything NumPy can view: buffer protocol, __array__).
Array = npt.ArrayLike
Number = Union[int, float, np.integer[Any], np.floating[Any]]

def quantize_linear(
    x: Array,
    scale: Union[Array, Number],
    zero_point: Optional[Union[Array, Number]] = None,
    *,
    axis: int = 1,
    block_size: int = 0,
    output_dtype: Optional[DType] = None,
    saturate: bool = True,
    precision: Optional[DType] = None,
    opset: int = 25,
    x_dtype: Optional[DType] = None,
    scale_dtype: Optional[DType] = None,
    zero_point_dtype: Optional[DType] = None,
    packed: bool = False,
    shape: Optional[Sequence[int]] = None,
    first: Optional[int] = None,
    count: Optional[int] = None,
    threads: Optional[int] = None,
    out: Optional[npt.NDArray[Any]] = None,
) -> npt.NDArray[Any]:
    """ONNX QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point)."""

def dequantize_linear(
    x: Array,
    scale: Union[Array, Number],
    zero_point: Optional[Union[Array, Number]] = None,
    *,
    axis: int = 1,
    block_size: int = 0,
    output_dtype: Optional[DType] = None,
    opset: int = 25,
    x_dtype: Optional[DType] = None,
    scale_dtype: Optional[DType] = None,
    zero_point_dtype: Optional[DType] = None,
    packed: bool = False,
    shape: Optional[Sequence[int]] = None,
    first: Optional[int] = None,
    count: Optional[int] = None,
    threads: Optional[int] = None,
    out: Optional[npt.NDArray[Any]] = None,
) -> npt.NDArray[Any]:
    """ONNX DequantizeLinear: y = (x - zero_point) * scale."""

def dynamic_quantize_linear(
    x: Array, *, out: Optional[npt.NDArray[np.uint8]] = None
) -> Tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32], npt.NDArray[np.uint8]]:
    """ONNX DynamicQuantizeLinear: (y, scale, zero_point) of a float32 array."""

def quantize_dynamic(
    x: Array,
    output_dtype: DType,
    *,
    rule: Literal["absmax", "minmax", "mx", "pow2_ceil"] = "absmax",
    granularity: Literal["block", "axis", "tensor"] = "block",
    axis: Optional[int] = None,
    block_size: Optional[int] = None,
    scale_dtype: Optional[DType] = None,
    x_dtype: Optional[DType] = None,
    packed: bool = False,
    threads: Optional[int] = None,
) -> Tuple[npt.NDArray[Any], npt.NDArray[Any], Optional[npt.NDArray[Any]]]:
    """Quantization with scales computed from the data: (y, scale, zero_point or None)."""

def dynamic_ranges(
    x: Array,
    output_dtype: DType,
    *,
    rule: Literal["absmax", "minmax", "mx", "pow2_ceil"] = "absmax",
    granularity: Literal["block", "axis", "tensor"] = "block",
    axis: Optional[int] = None,
    block_size: Optional[int] = None,
    scale_dtype: Optional[DType] = None,
    x_dtype: Optional[DType] = None,
    shape: Optional[Sequence[int]] = None,
    first: Optional[int] = None,
    count: Optional[int] = None,
) -> npt.NDArray[np.float32]:
    """Per-group ranges [groups, 2] of a shard (combine shards with numpy.maximum)."""

def dynamic_scales(
    ranges: npt.NDArray[np.float32],
    output_dtype: DType,
    *,
    shape: Sequence[int],
    rule: Literal["absmax", "minmax", "mx", "pow2_ceil"] = "absmax",
    granularity: Literal["block", "axis", "tensor"] = "block",
    axis: Optional[int] = None,
    block_size: Optional[int] = None,
    scale_dtype: Optional[DType] = None,
    x_dtype: Optional[DType] = None,
    packed: bool = False,
) -> Tuple[npt.NDArray[Any], Optional[npt.NDArray[Any]]]:
    """quantize_dynamic's (scale, zero_point or None) from reduced ranges."""

def quantize_linear_masked(
    x: Array,
    scale: Union[Array, Number],
    zero_point: Optional[Union[Array, Number]] = None,
    *,
    axis: int = 1,
    block_size: int = 0,
    output_dtype: Optional[DType] = None,
    saturate: bool = True,
    precision: Optional[DType] = None,
    opset: int = 25,
    x_dtype: Optional[DType] = None,
    scale_dtype: Optional[DType] = None,
    zero_point_dtype: Optional[DType] = None,
    packed: bool = False,
    out: Optional[npt.NDArray[Any]] = None,
) -> Tuple[npt.NDArray[Any], npt.NDArray[np.uint8]]:
    """QuantizeLinear plus the clamp bit mask (bit i % 8 of byte i // 8)."""

def quantize_linear_backward(
    x: Array,
    scale: Union[Array, Number],
    zero_point: Optional[Union[Array, Number]] = None,
    *,
    dy: Array,
    lda: float = 1.0,
    mask: Optional[Array] = None,
    axis: int = 1,
    block_size: int = 0,
    output_dtype: Optional[DType] = None,
    saturate: bool = True,
    precision: Optional[DType] = None,
    opset: int = 25,
    x_dtype: Optional[DType] = None,
    scale_dtype: Optional[DType] = None,
    zero_point_dtype: Optional[DType] = None,
    dy_dtype: Optional[DType] = None,
    packed: bool = False,
    out: Optional[npt.NDArray[Any]] = None,
) -> npt.NDArray[Any]:
    """QuantizeLinear's backward pass: dx = clamped ? 0 : dy * (lda / scale)."""

def pack(codes: Array, dtype: DType) -> npt.NDArray[np.uint8]:
    """One 4-/2-bit code per element -> ONNX raw_data bytes (flat uint8)."""

def unpack(packed: Array, dtype: DType, shape: Sequence[int]) -> npt.NDArray[Any]:
    """ONNX raw_data bytes of a 4-/2-bit type -> one code per element, in `shape`."""

def active_target() -> str:
    """The SIMD target the calls run on here."""

def compiled_targets() -> List[str]:
    """SIMD targets compiled into the library, best first."""

def supported_targets() -> List[str]:
    """Compiled SIMD targets this CPU can run, best first."""

def set_target(name: Optional[str]) -> None:
    """Pins later calls to one SIMD target (a name in either case); None or "" unpins."""

def openmp_enabled() -> bool:
    """Whether threads=N runs on OpenMP."""

def dtype_name(dtype: DType) -> str:
    """The ONNX name of a type."""
