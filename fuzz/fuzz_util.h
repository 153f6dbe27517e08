#pragma once
// What every fuzz target shares: scratch files for the readers that take a path, and the one
// rule of these targets: a reader may reject its input only with heed's documented error
// (heed::Error, of which train::ConfigError is one). Anything else that leaves a reader (a
// std::out_of_range, a JSON library exception, ...) is a finding, as is a crash, a sanitizer
// report or a hang; so is a broken promise of an API that a target checks with `require`.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "base/error.h"

namespace heed::fuzz {

// A directory of this process's own in /dev/shm (memory, so that writing every input costs
// little), else in the system temp directory; removed when the process exits normally.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path base = std::filesystem::is_directory("/dev/shm")
                                           ? std::filesystem::path("/dev/shm")
                                           : std::filesystem::temp_directory_path();
    std::filesystem::path d = base / ("heed-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  static const bool cleanup_registered = [] {
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return true;
  }();
  (void)cleanup_registered;
  return dir;
}

// Writes `bytes` to scratch file `name` (replacing it) and returns its path.
inline std::string write_scratch(const std::string& name, std::string_view bytes) {
  const std::filesystem::path path = scratch_dir() / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path.string();
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A promise the API makes that the input broke: a finding.
#define HEED_FUZZ_REQUIRE(cond)                                                               \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "fuzz: broken promise at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

// Runs `body`; heed::Error is the readers' documented way to reject an input and ends the run
// quietly (printed when HEED_FUZZ_VERBOSE is set: why a seed goes no further). Every other
// exception escapes to libFuzzer, which reports it as a crash.
template <typename Body>
void rejecting_with_heed_errors(Body&& body) {
  static const bool verbose = std::getenv("HEED_FUZZ_VERBOSE") != nullptr;
  try {
    body();
  } catch (const heed::Error& e) {
    if (verbose) std::fprintf(stderr, "rejected: %s\n", e.what());
  }
}

}  // namespace heed::fuzz
