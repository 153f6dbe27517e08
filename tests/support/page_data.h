#pragma once
// The data a page that heed wrote (viz/page.h) carries: the JSON of its heed-data script block.
#include <nlohmann/json.hpp>

#include <string>

namespace heed::testing {

inline nlohmann::json page_data(const std::string& html) {
  const std::string open = "<script id=\"heed-data\" type=\"application/json\">";
  const size_t begin = html.find(open);
  if (begin == std::string::npos) return nullptr;
  const size_t start = begin + open.size();
  return nlohmann::json::parse(html.substr(start, html.find("</script>", start) - start));
}

}  // namespace heed::testing
