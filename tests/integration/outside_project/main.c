/* Runs the bundle once on zeros and prints its status and first output:
 * what a host-side program linking an installed bundlefit's bundle does. */
#include "net.h"
#include "net_weights.h"

#include <stdint.h>
#include <stdio.h>

GLOW_MEM_ALIGN(NET_MEM_ALIGN) static uint8_t mutableWeight[NET_MUTABLE_MEM_SIZE];
GLOW_MEM_ALIGN(NET_MEM_ALIGN) static uint8_t activations[NET_ACTIVATIONS_MEM_SIZE];

int main(void) {
  int status = net((uint8_t *)net_constant_weight, mutableWeight, activations);
  printf("bundle status %d, %d bytes of activations\n", status, (int)NET_ACTIVATIONS_MEM_SIZE);
  return status;
}
