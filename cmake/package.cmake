# cpack -G DEB (from the build directory): heed_<version>_amd64.deb with everything
# `cmake --install` puts in place, under /usr. Its dependencies are Debian 12's packages, by
# name: the runtime libraries the programs load, and, since the package is also a development
# package (headers, the CMake package, heed.pc, static libraries), the -dev packages that
# heedConfig.cmake's find_dependency calls and heed.pc's Requires look for.
set(CPACK_PACKAGE_NAME heed)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "A C++20 framework that trains Transformers from scratch on CPUs: a reverse-mode autograd \
over tensors with oneDNN matmul primitives, BERT, GPT and encoder-decoder models, AdamW, the \
train, infer, tokenize and report programs, and the headers, libraries and CMake package to \
build on it (find_package(heed)).")
# Debian wants a maintainer; a release sets its own (-DHEED_PACKAGE_CONTACT="Name <mail>").
set(HEED_PACKAGE_CONTACT "heed developers" CACHE STRING "The .deb's Maintainer field")
set(CPACK_PACKAGE_CONTACT "${HEED_PACKAGE_CONTACT}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # heed_0.9.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Runtime: what the programs and libraries load. libdnnl2 is oneDNN 2.x, the API heed is
# written against (autograd/kernels/onednn_*.h).
set(heed_deb_runtime "libstdc++6 (>= 12)" libdnnl2 libfmt9 libyaml-cpp0.7 libicu72 libsentencepiece0 libssl3 libgomp1)
# Building on heed: heedConfig.cmake finds these (dnnl's own config needs the OpenCL headers,
# since Debian builds oneDNN with its OpenCL runtime), and heed.pc names them.
set(heed_deb_dev libdnnl-dev ocl-icd-opencl-dev libfmt-dev libyaml-cpp-dev nlohmann-json3-dev
                 libicu-dev libsentencepiece-dev libssl-dev pkg-config)
if(HEED_MPI)
  list(APPEND heed_deb_runtime libopenmpi3)
  list(APPEND heed_deb_dev libopenmpi-dev)
  # mpirun, for data-parallel training; train runs without it.
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS openmpi-bin)
endif()
list(APPEND heed_deb_runtime ${heed_deb_dev})
list(JOIN heed_deb_runtime ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
include(CPack)
