// train: runs the job a YAML config describes.
//   train --config configs/bert_mlm.yaml [--set optim.lr=3e-4 ...] [--resume] [--print-config]
// Exit codes: 0 done (or stopped cleanly by SIGINT/SIGTERM with a checkpoint), 1 a failure
// during the run (a non-finite loss, an I/O error), 2 a config or usage error.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "train/config/config.h"
#include "train/trainer.h"

int main(int argc, char** argv) {
  CLI::App app("heed train: pretrain or fine-tune a Transformer from a YAML config");
  std::string config_path;
  std::vector<std::string> overrides;
  bool print_config = false, resume = false;
  app.add_option("--config,-c", config_path, "the run's YAML config")->required();
  app.add_option("--set", overrides, "override a key, e.g. --set optim.lr=3e-4 (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  app.add_flag("--resume", resume, "continue from the newest checkpoint in train.output_dir");
  app.add_flag("--print-config", print_config, "print the resolved config and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (resume) overrides.push_back("train.resume=auto");
    heed::train::RunConfig config = heed::train::load_run_config(config_path, overrides);
    if (print_config) {
      std::fputs(heed::train::to_yaml(config).c_str(), stdout);
      return 0;
    }
    return heed::train::run_training(config).exit_code;
  } catch (const heed::train::ConfigError& e) {
    std::fprintf(stderr, "train: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train: error: %s\n", e.what());
    return 1;
  }
}
