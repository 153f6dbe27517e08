#pragma once
// The schema's `optim`, `schedule` and `train` sections: how the run trains (config_schema.h).
#include "train/config/config.h"
#include "train/config/config_enums.h"
#include "train/config/config_row.h"

namespace heed::train {

template <typename V, typename C>
void visit_training_sections(V& v, C& c) {
  v.section("optim", [&] {
    auto& o = c.optim;
    v.field("name", o.name,
            {.doc = "`adamw` (PyTorch's AdamW; no decay on biases and LayerNorm weights), `sgd` "
                    "(with momentum) or `adafactor` (Hugging Face's Adafactor at the scheduled "
                    "`lr`, T5's optimizer: factored second moments, update clipping; T5's relative "
                    "step for its first 10,000 steps is `lr: 0.01`, `schedule.name: constant`).",
             .resume = OnResume::kFixed});
    v.field("lr", o.lr,
            {.doc = "Peak learning rate (after warmup); > 0.",
             .resume = OnResume::kApplies,
             .rule = rule::Positive{}});
    v.field("betas", o.betas,
            {.doc = "adamw: moment decay rates, each in [0, 1).",
             .resume = OnResume::kFixed,
             .rule = rule::EachInUnitInterval{}});
    v.field("eps", o.eps,
            {.doc = "adamw: added after the square root; > 0.",
             .resume = OnResume::kFixed,
             .rule = rule::Positive{}});
    v.field("weight_decay", o.weight_decay,
            {.doc = "Decoupled weight decay; ≥ 0.",
             .resume = OnResume::kFixed,
             .rule = rule::NonNegative{}});
    v.field("momentum", o.momentum,
            {.doc = "sgd: momentum, in [0, 1).",
             .resume = OnResume::kFixed,
             .rule = rule::UnitInterval{}});
    v.field("scale_parameter", o.scale_parameter,
            {.doc = "adafactor: multiply each weight's step by its root mean square (at least "
                    "`adafactor_eps[1]`), so that it moves by a share of its own scale.",
             .resume = OnResume::kFixed});
    v.field("clip_threshold", o.clip_threshold,
            {.doc = "adafactor: scale each weight's update down to this root mean square; > 0.",
             .resume = OnResume::kFixed,
             .rule = rule::Positive{}});
    v.field("decay_rate", o.decay_rate,
            {.doc = "adafactor: the second moment's decay at update t is 1 - t^decay_rate; < 0.",
             .resume = OnResume::kFixed});
    v.field("beta1", o.beta1,
            {.doc = "adafactor: first-moment decay in [0, 1); 0 keeps no first moment (Hugging "
                    "Face's `beta1=None`).",
             .resume = OnResume::kFixed,
             .rule = rule::UnitInterval{}});
    v.field("adafactor_eps", o.adafactor_eps,
            {.doc = "adafactor: Hugging Face's `eps` pair: added to the squared gradient, and the "
                    "least weight scale `scale_parameter` uses; each ≥ 0.",
             .resume = OnResume::kFixed});
  });
  v.section("schedule", [&] {
    v.field(
        "name", c.schedule.name,
        {.doc = "Learning rate after warmup: `constant`, `linear` (to 0 at `max_steps`) or "
                "`cosine` (half a cosine to 0), as Hugging Face's `get_*_schedule_with_warmup`.",
         .resume = OnResume::kFixed});
    v.field("warmup_steps", c.schedule.warmup_steps,
            {.doc = "Steps of linear warmup from 0; in [0, `train.max_steps`].",
             .resume = OnResume::kFixed});
  });
  v.section("train", [&] {
    auto& t = c.train;
    v.field(
        "batch_size", t.batch_size,
        {.doc =
             "Examples per micro-batch, over the whole job: under `mpirun -np N` each rank takes "
             "its N-th of the rows of every batch, so the same config trains the same model on any "
             "number of processes. A step sees `batch_size × grad_accum_steps` examples.",
         .resume = OnResume::kFixed,
         .rule = rule::AtLeast{1}});
    v.field("grad_accum_steps", t.grad_accum_steps,
            {.doc = "Micro-batches whose gradients add up to one optimizer step.",
             .resume = OnResume::kFixed,
             .rule = rule::AtLeast{1}});
    v.field("max_steps", t.max_steps,
            {.doc = "Optimizer steps of the run.",
             .resume = OnResume::kApplies,
             .rule = rule::AtLeast{1},
             .need = Need::kRequired});
    v.field("max_grad_norm", t.max_grad_norm,
            {.doc = "Clip the global gradient norm to this; 0 = no clipping.",
             .resume = OnResume::kApplies,
             .rule = rule::NonNegative{}});
    v.field("label_smoothing", t.label_smoothing,
            {.doc = "In [0, 1). The training loss becomes PyTorch's `cross_entropy(..., "
                    "label_smoothing=ε)`: (1-ε)·NLL + ε·mean over classes of -log p (Hugging "
                    "Face's `label_smoothing_factor`). Logged training losses include it; "
                    "evaluation reports the plain NLL, so perplexity keeps its meaning.",
             .resume = OnResume::kFixed,
             .rule = rule::UnitInterval{}});
    v.field("seed", t.seed,
            {.doc = "Seeds initialization, dropout, masking and shuffling.",
             .resume = OnResume::kFixed,
             .rule = rule::AtLeast{0}});
    // At most 1024: far beyond any CPU this runs on; libgomp crashes when asked for a hundred
    // thousand.
    v.field("threads", t.threads,
            {.doc = "Threads for the kernels; 0 = OpenMP's default (all cores); at most 1024 (more "
                    "than the CPUs here only warns).",
             .resume = OnResume::kAppliesNotMade,
             .rule = rule::AtLeast{.min = 0, .max = 1024}});
    v.field("output_dir", t.output_dir,
            {.doc = "Where checkpoints, `metrics.jsonl` and (if built) the vocabulary go.",
             .resume = OnResume::kAppliesNotMade,
             .rule = rule::TextIs{is_not_empty, "must not be empty"},
             .need = Need::kRequired,
             .type = "path"});
    v.field(
        "resume", t.resume,
        {.doc =
             "`auto`: continue from the newest complete checkpoint in `output_dir` if there is one "
             "(what `--resume` sets; a checkpoint whose files do not match its `manifest.json` is "
             "skipped, with a line saying why); `never`: start fresh. A resumed run compares the "
             "config with its checkpoint's `run_config.yaml`. It takes a changed value of the keys "
             "whose resume column says `applies` (those that only steer the rest of the run: "
             "`optim.lr` becomes the schedule's base rate from then on), and says so. Any other "
             "change stops it before any work (exit 2), naming the key: the checkpoint learnt "
             "under the old value. So the `run_config.yaml` of every checkpoint is what ran.",
         .resume = OnResume::kHowStarted});
    v.field(
        "overwrite_output_dir", t.overwrite_output_dir,
        {.doc = "A fresh run (`resume: never`) into an `output_dir` that holds an earlier run "
                "(`checkpoint-*` directories, `metrics.jsonl`, `final_metrics.json`) stops before "
                "any work (exit 2): it would append to the earlier `metrics.jsonl`, and the "
                "checkpoint rotation, which keeps the newest steps, would delete the new run's "
                "lower-numbered checkpoints. `true` deletes those files first (token caches and a "
                "vocabulary built there stay). Hugging Face's `overwrite_output_dir`.",
         .resume = OnResume::kHowStarted});
    v.field("eval_at_end", t.eval_at_end,
            {.doc = "Evaluate on `data.valid` and `data.test` (those given) after the last step.",
             .resume = OnResume::kApplies});
    v.field("dtype", t.dtype,
            {.doc = "`f32`, or `bf16` (matrix products on bf16 inputs with f32 accumulation; "
                    "master weights stay f32).",
             .resume = OnResume::kApplies});
    v.field("gradient_checkpointing", t.gradient_checkpointing,
            {.doc = "Activation recomputation (Hugging Face's `gradient_checkpointing`): each "
                    "Transformer layer keeps only its input for backward and runs its forward "
                    "again during backward. Activation memory drops to one [batch, length, hidden] "
                    "tensor per layer plus one layer's working set, for about a third more time a "
                    "step; results are the same bits as without it.",
             .resume = OnResume::kApplies});
    v.field("check_memory", t.check_memory,
            {.doc = "Before the model is built, the run estimates what it will hold (parameters "
                    "with gradients and optimizer state, and the activations a micro-batch keeps "
                    "for backward), prints it, and stops (exit 2) when that exceeds the machine's "
                    "memory (or its cgroup's limit). `false` tries anyway.",
             .resume = OnResume::kAppliesNotMade});
    // At most 4096: a bucket is one MPI message, whose count of floats is an int.
    v.field("bucket_mb", t.bucket_mb,
            {.doc = "Data parallel (`mpirun -np N train ...`): gradients are summed over the ranks "
                    "in flat buckets of about this many MB (at most 4096), in reverse parameter "
                    "order, each started as soon as backward has finished its gradients.",
             .resume = OnResume::kApplies,
             .rule = rule::Positive{.max = 4096}});
    v.field(
        "zero_stage", t.zero_stage,
        {.doc =
             "Data parallel: `1` shards the optimizer state over the ranks (ZeRO-1): each keeps "
             "AdamW's moments for its share of the parameters (8/N bytes per parameter instead of "
             "8), updates that share, and sends the new values to the others. Same model as `0`, "
             "bit for bit; checkpoints hold the whole state, so any world size resumes them.",
         .resume = OnResume::kApplies,
         .rule = rule::IntIs{is_zero_stage,
                             "must be 0 (every rank keeps the whole optimizer state) or 1 (ZeRO-1: "
                             "each keeps its share), got {}"}});
  });
}

}  // namespace heed::train
