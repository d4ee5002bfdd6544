/* A host that loads the shared library as a plugin: dlopen, a parallel call on the default
 * runner (OpenMP's team, whose threads outlive the call), dlclose. The library must stay mapped
 * (it is linked with -z nodelete): unmapping it would unmap code that the team's idle threads
 * and the threads' scratch destructors still run.
 *
 * Usage: dlclose_test PATH_TO_LIBQLINEAR_SO */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "qlinear/qlinear.h"

typedef void (*options_init_fn)(qlinear_parallel_options*);
typedef void (*attrs_init_fn)(qlinear_quantize_attrs*);
typedef qlinear_status (*quantize_parallel_fn)(const qlinear_tensor*, const qlinear_tensor*, const qlinear_tensor*,
                                               const qlinear_quantize_attrs*, void*, size_t,
                                               const qlinear_parallel_options*);

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: dlclose_test PATH_TO_LIBQLINEAR_SO\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "FAILED: dlopen: %s\n", dlerror());
    return 1;
  }
  options_init_fn options_init = (options_init_fn)dlsym(lib, "qlinear_parallel_options_init");
  attrs_init_fn attrs_init = (attrs_init_fn)dlsym(lib, "qlinear_quantize_attrs_init");
  quantize_parallel_fn quantize = (quantize_parallel_fn)dlsym(lib, "qlinear_quantize_linear_parallel");
  if (options_init == NULL || attrs_init == NULL || quantize == NULL) {
    fprintf(stderr, "FAILED: dlsym: %s\n", dlerror());
    return 1;
  }
  enum { kCount = 1 << 20 };
  float* x = calloc(kCount, sizeof(float));
  uint8_t* y = malloc(kCount);
  if (x == NULL || y == NULL) return 1;
  for (int i = 0; i < kCount; ++i) x[i] = (float)(i % 251) * 0.5f;
  const int64_t n = kCount;
  const float scale = 0.5f;
  const qlinear_tensor tx = {QLINEAR_DTYPE_FLOAT, 1, &n, x};
  const qlinear_tensor ts = {QLINEAR_DTYPE_FLOAT, 0, NULL, &scale};
  qlinear_quantize_attrs attrs;
  attrs_init(&attrs);
  attrs.output_dtype = QLINEAR_DTYPE_UINT8;
  qlinear_parallel_options options;
  options_init(&options);
  options.max_threads = 2;
  options.min_elements_per_task = 1024;
  const qlinear_status s = quantize(&tx, &ts, NULL, &attrs, y, kCount, &options);
  int bad = 0;
  if (s != QLINEAR_OK) {
    fprintf(stderr, "FAILED: the parallel call returned %d\n", (int)s);
    bad = 1;
  }
  for (int i = 0; i < kCount && !bad; ++i) {
    if (y[i] != (uint8_t)(i % 251)) {
      fprintf(stderr, "FAILED: y[%d] = %d, expected %d\n", i, y[i], i % 251);
      bad = 1;
    }
  }
  if (dlclose(lib) != 0) {
    fprintf(stderr, "FAILED: dlclose: %s\n", dlerror());
    bad = 1;
  }
  void* again = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
  if (again == NULL) {
    fprintf(stderr, "FAILED: dlclose unmapped the library\n");
    bad = 1;
  } else {
    dlclose(again);
  }
  /* Let the runner's idle threads run on (they would crash in unmapped code). */
  const struct timespec pause = {0, 100 * 1000 * 1000};
  nanosleep(&pause, NULL);
  free(x);
  free(y);
  if (!bad) printf("dlclose_test: passed\n");
  return bad;
}
