// report: draws the curves and results of one or more training runs, each from its output
// directory (metrics.jsonl, final_metrics.json, run_info.json), on the same axes in one
// self-contained HTML page, for example a pretrained run beside its random-init twin.
//   report runs/spam runs/spam_scratch --out compare.html
// (`train` writes the same page for its own run, as output_dir/report.html.) Errors are one
// line on stderr and exit code 2.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "base/error.h"
#include "heed/version.h"
#include "programs/stdout_check.h"
#include "train/reporting/run_report.h"
#include "viz/page.h"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"Draw training runs' curves and results on the same axes, as an HTML page"};
  std::vector<std::string> dirs;
  std::string out;
  app.add_option("runs", dirs, "the runs' output directories (train.output_dir)")->required();
  app.add_option("--out", out, "the page to write")->required();
  app.set_version_flag("--version", std::string("report (heed) ") + heed::version());
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    throw heed::Error(e.what());
  }
  std::vector<nlohmann::json> runs;
  bool running = false;
  for (const std::string& dir : dirs) {
    runs.push_back(heed::train::run_report_data(dir, std::nullopt, [](const std::string& w) {
      std::fprintf(stderr, "report: warning: %s\n", w.c_str());
    }));
    running = running || runs.back().at("status") == "running";
  }
  const std::string title = dirs.size() == 1 ? dirs[0] : std::to_string(dirs.size()) + " runs";
  heed::viz::write_page(out, heed::viz::Page::report, heed::train::report_data(runs, title),
                        {.refresh = running});
  std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int code = 2;
  try {
    code = run(argc, argv);
  } catch (const std::exception& e) {
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::fprintf(stderr, "report: %s\n", message.c_str());
    return 2;
  }
  return heed::programs::finish_stdout("report", code, 2);
}
