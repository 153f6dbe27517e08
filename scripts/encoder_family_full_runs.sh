#!/usr/bin/env bash
# docs/results.md, "The encoder family at full size": the shipped configs end to end (about 2 h on
# 2 cores, Zen 3, f32). Writes runs/bert_mlm, runs/roberta_mlm, runs/distill_bert_mini,
# runs/roberta_classify and runs/encoder_full/ (the comparison runs and summary.txt).
#
#  1. configs/bert_mlm.yaml, the teacher (4 layers, 4,000 steps of 16 x 128).
#  2. configs/distill_bert_mini.yaml: a 2-layer student from the teacher's layers 0 and 3.
#  3. A 2-layer model from scratch for the student's steps, and for as many steps as fit in the
#     student's wall time (SAME_TIME_STEPS; see below).
#  4. The spam classifier fine-tuned from the teacher, the student and the scratch model, all at
#     128 tokens (configs/roberta_classify.yaml's length) so that the three differ in their start.
#  5. configs/roberta_mlm.yaml and configs/roberta_classify.yaml.
#
# Every stage runs even if one before it failed; each line of summary.txt gives a run's exit
# status and training seconds.
cd "$(dirname "$0")/.."
T=build/programs/train
out=runs/encoder_full
mkdir -p $out
# The 2-layer model's steps in the student's wall time: 1,000 x the ratio of their step times,
# measured alone on the machine (Zen 3, f32, 16 x 128, median of six logged intervals of 10 steps:
# student 2,465 tokens/s, 2-layer model 11,772 tokens/s, ratio 4.78). Whole-run wall times are
# printed too but shared the CPU with builds, so they do not set the budget.
SAME_TIME_STEPS=${SAME_TIME_STEPS:-4780}
STUDENT_STEPS=1000
# THREADS=1 leaves the other core to builds without stalling the run's two threads on each other.
THREADS=${THREADS:-2}
seconds() {
  python3 -c "import json; print(round(json.load(open('$1/final_metrics.json'))['elapsed_seconds']))" 2>/dev/null
}
run() { # name, output_dir, config, extra settings...
  local name=$1 dir=$2 config=$3
  shift 3
  $T --config "$config" --set train.output_dir="$dir" --set train.overwrite_output_dir=true \
    --set train.dtype=f32 --set train.threads=$THREADS "$@" > "$out/$name.log" 2>&1
  echo "$name rc=$? seconds=$(seconds "$dir")" >> $out/summary.txt
}
two_layers="--set model.num_hidden_layers=2"
full_eval="--set eval.max_batches=0 --set eval.every_steps=1000"

run bert_mlm runs/bert_mlm configs/bert_mlm.yaml $full_eval
teacher=runs/bert_mlm/checkpoint-4000
run distill runs/distill_bert_mini configs/distill_bert_mini.yaml $full_eval \
  --set distill.teacher=$teacher --set train.max_steps=$STUDENT_STEPS
run scratch_same_steps $out/scratch_same_steps configs/bert_mlm.yaml $full_eval $two_layers \
  --set train.max_steps=$STUDENT_STEPS
run scratch_same_time $out/scratch_same_time configs/bert_mlm.yaml $full_eval $two_layers \
  --set train.max_steps=$SAME_TIME_STEPS

# The spam classifier from each (uncased WordPiece of the teacher; 128 tokens).
classify() { # name, init_from, layers
  run "$1" "$out/$1" configs/bert_classify.yaml --set init_from="$2" \
    --set model.num_hidden_layers="$3" --set tokenizer.lowercase=true \
    --set data.max_seq_length=128
}
classify classify_teacher $teacher 4
classify classify_student runs/distill_bert_mini/checkpoint-$STUDENT_STEPS 2
classify classify_scratch_same_time $out/scratch_same_time/checkpoint-$SAME_TIME_STEPS 2

run roberta_mlm runs/roberta_mlm configs/roberta_mlm.yaml $full_eval
run roberta_classify runs/roberta_classify configs/roberta_classify.yaml
