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
      # The suite, not the benchmarks; RelWithDebInfo keeps reports readable and runs fast
      # enough. halt_on_error: a report fails the test that caused it.
      options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEED_SANITIZE=ON -DHEED_BUILD_BENCH=OFF)
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
