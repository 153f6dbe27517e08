#!/usr/bin/env bash
# docs/results.md, "Distillation": writes runs/distill_exp/ (about 25 min on 2 cores).
# The teacher is scripts/relative_positions_experiment.sh's absolute BERT-mini (4 layers, 1,000
# steps of 32 x 64, seed 42). A 2-layer student distilled from it for 1,000 steps against a
# 2-layer model trained from scratch for 1,000 steps and for as long as the student took;
# everything at 64 tokens, f32, evaluated on the whole valid and test splits.
cd "$(dirname "$0")/.."
set -e
T=build/programs/train
teacher=runs/rel_exp/absolute/checkpoint-1000
test -d $teacher || { echo "run scripts/relative_positions_experiment.sh first ($teacher)"; exit 1; }
mkdir -p runs/distill_exp
common="--set data.max_seq_length=64 --set train.batch_size=32 --set schedule.warmup_steps=100 --set eval.every_steps=0 --set eval.max_batches=0 --set checkpoint.every_steps=0 --set train.seed=42 --set train.dtype=f32 --set logging.every_steps=100 --set train.overwrite_output_dir=true"
# The training seconds of a run (final_metrics.json: up to its last step, before the final
# evaluation).
seconds() { python3 -c "import json; print(json.load(open('$1/final_metrics.json'))['elapsed_seconds'])"; }
run() {  # name, steps, config, extra
  local out=runs/distill_exp/$1
  $T --config $3 $common --set train.max_steps=$2 --set train.output_dir=$out $4 > $out.log 2>&1
  echo "$1 steps=$2 seconds=$(seconds $out)" >> runs/distill_exp/summary.txt
}
run scratch_1000 1000 configs/bert_mlm.yaml "--set model.num_hidden_layers=2"
run distilled_1000 1000 configs/distill_bert_mini.yaml "--set distill.teacher=$teacher"
# The scratch model's steps in the student's wall time.
steps=$(python3 -c "print(round(1000 * $(seconds runs/distill_exp/distilled_1000) / $(seconds runs/distill_exp/scratch_1000)))")
run scratch_same_time $steps configs/bert_mlm.yaml "--set model.num_hidden_layers=2"
# The teacher on the same splits (one step at lr 1e-12 moves no f32 weight), for its
# perplexity and its evaluation speed beside the student's.
run teacher_eval 1 configs/bert_mlm.yaml "--set init_from=$teacher --set schedule.warmup_steps=0 --set optim.lr=1.0e-12 --set optim.weight_decay=0.0"
