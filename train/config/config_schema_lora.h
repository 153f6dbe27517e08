#pragma once
// The schema's `lora` section: fine-tuning through LoRA adapters, with the names and defaults of
// PEFT's LoraConfig (config_schema.h; the adapters are nn/lora.h, the run's side
// train/run/lora_run.cpp).
#include "train/config/config.h"
#include "train/config/config_row.h"

namespace heed::train {

template <typename V, typename C>
void visit_lora_section(V& v, C& c) {
  v.section("lora", [&] {
    auto& l = c.lora;
    v.field("r", l.r,
            {.doc = "The adapters' rank: A is [r, in], B [out, r].",
             .resume = OnResume::kFixed,
             .rule = rule::AtLeast{.min = 1}});
    v.field("lora_alpha", l.lora_alpha,
            {.doc = "The update is scaled by `lora_alpha / r` (PEFT's default 8; its examples "
                    "often take 16 with r 8).",
             .resume = OnResume::kFixed,
             .rule = rule::Positive{}});
    v.field("lora_dropout", l.lora_dropout,
            {.doc = "Dropout on the adapters' input, drawn from the model's dropout stream.",
             .resume = OnResume::kFixed,
             .rule = rule::UnitInterval{}});
    v.field("target_modules", l.target_modules,
            {.doc = "The Linear modules that get adapters, by Hugging Face module name as PEFT "
                    "matches them (the full name, or its end after a dot: `query` adapts every "
                    "`...attention.self.query`); setting it turns LoRA on. The base weights are "
                    "frozen (no gradients, no optimizer state); needs `init_from`. A name that "
                    "matches no Linear is an error. PEFT's per-model default is not guessed.",
             .resume = OnResume::kFixed,
             .rule = rule::DistinctNames{}});
    v.field("modules_to_save", l.modules_to_save,
            {.doc = "Modules trained whole besides the adapters (matched as `target_modules`), "
                    "e.g. `[classifier, pooler]`: a head that `init_from` lacks must be here (or "
                    "adapted), else the run is refused rather than train around a frozen random "
                    "head.",
             .resume = OnResume::kFixed,
             .rule = rule::DistinctNames{}});
    v.field("bias", l.bias,
            {.doc = "`none`: biases stay frozen (PEFT's `all` and `lora_only` are not supported).",
             .resume = OnResume::kFixed,
             .rule = rule::TextIs{is_lora_bias,
                                  "'{}' is not supported: heed trains LoRA with bias none"},
             .type = "name"});
  });
}

}  // namespace heed::train
