/* The environment's execution settings, one process per setting (ctest sets the variable):
 *   settings_env_test bad-path    QLINEAR_QUANTIZE_PATH=<junk>: quantizing calls (the backward
 *                                  pass too) fail naming it, DequantizeLinear and the dynamic
 *                                  statistics still run
 *   settings_env_test bad-target  QLINEAR_TARGET=<junk>: every computing call fails naming it
 *                                  until qlinear_set_target replaces the pin; reading it
 *                                  keeps the thread's last message
 *   settings_env_test pin-fallback  QLINEAR_TARGET=<the build's one-lane fallback, SCALAR or
 *                                  EMU128 by compiler, in lower case, set by the program> and
 *                                  QLINEAR_QUANTIZE_PATH=Division: calls run on it */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <qlinear/qlinear.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* QuantizeLinear into y_bytes bytes (3 needed). */
static int quantize_into(size_t y_bytes) {
  const float x[3] = {1.0f, -2.5f, 7.0f};
  const int64_t n = 3;
  const float scale = 0.5f;
  int8_t y[3];
  qlinear_tensor tx = {QLINEAR_DTYPE_FLOAT, 1, &n, x};
  qlinear_tensor ts = {QLINEAR_DTYPE_FLOAT, 0, NULL, &scale};
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_INT8;
  return (int)qlinear_quantize_linear(&tx, &ts, NULL, &a, y, y_bytes < sizeof y ? y_bytes : sizeof y);
}

static int quantize(void) { return quantize_into(3); }

/* The backward pass of quantize(), its clamp test recomputed from x. */
static int backward(void) {
  const float x[3] = {1.0f, -2.5f, 7.0f}, dy[3] = {1.0f, 1.0f, 1.0f};
  const int64_t n = 3;
  const float scale = 0.5f;
  float dx[3];
  qlinear_tensor tx = {QLINEAR_DTYPE_FLOAT, 1, &n, x};
  qlinear_tensor ts = {QLINEAR_DTYPE_FLOAT, 0, NULL, &scale};
  qlinear_tensor tdy = {QLINEAR_DTYPE_FLOAT, 1, &n, dy};
  qlinear_quantize_attrs a;
  qlinear_quantize_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_INT8;
  return (int)qlinear_quantize_linear_backward(&tx, &ts, NULL, &a, &tdy, scale, NULL, 0, dx, sizeof dx);
}

static int dequantize(void) {
  const int8_t x[3] = {1, -2, 7};
  const int64_t n = 3;
  const float scale = 0.5f;
  float y[3];
  qlinear_tensor tx = {QLINEAR_DTYPE_INT8, 1, &n, x};
  qlinear_tensor ts = {QLINEAR_DTYPE_FLOAT, 0, NULL, &scale};
  return (int)qlinear_dequantize_linear(&tx, &ts, NULL, NULL, y, sizeof y);
}

/* The dynamic statistics (which = 0: qlinear_dynamic_ranges) or scales (1:
 * qlinear_dynamic_scales) alone: the call's status. */
static int dynamic_statistics(int which) {
  const float x[4] = {1.0f, -2.5f, 7.0f, 0.25f};
  const int64_t n = 4;
  float ranges[2];
  float scale;
  qlinear_tensor tx = {QLINEAR_DTYPE_FLOAT, 1, &n, x};
  qlinear_dynamic_attrs a;
  qlinear_dynamic_attrs_init(&a);
  a.output_dtype = QLINEAR_DTYPE_INT8;
  a.granularity = QLINEAR_GRANULARITY_TENSOR;
  a.block_size = 0;
  if (which == 0) return (int)qlinear_dynamic_ranges(&tx, &a, 0, n, ranges, sizeof ranges);
  return (int)qlinear_dynamic_scales(&tx, &a, NULL, 0, &scale, sizeof scale, NULL, 0);
}

static int expect(int ok, const char* what) {
  if (!ok) fprintf(stderr, "FAILED: %s (last error: %s)\n", what, qlinear_last_error());
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  int bad = 0;
  if (argc >= 2 && strcmp(argv[1], "bad-path") == 0) {
    bad += expect(quantize() == QLINEAR_INVALID_ARGUMENT, "quantize fails");
    bad += expect(strstr(qlinear_last_error(), "QLINEAR_QUANTIZE_PATH") != NULL, "message names the variable");
    bad += expect(strstr(qlinear_last_error(), "division, reciprocal") != NULL, "message lists the values");
    {
      /* The value was read once; the message keeps its own copy when the caller rewrites it. */
      char* value = getenv("QLINEAR_QUANTIZE_PATH");
      if (value != NULL && value[0] != '\0') value[0] = 'X';
      bad += expect(quantize() == QLINEAR_INVALID_ARGUMENT, "quantize fails again");
      bad += expect(strstr(qlinear_last_error(), "'fastest'") != NULL, "message quotes the value read");
    }
    bad += expect(backward() == QLINEAR_INVALID_ARGUMENT, "the backward pass fails");
    bad += expect(strstr(qlinear_last_error(), "QLINEAR_QUANTIZE_PATH") != NULL, "its message names the variable");
    bad += expect(dequantize() == QLINEAR_OK, "dequantize runs");
    bad += expect(dynamic_statistics(0) == QLINEAR_OK && dynamic_statistics(1) == QLINEAR_OK,
                  "dynamic statistics run");
  } else if (argc >= 2 && strcmp(argv[1], "bad-target") == 0) {
    /* A call rejected for its own arguments (the variable not read yet), then the variable's
     * first reading, by qlinear_active_target: the thread keeps the call's message. */
    bad += expect(quantize_into(2) == QLINEAR_BUFFER_TOO_SMALL, "a short y is rejected");
    bad += expect(qlinear_active_target()[0] != '\0', "a target is named");
    bad += expect(strstr(qlinear_last_error(), "y_bytes") != NULL, "the rejected call's message stays");
    bad += expect(quantize() == QLINEAR_INVALID_ARGUMENT, "quantize fails");
    bad += expect(strstr(qlinear_last_error(), "QLINEAR_TARGET") != NULL, "message names the variable");
    bad += expect(dequantize() == QLINEAR_INVALID_ARGUMENT, "dequantize fails");
    bad += expect(dynamic_statistics(0) == QLINEAR_INVALID_ARGUMENT, "dynamic ranges fail");
    bad += expect(strstr(qlinear_last_error(), "QLINEAR_TARGET") != NULL, "message names the variable");
    bad += expect(dynamic_statistics(1) == QLINEAR_INVALID_ARGUMENT, "dynamic scales fail");
    bad += expect(strstr(qlinear_last_error(), "QLINEAR_TARGET") != NULL, "message names the variable");
    bad += expect(qlinear_set_target(NULL) == QLINEAR_OK, "unpinning succeeds");
    bad += expect(quantize() == QLINEAR_OK && dequantize() == QLINEAR_OK, "calls run after unpinning");
    bad += expect(dynamic_statistics(0) == QLINEAR_OK && dynamic_statistics(1) == QLINEAR_OK,
                  "dynamic statistics run after unpinning");
  } else if (argc >= 2 && strcmp(argv[1], "pin-fallback") == 0) {
    /* The fallback is the last compiled target; listing them does not read the variable. */
    const char* names = qlinear_compiled_targets();
    const char* last = strrchr(names, ' ');
    char fallback[32];
    snprintf(fallback, sizeof fallback, "%s", last != NULL ? last + 1 : names);
    bad += expect(strcmp(fallback, "SCALAR") == 0 || strcmp(fallback, "EMU128") == 0, "a fallback is compiled");
    {
      /* Both variables in another case than the documented one: the names match either case. */
      char lower[32];
      size_t i = 0;
      for (; fallback[i] != '\0' && i + 1 < sizeof lower; ++i) {
        lower[i] = (char)(fallback[i] >= 'A' && fallback[i] <= 'Z' ? fallback[i] - 'A' + 'a' : fallback[i]);
      }
      lower[i] = '\0';
      bad += expect(setenv("QLINEAR_TARGET", lower, 1) == 0, "QLINEAR_TARGET is set");
      bad += expect(setenv("QLINEAR_QUANTIZE_PATH", "Division", 1) == 0, "QLINEAR_QUANTIZE_PATH is set");
    }
    bad += expect(quantize() == QLINEAR_OK, "quantize runs");
    bad += expect(strcmp(qlinear_active_target(), fallback) == 0, "the pinned target is active, named as listed");
  } else {
    fprintf(stderr, "usage: settings_env_test bad-path | bad-target | pin-fallback\n");
    return 2;
  }
  if (bad == 0) printf("settings_env_test %s: passed\n", argv[1]);
  return bad ? 1 : 0;
}
