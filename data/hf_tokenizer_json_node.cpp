// A tokenizer.json value with its JSON path: the readers' shared checks and the file's parser.
#include "data/hf_tokenizer_json_node.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "io/text_file.h"

namespace heed::data::hf_tokenizer_json {

std::string shown(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 60) {
    size_t cut = 57;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  return text;
}

namespace {

// ".key" when the key reads as a name, else ["key"] (special_tokens' "[CLS]").
std::string member_path(const std::string& parent, std::string_view key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (plain) return parent.empty() ? std::string(key) : parent + "." + std::string(key);
  return parent + "[" + Json(key).dump(-1, ' ', false, Json::error_handler_t::replace) + "]";
}

}  // namespace

Node Node::at(std::string_view key) const {
  expect(value_->is_object(), "an object");
  const auto it = value_->find(key);
  if (it == value_->end()) fail("{}: {} is missing", *file_, member_path(path_, key));
  return Node(*it, *file_, member_path(path_, key));
}

std::optional<Node> Node::get(std::string_view key) const {
  expect(value_->is_object(), "an object");
  const auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return Node(*it, *file_, member_path(path_, key));
}

size_t Node::size() const {
  expect(value_->is_array(), "a list");
  return value_->size();
}

Node Node::operator[](size_t i) const {
  return Node((*value_)[i], *file_, fmt::format("{}[{}]", path_, i));
}

std::string Node::string() const {
  expect(value_->is_string(), "a string");
  return value_->get<std::string>();
}

bool Node::boolean() const {
  expect(value_->is_boolean(), "true or false");
  return value_->get<bool>();
}

int64_t Node::integer(int64_t low, int64_t high) const {
  const Json& v = *value_;
  bool ok = false;
  int64_t n = 0;
  if (v.is_number_unsigned()) {
    ok = v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX);
    n = ok ? static_cast<int64_t>(v.get<uint64_t>()) : 0;
  } else if (v.is_number_integer()) {
    ok = true;
    n = v.get<int64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    ok = std::isfinite(d) && d == std::floor(d) && d >= -0x1p63 && d < 0x1p63;
    n = ok ? static_cast<int64_t>(d) : 0;
  }
  if (!ok || n < low || n > high)
    fail_here("is {}; it must be a whole number from {} to {}", shown(v), low, high);
  return n;
}

Json parse_json(const std::string& path) {
  const std::string text = io::read_text_file(path);
  // Per depth: the keys of the object open there, and whether it is an object.
  std::vector<std::unordered_set<std::string>> keys;
  std::vector<std::string> names;
  std::vector<bool> is_object;
  const auto on_event = [&](int depth, Json::parse_event_t event, Json& j) {
    const auto d = static_cast<size_t>(depth);
    if (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) {
      keys.resize(d + 2);
      names.resize(d + 2);
      is_object.resize(d + 1);
      keys[d + 1].clear();
      is_object[d] = event == Json::parse_event_t::object_start;
    } else if (event == Json::parse_event_t::key) {
      const std::string key = j.get<std::string>();
      if (!keys[d].insert(key).second) {
        std::string where;
        for (size_t i = 1; i < d; ++i)
          where = is_object[i - 1] ? member_path(where, names[i]) : where + "[]";
        fail("{}: the key {} appears twice in {}", path, shown(key),
             where.empty() ? "the top-level object" : where);
      }
      names[d] = key;
    }
    return true;
  };
  try {
    return Json::parse(text, on_event);
  } catch (const Json::exception& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
}

}  // namespace heed::data::hf_tokenizer_json
