/* Per-channel int8 quantization of a 2x3 weight matrix, then back to float32. */
#include <qlinear/qlinear.h>
#include <stdio.h>

int main(void) {
  const float w[6] = {0.10f, -0.25f, 0.30f, 1.50f, -2.00f, 0.75f};
  const int64_t w_shape[2] = {2, 3}, per_row[1] = {2};
  const float scales[2] = {0.01f, 0.02f}; /* one per row: axis 0 */
  const qlinear_tensor x = {QLINEAR_DTYPE_FLOAT, 2, w_shape, w};
  const qlinear_tensor scale = {QLINEAR_DTYPE_FLOAT, 1, per_row, scales};
  qlinear_quantize_attrs attrs;
  qlinear_quantize_attrs_init(&attrs);
  attrs.axis = 0;
  attrs.output_dtype = QLINEAR_DTYPE_INT8; /* no zero point: zero */
  int8_t q[6];
  float back[6];
  qlinear_status s = qlinear_quantize_linear(&x, &scale, NULL, &attrs, q, sizeof q);
  if (s == QLINEAR_OK) {
    const qlinear_tensor xq = {QLINEAR_DTYPE_INT8, 2, w_shape, q};
    qlinear_dequantize_attrs dattrs;
    qlinear_dequantize_attrs_init(&dattrs);
    dattrs.axis = 0;
    s = qlinear_dequantize_linear(&xq, &scale, NULL, &dattrs, back, sizeof back);
  }
  if (s != QLINEAR_OK) {
    fprintf(stderr, "%s: %s\n", qlinear_status_name(s), qlinear_last_error());
    return 1;
  }
  for (int i = 0; i < 6; ++i) printf("%g -> %d -> %g\n", w[i], q[i], back[i]);
  return q[3] == 75 && q[4] == -100 ? 0 : 1;
}
