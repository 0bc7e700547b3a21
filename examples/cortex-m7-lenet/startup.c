/* Start-up code for the example on QEMU mps2-an500: vector table, reset
 * handler (FPU on, .data copied, .bss zeroed, semihosting opened) and a fault
 * handler that reports and exits instead of hanging the emulator. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern uint32_t __data_start__, __data_end__, __data_load__, __bss_start__, __bss_end__;
extern uint32_t __stack_top__;
extern void initialise_monitor_handles(void); /* newlib rdimon: stdin/stdout via semihosting */
int main(void);

__attribute__((noreturn, used)) void example_start(void) {
  memcpy(&__data_start__, &__data_load__,
         (size_t)((char *)&__data_end__ - (char *)&__data_start__));
  memset(&__bss_start__, 0, (size_t)((char *)&__bss_end__ - (char *)&__bss_start__));
  initialise_monitor_handles();
  exit(main());
}

/* The bundle is compiled for hard float: CP10/CP11 must be on before the
 * first floating-point instruction, so this runs before any C code. */
__attribute__((naked, noreturn)) void Reset_Handler(void) {
  __asm__ volatile(
#if defined(__ARM_FP)
      "ldr r0, =0xE000ED88\n" /* CPACR */
      "ldr r1, [r0]\n"
      "orr r1, r1, #0x00F00000\n"
      "str r1, [r0]\n"
      "dsb\n"
      "isb\n"
#endif
      "b example_start\n");
}

/* Semihosting SYS_WRITE0 without newlib: the C library may be what failed. */
static void fault_puts(const char *s) {
  register int r0 __asm__("r0") = 0x04;
  register const char *r1 __asm__("r1") = s;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}

void Fault_Handler(void) {
  fault_puts("lenet_fw: fault\n");
  _exit(70);
}

typedef void (*vector_t)(void);
__attribute__((section(".isr_vector"), used))
const vector_t vectors[16] = {(vector_t)&__stack_top__,
                              Reset_Handler,
                              Fault_Handler,
                              Fault_Handler,
                              Fault_Handler,
                              Fault_Handler,
                              Fault_Handler,
                              0,
                              0,
                              0,
                              0,
                              Fault_Handler,
                              Fault_Handler,
                              0,
                              Fault_Handler,
                              Fault_Handler};
