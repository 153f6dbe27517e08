# Copies heed's headers into OUTPUT_DIR (<build>/staged_include/heed) as they are installed: an
# include of another heed header, "nn/module.h", becomes "heed/nn/module.h", so that the
# installed tree needs only its include/ on a user's include path (cmake/install.cmake).
# Nothing else changes: line for line, comment for comment, these are the repository's headers.
#   cmake -DSOURCE_DIR=<repo> -DOUTPUT_DIR=<dir> -DHEADERS=a.h|b/c.h -DFOLDERS=base|nn -P ...
string(REPLACE "|" ";" headers "${HEADERS}")
string(REPLACE "|" ";" folders "${FOLDERS}")
list(JOIN folders "|" alternatives)
foreach(header ${headers})
  file(READ ${SOURCE_DIR}/${header} text)
  string(REGEX REPLACE "#include \"((${alternatives})/)" "#include \"heed/\\1" text "${text}")
  file(WRITE ${OUTPUT_DIR}/${header} "${text}")
endforeach()
