#pragma once
// Where each key of a config came from, so that any later check can name the place: the
// file and line of the key, or the `--set` override that set it (or a section above it).
#include <fmt/format.h>

#include <map>
#include <string>
#include <string_view>

#include "train/config.h"

namespace heed::train {

struct Origins {
  std::string file;
  std::map<std::string, std::string, std::less<>> of_key;  // dotted key -> "file:7" or "--set k=v"

  // Where `key` was set; for an absent key, where its nearest enclosing section was; for
  // none, the file's first line.
  std::string where(std::string_view key) const {
    while (true) {
      if (auto it = of_key.find(key); it != of_key.end()) return it->second;
      const size_t dot = key.rfind('.');
      if (dot == std::string_view::npos) return file + ":1";
      key = key.substr(0, dot);
    }
  }
};

// Throws the one-line ConfigError "where: message".
template <typename... Args>
[[noreturn]] void config_fail(const std::string& where, fmt::format_string<Args...> format,
                              Args&&... args) {
  throw ConfigError(where + ": " + fmt::format(format, std::forward<Args>(args)...));
}

// Checks the values of a config whose types and keys are already right: ranges, names,
// combinations, and that the files it names exist.
void validate(const RunConfig& config, const Origins& origins);

}  // namespace heed::train
