#!/usr/bin/env bash
# heed's tokenizers against their references, encoding the same corpus line by line on one
# core: GPT-2's byte-level BPE against tiktoken (npm, WebAssembly in Node), heed's SentencePiece
# wrapper against the library's own Python bindings, and WordPiece (heed alone). Each program
# runs in its own process, heed and its reference alternately, --repeats times; the table gives
# median MB/s (min-max), the token counts and heed / reference (median of the pairs, min-max).
#
#   bench/compare_tokenizers.sh [--repeats 5] [--core 0] [--build build]
#   bench/compare_tokenizers.sh --check-ids N|all    (ids equal to the references' on N lines)
#
# Installs nothing. Needs: BUILD/bench/bench_tokenizer and BUILD/programs/tokenize; node with
# tiktoken in bench/node (npm install --prefix bench/node tiktoken@1.0.22); /usr/bin/python3
# with sentencepiece (apt-get install python3-sentencepiece); taskset. The files, and the
# variables that point elsewhere (see bench/tokenizer_bench.cpp):
#   HEED_BENCH_CORPUS  datasets/pretrain/train.txt
#   HEED_BENCH_GPT2    tests/data/gpt2
#   HEED_BENCH_SPM     datasets/spm8000.model, trained here from the corpus when missing
#   HEED_BENCH_VOCAB   datasets/vocab.txt (WordPiece; skipped when missing)
set -euo pipefail
cd "$(dirname "$0")/.."

repeats=5
core=0
build=build
check_ids=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --repeats) repeats="$2"; shift 2 ;;
    --core) core="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --check-ids) check_ids="$2"; shift 2 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare_tokenizers.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

export HEED_BENCH_CORPUS="${HEED_BENCH_CORPUS:-datasets/pretrain/train.txt}"
export HEED_BENCH_GPT2="${HEED_BENCH_GPT2:-tests/data/gpt2}"
export HEED_BENCH_SPM="${HEED_BENCH_SPM:-datasets/spm8000.model}"
export HEED_BENCH_VOCAB="${HEED_BENCH_VOCAB:-datasets/vocab.txt}"
export OMP_NUM_THREADS=1
bench="$build/bench/bench_tokenizer"
tokenize="$build/programs/tokenize"
python=/usr/bin/python3

missing=()
[[ -x "$bench" ]] || missing+=("$bench: cmake --build $build --target bench_tokenizer")
[[ -x "$tokenize" ]] || missing+=("$tokenize: cmake --build $build --target tokenize")
[[ -f "$HEED_BENCH_CORPUS" ]] || missing+=("$HEED_BENCH_CORPUS: bash scripts/prepare_data.sh")
[[ -f "$HEED_BENCH_GPT2/vocab.json" && -f "$HEED_BENCH_GPT2/merges.txt" ]] ||
  missing+=("$HEED_BENCH_GPT2/vocab.json and merges.txt: GPT-2's files")
command -v node > /dev/null || missing+=("node: apt-get install nodejs npm")
[[ -d bench/node/node_modules/tiktoken ]] ||
  missing+=("tiktoken: npm install --prefix bench/node tiktoken@1.0.22")
"$python" -c "import sentencepiece" 2> /dev/null ||
  missing+=("sentencepiece for $python: apt-get install python3-sentencepiece")
command -v taskset > /dev/null || missing+=("taskset: apt-get install util-linux")
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "compare_tokenizers.sh: missing:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 2
fi

if [[ ! -f "$HEED_BENCH_SPM" ]]; then
  echo "training $HEED_BENCH_SPM from $HEED_BENCH_CORPUS (once)" >&2
  "$tokenize" --train-vocab "$HEED_BENCH_SPM" --type sentencepiece --vocab-size 8000 \
    < "$HEED_BENCH_CORPUS"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pin=(taskset -c "$core")

# Compares heed's ids (tokenize) with a reference's on the corpus's first N lines.
if [[ -n "$check_ids" ]]; then
  lines=$check_ids
  [[ "$lines" == all ]] && lines=$(wc -l < "$HEED_BENCH_CORPUS")
  head -n "$lines" "$HEED_BENCH_CORPUS" > "$work/lines.txt"
  mkdir "$work/spm"
  ln -s "$(realpath "$HEED_BENCH_SPM")" "$work/spm/spiece.model"
  status=0
  check() {  # name, heed's tokenizer directory, the reference's command...
    local name=$1 dir=$2
    shift 2
    "$tokenize" --tokenizer "$dir" < "$work/lines.txt" > "$work/heed.ids"
    "$@" --corpus "$work/lines.txt" --print-ids "$lines" > "$work/ref.ids"
    if cmp -s "$work/heed.ids" "$work/ref.ids"; then
      echo "$name: ids equal on $lines lines ($(wc -w < "$work/heed.ids") tokens)"
    else
      local first
      first=$(diff "$work/heed.ids" "$work/ref.ids" | head -n 1)
      echo "$name: ids DIFFER on $lines lines (first difference: $first)"
      status=1
    fi
  }
  check "byte-level BPE vs tiktoken" "$HEED_BENCH_GPT2" node bench/tokenizer_baselines.js
  check "SentencePiece vs Python" "$work/spm" "$python" bench/tokenizer_spm.py \
    --model "$HEED_BENCH_SPM"
  exit "$status"
fi

# heed's runs: Google Benchmark's JSON turned into the references' `key: value` lines.
heed_run() {  # benchmark name, output file
  if ! "${pin[@]}" "$bench" --benchmark_filter="^BM_$1EncodeCorpus" --benchmark_format=json \
    > "$2.json" 2> "$2.err"; then
    echo "error: $bench exited with an error" > "$2"
    return
  fi
  "$python" -c '
import json, sys
b = json.load(open(sys.argv[1]))["benchmarks"][0]
if b.get("error_occurred"):
    sys.exit("error: " + b["error_message"])
lines, mb, tokens = b["lines"], b["MB"], b["tokens"]
seconds = b["real_time"]  # per pass, in seconds
print("implementation: heed")
print(f"lines: {lines:.0f}")
print(f"MB: {mb:.6f}")
print(f"tokens: {tokens:.0f}")
print(f"seconds: {seconds:.6f}")
print(f"MB_per_s: {mb / seconds:.3f}")' "$2.json" > "$2" 2>&1 || true
}

run() {  # label, output file, command... (heed's: the benchmark's name)
  local label=$1 out=$2
  shift 2
  if [[ "$label" == heed* ]]; then
    heed_run "$1" "$out"
  else
    "${pin[@]}" "$@" > "$out" 2> "$out.err" || echo "error: exit code $?" >> "$out"
  fi
  echo "  $label: $(grep -E '^(MB_per_s|error):' "$out" | head -n 1)" >&2
}

wordpiece=1
[[ -f "$HEED_BENCH_VOCAB" ]] || wordpiece=0
loads=()
for ((r = 1; r <= repeats; ++r)); do
  loads+=("$(cut -d' ' -f1 /proc/loadavg)")
  echo "repeat $r of $repeats (core $core, load average ${loads[-1]})" >&2
  run "heed BPE" "$work/bpe_heed.$r" ByteLevelBpe
  run "tiktoken" "$work/bpe_ref.$r" node bench/tokenizer_baselines.js
  run "heed SentencePiece" "$work/spm_heed.$r" SentencePiece
  run "sentencepiece (Python)" "$work/spm_ref.$r" "$python" bench/tokenizer_spm.py
  if [[ $wordpiece == 1 ]]; then run "heed WordPiece" "$work/wp_heed.$r" WordPiece; fi
done

echo
lscpu | grep -E '^(Model name|CPU family|Model|Thread\(s\) per core|CPU\(s\)):' |
  sed 's/  */ /g' | paste -sd ';' | sed 's/;/; /g'
echo "flags: $(grep -m1 -o -w -E 'avx2|avx512f|avx512bw' /proc/cpuinfo | sort -u | paste -sd ' ')"
echo "one thread on core $core (taskset, OMP_NUM_THREADS=1); $repeats runs each, alternating;" \
  "corpus $HEED_BENCH_CORPUS; 1 untimed + 2 timed passes per run"
echo "load average (1 min) as each repeat started: ${loads[*]}; after: $(cut -d' ' -f1 /proc/loadavg)"
[[ $wordpiece == 1 ]] || echo "WordPiece skipped: no $HEED_BENCH_VOCAB (set HEED_BENCH_VOCAB)"
echo
"$python" - "$work" "$repeats" << 'EOF'
import statistics, sys
from pathlib import Path

work, repeats = Path(sys.argv[1]), int(sys.argv[2])

def runs(name):
    """Repeat number -> the `key: value` lines of the runs of `name` that succeeded."""
    out = {}
    for r in range(1, repeats + 1):
        path = work / f"{name}.{r}"
        if not path.exists():
            continue
        values = dict(l.split(": ", 1) for l in path.read_text().splitlines() if ": " in l)
        if "error" in values or "MB_per_s" not in values:
            print(f"{name} run {r} failed: {values.get('error', 'no MB_per_s line')}")
            for line in Path(f"{path}.err").read_text().splitlines()[-5:]:
                print("  | " + line)
            continue
        out[r] = values
    return out


def spread(xs):
    if len(xs) == 1:
        return f"{xs[0]:.2f}"
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"


rows = [("byte-level BPE (GPT-2)", "bpe_heed", "bpe_ref"),
        ("SentencePiece", "spm_heed", "spm_ref"),
        ("WordPiece", "wp_heed", None)]
table = ["| tokenizer | implementation | MB/s, median (min–max) | tokens | heed / reference |",
         "|---|---|---|---|---|"]
mb = None
for title, heed_name, ref_name in rows:
    heed, ref = runs(heed_name), runs(ref_name) if ref_name else {}
    ratio = "–"
    # Each heed run against the reference's run right after it.
    pairs = [float(heed[r]["MB_per_s"]) / float(ref[r]["MB_per_s"]) for r in heed if r in ref]
    if pairs:
        ratio = f"**{statistics.median(pairs):.2f}**"
        if len(pairs) > 1:
            ratio += f" ({min(pairs):.2f}–{max(pairs):.2f})"
    for values, name in ((heed, "heed"), (ref, None)):
        if not values:
            continue
        values = list(values.values())
        mb = mb or float(values[0]["MB"])
        mbs = [float(v["MB_per_s"]) for v in values]
        tokens = sorted({int(v["tokens"]) for v in values})
        label = name or values[0]["implementation"]
        table.append(f"| {title} | {label} | {spread(mbs)} | "
                     f"{', '.join(f'{t:,}' for t in tokens)} | {ratio if name else ''} |")
print("\n".join(table))
if mb:
    print(f"\n{mb:.1f} MB of text per pass")
EOF
