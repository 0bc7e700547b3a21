/* bundle_timer: host timing driver for one bundlefit bundle.
 *
 * Built by bench_codegen.py as
 *   cc -O2 -DBUNDLE_FN=<net> bundle_timer.c <net>.o -o timer -lm -no-pie
 * Usage:
 *   timer WEIGHTS.bin CONST MUT ACT IN_OFF IN.npy OUT_OFF OUT_BYTES OUT.raw BUDGET_S MIN_ITERS
 * MAX_ITERS [cpu|wall] Loads the weights and the float32 input, runs 3 warm-up inferences, then
 * times single inferences until BUDGET_S seconds have passed (at least MIN_ITERS, at most
 * MAX_ITERS), writes the output bytes to OUT.raw and prints one JSON line (each inference timed by
 * the process's CPU clock with `cpu`, by the monotonic clock otherwise; the budget is always wall
 * time):
 *   {"iters":N,"median_ms":..,"min_ms":..,"mean_ms":..}
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef BUNDLE_FN
#error "define BUNDLE_FN to the bundle's entry point"
#endif
int BUNDLE_FN(uint8_t *constantWeight, uint8_t *mutableWeight, uint8_t *activations);

static void die(const char *what) {
  fprintf(stderr, "bundle_timer: %s\n", what);
  exit(2);
}

static uint8_t *alloc64(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n ? n : 64) != 0)
    die("out of memory");
  memset(p, 0, n ? n : 64);
  return (uint8_t *)p;
}

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    die(path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = (uint8_t *)malloc(n > 0 ? (size_t)n : 1);
  if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n))
    die("read failed");
  fclose(f);
  *size = (size_t)n;
  return buf;
}

/* Returns a pointer to the float32 payload of an .npy file and its byte size. */
static const uint8_t *npy_payload(const uint8_t *buf, size_t size, size_t *bytes) {
  if (size < 12 || memcmp(buf, "\x93NUMPY", 6) != 0)
    die("not an .npy file");
  size_t hlen, start;
  if (buf[6] == 1) {
    hlen = (size_t)buf[8] | ((size_t)buf[9] << 8);
    start = 10;
  } else {
    hlen =
        (size_t)buf[8] | ((size_t)buf[9] << 8) | ((size_t)buf[10] << 16) | ((size_t)buf[11] << 24);
    start = 12;
  }
  if (start + hlen > size)
    die("truncated .npy header");
  char header[1024] = {0};
  memcpy(header, buf + start, hlen < sizeof header - 1 ? hlen : sizeof header - 1);
  if (!strstr(header, "'<f4'"))
    die(".npy input must be little-endian float32");
  if (strstr(header, "'fortran_order': True"))
    die(".npy input must be C order");
  *bytes = size - start - hlen;
  return buf + start + hlen;
}

static double clock_s(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 13 && argc != 14)
    die("usage: WEIGHTS CONST MUT ACT IN_OFF IN.npy OUT_OFF OUT_BYTES OUT.raw BUDGET_S MIN_ITERS "
        "MAX_ITERS [cpu|wall]");
  /* CPU time: on a machine shared with other jobs, the time this process ran. */
  const clockid_t timed =
      argc == 14 && strcmp(argv[13], "cpu") == 0 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
  size_t constSize = strtoull(argv[2], NULL, 10), mutSize = strtoull(argv[3], NULL, 10),
         actSize = strtoull(argv[4], NULL, 10), inOff = strtoull(argv[5], NULL, 10),
         outOff = strtoull(argv[7], NULL, 10), outBytes = strtoull(argv[8], NULL, 10);
  double budget = atof(argv[10]);
  long minIters = atol(argv[11]), maxIters = atol(argv[12]);

  size_t wsize = 0, nsize = 0, inBytes = 0;
  uint8_t *wfile = read_file(argv[1], &wsize);
  if (wsize != constSize)
    die("weights.bin size does not match CONSTANT_MEM_SIZE");
  uint8_t *constant = alloc64(constSize), *mutable_ = alloc64(mutSize), *act = alloc64(actSize);
  memcpy(constant, wfile, constSize);
  free(wfile);
  uint8_t *nfile = read_file(argv[6], &nsize);
  const uint8_t *input = npy_payload(nfile, nsize, &inBytes);
  if (inOff + inBytes > mutSize || outOff + outBytes > mutSize)
    die("placeholder outside mutable buffer");
  memcpy(mutable_ + inOff, input, inBytes);

  for (int i = 0; i < 3; ++i)
    if (BUNDLE_FN(constant, mutable_, act) != 0)
      die("bundle returned an error");

  double *t = (double *)malloc(sizeof(double) * (size_t)maxIters);
  long n = 0;
  double start = now_s();
  while (n < maxIters && (n < minIters || now_s() - start < budget)) {
    double t0 = clock_s(timed);
    BUNDLE_FN(constant, mutable_, act);
    t[n++] = clock_s(timed) - t0;
  }
  double sum = 0;
  for (long i = 0; i < n; ++i)
    sum += t[i];
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  double median = (n % 2) ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);

  FILE *o = fopen(argv[9], "wb");
  if (!o || fwrite(mutable_ + outOff, 1, outBytes, o) != outBytes)
    die("cannot write output");
  fclose(o);
  printf("{\"iters\":%ld,\"median_ms\":%.6f,\"min_ms\":%.6f,\"mean_ms\":%.6f}\n", n, median * 1e3,
         t[0] * 1e3, sum / (double)n * 1e3);
  return 0;
}
