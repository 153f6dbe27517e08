// YAML -> RunConfig: parse the file, apply the `--set` overrides to the YAML tree
// (config_overrides.h), read it through the schema (types, unknown keys, required keys; each
// value by config_leaf_reader.h), then validate the values.
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "train/config/config.h"
#include "train/config/config_leaf_reader.h"
#include "train/config/config_origins.h"
#include "train/config/config_overrides.h"
#include "train/config/config_schema.h"
#include "train/config/did_you_mean.h"
#include "train/config/yaml_file.h"

namespace heed::train {
namespace {

// Names people bring from Hugging Face's TrainingArguments and elsewhere, too far from ours
// for an edit distance to find.
const std::map<std::string, std::string, std::less<>> kAliases = {
    {"learning_rate", "optim.lr"},
    {"adam_beta1", "optim.betas"},
    {"adam_beta2", "optim.betas"},
    {"adam_epsilon", "optim.eps"},
    {"epsilon", "optim.eps"},
    {"optimizer", "optim"},
    {"scheduler", "schedule"},
    {"lr_scheduler_type", "schedule.name"},
    {"num_warmup_steps", "schedule.warmup_steps"},
    {"per_device_train_batch_size", "train.batch_size"},
    {"gradient_accumulation_steps", "train.grad_accum_steps"},
    {"max_train_steps", "train.max_steps"},
    {"resume_from_checkpoint", "train.resume"},
    {"per_device_eval_batch_size", "eval.batch_size"},
    {"eval_steps", "eval.every_steps"},
    {"save_steps", "checkpoint.every_steps"},
    {"save_total_limit", "checkpoint.keep_last"},
    {"logging_steps", "logging.every_steps"},
    {"model_name_or_path", "init_from"},
    {"block_size", "data.max_seq_length"},
};

// A key/value of a mapping, with the key's line (the value of `key:` on its own may sit on
// the next line).
struct Entry {
  std::string name;
  int line;  // 1-based
  YAML::Node value;
};

// The schema visitor that fills a RunConfig from a YAML tree.
class Reader {
 public:
  Reader(const YAML::Node& root, RunConfig& config, Origins& origins,
         const OverrideOrigins& overrides)
      : config_(config), origins_(origins), overrides_(overrides) {
    scopes_.emplace_back("", origins.file + ":1", entries_of(root, ""));
  }

  // Reports what remains of the top level: unknown sections, a missing `task`.
  void finish() { finish_scope(scopes_.back()); }

  template <typename T>
  void field(std::string_view key, T& value, const Row& row) {
    const Need need = row.need;
    Scope& scope = scopes_.back();
    scope.known.emplace_back(key);
    const std::string dotted = scope.prefix + std::string(key);
    const Entry* entry = scope.find(key);
    if (!entry) {
      if (need == Need::kOptional) return;
      const std::string message = fmt::format("{}: missing required key '{}'", scope.where, dotted);
      if (need == Need::kRequiredFirst) {
        // Reported at once, but after keys found missing earlier in the schema.
        for (const Scope& outer : scopes_) {
          if (outer.missing) throw ConfigError(*outer.missing);
        }
        throw ConfigError(message);
      }
      if (!scope.missing) scope.missing = message;
      return;
    }
    const std::string where = origin(dotted, entry->line);
    origins_.of_key[dotted] = where;
    read(entry->value, value, Ctx{where, dotted});
  }

  template <typename Body>
  void section(std::string_view key, Body&& body) {
    Scope& parent = scopes_.back();
    parent.known.emplace_back(key);
    Scope scope(parent.prefix + std::string(key) + ".", parent.where, {});
    const std::string dotted = parent.prefix + std::string(key);
    if (const Entry* entry = parent.find(key)) {
      scope.where = origin(dotted, entry->line);
      origins_.of_key[dotted] = scope.where;
      if (entry->value.IsMap()) {
        scope.entries = entries_of(entry->value, scope.prefix);
      } else if (!entry->value.IsNull()) {
        Ctx{scope.where, dotted}.fail_expected("a mapping of keys", entry->value);
      }
    }
    scopes_.push_back(std::move(scope));
    body();
    finish_scope(scopes_.back());
    scopes_.pop_back();
  }

 private:
  struct Scope {
    Scope(std::string prefix, std::string where, std::vector<Entry> entries)
        : prefix(std::move(prefix)), where(std::move(where)), entries(std::move(entries)) {}
    std::string prefix;  // "" or "optim."
    std::string where;   // for keys missing here
    std::vector<Entry> entries;
    std::vector<std::string> known;  // the keys the schema visited
    std::optional<std::string> missing;

    const Entry* find(std::string_view key) const {
      auto it = std::ranges::find(entries, key, &Entry::name);
      return it == entries.end() ? nullptr : &*it;
    }
  };

  // The keys of a mapping, with those it merges (`<<: *base`, YAML 1.1's merge key): a merged
  // key counts only where the mapping does not set it itself, and of a list of merged
  // mappings the earlier ones win. A merged key's line is where its value is written.
  std::vector<Entry> entries_of(const YAML::Node& map, const std::string& prefix,
                                std::vector<YAML::Node> merging = {}) const {
    std::vector<Entry> entries;
    std::optional<Entry> merge;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const int line = it->first.Mark().line + 1;
      if (!it->first.IsScalar()) {
        config_fail(origin(prefix, line), "expected a key name, got {}", describe_yaml(it->first));
      }
      Entry entry{it->first.Scalar(), line, it->second};
      const Entry* first =
          is_merge_key(it->first) ? (merge ? &*merge : nullptr) : find_entry(entries, entry.name);
      if (first) {
        config_fail(origin(prefix + entry.name, line), "duplicate key '{}{}' (first at line {})",
                    prefix, entry.name, first->line);
      }
      if (is_merge_key(it->first)) {
        merge = std::move(entry);
      } else {
        entries.push_back(std::move(entry));
      }
    }
    if (!merge) return entries;
    const std::vector<YAML::Node> sources = merged_mappings(merge->value);
    if (sources.empty()) {
      config_fail(origin(prefix + "<<", merge->line),
                  "'<<' (a YAML merge key) takes a mapping or a list of mappings, as <<: *name, "
                  "got {}",
                  describe_yaml(merge->value));
    }
    merging.push_back(map);
    for (const YAML::Node& source : sources) {
      for (const YAML::Node& outer : merging) {
        if (source.is(outer)) {
          config_fail(origin(prefix + "<<", merge->line),
                      "'<<' (a YAML merge key) merges a mapping into itself");
        }
      }
      for (Entry& inherited : entries_of(source, prefix, merging)) {
        if (!find_entry(entries, inherited.name)) entries.push_back(std::move(inherited));
      }
    }
    return entries;
  }

  static const Entry* find_entry(const std::vector<Entry>& entries, std::string_view name) {
    auto it = std::ranges::find(entries, name, &Entry::name);
    return it == entries.end() ? nullptr : &*it;
  }

  // The override that set `dotted` or a section above it, else the file and line. Prefixes
  // are tried longest first: the most specific override wins.
  std::string origin(std::string_view dotted, int line) const {
    std::string_view key = dotted;
    while (!key.empty()) {
      if (auto it = overrides_.find(key); it != overrides_.end()) return it->second;
      const size_t dot = key.rfind('.');
      key = dot == std::string_view::npos ? std::string_view() : key.substr(0, dot);
    }
    return fmt::format("{}:{}", origins_.file, line);
  }

  void finish_scope(const Scope& scope) const {
    for (const Entry& entry : scope.entries) {
      if (std::ranges::count(scope.known, entry.name)) continue;
      const std::string dotted = scope.prefix + entry.name;
      config_fail(origin(dotted, entry.line), "unknown key '{}'{}", dotted,
                  unknown_key_hint(scope, entry.name));
    }
    if (scope.missing) throw ConfigError(*scope.missing);
  }

  // A likely typo in this section; else a known alias; else the same key in exactly one
  // other section; else, for a model key, the architecture it belongs to.
  std::string unknown_key_hint(const Scope& scope, const std::string& name) const {
    if (auto suggestion = did_you_mean(name, scope.known)) {
      return fmt::format(" (did you mean '{}{}'?)", scope.prefix, *suggestion);
    }
    if (auto it = kAliases.find(name); it != kAliases.end()) {
      return fmt::format(" (did you mean '{}'?)", it->second);
    }
    std::vector<std::string> elsewhere;
    for (const std::string& key : config_keys(config_.model.arch())) {
      if (key.ends_with("." + name) || key == name) elsewhere.push_back(key);
    }
    if (elsewhere.size() == 1) return fmt::format(" (did you mean '{}'?)", elsewhere[0]);
    if (scope.prefix == "model.") {
      for (const auto& [arch, arch_name] : EnumInfo<Arch>::values) {
        if (std::ranges::count(config_keys(arch), "model." + name)) {
          return fmt::format(" (a {} key, but model.arch is {})", arch_name,
                             to_string(config_.model.arch()));
        }
      }
    }
    return "";
  }

  RunConfig& config_;
  Origins& origins_;
  const OverrideOrigins& overrides_;
  std::vector<Scope> scopes_;
};

// The file's config as it is written, its types and keys checked but not its values.
RunConfig read_config(const std::string& path, const std::vector<std::string>& overrides,
                      const ConfigChecks& checks, Origins& origins) {
  YAML::Node root = parse_yaml_file(path);
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) {
    throw ConfigError(
        fmt::format("{}:1: expected a mapping of sections (task, model, data, ...)", path));
  }
  const OverrideOrigins override_of = apply_overrides(root, overrides, checks);

  RunConfig config;
  Reader reader(root, config, origins, override_of);
  visit_config(reader, config);
  reader.finish();
  return config;
}

}  // namespace

RunConfig read_run_config(const std::string& path, const std::vector<std::string>& overrides,
                          const ConfigChecks& checks) {
  Origins origins{path, {}};
  RunConfig config = read_config(path, overrides, checks, origins);
  config.origins = std::move(origins);
  return config;
}

RunConfig read_config_as_written(const std::string& path) {
  return read_run_config(path);
}

}  // namespace heed::train