#include "train/train_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "heed/version.h"
#include "train/config/config.h"
#include "train/config/config_schema.h"
#include "train/config/pipeline.h"
#include "train/distributed/world.h"
#include "train/pipeline_runner.h"
#include "train/run/stop_signals.h"
#include "train/tasks/load_run_config.h"

namespace heed::train {
namespace {

struct Arguments {
  std::string config_path;
  std::vector<std::string> overrides;
  bool print_config = false, resume = false, list_keys = false, markdown = false;
};

void say(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
}

// The one line of a failure, and its exit code. In a data-parallel job the line names the
// rank, and the whole job ends with it: the other ranks would otherwise wait for this one in
// their next collective for ever.
int failed(int exit_code, const std::string& message) {
  const World& world = World::get();
  if (!world.distributed()) {
    say("train: " + message);
    return exit_code;
  }
  say(fmt::format("train: rank {} of {}: {}", world.rank(), world.size(), message));
  std::fflush(stderr);
  world.abort(exit_code);
}

// Every key of the schema, one a line (model.* of each architecture), or configs/README.md's
// key tables.
int list_keys(bool markdown) {
  if (markdown) {
    std::fputs(keys_markdown().c_str(), stdout);
    return 0;
  }
  std::vector<std::string> keys;
  for (const auto& [arch, name] : EnumInfo<Arch>::values) {
    for (std::string& key : config_keys(arch)) {
      if (!std::ranges::count(keys, key)) keys.push_back(std::move(key));
    }
  }
  for (const std::string& key : keys) std::printf("%s\n", key.c_str());
  return 0;
}

int run(const Arguments& args, const TrainerHooks& hooks) {
  if (std::optional<std::vector<PipelineStage>> stages = read_pipeline(args.config_path)) {
    return run_pipeline(args.config_path, *stages, args.overrides, args.print_config, hooks);
  }
  std::vector<std::string> overrides = args.overrides;
  if (args.resume) overrides.push_back("train.resume=auto");
  const RunConfig config = load_run_config(args.config_path, overrides);
  if (args.print_config) {
    std::fputs(to_yaml(config).c_str(), stdout);
    return 0;
  }
  // Nothing to continue: say so rather than evaluate the finished model again.
  if (args.resume) {
    if (std::optional<std::string> model = finished_model(config)) {
      say(fmt::format("{}: finished earlier ({}/final_metrics.json); its model is {}",
                      args.config_path, config.train.output_dir, *model));
      return 0;
    }
  }
  return run_training(config, hooks).exit_code;
}

}  // namespace

int train_command(int argc, char** argv, const TrainerHooks& hooks) {
  StopSignals::install();  // first, so that every thread started later inherits the mask
  CLI::App app("heed train: pretrain or fine-tune a Transformer from a YAML config");
  Arguments args;
  app.add_option("--config,-c", args.config_path,
                 "the run's YAML config, or a pipeline file of configs run one after another");
  app.add_option("--set", args.overrides,
                 "override a key, e.g. --set optim.lr=3e-4 (repeatable; every stage of a "
                 "pipeline)")
      ->take_all()
      ->allow_extra_args(false);
  app.add_flag("--resume", args.resume,
               "continue from the newest checkpoint in train.output_dir (a pipeline always "
               "does)");
  app.add_flag("--print-config", args.print_config, "print the resolved config and exit");
  CLI::Option* keys = app.add_flag("--list-keys", args.list_keys, "list every config key and exit");
  app.add_flag("--markdown", args.markdown, "with --list-keys: the key tables of configs/README.md")
      ->needs(keys);
  app.set_version_flag("--version", fmt::format("train (heed) {}", heed::version()));
  try {
    app.parse(argc, argv);
    if (args.list_keys) return list_keys(args.markdown);
    if (args.config_path.empty()) throw CLI::RequiredError(app.get_option("--config")->get_name());
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (World::launched_by_mpirun() && !World::available()) {
    return failed(1,
                  "error: train was started by mpirun, but this build has no MPI, so distributed "
                  "training is off: install Open MPI (scripts/setup.sh) and build again");
  }
  try {
    return run(args, hooks);
  } catch (const ConfigError& e) {
    return failed(2, e.what());
  } catch (const std::bad_alloc&) {
    return failed(1,
                  "error: out of memory; make the model or train.batch_size smaller (the run's "
                  "first lines estimate what it needs)");
  } catch (const std::exception& e) {
    return failed(1, fmt::format("error: {}", e.what()));
  }
}

}  // namespace heed::train
