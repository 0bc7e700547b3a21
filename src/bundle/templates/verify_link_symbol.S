  .section @SECTION@,"@FLAGS@",@TYPE@
  .balign @ALIGN@
  .global @SYMBOL@
  .type @SYMBOL@, %object
@SYMBOL@:
  @CONTENTS@
  .size @SYMBOL@, @BYTES@
