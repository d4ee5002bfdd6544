"""Threads: calls release the GIL and may run at once; threads=N gives the serial bytes."""
import os
import signal
import threading

import numpy as np
import pytest

import qlinear

N = 600_000  # above 2 x 262144: a parallel call really splits


def data(seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((6, N // 6)) * 50).astype(np.float32)
    s = rng.uniform(0.05, 0.5, size=6).astype(np.float32)
    z = rng.integers(-8, 8, size=6).astype(np.int8)
    return x, s, z


def calls(x, s, z):
    """A mix of entry points and types, each a function of no arguments."""
    return [
        lambda: qlinear.quantize_linear(x, s, z, axis=0),
        lambda: qlinear.quantize_linear(x, s, z, axis=0, zero_point_dtype="int4"),
        lambda: qlinear.quantize_linear(x, s[0], output_dtype="float8e4m3fn"),
        lambda: qlinear.dequantize_linear(qlinear.quantize_linear(x, s, z, axis=0), s, z, axis=0),
        lambda: qlinear.quantize_linear(x, 0.25, 0, output_dtype="uint4", packed=True),
    ]


def test_eight_python_threads_at_once_give_the_serial_bytes():
    inputs = [data(seed) for seed in range(8)]
    serial = [[f() for f in calls(*inp)] for inp in inputs]
    results = [None] * 8
    errors = []
    barrier = threading.Barrier(8)

    def worker(i):
        try:
            fs = calls(*inputs[i])
            barrier.wait()
            results[i] = [f() for f in fs] + [f() for f in reversed(fs)][::-1]
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(8):
        got = results[i]
        assert len(got) == 2 * len(serial[i])
        for k, want in enumerate(serial[i] * 2):
            assert got[k].dtype == want.dtype
            np.testing.assert_array_equal(got[k], want)


@pytest.mark.parametrize("threads", [2, 0])
def test_parallel_entry_points_give_the_serial_bytes(threads):
    x, s, z = data(99)
    for axis, sc, zp, kw in [(0, s, z, {}), (1, 0.125, 3, {"output_dtype": "int16"}),
                             (0, s, z, {"zero_point_dtype": "int4"}),
                             (0, s, qlinear.pack(z, "int4"), {"zero_point_dtype": "int4", "packed": True})]:
        serial = qlinear.quantize_linear(x, sc, zp, axis=axis, **kw)
        parallel = qlinear.quantize_linear(x, sc, zp, axis=axis, threads=threads, **kw)
        np.testing.assert_array_equal(parallel, serial)
        out = np.empty_like(serial)
        assert qlinear.quantize_linear(x, sc, zp, axis=axis, threads=threads, out=out, **kw) is out
        np.testing.assert_array_equal(out, serial)
        back_kw = {k: v for k, v in kw.items() if k != "output_dtype"}
        if kw.get("zero_point_dtype"):
            back_kw["x_dtype"] = kw["zero_point_dtype"]
        if kw.get("packed"):
            back_kw["shape"] = x.shape
        back_serial = qlinear.dequantize_linear(serial, sc, zp, axis=axis, **back_kw)
        back = qlinear.dequantize_linear(serial, sc, zp, axis=axis, threads=threads, **back_kw)
        np.testing.assert_array_equal(back.view(np.uint32), back_serial.view(np.uint32))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
@pytest.mark.skipif((os.cpu_count() or 1) < 2 or os.environ.get("OMP_NUM_THREADS") == "1",
                    reason="one OpenMP thread: no team would start in the parent")
def test_threads_in_a_forked_child_finish():
    """multiprocessing's fork start method: the parent's OpenMP threads are gone in the child."""
    x, s, z = data(7)
    want = qlinear.quantize_linear(x, s, z, axis=0, threads=2)
    pid = os.fork()
    if pid == 0:
        ok = False
        try:
            signal.alarm(60)  # a hang ends the child by SIGALRM
            ok = np.array_equal(qlinear.quantize_linear(x, s, z, axis=0, threads=2), want)
        finally:
            os._exit(0 if ok else 1)  # never back into the test session
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), f"child ended by signal {os.WTERMSIG(status)}"
    assert os.WEXITSTATUS(status) == 0
