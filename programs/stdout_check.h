#pragma once
// Every program's last step: did standard output get everything written to it? A full disk or
// a closed descriptor shows only as a failed write, often at the final flush, so a program
// that does not look exits 0 having lost its output.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

namespace heed::programs {

// Flushes std::cout and C's stdout and returns `code`. When a run that succeeded lost some of
// its output, says so in one line on stderr, "PROGRAM: cannot write to standard output:
// REASON", and returns `failed_code` instead. (A run that failed has said why already.)
inline int finish_stdout(const char* program, int code, int failed_code) {
  // errno is the failed write's only when the failure happens here; a stream that failed
  // earlier says only that it did.
  std::string reason;
  errno = 0;
  std::cout.flush();
  if (!std::cout.good()) reason = errno != 0 ? std::strerror(errno) : "write error";
  errno = 0;
  if ((std::fflush(stdout) != 0 || std::ferror(stdout)) && reason.empty()) {
    reason = errno != 0 ? std::strerror(errno) : "write error";
  }
  if (reason.empty() || code != 0) return code;
  std::fprintf(stderr, "%s: cannot write to standard output: %s\n", program, reason.c_str());
  return failed_code;
}

}  // namespace heed::programs
