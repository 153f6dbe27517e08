#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (fuzz/README.md), one after another, each for N seconds.
#   scripts/fuzz.sh                            every target, 60 s each
#   scripts/fuzz.sh --seconds 600 vocab_fuzz   one target for 10 minutes ("vocab" works too)
# Configures and builds build-fuzz with clang when needed (scripts/setup.sh --fuzz installs
# it). Each target runs on its own copy of its seeds, build-fuzz/fuzz-runs/TARGET/corpus,
# which keeps growing from run to run while fuzz/corpus/ stays as committed. Prints, per
# target, the executions, the final coverage (cov: edges, ft: features) and any finding;
# findings (crash, timeout, out-of-memory, leak) are saved in build-fuzz/fuzz-runs/TARGET/
# and make the exit status 1.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-fuzz"
all_targets=(safetensors_fuzz run_config_fuzz vocab_fuzz wordpiece_fuzz token_cache_fuzz
  json_files_fuzz run_dir_fuzz bpe_fuzz spm_fuzz tokenizer_json_fuzz)

seconds=60
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --seconds=*) seconds=${1#--seconds=}; shift ;;
    -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) targets+=("${1%_fuzz}_fuzz"); shift ;;
  esac
done
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: --seconds takes a positive number of seconds, got '$seconds'" >&2
  exit 2
fi
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  if ! printf '%s\n' "${all_targets[@]}" | grep -qx "$t"; then
    echo "fuzz.sh: no target '$t' (targets: ${all_targets[*]})" >&2
    exit 2
  fi
done

if [ ! -f "$build/CMakeCache.txt" ]; then
  command -v clang++ >/dev/null || {
    echo "fuzz.sh: clang++ not found; run scripts/setup.sh --fuzz" >&2
    exit 2
  }
  # -O1 -g without NDEBUG: the project's assert()s stay on, and reports have line numbers.
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DHEED_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g"
fi
nice -n 10 cmake --build "$build" -j2 --target "${targets[@]}"

found=0
summary=()
for t in "${targets[@]}"; do
  name=${t%_fuzz}
  work="$build/fuzz-runs/$t"
  mkdir -p "$work/corpus" "$work/findings"
  cp -n "$root/fuzz/corpus/$name/"* "$work/corpus/" 2>/dev/null || true
  # Relative paths in the run-config seeds (tests/tiny_data/..., configs/...) resolve from
  # the working directory, which also receives libFuzzer's fuzz-0.log.
  for dir in tests configs runs; do
    [ -e "$root/$dir" ] && ln -sfn "$root/$dir" "$work/$dir"
  done
  dict=()
  [ -f "$root/fuzz/dicts/$name.dict" ] && dict=("-dict=$root/fuzz/dicts/$name.dict")
  before=$(find "$work/findings" -type f | wc -l)
  echo "fuzz.sh: $t for ${seconds} s (log: $work/fuzz-0.log)"
  status=0
  started=$(date +%s)
  # -jobs=1: one fuzzing process, restarted by nothing; its output goes to fuzz-0.log.
  (cd "$work" && rm -f fuzz-0.log &&
    nice -n 10 "$build/fuzz/$t" -jobs=1 -workers=1 -max_total_time="$seconds" -timeout=25 \
      -rss_limit_mb=4096 -max_len=16384 -print_final_stats=1 \
      -artifact_prefix="$work/findings/" "${dict[@]}" "$work/corpus" >/dev/null 2>&1) ||
    status=$?
  ran=$(($(date +%s) - started))
  log="$work/fuzz-0.log"
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' ||
    true)
  [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  after=$(find "$work/findings" -type f | wc -l)
  if [ "$status" -ne 0 ] || [ "$after" -gt "$before" ] ||
    grep -qE '^==[0-9]+==ERROR|^SUMMARY: |deadly signal|timeout after|out-of-memory' "$log"; then
    found=1
    what=$(grep -m1 -oE 'ERROR: [A-Za-z]+: [^ ]+( [^ ]+)?|runtime error: .*|terminate called .*|broken promise .*|timeout after [0-9]+ seconds|out-of-memory.*' "$log" || true)
    newest=$(ls -t "$work/findings" 2>/dev/null | head -1)
    result="FINDING: ${what:-exit status $status}${newest:+ -> $work/findings/$newest}"
  else
    result="nothing found"
  fi
  line=$(printf '%-18s %5s s %10s execs  %-22s %s' "$t" "$ran" "${execs:-?}" "${cov:-cov: ?}" \
    "$result")
  summary+=("$line")
  echo "$line"
done

echo
echo "fuzz.sh: up to ${seconds} s per target (a finding stops a target early)"
printf '%s\n' "${summary[@]}"
exit $found
