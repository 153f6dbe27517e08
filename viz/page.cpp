#include "viz/page.h"

#include <string_view>

#include "autograd/error.h"
#include "io/atomic_file.h"

namespace heed::viz {

extern const std::string_view k_attention_template;
extern const std::string_view k_report_template;

namespace {

constexpr std::string_view kDataMarker = "/*HEED_DATA*/";
constexpr std::string_view kRefreshMarker = "<!--HEED_REFRESH-->";

// JSON that is safe inside <script>: "</script>" or "<!--" in a token or a config value
// would otherwise end or change the block. JSON.parse reads \u003c back as '<'.
std::string script_safe_json(const nlohmann::json& data) {
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    if (ch == '<') {
      out += "\\u003c";
    } else {
      out += ch;
    }
  }
  return out;
}

void replace_once(std::string& page, std::string_view marker, std::string_view with,
                  std::string_view template_name) {
  const size_t at = page.find(marker);
  HEED_CHECK(at != std::string::npos && page.find(marker, at + 1) == std::string::npos,
             "viz/{}.html must hold {} exactly once", template_name, marker);
  page.replace(at, marker.size(), with);
}

}  // namespace

std::string render_page(Page page, const nlohmann::json& data, const PageOptions& options) {
  const bool attention = page == Page::attention;
  const std::string_view name = attention ? "attention" : "report";
  std::string html(attention ? k_attention_template : k_report_template);
  if (!attention) {
    replace_once(html, kRefreshMarker,
                 options.refresh ? R"(<meta http-equiv="refresh" content="30">)" : "", name);
  }
  // The data last: it may itself contain the refresh marker's text.
  replace_once(html, kDataMarker, script_safe_json(data), name);
  return html;
}

void write_page(const std::string& path, Page page, const nlohmann::json& data,
                const PageOptions& options) {
  io::write_file_atomically(path, render_page(page, data, options));
}

}  // namespace heed::viz
