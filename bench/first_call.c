/* A process's first call against its later ones, through the public C API as an application
 * links it. One case per process (the first call is the process's first qlinear call): the
 * inputs and the output are allocated and written by the caller first, then the same call runs
 * 21 times. Prints the first call, the second, and the median of the other 19, in microseconds.
 *
 * Usage: qlinear_first_call CASE   (no CASE: the list)
 *   for c in $(qlinear_first_call); do qlinear_first_call $c; done */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qlinear/qlinear.h"

static double Seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int Compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

struct Case {
  const char* name;
  int quantize;       /* 1: QuantizeLinear, 0: DequantizeLinear */
  int32_t codes;      /* the quantized type */
  int64_t rows, cols; /* x is [rows, cols] */
  int64_t block;      /* blocks along axis 0 (a [K, N] weight with blocks along K); 0: per tensor */
};

static const struct Case kCases[] = {
    {"dequantize-int4-blocks-256x4096", 0, QLINEAR_DTYPE_INT4, 256, 4096, 32},
    {"dequantize-int4-blocks-64x1024", 0, QLINEAR_DTYPE_INT4, 64, 1024, 32},
    {"quantize-int4-blocks-256x4096", 1, QLINEAR_DTYPE_INT4, 256, 4096, 32},
    {"dequantize-int8-tensor-64x1024", 0, QLINEAR_DTYPE_INT8, 64, 1024, 0},
    {"quantize-int8-tensor-64x1024", 1, QLINEAR_DTYPE_INT8, 64, 1024, 0},
};
enum { kCaseCount = sizeof(kCases) / sizeof(kCases[0]), kCalls = 21 };

int main(int argc, char** argv) {
  const struct Case* c = NULL;
  for (int i = 0; i < kCaseCount; ++i) {
    if (argc > 1 && strcmp(argv[1], kCases[i].name) == 0) c = &kCases[i];
    if (argc < 2) printf("%s\n", kCases[i].name);
  }
  if (argc < 2) return 0;
  if (c == NULL) {
    fprintf(stderr, "unknown case '%s' (run without arguments for the list)\n", argv[1]);
    return 2;
  }
  const int64_t n = c->rows * c->cols;
  const int64_t scale_rows = c->block > 0 ? c->rows / c->block : 1, scale_cols = c->block > 0 ? c->cols : 1;
  const int64_t groups = scale_rows * scale_cols;
  const size_t code_bytes = c->codes == QLINEAR_DTYPE_INT4 ? (size_t)(n + 1) / 2 : (size_t)n;
  float* x = malloc((size_t)n * sizeof(float));
  float* scales = malloc((size_t)groups * sizeof(float));
  uint8_t* codes = malloc(code_bytes);
  if (x == NULL || scales == NULL || codes == NULL) return 1;
  for (int64_t i = 0; i < n; ++i) x[i] = (float)((i * 7919) % 1001 - 500) * 0.01f;
  for (int64_t i = 0; i < groups; ++i) scales[i] = 0.5f + (float)(i % 97) * 0.01f;
  for (size_t i = 0; i < code_bytes; ++i) codes[i] = (uint8_t)(i * 37);

  const int64_t shape[2] = {c->rows, c->cols}, scale_shape[2] = {scale_rows, scale_cols};
  const qlinear_tensor tx = {QLINEAR_DTYPE_FLOAT, 2, shape, x};
  const qlinear_tensor tcodes = {c->codes, 2, shape, codes};
  const qlinear_tensor tscale = {QLINEAR_DTYPE_FLOAT, c->block > 0 ? 2 : 0, scale_shape, scales};
  qlinear_quantize_attrs qa;
  qlinear_quantize_attrs_init(&qa);
  qlinear_dequantize_attrs da;
  qlinear_dequantize_attrs_init(&da);
  qa.axis = da.axis = 0;
  qa.block_size = da.block_size = c->block;
  qa.output_dtype = c->codes;

  double t[kCalls];
  for (int k = 0; k < kCalls; ++k) {
    const double t0 = Seconds();
    const qlinear_status s = c->quantize ? qlinear_quantize_linear(&tx, &tscale, NULL, &qa, codes, code_bytes)
                                         : qlinear_dequantize_linear(&tcodes, &tscale, NULL, &da, x, (size_t)n * 4);
    t[k] = (Seconds() - t0) * 1e6;
    if (s != QLINEAR_OK) {
      fprintf(stderr, "%s: %s\n", c->name, qlinear_last_error());
      return 1;
    }
  }
  qsort(t + 2, kCalls - 2, sizeof(double), Compare);
  printf("%-34s first %8.1f us  second %8.1f us  later (median) %8.1f us  first/later %5.1f\n", c->name, t[0], t[1],
         t[2 + (kCalls - 2) / 2], t[0] / t[2 + (kCalls - 2) / 2]);
  free(x);
  free(scales);
  free(codes);
  return 0;
}
