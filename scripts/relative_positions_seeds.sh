#!/usr/bin/env bash
# docs/results.md, "Relative positions": seeds 43 and 44 beside scripts/relative_positions_experiment.sh's
# seed 42 (about 35 min on 2 cores; run that script first). Each seed trains absolute and
# relative_key_query BERT-mini for 1,000 steps of 32 x 64 (f32) and evaluates it on the whole
# valid and test splits at 64 tokens; seed 42's checkpoints are evaluated the same way.
cd "$(dirname "$0")/.."
set -e
T=build/programs/train
mkdir -p runs/rel_seeds
common="--config configs/bert_mlm.yaml --set data.max_seq_length=64 --set train.batch_size=32 --set eval.every_steps=0 --set eval.max_batches=0 --set checkpoint.every_steps=0 --set train.dtype=f32 --set logging.every_steps=100 --set train.overwrite_output_dir=true"
for kind in absolute relative_key_query; do
  out=runs/rel_seeds/${kind}_42
  $T $common --set model.position_embedding_type=$kind --set init_from=runs/rel_exp/$kind/checkpoint-1000 --set train.seed=42 --set train.max_steps=1 --set schedule.warmup_steps=0 --set optim.lr=1.0e-12 --set optim.weight_decay=0.0 --set train.output_dir=$out > $out.log 2>&1
done
for seed in 43 44; do
  for kind in absolute relative_key_query; do
    out=runs/rel_seeds/${kind}_$seed
    $T $common --set model.position_embedding_type=$kind --set train.seed=$seed --set train.max_steps=1000 --set schedule.warmup_steps=100 --set train.output_dir=$out > $out.log 2>&1
  done
done
