#include "train/config/config_schema.h"

#include <string>

namespace heed::train {
namespace {

// Lists the dotted keys, sections before their children.
struct KeyLister {
  std::vector<std::string> keys;
  std::string prefix;

  template <typename T>
  void field(std::string_view key, const T&, const Row&) {
    keys.push_back(prefix + std::string(key));
  }
  template <typename Body>
  void section(std::string_view key, Body&& body) {
    keys.push_back(prefix + std::string(key));
    const std::string outer = prefix;
    prefix += std::string(key) + ".";
    body();
    prefix = outer;
  }
};

// Finds the row of one dotted key.
struct RowFinder {
  std::string_view wanted;
  std::string prefix;
  Row found;

  template <typename T>
  void field(std::string_view key, const T&, const Row& row) {
    if (prefix + std::string(key) == wanted) found = row;
  }
  template <typename Body>
  void section(std::string_view key, Body&& body) {
    const std::string outer = prefix;
    prefix += std::string(key) + ".";
    if (wanted.starts_with(prefix)) body();
    prefix = outer;
  }
};

}  // namespace

std::string_view to_string(Arch value) {
  return enum_name(value);
}
std::string_view to_string(TokenizerType value) {
  return enum_name(value);
}
std::string_view to_string(OptimizerName value) {
  return enum_name(value);
}
std::string_view to_string(ScheduleName value) {
  return enum_name(value);
}
std::string_view to_string(Resume value) {
  return enum_name(value);
}
std::string_view to_string(Progress value) {
  return enum_name(value);
}

std::vector<std::string> config_keys(Arch arch) {
  RunConfig config;
  config.model.set_arch(arch);
  KeyLister lister;
  visit_config(lister, std::as_const(config));
  return lister.keys;
}

Row row_of(std::string_view key) {
  const RunConfig config;
  RowFinder finder{key, "", {}};
  visit_config(finder, config);
  return finder.found;
}

}  // namespace heed::train
