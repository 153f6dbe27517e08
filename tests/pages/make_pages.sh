#!/usr/bin/env bash
# Writes the pages that the page tests open in chromium, from tiny runs of the real programs:
#   make_pages.sh BUILD_DIR OUT_DIR
# OUT_DIR/runs/{bert,bert_twin,gpt,seq2seq} (each with its report.html), the attention pages
# of their checkpoints with the --json data beside them (attention_{bert,gpt,seq2seq}.html and
# .json), compare.html (report of the two BERT runs), and injection/pages/ for
# check_page_injection.py (payloads in every field). Run from the source directory.
set -euo pipefail
build=${1:?usage: make_pages.sh BUILD_DIR OUT_DIR}
out=${2:?usage: make_pages.sh BUILD_DIR OUT_DIR}
rm -rf "$out"
mkdir -p "$out/runs"
export OMP_NUM_THREADS=1

train() {  # NAME CONFIG STEPS [--set ...]
  local name=$1 config=$2 steps=$3
  shift 3
  "$build/programs/train" --config "configs/tiny/$config.yaml" \
    --set "train.output_dir=$out/runs/$name" --set "tokenizer.vocab=$out/runs/$name/vocab.txt" \
    --set "train.max_steps=$steps" --set eval.every_steps=10 --set logging.every_steps=5 \
    "$@" >"$out/runs/$name.log" 2>&1 || {
    cat "$out/runs/$name.log" >&2
    exit 1
  }
}
train bert bert_mlm 40
train bert_twin bert_mlm 40 --set optim.lr=1.0e-3 --set train.seed=7
train gpt gpt_lm 30
train seq2seq seq2seq_g2p 30

attention() {  # NAME RUN ARGS...
  local name=$1 run=$2
  shift 2
  local checkpoint
  checkpoint=$(ls -d "$out/runs/$run"/checkpoint-* | sort -V | tail -1)
  "$build/programs/infer" attention --checkpoint "$checkpoint" "$@" --out "$out/attention_$name.html"
  "$build/programs/infer" attention --checkpoint "$checkpoint" "$@" --json \
    --out "$out/attention_$name.json"
}
attention bert bert --text "the cat sat on the mat" --text-pair "because it was tired"
attention gpt gpt --text "the cat sat on the mat because it was tired"
attention seq2seq seq2seq --text "HELLO"

"$build/programs/report" "$out/runs/bert" "$out/runs/bert_twin" --out "$out/compare.html"

# The injection check's pages (check_page_injection.py --pages): runs whose every field holds a
# payload, drawn by the real report program, and attention pages of the real infer program
# over payload texts and a checkpoint reached through a directory named by a payload.
inputs="$out/injection"
mapfile -t payload_runs < <(python3 tests/pages/check_page_injection.py --write-inputs "$inputs")
mkdir -p "$inputs/pages"
"$build/programs/report" "${payload_runs[0]}" --out "$inputs/pages/report_one.html" 2>/dev/null
"$build/programs/report" "${payload_runs[@]}" --out "$inputs/pages/report_two.html" 2>/dev/null
parent="$inputs/$(cat "$inputs/checkpoint_parent.txt")"
mkdir -p "$parent"
for run in bert gpt seq2seq; do
  ln -s "$(ls -d "$(realpath "$out/runs/$run")"/checkpoint-* | sort -V | tail -1)" "$parent/$run"
done
text=$(cat "$inputs/text.txt")
"$build/programs/infer" attention --checkpoint "$parent/bert" --text "$text" \
  --text-pair "$(cat "$inputs/text_pair.txt")" --out "$inputs/pages/attention_bert.html"
"$build/programs/infer" attention --checkpoint "$parent/gpt" --text "$text" \
  --out "$inputs/pages/attention_gpt.html"
"$build/programs/infer" attention --checkpoint "$parent/seq2seq" --text "$text" \
  --target "$(cat "$inputs/target.txt")" --out "$inputs/pages/attention_seq2seq.html"
