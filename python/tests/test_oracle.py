"""QuantizeLinear / DequantizeLinear against a NumPy formula written here (an oracle independent of
the library): int8, uint8, int16; per tensor and per axis; random data, exact ties, +-Inf, bounds.
Sizes are not multiples of any vector length."""
import numpy as np
import pytest

import qlinear

BOUNDS = {np.int8: (-128, 127), np.uint8: (0, 255), np.int16: (-32768, 32767)}


def oracle_quantize(x, s, zp, dtype, axis=None):
    """y = saturate(round_half_even(x / s) + zp), the division in float32 (the scale's type)."""
    lo, hi = BOUNDS[dtype]
    if axis is not None:
        shape = [1] * x.ndim
        shape[axis] = -1
        s, zp = s.reshape(shape), zp.reshape(shape)
    q = np.rint(x / s)  # float32 / float32 -> float32, rint rounds half to even
    return np.clip(q.astype(np.float64) + zp, lo, hi).astype(dtype)


def oracle_dequantize(q, s, zp, axis=None):
    """y = float32(q - zp) * s, one float32 product."""
    if axis is not None:
        shape = [1] * q.ndim
        shape[axis] = -1
        s, zp = s.reshape(shape), zp.reshape(shape)
    return (q.astype(np.int32) - zp.astype(np.int32)).astype(np.float32) * s


def random_x(rng, shape, scale):
    """Values around the whole code range and beyond, with exact ties of the scale mixed in."""
    x = (rng.standard_normal(shape) * 200 * scale).astype(np.float32)
    flat = x.reshape(-1)
    k = rng.integers(-40000, 40000, size=flat.size // 3)
    flat[: k.size] = ((k + 0.5) * np.float64(scale)).astype(np.float32)  # ties when scale is 2^-n
    flat[-3:] = [np.inf, -np.inf, -0.0]
    return x


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("scale", [0.25, 0.1, 3.0, 1e-3], ids=str)
def test_per_tensor(dtype, scale):
    rng = np.random.default_rng(7)
    x = random_x(rng, (5, 7, 131), scale)
    lo, hi = BOUNDS[dtype]
    for zp in (lo, 0 if lo < 0 else 1, (lo + hi) // 2, hi):
        s = np.float32(scale)
        z = np.array(zp, dtype=dtype)
        want = oracle_quantize(x, s, z, dtype)
        got = qlinear.quantize_linear(x, float(scale), z)
        assert got.dtype == dtype and got.shape == x.shape
        np.testing.assert_array_equal(got, want)
        # The same through a Python int zero point and an explicit output type.
        np.testing.assert_array_equal(qlinear.quantize_linear(x, s, int(zp), output_dtype=dtype), want)
        back = qlinear.dequantize_linear(got, s, z)
        np.testing.assert_array_equal(back.view(np.uint32), oracle_dequantize(got, s, z).view(np.uint32))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_per_axis(dtype, axis):
    rng = np.random.default_rng(11 + axis)
    shape = (3, 37, 65)
    dim = shape[axis]
    lo, hi = BOUNDS[dtype]
    s = (2.0 ** rng.integers(-6, 3, size=dim)).astype(np.float32)  # powers of two: exact ties
    s[::3] = rng.uniform(0.01, 2.0, size=s[::3].size).astype(np.float32)
    z = rng.integers(lo, hi + 1, size=dim).astype(dtype)
    x = random_x(rng, shape, 1.0)
    want = oracle_quantize(x, s, z, dtype, axis=axis % 3)
    got = qlinear.quantize_linear(x, s, z, axis=axis)
    np.testing.assert_array_equal(got, want)
    back = qlinear.dequantize_linear(got, s, z, axis=axis)
    np.testing.assert_array_equal(back.view(np.uint32), oracle_dequantize(got, s, z, axis=axis % 3).view(np.uint32))


def test_ties_round_half_to_even():
    s = np.float32(0.5)
    k = np.arange(-300, 300)
    x = ((k + 0.5) * 0.5).astype(np.float32)  # x / s = k + 0.5 exactly
    got = qlinear.quantize_linear(x, s, np.int16(0))
    np.testing.assert_array_equal(got, np.rint(k + 0.5).astype(np.int16))
    assert got[k == 0][0] == 0 and got[k == 1][0] == 2 and got[k == -1][0] == 0 and got[k == -2][0] == -2
