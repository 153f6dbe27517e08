#include "viz/page.h"

#include <string_view>

#include "base/error.h"
#include "io/atomic_file.h"
#include "io/checksum.h"

namespace heed::viz {

extern const std::string_view k_attention_template;
extern const std::string_view k_report_template;

namespace {

constexpr std::string_view kDataMarker = "/*HEED_DATA*/";
constexpr std::string_view kRefreshMarker = "<!--HEED_REFRESH-->";
constexpr std::string_view kScriptHashesMarker = "/*HEED_SCRIPT_HASHES*/";

// The Content-Security-Policy's script sources: 'sha256-...' of each inline <script> of the
// template (written with no attributes; the data block has a type and is never run). Only these
// scripts run: no event handler or script that a value in the data could smuggle in.
std::string script_hashes(std::string_view page) {
  constexpr std::string_view kOpen = "<script>", kClose = "</script>";
  std::string sources;
  for (size_t at = page.find(kOpen); at != std::string_view::npos; at = page.find(kOpen, at)) {
    const size_t begin = at + kOpen.size();
    const size_t end = page.find(kClose, begin);
    HEED_CHECK(end != std::string_view::npos, "a page template has a <script> without its end");
    if (!sources.empty()) sources += ' ';
    sources += "'sha256-" + io::to_base64(io::sha256(page.substr(begin, end - begin))) + "'";
    at = end + kClose.size();
  }
  return sources;
}

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
                 options.refresh ? R"(<meta name="heed-refresh" content="30">)" : "", name);
  }
  replace_once(html, kScriptHashesMarker, script_hashes(html), name);
  // The data last: it may itself contain the markers' text.
  replace_once(html, kDataMarker, script_safe_json(data), name);
  return html;
}

void write_page(const std::string& path, Page page, const nlohmann::json& data,
                const PageOptions& options) {
  io::write_file_atomically(path, render_page(page, data, options));
}

}  // namespace heed::viz
