# Writes OUTPUT, a C++ file defining one `extern const char *const` per input
# text file, so the templates in src/bundle/templates stay real .c/.ld files
# and ship inside the binary.
#
#   cmake -DOUTPUT=file.cpp -DNAMESPACE=ns -DFILES="name=path|name=path..." -P EmbedTextFiles.cmake
string(REPLACE "|" ";" FILES "${FILES}")
set(text "// Generated from the files below by cmake/EmbedTextFiles.cmake; do not edit.\n")
string(APPEND text "namespace ${NAMESPACE} {\n")
foreach(entry IN LISTS FILES)
  string(REPLACE "=" ";" pair "${entry}")
  list(GET pair 0 symbol)
  list(GET pair 1 path)
  file(READ "${path}" content)
  if(content MATCHES "\\)bf_text\"")
    message(FATAL_ERROR "${path} contains the raw-string delimiter )bf_text\"")
  endif()
  string(APPEND text "// ${path}\nextern const char *const ${symbol};\n"
                     "const char *const ${symbol} = R\"bf_text(${content})bf_text\";\n")
endforeach()
string(APPEND text "} // namespace ${NAMESPACE}\n")
# Only touch OUTPUT when it changes, so an unrelated reconfigure rebuilds nothing.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${text}")
