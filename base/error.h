#pragma once
// heed reports every misuse as an exception whose message a user can act on: it names the
// operation and the shapes or values involved. Programs turn it into one line on stderr.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>

namespace heed {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

#define HEED_CHECK(cond, ...)               \
  do {                                      \
    if (!(cond)) ::heed::fail(__VA_ARGS__); \
  } while (0)

}  // namespace heed
