#include "train/pipeline_runner.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

#include "io/json_file.h"
#include "train/checkpoint/training_checkpoint.h"
#include "train/config/config_origins.h"
#include "train/config/resume_changes.h"
#include "train/distributed/world.h"
#include "train/tasks/load_run_config.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

void say(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
}

// A path as a YAML value: single-quoted, so that any character stays itself.
std::string yaml_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// The overrides of one stage: its own `set`, then the command line's, then the model the
// previous stage ended with; and where each came from, for messages.
struct StageOverrides {
  std::vector<std::string> sets;
  ConfigChecks checks;
};

StageOverrides stage_overrides(const PipelineStage& stage,
                               const std::vector<std::string>& command_line,
                               const std::optional<std::string>& previous_model) {
  StageOverrides o;
  for (const std::string& text : stage.overrides) {
    o.sets.push_back(text);
    o.checks.override_origins.push_back(fmt::format("{} (the stage's set {})", stage.where, text));
  }
  o.sets.insert(o.sets.end(), command_line.begin(), command_line.end());
  if (previous_model) {
    o.sets.push_back("init_from=" + yaml_quoted(*previous_model));
    o.checks.override_origins.resize(o.sets.size());
    o.checks.override_origins.back() = stage.where + " (the model of the stage before)";
  }
  return o;
}

// What an earlier run of a config left in its output_dir, when it finished: its model, and the
// keys whose values differ from those it finished with (keys that change what it made only).
struct FinishedRun {
  std::string model;
  int64_t step = 0;
  std::vector<ConfigChange> changes;
};

std::optional<FinishedRun> finished_run_here(const RunConfig& config) {
  const fs::path dir(config.train.output_dir);
  const fs::path path = dir / "final_metrics.json";
  if (!fs::is_regular_file(path)) return std::nullopt;
  const nlohmann::json j = io::read_json_file(path.string());
  if (!j.is_object() || !j.contains("checkpoint") || !j.at("checkpoint").is_string() ||
      !j.contains("step") || !j.at("step").is_number_integer()) {
    return std::nullopt;
  }
  FinishedRun run;
  // The model's directory inside this output_dir: a run moved elsewhere is still finished.
  run.model = (dir / fs::path(j.at("checkpoint").get<std::string>()).filename()).string();
  run.step = j.at("step").get<int64_t>();
  const fs::path recorded = fs::path(checkpoint_path(dir.string(), run.step)) / "run_config.yaml";
  if (checkpoint_problem(run.model) || !fs::is_regular_file(recorded)) return std::nullopt;
  for (ConfigChange& change : config_changes(read_config_as_written(recorded.string()), config)) {
    if (changes_what_a_run_made(change.key)) run.changes.push_back(std::move(change));
  }
  return run;
}

// The model directory of a finished run of exactly `config`, if any (another seed or learning
// rate is another run).
std::optional<std::string> finished_model_here(const RunConfig& config) {
  std::optional<FinishedRun> run = finished_run_here(config);
  if (!run || !run->changes.empty()) return std::nullopt;
  return run->model;
}

// Rank 0's answer, on every rank of a data-parallel job: the others need not see its files.
std::string from_main(const std::function<std::string()>& answer) {
  const World& world = World::get();
  std::string text = world.is_main() ? answer() : "";
  world.broadcast(text);
  return text;
}

}  // namespace

std::optional<std::string> finished_model(const RunConfig& config) {
  const std::string model = from_main([&] { return finished_model_here(config).value_or(""); });
  if (model.empty()) return std::nullopt;
  return model;
}

namespace {

// How a pipeline stage goes on from what its output_dir holds.
enum class StageStart { fresh, finished, resume, again };

struct StagePlan {
  StageStart start = StageStart::fresh;
  std::string model;  // finished: its model
};

// `inputs_changed`: a stage before this one trained in this invocation, so this stage's run,
// built on the old model, is stale whatever it holds.
StagePlan plan_stage(const RunConfig& config, bool inputs_changed, const std::string& name) {
  if (earlier_run_files(config.train.output_dir).empty()) return {StageStart::fresh};
  if (inputs_changed) return {StageStart::again};
  const std::optional<FinishedRun> run = finished_run_here(config);
  if (!run) return {StageStart::resume};  // interrupted: it continues
  if (run->changes.empty()) return {StageStart::finished, run->model};
  if (config.train.overwrite_output_dir) return {StageStart::again};
  // A change that resuming refuses is refused by the resume, naming where it was set; one that
  // resuming applies needs steps left to apply to.
  const bool all_apply = std::ranges::all_of(
      run->changes, [](const ConfigChange& c) { return applies_on_resume(c.key); });
  if (!all_apply || config.train.max_steps > run->step) return {StageStart::resume};
  const ConfigChange& first = run->changes.front();
  config_fail(config.origins.where(first.key),
              "{}: {} is {} but was {} when this stage finished in {}, and no step is left to "
              "train with it; set it back, or add train.overwrite_output_dir=true to the "
              "stage's `set` to train it again (the stages after it then train again too)",
              name, first.key, first.now, first.was, config.train.output_dir);
}

std::string to_text(const StagePlan& plan) {
  return std::to_string(static_cast<int>(plan.start)) + plan.model;
}

StagePlan from_text(const std::string& text) {
  return {static_cast<StageStart>(text.at(0) - '0'), text.substr(1)};
}

// Refuses, by the stage's line, what would make one stage's files another's: a stage that is a
// pipeline itself (so also a cycle), and two stages sharing an output_dir.
void check_stage_places(const std::vector<PipelineStage>& stages,
                        const std::vector<RunConfig>& configs) {
  std::map<fs::path, size_t> stage_of_dir;
  for (size_t i = 0; i < stages.size(); ++i) {
    const fs::path dir = fs::weakly_canonical(fs::absolute(configs[i].train.output_dir));
    const auto [it, inserted] = stage_of_dir.emplace(dir, i);
    if (!inserted) {
      config_fail(stages[i].where,
                  "pipeline: stage {} writes to train.output_dir {}, as stage {} does; each "
                  "stage needs its own",
                  i + 1, configs[i].train.output_dir, it->second + 1);
    }
  }
}

// Every stage checked before the first runs, so that a typo in the last one does not wait for
// the hours of the others. A later stage's init_from stands for the model the stage before it
// will end with: its last checkpoint here (with eval.load_best_model_at_end it may be an
// earlier, better one, which the stage's run then names).
std::vector<RunConfig> check_stages(const std::vector<PipelineStage>& stages,
                                    const std::vector<std::string>& command_line) {
  std::vector<RunConfig> configs;
  std::optional<std::string> previous_model;
  for (size_t i = 0; i < stages.size(); ++i) {
    const PipelineStage& stage = stages[i];
    if (read_pipeline(stage.config)) {
      config_fail(stage.where,
                  "pipeline: stage {} ({}) is a pipeline file itself; a stage is a run config "
                  "(pipelines do not nest)",
                  i + 1, stage.config);
    }
    StageOverrides o = stage_overrides(stage, command_line, previous_model);
    o.checks.init_from_written_later = previous_model.has_value();
    configs.push_back(load_run_config(stage.config, o.sets, o.checks));
    const RunConfig& c = configs.back();
    previous_model = checkpoint_path(c.train.output_dir, c.train.max_steps);
  }
  check_stage_places(stages, configs);
  return configs;
}

}  // namespace

int run_pipeline(const std::string& path, const std::vector<PipelineStage>& stages,
                 const std::vector<std::string>& overrides, bool print_config,
                 const TrainerHooks& hooks) {
  const std::vector<RunConfig> checked = check_stages(stages, overrides);
  if (print_config) {
    for (size_t i = 0; i < checked.size(); ++i) {
      std::fputs(((i > 0 ? "---\n" : "") + to_yaml(checked[i])).c_str(), stdout);
    }
    return 0;
  }
  std::optional<std::string> previous_model;
  bool trained = false;  // a stage trained in this invocation: every later one builds on it
  for (size_t i = 0; i < stages.size(); ++i) {
    const PipelineStage& stage = stages[i];
    const std::string name =
        fmt::format("{}: stage {}/{} ({})", path, i + 1, stages.size(), stage.config);
    StageOverrides o = stage_overrides(stage, overrides, previous_model);
    RunConfig config = load_run_config(stage.config, o.sets, o.checks);
    const StagePlan plan =
        from_text(from_main([&] { return to_text(plan_stage(config, trained, name)); }));
    if (plan.start == StageStart::finished) {
      say(fmt::format("{}: finished earlier; its model is {}", name, plan.model));
      previous_model = plan.model;
      continue;
    }
    if (plan.start != StageStart::fresh) {
      const bool again = plan.start == StageStart::again;
      if (again && trained) {
        say(
            fmt::format("{}: the model it starts from was trained again, so it trains again from "
                        "the start, replacing its earlier run in {}",
                        name, config.train.output_dir));
      }
      o.sets.push_back(again ? "train.overwrite_output_dir=true" : "train.resume=auto");
      config = load_run_config(stage.config, o.sets, o.checks);
    }
    say(fmt::format("{}{}", name, previous_model ? ", from " + *previous_model : ""));
    const TrainerResult result = run_training(config, hooks);
    if (result.exit_code != 0) return result.exit_code;
    trained = true;
    previous_model = finished_model(config);
    if (!previous_model) {
      say(fmt::format("{}: stopped at step {}; the same command continues it", name, result.steps));
      return 0;
    }
  }
  return 0;
}

}  // namespace heed::train
