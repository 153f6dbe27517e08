#pragma once
// The schema's `eval`, `checkpoint`, `logging` and `generation` sections: what the run
// measures, keeps and prints (config_schema.h).
#include "train/config/config.h"
#include "train/config/config_enums.h"
#include "train/config/config_row.h"

namespace heed::train {

template <typename V, typename C>
void visit_output_sections(V& v, C& c) {
  v.section("eval", [&] {
    v.field("every_steps", c.eval.every_steps,
            {.doc = "Evaluate on `data.valid` every this many steps; 0 = only at the end.",
             .resume = OnResume::kApplies,
             .rule = rule::AtLeast{0}});
    v.field(
        "max_batches", c.eval.max_batches,
        {.doc =
             "Batches per evaluation; 0 = the whole split. A whole split is evaluated longest "
             "example first, so that each batch pads little (the same examples, the same figures; "
             "MLM masks other tokens, as randomly); a part of it is the file's first batches.",
         .resume = OnResume::kApplies,
         .rule = rule::AtLeast{0}});
    v.field("batch_size", c.eval.batch_size,
            {.doc = "Evaluation batch size; `null`: `train.batch_size`.",
             .resume = OnResume::kApplies,
             .rule = rule::AtLeast{1}});
    v.field("decode", c.eval.decode,
            {.doc = "seq2seq: besides the teacher-forced loss and accuracy, decode the evaluated "
                    "examples (greedy, or beam search with `generation.num_beams` > 1) and report "
                    "`eval.decode_metrics` against every reference of a source. Turn off when "
                    "decoding a large split at every evaluation costs too much.",
             .resume = OnResume::kApplies});
    v.field("decode_metrics", c.eval.decode_metrics,
            {.doc = "seq2seq with `eval.decode`: what scores the decoded outputs, any of "
                    "`sequence_error_rate` and `token_error_rate` (G2P's WER and PER, on token "
                    "ids), `bleu` and `chrf` (translation: corpus BLEU and chrF exactly as "
                    "sacrebleu's defaults compute them, 13a tokenisation, 0 to 100, on the "
                    "decoded text). `null`: `[sequence_error_rate, token_error_rate]`.",
             .resume = OnResume::kApplies,
             .rule = rule::DistinctNames{}});
    v.field(
        "load_best_model_at_end", c.eval.load_best_model_at_end,
        {.doc = "Hugging Face's option: every evaluation of `data.valid` (each `eval.every_steps`, "
                "and the last step's) that beats the best so far by `eval.metric_for_best_model` "
                "saves a checkpoint, which the rotation keeps besides the newest "
                "`checkpoint.keep_last`; at the end that model is loaded, so the final evaluation "
                "of validation and test, `final_metrics.json` (`best_metric`, `best_global_step`, "
                "`best_model_checkpoint`) and the closing examples are of it. A tie keeps the "
                "earlier step. Needs `data.valid` and `eval.every_steps` > 0. The best so far is "
                "part of each checkpoint, so a resumed run chooses as an uninterrupted one.",
         .resume = OnResume::kFixed});
    v.field(
        "metric_for_best_model", c.eval.metric_for_best_model,
        {.doc = "What \"best\" is judged by: a name the evaluation reports (`loss`, "
                "`perplexity`, `accuracy`; a classifier's `macro_f1` and `<label>_precision`, "
                "`_recall`, `_f1`; seq2seq with `eval.decode`: those of "
                "`eval.decode_metrics`), with or without Hugging Face's `eval_` prefix. `null`: "
                "`loss`. Only with `eval.load_best_model_at_end`. Checked before any work, "
                "like every key: a classifier's `<label>` against `data.labels` or, when that "
                "is unset, the labels of `data.train`.",
         .resume = OnResume::kFixed});
    v.field("greater_is_better", c.eval.greater_is_better,
            {.doc = "Whether a higher `eval.metric_for_best_model` is better. `null`: false for "
                    "`loss`, `perplexity` and the error rates, true otherwise (Hugging Face "
                    "decides by the suffix `loss` alone). Only with `eval.load_best_model_at_end`.",
             .resume = OnResume::kFixed});
  });
  v.section("checkpoint", [&] {
    v.field(
        "every_steps", c.checkpoint.every_steps,
        {.doc = "Save `output_dir/checkpoint-STEP/` every this many steps; 0 = only the final one.",
         .resume = OnResume::kApplies,
         .rule = rule::AtLeast{0}});
    v.field("keep_last", c.checkpoint.keep_last,
            {.doc = "Checkpoints kept; older ones are deleted. At least 1.",
             .resume = OnResume::kAppliesNotMade,
             .rule = rule::AtLeast{1}});
  });
  v.section("logging", [&] {
    v.field("every_steps", c.logging.every_steps,
            {.doc = "Log (and append to `metrics.jsonl`) every this many steps.",
             .resume = OnResume::kAppliesNotMade,
             .rule = rule::AtLeast{1}});
    v.field("progress", c.logging.progress,
            {.doc = "Progress bar: `auto` (when stderr is a terminal; plain lines otherwise), "
                    "`always`, `never`.",
             .resume = OnResume::kAppliesNotMade});
  });
  v.section("generation", [&] {
    v.field("num_beams", c.generation.num_beams,
            {.doc = "seq2seq evaluation: beam width; 1 = greedy decoding.",
             .resume = OnResume::kApplies,
             .rule = rule::AtLeast{1}});
    v.field("max_new_tokens", c.generation.max_new_tokens,
            {.doc = "seq2seq evaluation: longest generated output.",
             .resume = OnResume::kApplies,
             .rule = rule::AtLeast{1}});
  });
}

}  // namespace heed::train
