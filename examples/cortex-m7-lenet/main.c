/* Runs the LeNet bundle once on an input embedded in the image and prints
 * the ten scores and the top class over semihosting:
 *   score 0 0.012345 0x3c4a42af
 *   ...
 *   top class 7 (0.451234)
 * The hex is the score's float32 bit pattern, so a test can compare exactly. */
#include "lenet.h" /* from bundlefit_add_bundle: sizes, offsets, entry point */
#ifndef LENET_WEIGHT_SEGMENTS
#include "lenet_weights.h" /* Glow's API: lenet_constant_weight[], lenet.weights.bin embedded */
#endif

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The input, a .npy file as make_models.py wrote it. */
__asm__(".pushsection .rodata.lenet_input,\"a\",%progbits\n"
        ".balign 16\n"
        "lenet_input_npy:\n"
        ".incbin \"" LENET_INPUT_NPY "\"\n"
        "lenet_input_npy_end:\n"
        ".popsection\n");
extern const uint8_t lenet_input_npy[], lenet_input_npy_end[];

/* The bundle's writable memory: inputs/outputs, then scratch activations. */
static uint8_t mutable_weight[LENET_MUTABLE_MEM_SIZE] GLOW_MEM_ALIGN(LENET_MEM_ALIGN);
static uint8_t activations[LENET_ACTIVATIONS_MEM_SIZE] GLOW_MEM_ALIGN(LENET_MEM_ALIGN);

enum { kInputBytes = 1 * 1 * 28 * 28 * 4, kClasses = 10 };

/* The data of a little-endian float32 .npy (format 1.x or 2.x) of
 * kInputBytes bytes, or NULL. */
static const uint8_t *npy_data(const uint8_t *file, size_t size) {
  size_t header, start;
  if (size < 12 || memcmp(file, "\x93NUMPY", 6) != 0)
    return NULL;
  if (file[6] == 1) {
    header = (size_t)file[8] | (size_t)file[9] << 8;
    start = 10;
  } else {
    header =
        (size_t)file[8] | (size_t)file[9] << 8 | (size_t)file[10] << 16 | (size_t)file[11] << 24;
    start = 12;
  }
  if (start + header > size || size - start - header != kInputBytes)
    return NULL;
  /* 'descr': '<f4' somewhere in the header dictionary. */
  for (size_t i = start; i + 3 <= start + header; ++i)
    if (memcmp(file + i, "<f4", 3) == 0)
      return file + start + header;
  return NULL;
}

/* printf without float support in the C library: six decimals by hand. */
static void print_score(const char *label, int index, float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  long micro = (long)(value * 1e6f + (value < 0 ? -0.5f : 0.5f));
  const char *sign = micro < 0 ? "-" : "";
  if (micro < 0)
    micro = -micro;
  printf("%s %d %s%ld.%06ld 0x%08lx\n", label, index, sign, micro / 1000000, micro % 1000000,
         (unsigned long)bits);
}

int main(void) {
  const uint8_t *input = npy_data(lenet_input_npy, (size_t)(lenet_input_npy_end - lenet_input_npy));
  if (!input) {
    printf("lenet_fw: the embedded input is not a float32 [1,1,28,28] .npy\n");
    return 2;
  }
  memcpy(GLOW_GET_ADDR(mutable_weight, LENET_data), input, kInputBytes);

#ifdef LENET_WEIGHT_SEGMENTS
  /* WEIGHTS placed for the part: each region's weights in its section
   * (lenet_weights.ld), those in RAM copied from Flash once, then the entry
   * with every segment where it was placed. */
  lenet_copy_weights();
  int rc = lenet_run(mutable_weight, activations);
#else
  int rc = lenet((uint8_t *)lenet_constant_weight, mutable_weight, activations);
#endif
  if (rc != GLOW_SUCCESS) {
    printf("lenet_fw: the bundle returned %d\n", rc);
    return 3;
  }

  float scores[kClasses];
  memcpy(scores, GLOW_GET_ADDR(mutable_weight, LENET_softmax), sizeof scores);
  int top = 0;
  for (int i = 0; i < kClasses; ++i) {
    print_score("score", i, scores[i]);
    if (scores[i] > scores[top])
      top = i;
  }
  print_score("top class", top, scores[top]);
  return 0;
}
