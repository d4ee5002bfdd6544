/* Sharding QuantizeLinear across MPI ranks: every rank holds a slice of a [rows, cols] float32
 * tensor (whole rows), quantizes it to int4 with the GLOBAL per-axis scales (axis 1) through
 * qlinear_quantize_linear_range, and rank 0 gathers the packed slices and checks them against
 * one whole-tensor call, byte for byte. Exit status 0 when equal.
 *   mpicc mpi_shard.c $(pkg-config --cflags --libs qlinear) -lm -o mpi_shard
 *   mpirun --oversubscribe -np 2 ./mpi_shard      (as root, Open MPI also wants --allow-run-as-root) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qlinear/qlinear.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int64_t rows = 1001, cols = 300; /* cols even: whole rows are whole int4 bytes */
  int64_t shape[2] = {rows, cols}, scale_shape[1] = {cols};
  float* scales = malloc(sizeof(float) * (size_t)cols);
  for (int64_t c = 0; c < cols; ++c) scales[c] = 0.05f + 0.01f * (float)(c % 9);

  /* This rank's rows [r0, r1) and its slice of x (here generated; normally the rank's data). */
  const int64_t r0 = rows * rank / ranks, r1 = rows * (rank + 1) / ranks;
  const int64_t first = r0 * cols, count = (r1 - r0) * cols;
  float* slice = malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
  for (int64_t i = 0; i < count; ++i) slice[i] = (float)((first + i) % 97) * 0.013f - 0.6f;

  qlinear_quantize_attrs attrs;
  qlinear_quantize_attrs_init(&attrs);
  attrs.axis = 1;
  attrs.output_dtype = QLINEAR_DTYPE_INT4;
  qlinear_tensor x = {QLINEAR_DTYPE_FLOAT, 2, shape, slice}; /* whole shape, slice data */
  qlinear_tensor s = {QLINEAR_DTYPE_FLOAT, 1, scale_shape, scales};
  const size_t part_bytes = (size_t)(count + 1) / 2;
  uint8_t* part = malloc(part_bytes > 0 ? part_bytes : 1);
  if (qlinear_quantize_linear_range(&x, &s, NULL, &attrs, first, count, part, part_bytes) != QLINEAR_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, qlinear_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  /* Gather the packed slices on rank 0. */
  int* sizes = malloc(sizeof(int) * (size_t)ranks);
  int* offsets = malloc(sizeof(int) * (size_t)ranks);
  const int mine = (int)part_bytes;
  MPI_Gather(&mine, 1, MPI_INT, sizes, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const size_t total = (size_t)(rows * cols + 1) / 2;
  uint8_t* gathered = rank == 0 ? malloc(total) : NULL;
  if (rank == 0) {
    offsets[0] = 0;
    for (int r = 1; r < ranks; ++r) offsets[r] = offsets[r - 1] + sizes[r - 1];
  }
  MPI_Gatherv(part, mine, MPI_BYTE, gathered, sizes, offsets, MPI_BYTE, 0, MPI_COMM_WORLD);

  int status = 0;
  if (rank == 0) { /* the single-process result, from the whole tensor */
    float* all = malloc(sizeof(float) * (size_t)(rows * cols));
    for (int64_t i = 0; i < rows * cols; ++i) all[i] = (float)(i % 97) * 0.013f - 0.6f;
    qlinear_tensor whole = {QLINEAR_DTYPE_FLOAT, 2, shape, all};
    uint8_t* want = malloc(total);
    if (qlinear_quantize_linear(&whole, &s, NULL, &attrs, want, total) != QLINEAR_OK) status = 1;
    if (status == 0 && memcmp(want, gathered, total) != 0) status = 1;
    printf("%d ranks: gathered %zu bytes, %s the single-process result\n", ranks, total,
           status == 0 ? "equal to" : "DIFFERENT FROM");
    free(all);
    free(want);
    free(gathered);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(sizes);
  free(offsets);
  free(part);
  free(slice);
  free(scales);
  MPI_Finalize();
  return status;
}
