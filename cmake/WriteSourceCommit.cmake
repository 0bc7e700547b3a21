# cmake -DSOURCE_DIR=... -DOUT=... -P WriteSourceCommit.cmake
# Writes the commit the sources are at to OUT: "<sha>", "<sha>-dirty" when
# tracked source files differ from it, "unknown" outside a git checkout. OUT is
# touched only when that changes, so nothing rebuilds for nothing.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE failed ERROR_QUIET)
if(failed)
  set(commit "unknown")
else()
  # Documentation and results files are not what a benchmark measures.
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                          -- . ":!*.md" ":!bench/results"
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  if(NOT changes STREQUAL "")
    string(APPEND commit "-dirty")
  endif()
endif()
file(WRITE "${OUT}.tmp" "${commit}\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
