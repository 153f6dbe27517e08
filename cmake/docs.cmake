# cmake --build build --target docs: the API reference in <build>/docs/html/index.html, made by
# Doxygen (scripts/setup.sh --docs) from the installed headers' own comments. Its front page is
# docs/api.md, which names the stable public surface; the rest is listed there as internal.
find_package(Doxygen QUIET)
if(DOXYGEN_FOUND)
  configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${PROJECT_BINARY_DIR}/docs/Doxyfile @ONLY)
  add_custom_target(docs
    COMMAND ${DOXYGEN_EXECUTABLE} ${PROJECT_BINARY_DIR}/docs/Doxyfile
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "API reference: ${PROJECT_BINARY_DIR}/docs/html/index.html"
    VERBATIM)
else()
  # The target exists either way, so that asking for it says what is missing.
  add_custom_target(docs
    COMMAND ${CMAKE_COMMAND} -E echo "docs: Doxygen was not found; install it (bash scripts/setup.sh --docs) and configure again"
    COMMAND ${CMAKE_COMMAND} -E false
    VERBATIM)
endif()
