#!/usr/bin/env bash
# docs/results.md, "Relative positions": writes runs/rel_exp/ (about 20 min on 2 cores).
# Absolute against relative_key_query positions, BERT-mini MLM, seed 42, 1,000 steps of 32 x 64.
cd "$(dirname "$0")/.."
mkdir -p runs/rel_exp
T=build/programs/train
common="--config configs/bert_mlm.yaml --set train.max_steps=1000 --set schedule.warmup_steps=100 --set data.max_seq_length=64 --set train.batch_size=32 --set eval.every_steps=500 --set eval.max_batches=50 --set checkpoint.every_steps=500 --set train.seed=42 --set train.dtype=f32 --set logging.every_steps=100"
for kind in absolute relative_key_query; do
  out=runs/rel_exp/$kind
  start=$(date +%s)
  $T $common --set model.position_embedding_type=$kind --set train.output_dir=$out > runs/rel_exp/$kind.log 2>&1
  echo "$kind rc=$? seconds=$(( $(date +%s) - start ))" >> runs/rel_exp/summary.txt
done
# The same checkpoints on windows of 128 and 256 tokens: one step at lr 1e-12 (no weight moves
# in f32), then the final evaluation on valid and test at that length.
for kind in absolute relative_key_query; do
  for len in 64 128 256; do
    out=runs/rel_exp/${kind}_eval$len
    $T $common --set model.position_embedding_type=$kind --set init_from=runs/rel_exp/$kind/checkpoint-1000 --set data.max_seq_length=$len --set train.batch_size=8 --set train.max_steps=1 --set schedule.warmup_steps=0 --set optim.lr=1.0e-12 --set optim.weight_decay=0.0 --set eval.max_batches=0 --set eval.every_steps=0 --set checkpoint.every_steps=0 --set train.output_dir=$out > $out.log 2>&1
    echo "$kind eval$len rc=$?" >> runs/rel_exp/summary.txt
  done
done
