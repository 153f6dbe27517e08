# Writes OUTPUT, a C++ file that defines the std::string_view NAME holding INPUT's bytes, so
# that a page template ships inside the programs (run as cmake -DINPUT= -DOUTPUT= -DNAME= -P).
file(READ "${INPUT}" content)
string(FIND "${content}" ")heedpage\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )heedpage\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by viz/embed_page.cmake; edit the template, not this file.\n"
  "#include <string_view>\n\nnamespace heed::viz {\n"
  "extern const std::string_view ${NAME};\n"
  "const std::string_view ${NAME} = R\"heedpage(${content})heedpage\";\n"
  "}  // namespace heed::viz\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
