#pragma once
// The config's schema, written once: which keys each section has, in which order, which field
// of RunConfig each one fills, and each key's row: its rule, what a resumed run may do with it
// and its doc. Reading YAML, writing YAML, checking values, comparing two configs and listing
// the keys (configs/README.md's tables) are visitors over these functions, so they can never
// disagree. A new key is its field in config.h, its row in the section's file
// (config_schema_inputs.h, _training.h, _outputs.h; model keys come from nn/models), and its
// consumer.
//
// A visitor V provides
//   v.field(key, value, row)    for a leaf (value: int64_t, double, bool, std::string, an
//                               enum of EnumInfo, a TaskName, std::array<double, 2>, a vector of
//                               strings or of integers, or an optional of these)
//   v.section(key, body)        for a nested mapping; body() visits its keys
// C is RunConfig or const RunConfig, so one schema serves readers and writers.
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "train/config/config.h"
#include "train/config/config_enums.h"
#include "train/config/config_row.h"
#include "train/config/config_schema_distill.h"
#include "train/config/config_schema_inputs.h"
#include "train/config/config_schema_lora.h"
#include "train/config/config_schema_outputs.h"
#include "train/config/config_schema_training.h"
#include "train/config/task_names.h"

namespace heed::train {

// The model's keys: the fields of its architecture's config (nn/models/config_fields.h), those
// that the tokenizer or the data fill in kept in ModelConfig's optionals.
template <typename V, typename M>
struct ModelKeys {
  V& v;
  M& m;
  template <typename T>
  void field(const char* name, T& value, const nn::Field& f) {
    if (f.source == nn::field::Source::kTokenizerOrData) {
      v.field(name, ModelConfig::derived(m, name), Row{});
    } else {
      v.field(name, value, Row{});
    }
  }
  void divides(const char*, int64_t, const char*, int64_t) {}
};

// The model's keys are those of its architecture's Hugging Face config, so `arch` comes
// first and decides the rest: a visitor that reads it switches the config to that
// architecture's.
template <typename V, typename M>
void visit_model(V& v, M& m) {
  Arch arch = m.arch();
  v.field("arch", arch,
          {.doc = "`bert`, `roberta`, `distilbert` (encoders), `gpt2` (decoder-only), `bart`, "
                  "`t5` (encoder-decoders).",
           .need = Need::kRequiredFirst});
  if constexpr (!std::is_const_v<M>) m.set_arch(arch);
  ModelKeys<V, M> keys{v, m};
  visit_arch(m, [&](auto& hf) { std::remove_cvref_t<decltype(hf)>::visit(hf, keys); });
}

template <typename V, typename C>
void visit_config(V& v, C& c) {
  v.field("task", c.task,
          {.doc = "What the run trains:",
           .resume = OnResume::kFixed,
           .need = Need::kRequired,
           .doc_tail = task_list_doc});
  v.section("model", [&] { visit_model(v, c.model); });
  v.field("init_from", c.init_from,
          {.doc = "A checkpoint directory (`config.json`, `model.safetensors`, `vocab.txt`) whose "
                  "weights start the run (fine-tuning); a head the checkpoint lacks is newly "
                  "initialized. Must exist.",
           .resume = OnResume::kFixed,
           .type = "path"});
  visit_distill_section(v, c);
  visit_lora_section(v, c);
  visit_input_sections(v, c);
  visit_training_sections(v, c);
  visit_output_sections(v, c);
}

// Every dotted key of a config whose model is `arch`, in schema order (sections included).
std::vector<std::string> config_keys(Arch arch);

// One key of a config: its value as to_yaml writes it, its documented type and its row.
struct KeyValue {
  std::string key;  // dotted
  std::string value;
  std::string type;  // "int", "path or null", ...
  Row row;
};

// Every key of `config` (no sections), in schema order.
std::vector<KeyValue> config_values(const RunConfig& config);

// The row of dotted `key`; a key the schema does not have (of another architecture, or gone)
// has the default row, which is kFixed.
Row row_of(std::string_view key);

// configs/README.md's key tables (all but model.*'s architecture fields): key, type, default,
// what a resume does, doc. What `train --list-keys --markdown` prints.
std::string keys_markdown();

}  // namespace heed::train
