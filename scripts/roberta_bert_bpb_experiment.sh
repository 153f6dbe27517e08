#!/usr/bin/env bash
# docs/results.md, "RoBERTa against BERT": writes runs/roberta_exp/ (about 12 min on 2 cores).
# RoBERTa-mini (byte-level BPE of 8,192 tokens) trained as scripts/relative_positions_experiment.sh
# trains its absolute BERT-mini (WordPiece of 8,192; 1,000 steps of 32 x 64, seed 42, f32), and
# both evaluated on the whole valid and test splits in bits per byte (a masked token's loss per
# byte of text) at 64 tokens.
cd "$(dirname "$0")/.."
set -e
T=build/programs/train
bert=runs/rel_exp/absolute/checkpoint-1000
test -d $bert || { echo "run scripts/relative_positions_experiment.sh first ($bert)"; exit 1; }
mkdir -p runs/roberta_exp
common="--set data.max_seq_length=64 --set train.batch_size=32 --set eval.every_steps=0 --set eval.max_batches=0 --set checkpoint.every_steps=0 --set train.seed=42 --set train.dtype=f32 --set logging.every_steps=100 --set train.overwrite_output_dir=true"
$T --config configs/roberta_mlm.yaml $common --set train.max_steps=1000 --set schedule.warmup_steps=100 --set train.output_dir=runs/roberta_exp/roberta > runs/roberta_exp/roberta.log 2>&1
# BERT's checkpoint on the same splits (one step at lr 1e-12 moves no f32 weight).
$T --config configs/bert_mlm.yaml $common --set init_from=$bert --set train.max_steps=1 --set schedule.warmup_steps=0 --set optim.lr=1.0e-12 --set optim.weight_decay=0.0 --set train.output_dir=runs/roberta_exp/bert_eval > runs/roberta_exp/bert_eval.log 2>&1
