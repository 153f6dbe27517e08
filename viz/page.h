#pragma once
// The self-contained HTML pages heed writes: one file each, with its CSS, its JS and its data
// inline, so that it opens from disk in any browser with no network and no server.
//   attention  what `infer attention` draws (viz/attention.html; the data as README.md says)
//   report     the training report, report.html beside metrics.jsonl (viz/report.html)
#include <nlohmann/json.hpp>

#include <string>

namespace heed::viz {

enum class Page { attention, report };

struct PageOptions {
  // Whether the page reloads itself every 30 s: the report of a run still training. The page's
  // script does it (a <meta name="heed-refresh">), not a meta refresh, so that it can stop
  // when the data says the run it shows has stopped.
  bool refresh = false;
};

// The page's template with `data` in its <script id="heed-data"> block. Every '<' of the JSON
// is written as \u003c, so no string in the data can end the script early.
std::string render_page(Page page, const nlohmann::json& data, const PageOptions& options = {});

// render_page, written atomically to `path` (io/atomic_file.h).
void write_page(const std::string& path, Page page, const nlohmann::json& data,
                const PageOptions& options = {});

}  // namespace heed::viz
