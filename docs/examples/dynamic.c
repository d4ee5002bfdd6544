/* Dynamic quantization of a 2x64 float32 matrix with each rule: the scales come from the data,
 * and DequantizeLinear of the outputs gives the matrix back (printed: the largest error). */
#include <qlinear/qlinear.h>
#include <math.h>
#include <stdio.h>

static int Run(const char* what, const qlinear_tensor* x, const qlinear_dynamic_attrs* a,
               const int64_t* scale_shape, int32_t scale_rank) {
  uint8_t y[128], scales[1024], zero_points[64];
  size_t y_bytes, scale_bytes, zp_bytes;
  if (qlinear_quantize_dynamic_output_info(x, a, &y_bytes, &scale_bytes, &zp_bytes) != QLINEAR_OK ||
      qlinear_quantize_dynamic(x, a, y, sizeof(y), scales, sizeof(scales),
                               a->rule == QLINEAR_SCALE_MINMAX ? zero_points : NULL,
                               sizeof(zero_points)) != QLINEAR_OK) {
    printf("%s: %s\n", what, qlinear_last_error());
    return 1;
  }
  /* Back to float32 with the scales written (the QuantizeLinear attributes give axis/block). */
  qlinear_quantize_attrs q;
  qlinear_quantize_attrs_for_dynamic(a, &q);
  qlinear_dequantize_attrs d;
  qlinear_dequantize_attrs_init(&d);
  d.axis = q.axis;
  d.block_size = q.block_size;
  d.output_dtype = QLINEAR_DTYPE_FLOAT;
  const int32_t scale_type = a->rule >= QLINEAR_SCALE_MX ? QLINEAR_DTYPE_FLOAT8E8M0 : QLINEAR_DTYPE_FLOAT;
  const qlinear_tensor ty = {a->output_dtype, x->rank, x->shape, y};
  const qlinear_tensor ts = {scale_type, scale_rank, scale_shape, scales};
  const qlinear_tensor tz = {a->output_dtype, scale_rank, scale_shape, zero_points};
  float back[128];
  if (qlinear_dequantize_linear(&ty, &ts, a->rule == QLINEAR_SCALE_MINMAX ? &tz : NULL, &d, back,
                                sizeof(back)) != QLINEAR_OK) {
    printf("%s: %s\n", what, qlinear_last_error());
    return 1;
  }
  float err = 0.0f;
  for (int i = 0; i < 128; ++i) err = fmaxf(err, fabsf(((const float*)x->data)[i] - back[i]));
  printf("%-32s %zu scale bytes, max |x - DQ(Q(x))| = %g\n", what, scale_bytes, err);
  return 0;
}

int main(void) {
  float w[128];
  for (int i = 0; i < 128; ++i) w[i] = sinf(0.1f * (float)i) * (i < 64 ? 1.0f : 8.0f);
  const int64_t shape[2] = {2, 64}, rows[1] = {2}, blocks32[2] = {2, 2};
  const qlinear_tensor x = {QLINEAR_DTYPE_FLOAT, 2, shape, w};
  qlinear_dynamic_attrs a;
  int failed = 0;

  qlinear_dynamic_attrs_init(&a); /* ABSMAX, blocks of 32 along the last axis */
  a.output_dtype = QLINEAR_DTYPE_INT8;
  a.granularity = QLINEAR_GRANULARITY_AXIS; /* per row: axis 0 */
  a.axis = 0;
  a.block_size = 0;
  failed |= Run("ABSMAX int8, per row", &x, &a, rows, 1);

  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_UINT4;
  a.rule = QLINEAR_SCALE_MINMAX; /* scale and zero point per block of 32 */
  failed |= Run("MINMAX uint4, blocks of 32", &x, &a, blocks32, 2);

  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_FLOAT4E2M1;
  a.rule = QLINEAR_SCALE_MX; /* MXFP4: float8e8m0 scale per block of 32 */
  failed |= Run("MX float4e2m1 (MXFP4)", &x, &a, blocks32, 2);

  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_FLOAT8E4M3FN;
  a.rule = QLINEAR_SCALE_POW2_CEIL; /* powers of two that never saturate */
  failed |= Run("POW2_CEIL float8e4m3fn", &x, &a, blocks32, 2);
  return failed;
}
