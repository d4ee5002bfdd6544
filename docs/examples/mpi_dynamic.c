/* Dynamic quantization of a tensor sharded across MPI ranks, with groups that span the ranks:
 * every rank holds whole rows of a [rows, cols] float32 tensor and the scales are per column
 * (MINMAX, uint4, axis 1), so each column's range depends on every rank's rows.
 *   1. qlinear_dynamic_ranges on the rank's rows: 2 floats per column;
 *   2. MPI_Allreduce with MPI_MAX: the ranges of the whole tensor, on every rank;
 *   3. qlinear_dynamic_scales from them, then qlinear_quantize_linear_range on the rank's rows.
 * Rank 0 gathers the packed rows and checks rows, scales and zero points against one
 * qlinear_quantize_dynamic call on the whole tensor, byte for byte. Exit status 0 when equal.
 *   mpicc mpi_dynamic.c $(pkg-config --cflags --libs qlinear) -lm -o mpi_dynamic
 *   mpirun --oversubscribe -np 2 ./mpi_dynamic      (as root, Open MPI also wants --allow-run-as-root) */
#include <mpi.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qlinear/qlinear.h>

static float Value(int64_t i) { return sinf((float)i * 0.37f) * (float)(1 + i % 13) - 0.2f; }

static void Check(qlinear_status s, int rank, const char* what) {
  if (s != QLINEAR_OK) {
    fprintf(stderr, "rank %d: %s: %s\n", rank, what, qlinear_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int64_t rows = 1001, cols = 300; /* cols even: whole rows are whole uint4 bytes */
  int64_t shape[2] = {rows, cols}, scale_shape[1] = {cols};

  qlinear_dynamic_attrs attrs;
  qlinear_dynamic_attrs_init(&attrs);
  attrs.output_dtype = QLINEAR_DTYPE_UINT4;
  attrs.rule = QLINEAR_SCALE_MINMAX;
  attrs.granularity = QLINEAR_GRANULARITY_AXIS;
  attrs.axis = 1;
  attrs.block_size = 0;

  /* This rank's rows [r0, r1): x describes the whole tensor, its data is the rank's slice. */
  const int64_t r0 = rows * rank / ranks, r1 = rows * (rank + 1) / ranks;
  const int64_t first = r0 * cols, count = (r1 - r0) * cols;
  float* slice = malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
  for (int64_t i = 0; i < count; ++i) slice[i] = Value(first + i);
  qlinear_tensor x = {QLINEAR_DTYPE_FLOAT, 2, shape, slice};

  size_t y_bytes = 0, scale_bytes = 0, zp_bytes = 0;
  Check(qlinear_quantize_dynamic_output_info(&x, &attrs, &y_bytes, &scale_bytes, &zp_bytes), rank, "output_info");
  const int64_t groups = (int64_t)(scale_bytes / sizeof(float)); /* float32 scales: one per column */

  /* 1-2: the ranges of this rank's rows, reduced across ranks. */
  float* ranges = malloc(sizeof(float) * (size_t)(2 * groups));
  Check(qlinear_dynamic_ranges(&x, &attrs, first, count, ranges, sizeof(float) * (size_t)(2 * groups)), rank,
        "ranges");
  MPI_Allreduce(MPI_IN_PLACE, ranges, (int)(2 * groups), MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);

  /* 3: the whole tensor's scales and zero points, then QuantizeLinear on this rank's rows. */
  float* scales = malloc(scale_bytes);
  uint8_t* zps = malloc(zp_bytes);
  Check(qlinear_dynamic_scales(&x, &attrs, ranges, sizeof(float) * (size_t)(2 * groups), scales, scale_bytes,
                               zps, zp_bytes),
        rank, "scales");
  qlinear_quantize_attrs qattrs;
  Check(qlinear_quantize_attrs_for_dynamic(&attrs, &qattrs), rank, "attrs");
  qlinear_tensor s = {QLINEAR_DTYPE_FLOAT, 1, scale_shape, scales};
  qlinear_tensor z = {QLINEAR_DTYPE_UINT4, 1, scale_shape, zps};
  const size_t part_bytes = (size_t)(count + 1) / 2;
  uint8_t* part = malloc(part_bytes > 0 ? part_bytes : 1);
  Check(qlinear_quantize_linear_range(&x, &s, &z, &qattrs, first, count, part, part_bytes), rank, "range");

  /* Gather the packed rows on rank 0. */
  int* sizes = malloc(sizeof(int) * (size_t)ranks);
  int* offsets = malloc(sizeof(int) * (size_t)ranks);
  const int mine = (int)part_bytes;
  MPI_Gather(&mine, 1, MPI_INT, sizes, 1, MPI_INT, 0, MPI_COMM_WORLD);
  uint8_t* gathered = rank == 0 ? malloc(y_bytes) : NULL;
  if (rank == 0) {
    offsets[0] = 0;
    for (int r = 1; r < ranks; ++r) offsets[r] = offsets[r - 1] + sizes[r - 1];
  }
  MPI_Gatherv(part, mine, MPI_BYTE, gathered, sizes, offsets, MPI_BYTE, 0, MPI_COMM_WORLD);

  int status = 0;
  if (rank == 0) { /* the single-process result */
    float* all = malloc(sizeof(float) * (size_t)(rows * cols));
    for (int64_t i = 0; i < rows * cols; ++i) all[i] = Value(i);
    qlinear_tensor whole = {QLINEAR_DTYPE_FLOAT, 2, shape, all};
    uint8_t* want = malloc(y_bytes);
    float* want_scales = malloc(scale_bytes);
    uint8_t* want_zps = malloc(zp_bytes);
    Check(qlinear_quantize_dynamic(&whole, &attrs, want, y_bytes, want_scales, scale_bytes, want_zps, zp_bytes),
          rank, "whole tensor");
    status = memcmp(want, gathered, y_bytes) != 0 || memcmp(want_scales, scales, scale_bytes) != 0 ||
             memcmp(want_zps, zps, zp_bytes) != 0;
    printf("%d ranks: gathered %zu bytes, %s the single-process result\n", ranks, y_bytes,
           status == 0 ? "equal to" : "DIFFERENT FROM");
    free(all);
    free(want);
    free(want_scales);
    free(want_zps);
    free(gathered);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(sizes);
  free(offsets);
  free(part);
  free(zps);
  free(scales);
  free(ranges);
  free(slice);
  MPI_Finalize();
  return status;
}
