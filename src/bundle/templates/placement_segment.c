/* @REGION@: @BYTES@ bytes, @WHAT@. */
__asm__("  .pushsection .@NETWORK@_weights_@ID@,\"@FLAGS@\",%progbits\n"
        "  .balign 64\n"
        "  .global @NETWORK@_weights_@ID@\n"
        "  .type @NETWORK@_weights_@ID@, %object\n"
        "@NETWORK@_weights_@ID@:\n"
        "  .incbin \"@NETWORK@.weights.@ID@.bin\"\n"
        "  .size @NETWORK@_weights_@ID@, . - @NETWORK@_weights_@ID@\n"
        "  .popsection\n");
