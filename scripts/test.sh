#!/usr/bin/env bash
# Installs what is missing, builds and runs the whole test suite through ctest.
#   scripts/test.sh             Release build in build/
#   scripts/test.sh --sanitize  AddressSanitizer + UndefinedBehaviorSanitizer build in
#                               build-sanitize/ (about 3× slower; CI runs both)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
options=(-DCMAKE_BUILD_TYPE=Release)
for arg in "$@"; do
  case "$arg" in
    --sanitize)
      build=build-sanitize
      # The suite, not the benchmarks. -O2 keeps the kernels fast enough; -g1 (line tables,
      # no variables) keeps reports readable at 20-30% less compile time than -g, which CI's
      # 90 minutes need. halt_on_error: a report fails the test that caused it.
      options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
               -DHEED_SANITIZE=ON -DHEED_BUILD_BENCH=OFF)
      export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=1"
      export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
      ;;
    *) echo "test.sh: unknown option '$arg' (use --sanitize)" >&2; exit 2 ;;
  esac
done
bash scripts/setup.sh
cmake -S . -B "$build" "${options[@]}"
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
