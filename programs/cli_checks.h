#pragma once
// What the command lines of infer and tokenize share: a range check whose message is the rule
// and the value given ("--num-beams: must be at least 1, got 0"), where CLI11's own ranges
// print their bounds in full (a 309-digit DBL_MAX).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <limits>
#include <string>
#include <type_traits>

namespace heed::programs {

// Accepts a number of type T in [min, max]; CLI11 puts the option's name before the message.
// `max_reason` follows the bound in the message of a value above it, e.g. " (...)".
template <typename T>
CLI::Validator in_range(T min, T max = std::numeric_limits<T>::max(),
                        const std::string& max_reason = "") {
  const bool bounded = max != std::numeric_limits<T>::max();
  const std::string description =
      bounded ? fmt::format("in [{}, {}]", min, max) : fmt::format(">= {}", min);
  return CLI::Validator(
      [=](std::string& input) -> std::string {
        T value{};
        if (!CLI::detail::lexical_cast(input, value)) {
          return fmt::format("expected {}, got '{}'",
                             std::is_integral_v<T> ? "an integer" : "a number", input);
        }
        // Written so that a NaN fails too.
        if (!(value >= min)) return fmt::format("must be at least {}, got {}", min, input);
        if (!(value <= max)) {
          return fmt::format("must be at most {}{}, got {}", max, max_reason, input);
        }
        return "";
      },
      description);
}

}  // namespace heed::programs
