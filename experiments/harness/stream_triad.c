/* STREAM triad, a[i] = b[i] + s * c[i], to measure the machine's memory bandwidth for
 * run_tensor_bench.py. Usage: stream_triad [ELEMENTS] [REPS] (default 32M doubles per array,
 * best of 10). Runs on one thread, then on all of OpenMP's threads, and prints per thread count
 *   triad threads T elements N best_s S gb_s G
 * with STREAM's convention of 3 x 8 bytes moved per element (the write-allocate read of a is
 * not counted). The arrays must be well beyond the last-level cache, or this measures the cache. */
#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#else
#include <time.h>
static int omp_get_max_threads(void) { return 1; }
static double omp_get_wtime(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
#endif

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 32L << 20;
  int reps = argc > 2 ? atoi(argv[2]) : 10;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  if (!a || !b || !c || n <= 0 || reps <= 0) {
    fprintf(stderr, "stream_triad: cannot allocate 3 x %ld doubles\n", n);
    return 1;
  }
  int all = omp_get_max_threads();
  /* First touch on all threads, as the all-threads triad will use the pages. */
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) { a[i] = 0.0; b[i] = 1.0; c[i] = 2.0; }
  const double s = 3.0;
  int counts[2] = {1, all};
  for (int k = 0; k < (all > 1 ? 2 : 1); k++) {
    int t = counts[k];
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
      double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static) num_threads(t)
      for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
      double dt = omp_get_wtime() - t0;
      if (dt < best) best = dt;
    }
    printf("triad threads %d elements %ld best_s %.6f gb_s %.3f\n", t, n, best, 3.0 * 8.0 * n / best / 1e9);
  }
  /* Use a, so that the triad cannot be dropped: every a[i] is 1 + 3 * 2. */
  if (a[n / 2] != 7.0) { fprintf(stderr, "stream_triad: wrong result %g\n", a[n / 2]); return 1; }
  free(a); free(b); free(c);
  return 0;
}
