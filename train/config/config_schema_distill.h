#pragma once
// The schema's `distill` section: the teacher and the loss of `task: distill`
// (config_schema.h; the task is train/tasks/distillation.cpp).
#include "train/config/config.h"
#include "train/config/config_row.h"

namespace heed::train {

template <typename V, typename C>
void visit_distill_section(V& v, C& c) {
  v.section("distill", [&] {
    auto& d = c.distill;
    v.field("teacher", d.teacher,
            {.doc = "`task: distill`: the teacher, a masked-LM model directory (heed's checkpoint "
                    "or Hugging Face's, BERT or RoBERTa). Frozen: evaluated without gradients, in "
                    "eval mode, with the run's `train.dtype`. The run's tokenizer is its own.",
             .resume = OnResume::kFixed,
             .type = "path"});
    v.field("temperature", d.temperature,
            {.doc = "Softens both distributions of the soft-target loss: softmax(logits / T).",
             .resume = OnResume::kFixed,
             .rule = rule::Positive{}});
    v.field("alpha_ce", d.alpha_ce,
            {.doc = "Weight of the soft-target loss KL(teacher ‖ student) at `temperature`, times "
                    "T² (averaged over the rows it covers).",
             .resume = OnResume::kFixed,
             .rule = rule::NonNegative{}});
    v.field("alpha_mlm", d.alpha_mlm,
            {.doc = "Weight of the student's own masked-LM cross-entropy.",
             .resume = OnResume::kFixed,
             .rule = rule::NonNegative{}});
    v.field("alpha_cos", d.alpha_cos,
            {.doc = "Weight of 1 − cos between the student's and the teacher's last hidden "
                    "states, over the real (non-padding) tokens.",
             .resume = OnResume::kFixed,
             .rule = rule::NonNegative{}});
    v.field("restrict_ce_to_mask", d.restrict_ce_to_mask,
            {.doc = "`true`: the soft-target loss at the masked tokens only; `false`: at every "
                    "real token (Hugging Face's distiller's default).",
             .resume = OnResume::kFixed});
    v.field("init_from_teacher", d.init_from_teacher,
            {.doc = "Start the student from the teacher: its embeddings, the layers "
                    "`student_layers` names and the prediction head (the widths must match).",
             .resume = OnResume::kFixed});
    v.field("student_layers", d.student_layers,
            {.doc = "The teacher's layers (from 0) that become the student's layers 0, 1, …: one "
                    "per student layer. Unset: spread evenly, keeping the first and the last "
                    "(DistilBERT's recipe: [0, 2, 4, 7, 9, 11] of 12).",
             .resume = OnResume::kFixed});
  });
}

}  // namespace heed::train
