/* The public header compiled as C99, and a few calls through it. */
#include <stdio.h>
#include <string.h>

#include "qlinear/qlinear.h"

int main(void) {
  const float x[5] = {-1.5f, -0.5f, 0.5f, 1.5f, 300.0f};
  const int64_t shape[1] = {5};
  const float scale = 1.0f;
  const uint8_t zp = 10;
  qlinear_tensor tx = {QLINEAR_DTYPE_FLOAT, 1, shape, x};
  qlinear_tensor ts = {QLINEAR_DTYPE_FLOAT, 0, NULL, &scale};
  qlinear_tensor tz = {QLINEAR_DTYPE_UINT8, 0, NULL, &zp};
  qlinear_quantize_attrs attrs;
  uint8_t y[5];
  const uint8_t want[5] = {8, 10, 10, 12, 255};
  qlinear_status s;
  qlinear_quantize_attrs_init(&attrs);
  s = qlinear_quantize_linear(&tx, &ts, &tz, &attrs, y, sizeof(y));
  if (s != QLINEAR_OK || memcmp(y, want, 5) != 0) {
    fprintf(stderr, "quantize failed: %s %s\n", qlinear_status_name(s), qlinear_last_error());
    return 1;
  }
  s = qlinear_quantize_linear(&tx, &ts, &tz, &attrs, y, 4);
  if (s != QLINEAR_BUFFER_TOO_SMALL || strstr(qlinear_last_error(), "y_bytes") == NULL) {
    fprintf(stderr, "expected a buffer error, got %s\n", qlinear_status_name(s));
    return 1;
  }
  printf("C API ok: qlinear %s on %s\n", qlinear_version(), qlinear_active_target());
  return 0;
}
