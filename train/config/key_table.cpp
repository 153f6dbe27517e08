// configs/README.md's key tables, made from the schema: `train --list-keys --markdown`.
#include <fmt/format.h>

#include <string>

#include "train/config/config_schema.h"

namespace heed::train {
namespace {

std::string_view resume_name(OnResume resume) {
  switch (resume) {
    case OnResume::kFixed:
      return "fixed";
    case OnResume::kApplies:
      return "applies";
    case OnResume::kAppliesNotMade:
      return "applies, not in what it made";
    case OnResume::kHowStarted:
      return "how it started";
  }
  return "?";
}

// A table cell: a '|' of the text would end it.
std::string cell(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

std::string doc_of(const Row& row) {
  std::string doc(row.doc);
  if (row.doc_tail) doc += " " + row.doc_tail();
  return doc;
}

std::string table_start(std::string_view section) {
  const std::string heading =
      section.empty() ? std::string("Top level") : fmt::format("`{}`", section);
  return fmt::format(
      "## {}\n\n| key | type | default | resume | meaning |\n|---|---|---|---|---|\n", heading);
}

}  // namespace

std::string keys_markdown() {
  std::string out;
  std::optional<std::string> section;
  for (const KeyValue& kv : config_values(RunConfig{})) {
    if (kv.key.starts_with("model.")) continue;  // the architectures' fields: their own tables
    const size_t dot = kv.key.find('.');
    const std::string key_section = dot == std::string::npos ? "" : kv.key.substr(0, dot);
    if (key_section != section) {
      if (section) out += "\n";
      out += table_start(key_section);
      section = key_section;
    }
    const bool required = kv.row.need != Need::kOptional;
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", kv.key, cell(kv.type),
                       required ? "required" : fmt::format("`{}`", cell(kv.value)),
                       resume_name(kv.row.resume), cell(doc_of(kv.row)));
  }
  return out;
}

}  // namespace heed::train
