// The run config loader, the way `train --config FILE --set ...` uses it (train/config/): a
// pipeline file gives its stages, each loaded with its overrides; any other file is a run
// config, read through the schema and validated into a RunConfig. The input is the file's
// text, then optionally a NUL byte and `--set` overrides, one a line. Relative paths in the
// config resolve against the working directory: run from the repository root, so that the
// seeds' data files (tests/tiny_data/...) exist and validation goes on past them.
//
// A config that loads must print (to_yaml) as YAML that loads again into the same config, as
// config.h promises for `--print-config`.
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "train/config/config.h"
#include "train/config/pipeline.h"
#include "train/tasks/load_run_config.h"

namespace {

using heed::fuzz::write_scratch;
namespace train = heed::train;

void check_round_trip(const train::RunConfig& config) {
  const std::string yaml = train::to_yaml(config);
  const std::string path = write_scratch("printed.yaml", yaml);
  std::string again;
  try {
    again = train::to_yaml(train::load_run_config(path));
  } catch (const heed::Error& e) {
    std::fprintf(stderr, "fuzz: the printed config does not load: %s\n--- printed:\n%s\n", e.what(),
                 yaml.c_str());
    std::abort();
  }
  HEED_FUZZ_REQUIRE(again == yaml);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = heed::fuzz::as_text(data, size);
  const size_t nul = input.find('\0');
  const std::string path = write_scratch("run.yaml", input.substr(0, nul));
  std::vector<std::string> overrides;
  if (nul != std::string_view::npos) {
    std::string_view rest = input.substr(nul + 1);
    while (!rest.empty()) {
      const size_t eol = rest.find('\n');
      overrides.emplace_back(rest.substr(0, eol));
      rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    }
  }
  heed::fuzz::rejecting_with_heed_errors([&] {
    if (auto stages = train::read_pipeline(path)) {
      // As train checks a pipeline: every stage before the first runs, a later stage's
      // init_from written by the stage before it.
      for (size_t i = 0; i < stages->size(); ++i) {
        std::vector<std::string> sets = (*stages)[i].overrides;
        sets.insert(sets.end(), overrides.begin(), overrides.end());
        train::load_run_config((*stages)[i].config, sets, {.init_from_written_later = i > 0});
      }
      return;
    }
    const train::RunConfig config = train::load_run_config(path, overrides);
    check_round_trip(config);
  });
  return 0;
}
