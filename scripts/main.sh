#!/usr/bin/env bash
# The main job in one command on a fresh Debian 12 machine (as root, or with sudo): set-up,
# the data, the build, the masked-LM pretraining of configs/bert_mlm.yaml, then a fill-mask.
# Run it again and it reuses the data and the build, and resumes the run or reports it finished.
#   bash scripts/main.sh
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --data
# A datasets/ prepared before the translation pairs were added checks but lacks de_en/.
if [ -f datasets/MANIFEST.sha256 ] && grep -q ' de_en/test.tsv$' datasets/MANIFEST.sha256 &&
  (cd datasets && sha256sum --quiet -c MANIFEST.sha256); then
  echo "main.sh: datasets/ is prepared (MANIFEST.sha256 checks)"
else
  bash scripts/prepare_data.sh
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
build/programs/train --config configs/bert_mlm.yaml --resume
if [ ! -f runs/bert_mlm/final_metrics.json ]; then
  echo "main.sh: the run stopped before its last step; run main.sh again to continue it" >&2
  exit 1
fi
model=$(/usr/bin/python3 -c 'import json; print(json.load(open("runs/bert_mlm/final_metrics.json"))["checkpoint"])')
build/programs/infer fill-mask --checkpoint "$model" --text "the [MASK] of the united states" --top-k 5
