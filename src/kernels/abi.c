/*===- abi.c - Each kernel parameter struct's size, for code generation ---===
 *
 * Code generation checks that the parameter structs it fills (C++,
 * bundlefit/ops/KernelParams.h) have the layout the kernel bitcode was
 * compiled with. It cannot find a struct type by name in the linked bitcode:
 * llvm-link merges structurally identical struct types under one of their
 * names. Global names are never merged, so each struct's size is a global
 * of its own, bf_abi_sizeof_<struct>; code generation reads and then erases
 * them (no bundle carries them).
 *===----------------------------------------------------------------------===*/
#include "bundlefit/kernels/abi.h"

#define BF_ABI_COUNT_FIELD(name) +1
#define BF_ABI_SIZEOF(type, fieldList)                                                             \
  _Static_assert(sizeof(type) == sizeof(int32_t) * (0 fieldList(BF_ABI_COUNT_FIELD)),              \
                 #type " must consist of int32_t fields only");                                    \
  const int32_t bf_abi_sizeof_##type = (int32_t)sizeof(type);
BF_ABI_PARAMS_STRUCTS(BF_ABI_SIZEOF)
