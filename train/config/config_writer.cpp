// RunConfig -> YAML for --print-config and checkpoints: every key, in schema order, written
// so that load_run_config reads back exactly the same values.
#include <fmt/format.h>
#include <algorithm>

#include <set>

#include "train/config/config_schema.h"

namespace heed::train {
namespace {

// Plain when it cannot be mistaken for something else on reading; else double-quoted.
std::string format_string(const std::string& s) {
  static const std::set<std::string> kSpecial{"null", "Null",  "NULL",  "~",     "true", "True",
                                              "TRUE", "false", "False", "FALSE", "yes",  "no",
                                              "on",   "off",   "y",     "n"};
  const bool plain = !s.empty() && !kSpecial.count(s) &&
                     (std::isalnum(static_cast<unsigned char>(s[0])) || s[0] == '_' ||
                      s[0] == '.' || s[0] == '/') &&
                     std::ranges::all_of(s, [](char ch) {
                       return std::isalnum(static_cast<unsigned char>(ch)) ||
                              std::string_view("_./+-").find(ch) != std::string_view::npos;
                     });
  if (plain) return s;
  std::string out = "\"";
  for (const char ch : s) {
    const auto byte = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += ch;  // UTF-8 passes through
    }
  }
  return out + "\"";
}

// Shortest text that reads back as the same double; always with a '.' or an exponent so a
// reader sees a float.
std::string format_double(double value) {
  std::string s = fmt::format("{}", value);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string format(int64_t value) {
  return std::to_string(value);
}
std::string format(double value) {
  return format_double(value);
}
std::string format(bool value) {
  return value ? "true" : "false";
}
std::string format(const std::string& value) {
  return format_string(value);
}
std::string format(const std::array<double, 2>& value) {
  return fmt::format("[{}, {}]", format_double(value[0]), format_double(value[1]));
}
std::string format(const std::vector<std::string>& value) {
  std::vector<std::string> items;
  for (const std::string& s : value) items.push_back(format_string(s));
  return fmt::format("[{}]", fmt::join(items, ", "));
}
std::string format(const std::vector<int64_t>& value) {
  return fmt::format("[{}]", fmt::join(value, ", "));
}
std::string format(const TaskName& value) {
  return value.name;
}
template <typename E>
requires std::is_enum_v<E> std::string format(E value) {
  for (const auto& [v, name] : EnumInfo<E>::values) {
    if (v == value) return std::string(name);
  }
  return "null";
}
template <typename T>
std::string format(const std::optional<T>& value) {
  return value ? format(*value) : "null";
}

// The documented name of a field's type.
std::string type_name(int64_t) {
  return "int";
}
std::string type_name(double) {
  return "float";
}
std::string type_name(bool) {
  return "bool";
}
std::string type_name(const std::string&) {
  return "string";
}
std::string type_name(const std::array<double, 2>&) {
  return "[float, float]";
}
std::string type_name(const std::vector<std::string>&) {
  return "list of strings";
}
std::string type_name(const std::vector<int64_t>&) {
  return "list of ints";
}
std::string type_name(const TaskName&) {
  return "name";
}
template <typename E>
requires std::is_enum_v<E> std::string type_name(E) {
  return "name";
}

template <typename T>
std::string type_name(const T& value, const Row& row) {
  return row.type.empty() ? type_name(value) : std::string(row.type);
}
template <typename T>
std::string type_name(const std::optional<T>&, const Row& row) {
  return type_name(T{}, row) + " or null";
}

// Lists every key with its value, type and row.
struct ValueLister {
  std::vector<KeyValue> values;
  std::string prefix;

  template <typename T>
  void field(std::string_view key, const T& value, const Row& row) {
    values.push_back({prefix + std::string(key), format(value), type_name(value, row), row});
  }
  template <typename Body>
  void section(std::string_view key, Body&& body) {
    const std::string outer = prefix;
    prefix += std::string(key) + ".";
    body();
    prefix = outer;
  }
};

class Writer {
 public:
  template <typename T>
  void field(std::string_view key, const T& value, const Row&) {
    out += fmt::format("{:{}}{}: {}\n", "", indent_, key, format(value));
  }
  template <typename Body>
  void section(std::string_view key, Body&& body) {
    out += fmt::format("{:{}}{}:\n", "", indent_, key);
    indent_ += 2;
    body();
    indent_ -= 2;
  }
  std::string out;

 private:
  int indent_ = 0;
};

}  // namespace

std::string to_yaml(const RunConfig& config) {
  Writer writer;
  visit_config(writer, config);
  return writer.out;
}

std::vector<KeyValue> config_values(const RunConfig& config) {
  ValueLister lister;
  visit_config(lister, config);
  return lister.values;
}

}  // namespace heed::train
