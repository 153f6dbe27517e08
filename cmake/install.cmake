# What `cmake --install build --prefix P` puts under P, and how a user's build finds it:
#   P/include/heed/...            every header of the libraries, at its path in the repository
#                                 (<heed/nn/linear.h>), plus <heed/heed.h> and <heed/version.h>
#   P/lib/libheed_*.a (or .so)    one library per folder, as in the build tree
#   P/lib/heed/objects-*/         the task objects (train/CMakeLists.txt says why objects)
#   P/lib/cmake/heed/             heedConfig.cmake: find_package(heed) and the targets heed::...
#   P/lib/pkgconfig/heed.pc       pkg-config --cflags --libs heed
#   P/bin/                        train, infer, tokenize, report
#   P/share/doc/heed/             README, CHANGELOG, the shipped configs and examples/
include(CMakePackageConfigHelpers)

# The libraries, bottom to top; their exported names drop the heed_ prefix (heed::nn).
set(heed_libraries base io autograd safetensors nn data optim decode viz train)
foreach(name ${heed_libraries})
  # While the major version is 0, no ABI is kept from one minor version to the next: the SONAME
  # carries both (libheed_nn.so.0.9).
  set_target_properties(heed_${name} PROPERTIES
    EXPORT_NAME ${name}
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
endforeach()
set_target_properties(heed_tasks PROPERTIES EXPORT_NAME tasks)
# heed::heed, everything: the trainer's libraries and the pages (viz), which heed::train uses
# only inside.
add_library(heed_all INTERFACE)
set_target_properties(heed_all PROPERTIES EXPORT_NAME heed)
target_link_libraries(heed_all INTERFACE heed_train heed_viz)
# A sanitizer build's libraries need the sanitizers' runtimes wherever they are linked: the
# installed package says so itself (the build tree has them from add_link_options).
if(HEED_SANITIZE)
  target_link_options(heed_base INTERFACE $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
endif()

set(heed_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/heed)
list(TRANSFORM heed_libraries PREPEND heed_ OUTPUT_VARIABLE heed_library_targets)
install(TARGETS ${heed_library_targets} heed_tasks heed_all
  EXPORT heedTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/heed)
install(TARGETS train infer tokenize report RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT heedTargets NAMESPACE heed:: DESTINATION ${heed_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/heedConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/heedConfig.cmake
                              INSTALL_DESTINATION ${heed_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/heedConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/heedConfig.cmake ${PROJECT_BINARY_DIR}/heedConfigVersion.cmake
        DESTINATION ${heed_cmake_dir})

# The headers. In the repository they include each other from its root ("nn/module.h"); a user
# writes <heed/nn/linear.h>. So the installed copies are staged with their own includes spelled
# "heed/nn/module.h" (cmake/stage_headers.cmake), and a user's include path needs P/include
# alone: heed's folder names (io/, data/, base/) never shadow the user's own headers. The
# repository keeps its short includes; only what is installed changes.
set(heed_header_folders base autograd io nn optim data decode viz train)
set(heed_header_globs ${heed_header_folders})
list(TRANSFORM heed_header_globs APPEND /*.h)
file(GLOB_RECURSE heed_headers CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}
     ${heed_header_globs})
set(heed_staged_dir ${PROJECT_BINARY_DIR}/staged_include)
list(TRANSFORM heed_headers PREPEND ${heed_staged_dir}/heed/ OUTPUT_VARIABLE heed_staged_headers)
list(TRANSFORM heed_headers PREPEND ${PROJECT_SOURCE_DIR}/ OUTPUT_VARIABLE heed_source_headers)
string(REPLACE ";" "|" heed_header_arg "${heed_headers}")
string(REPLACE ";" "|" heed_folder_arg "${heed_header_folders}")
add_custom_command(
  OUTPUT ${heed_staged_headers}
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT_DIR=${heed_staged_dir}/heed
          -DHEADERS=${heed_header_arg} -DFOLDERS=${heed_folder_arg}
          -P ${PROJECT_SOURCE_DIR}/cmake/stage_headers.cmake
  DEPENDS ${heed_source_headers} ${PROJECT_SOURCE_DIR}/cmake/stage_headers.cmake
  COMMENT "Staging the headers to install (includes spelled heed/...)"
  VERBATIM)
add_custom_target(heed_staged_headers ALL DEPENDS ${heed_staged_headers})
install(DIRECTORY ${heed_staged_dir}/heed DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/heed/heed.h
              ${PROJECT_BINARY_DIR}/generated/heed/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/heed)

# heed.pc. Its prefix is found from the file's own place (${pcfiledir}), so an installed tree
# that was moved, or unpacked from the .deb anywhere, still works.
set(heed_pc_requires "fmt yaml-cpp nlohmann_json icu-uc icu-i18n sentencepiece libcrypto")
if(HEED_MPI)
  string(APPEND heed_pc_requires " ompi-c")
endif()
# The task objects first (they use the libraries after them), then every library, users first.
get_target_property(heed_task_sources heed_tasks SOURCES)
set(heed_pc_libs "")
foreach(source ${heed_task_sources})
  string(APPEND heed_pc_libs
         " \${libdir}/heed/objects-$<CONFIG>/heed_tasks/${source}${CMAKE_CXX_OUTPUT_EXTENSION}")
endforeach()
set(heed_link_order train viz decode nn optim data safetensors autograd io base)
foreach(name ${heed_link_order})
  string(APPEND heed_pc_libs " -lheed_${name}")
endforeach()
string(APPEND heed_pc_libs " -ldnnl -fopenmp -pthread")
if(HEED_SANITIZE)
  string(APPEND heed_pc_libs " -fsanitize=address,undefined")
endif()
# Relative to the prefix, as ${pcfiledir} is lib/pkgconfig.
file(RELATIVE_PATH heed_pc_prefix_from_pc /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
configure_file(${PROJECT_SOURCE_DIR}/cmake/heed.pc.in ${PROJECT_BINARY_DIR}/heed.pc.in @ONLY)
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/heed.pc INPUT ${PROJECT_BINARY_DIR}/heed.pc.in)
install(FILES ${PROJECT_BINARY_DIR}/heed.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The documentation a package carries: the newcomer's page, the changes, the shipped configs and
# the standalone examples project.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/configs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
