#include "train/train_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "io/json_file.h"
#include "train/config/config.h"
#include "train/config/pipeline.h"
#include "train/distributed/world.h"
#include "train/stop_signals.h"
#include "train/training_checkpoint.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

struct Arguments {
  std::string config_path;
  std::vector<std::string> overrides;
  bool print_config = false, resume = false;
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

// A path as a YAML value: single-quoted, so that any character stays itself.
std::string yaml_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// The overrides of one stage: its own `set`, then the command line's, then the model the
// previous stage ended with.
std::vector<std::string> stage_overrides(const PipelineStage& stage,
                                         const std::vector<std::string>& command_line,
                                         const std::optional<std::string>& previous_model) {
  std::vector<std::string> sets = stage.overrides;
  sets.insert(sets.end(), command_line.begin(), command_line.end());
  if (previous_model) sets.push_back("init_from=" + yaml_quoted(*previous_model));
  return sets;
}

// The model directory of a finished run of `config`, if any: its final_metrics.json is at
// max_steps, and its model's checkpoint saw the data in the order this config gives (another
// seed or batch size is another run; resuming then refuses it, naming the key).
std::optional<std::string> finished_model_here(const RunConfig& config) {
  const fs::path path = fs::path(config.train.output_dir) / "final_metrics.json";
  if (!fs::exists(path)) return std::nullopt;
  const nlohmann::json j = io::read_json_file(path.string());
  if (j.value("step", int64_t{-1}) != config.train.max_steps || !j.contains("checkpoint")) {
    return std::nullopt;
  }
  const std::string model = j.at("checkpoint").get<std::string>();
  const fs::path state = fs::path(model) / "trainer_state.json";
  if (checkpoint_problem(model) ||
      io::read_json_file(state.string()).value("data_order", nlohmann::json()) !=
          data_order(config)) {
    return std::nullopt;
  }
  return model;
}

// Rank 0's answer, on every rank of a data-parallel job: the others need not see its files.
std::optional<std::string> finished_model(const RunConfig& config) {
  const World& world = World::get();
  std::string model = world.is_main() ? finished_model_here(config).value_or("") : "";
  world.broadcast(model);
  if (model.empty()) return std::nullopt;
  return model;
}

// Whether output_dir holds an earlier run, as rank 0 sees it.
bool holds_earlier_run(const std::string& output_dir) {
  const World& world = World::get();
  std::string earlier = world.is_main() && !earlier_run_files(output_dir).empty() ? "yes" : "";
  world.broadcast(earlier);
  return !earlier.empty();
}

// Every stage checked before the first runs, so that a typo in the last one does not wait for
// the hours of the others. A later stage's init_from stands for the model the stage before it
// will end with: its last checkpoint here (with eval.load_best_model_at_end it may be an
// earlier, better one, which the stage's run then names).
std::vector<RunConfig> check_stages(const std::vector<PipelineStage>& stages,
                                    const std::vector<std::string>& command_line) {
  std::vector<RunConfig> configs;
  std::optional<std::string> previous_model;
  for (const PipelineStage& stage : stages) {
    configs.push_back(load_run_config(stage.config,
                                      stage_overrides(stage, command_line, previous_model),
                                      {.init_from_written_later = previous_model.has_value()}));
    const RunConfig& c = configs.back();
    previous_model = checkpoint_path(c.train.output_dir, c.train.max_steps);
  }
  return configs;
}

int run_pipeline(const std::string& path, const std::vector<PipelineStage>& stages,
                 const Arguments& args, const TrainerHooks& hooks) {
  const std::vector<RunConfig> checked = check_stages(stages, args.overrides);
  if (args.print_config) {
    for (size_t i = 0; i < checked.size(); ++i) {
      std::fputs(((i > 0 ? "---\n" : "") + to_yaml(checked[i])).c_str(), stdout);
    }
    return 0;
  }
  std::optional<std::string> previous_model;
  for (size_t i = 0; i < stages.size(); ++i) {
    const PipelineStage& stage = stages[i];
    const std::string name =
        fmt::format("{}: stage {}/{} ({})", path, i + 1, stages.size(), stage.config);
    std::vector<std::string> sets = stage_overrides(stage, args.overrides, previous_model);
    RunConfig config = load_run_config(stage.config, sets);
    if (std::optional<std::string> model = finished_model(config)) {
      say(fmt::format("{}: finished earlier; its model is {}", name, *model));
      previous_model = model;
      continue;
    }
    // An interrupted stage continues: from its newest checkpoint, or from step 0 when it
    // stopped before its first one.
    if (holds_earlier_run(config.train.output_dir)) {
      sets.push_back("train.resume=auto");
      config = load_run_config(stage.config, sets);
    }
    say(fmt::format("{}{}", name, previous_model ? ", from " + *previous_model : ""));
    const TrainerResult result = run_training(config, hooks);
    if (result.exit_code != 0) return result.exit_code;
    previous_model = finished_model(config);
    if (!previous_model) {
      say(fmt::format("{}: stopped at step {}; the same command continues it", name, result.steps));
      return 0;
    }
  }
  return 0;
}

int run(const Arguments& args, const TrainerHooks& hooks) {
  if (std::optional<std::vector<PipelineStage>> stages = read_pipeline(args.config_path)) {
    return run_pipeline(args.config_path, *stages, args, hooks);
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
                 "the run's YAML config, or a pipeline file of configs run one after another")
      ->required();
  app.add_option("--set", args.overrides,
                 "override a key, e.g. --set optim.lr=3e-4 (repeatable; every stage of a "
                 "pipeline)")
      ->take_all()
      ->allow_extra_args(false);
  app.add_flag("--resume", args.resume,
               "continue from the newest checkpoint in train.output_dir (a pipeline always "
               "does)");
  app.add_flag("--print-config", args.print_config, "print the resolved config and exit");
  try {
    app.parse(argc, argv);
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
