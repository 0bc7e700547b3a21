# cmake -DIN=schema.fbs -DOUT=copy.fbs -P StripDeprecatedAttributes.cmake
# Debian's flatc 2.0.8 rejects `(deprecated)` on enum values, union members
# and table declarations (newer flatc accepts it); fields keep theirs, which
# 2.0.8 understands. Everything else is copied byte for byte.
file(READ ${IN} text)
string(REGEX REPLACE "([A-Z_0-9]+ = [0-9]+) \\(deprecated\\)," "\\1," text "${text}")
string(REGEX REPLACE "([A-Za-z]+Options) \\(deprecated\\)," "\\1," text "${text}")
string(REGEX REPLACE "table ([A-Za-z]+) \\(deprecated\\) {" "table \\1 {" text "${text}")
file(WRITE ${OUT} "${text}")
