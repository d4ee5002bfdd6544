import numpy as np, qlinear
print(qlinear.quantize_linear(np.float32([-1.0, 0.26, 2.5, 9.0]), 0.5, output_dtype="int4"), qlinear.active_target())
