# cmake -DLIST=CodeIdentityFiles.txt -DHEADER=CodeIdentity.h -P CheckCodeIdentity.cmake
# Recomputes the code identity over every library LIST names, as
# WriteCodeIdentity.cmake defines it, and fails unless HEADER holds that value:
# an identity over fewer files (the build passing the list wrongly) would let
# the code-size cache serve sizes of code that has since changed.
file(STRINGS "${LIST}" files)
list(LENGTH files count)
if(count LESS 2)
  message(FATAL_ERROR "${LIST}: ${count} libraries; the identity must cover the whole driver")
endif()
set(hashes "")
foreach(file IN LISTS files)
  file(SHA256 "${file}" hash)
  string(APPEND hashes "${hash}\n")
endforeach()
string(SHA256 expected "${hashes}")
file(READ "${HEADER}" header)
if(NOT header MATCHES "\"${expected}\"")
  message(FATAL_ERROR "${HEADER}: the identity is not the hash of the ${count} libraries in ${LIST}")
endif()
message(STATUS "code identity covers ${count} libraries")
