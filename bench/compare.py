#!/usr/bin/python3
"""heed against PyTorch, side by side: the tokens per second of one full training step
(forward, backward, clipping, AdamW) of the same models, each run in its own process.

    /usr/bin/python3 bench/compare.py [--models bert-mini,gpt-mini,bert-small,seq2seq]
        [--precisions f32,bf16] [--repeats 5] [--steps 10] [--threads 2]
        [--batch B] [--seq T] [--heed build/bench/bench_train_step] [--json results.json]
    /usr/bin/python3 bench/compare.py --models bert-base,gpt2 --longest [--longest-max 8192]

The models: bert-mini, gpt-mini, bert-small and seq2seq (the default set), and the tutorials'
sizes, bert-base (16 x 128) and gpt2 (GPT-2 small, 4 x 1,024); --batch and --seq change the
shape of every model's batches (--seq: a seq2seq model's source).

--longest adds the longest sequence each framework trains at batch 1 in this machine's memory:
one training step at each length, doubling from --longest-start (512) to --longest-max (8,192),
until a run fails. The driver polls the run's resident set and kills it past a limit (the
memory available at the start less a margin of 10%, at least 1 GB, or --memory-limit-mb when
lower) rather than leave the machine to the OOM killer; a run killed so, or one that fails,
does not fit. With --repeats 0 only the probe runs.

For each model and precision, heed (build/bench/bench_train_step) and PyTorch
(bench/pytorch_train_step.py) run alternately, --repeats times each; both print the same
`key: value` lines. The peak RSS of each run is that process's own (wait4). The header names
the machine, the on-the-spot oneDNN matmul peak that heed measures, and the versions; the
table gives medians with the min-max over repeats.

PyTorch runs at its best settings here: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed (they
pin OpenBLAS to older kernels), and glibc malloc keeping freed memory instead of returning it
to the OS (fresh pages are expensive on these machines). Both get OMP_NUM_THREADS=--threads.
"""
import argparse
import datetime
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MODELS = ["bert-mini", "gpt-mini", "bert-small", "seq2seq"]  # the default set
LARGE_MODELS = ["bert-base", "gpt2"]  # the tutorials' sizes: asked for by name
PRECISIONS = ["f32", "bf16"]
# The keys both programs print, in this order, tokens_per_second last.
KEYS = ["framework", "model", "precision", "threads", "tokens_per_step", "model_flops_per_step",
        "flops_per_step", "parameters", "forward_ms", "backward_ms", "optimizer_ms", "step_ms",
        "loss", "tokens_per_second"]
# What must agree between the two programs for the comparison to be one of equal work, and
# how closely: the model's FLOPs depend on how many positions carry an MLM label, which each
# program draws in its own way. flops_per_step is what a program runs (heed skips the last
# MLM layer's work at unlabelled rows) and gives the GFLOP/s.
SAME_WORK = {"tokens_per_step": 0.0, "model_flops_per_step": 0.01, "parameters": 0.0,
             "threads": 0.0}
CPU_FLAGS = ["avx2", "avx512f", "avx512_bf16", "amx_bf16"]
PYTORCH_MALLOC = ("glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4294967296:"
                  "glibc.malloc.trim_threshold=17179869184")
STDERR_TAIL_LINES = 15


def heed_env(threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    return env


def pytorch_env(threads):
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    env["GLIBC_TUNABLES"] = PYTORCH_MALLOC
    env["OMP_NUM_THREADS"] = str(threads)
    return env


def parse_value(text):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def parse_lines(stdout):
    """`key: value` lines -> ordered dict of values (numbers where they parse)."""
    values = {}
    for line in stdout.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key.strip():
            values[key.strip()] = parse_value(value.strip())
    return values


def resident_kb(pid):
    """The process's resident set now (VmRSS), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def wait_for(pid, timeout, rss_limit_kb=None):
    """wait4 on one child: (exit status, its rusage, why it was killed or None). Kills it after
    `timeout` s, or as soon as its resident set passes `rss_limit_kb`."""
    deadline = time.monotonic() + timeout
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return status, usage, None
        killed = None
        if time.monotonic() > deadline:
            killed = "timeout"
        elif rss_limit_kb is not None and (resident_kb(pid) or 0) > rss_limit_kb:
            killed = "memory"
        if killed:
            os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            return status, usage, killed
        time.sleep(0.02 if rss_limit_kb is not None else 0.05)


def run_child(cmd, env, timeout, rss_limit_kb=None):
    """Runs one program to its end; returns a record with its `key: value` lines, exit code,
    the tail of its stderr and its peak RSS (ru_maxrss of that process alone, not of this
    driver or of other children). With `rss_limit_kb`, a run whose resident set passes it is
    killed and its record says so (out_of_memory)."""
    record = {"cmd": cmd, "returncode": None, "timed_out": False, "out_of_memory": False,
              "wall_seconds": None, "max_rss_kb": None, "values": {}, "error": None,
              "stderr_tail": ""}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, stdin=subprocess.DEVNULL)
        except OSError as e:
            record["error"] = f"cannot start {cmd[0]}: {e}"
            return record
        status, usage, killed = wait_for(proc.pid, timeout, rss_limit_kb)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4: tell Popen
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    record.update(returncode=proc.returncode, timed_out=killed == "timeout",
                  out_of_memory=killed == "memory", max_rss_kb=usage.ru_maxrss,
                  wall_seconds=round(time.monotonic() - start, 3), values=parse_lines(stdout),
                  stderr_tail="\n".join(stderr.splitlines()[-STDERR_TAIL_LINES:]))
    if killed == "timeout":
        record["error"] = f"killed after {timeout:.0f} s"
    elif killed == "memory":
        record["error"] = f"killed past the memory limit of {mb(rss_limit_kb):,.0f} MB"
    elif proc.returncode != 0:
        record["error"] = f"exit code {proc.returncode}"
    return record


def check_train_step(record):
    """A train-step run succeeded if it exited 0 and printed every key, tokens_per_second last."""
    if record["error"]:
        return False
    values = record["values"]
    missing = [k for k in KEYS if k not in values]
    if missing:
        record["error"] = "output lacks " + ", ".join(missing)
    elif list(values)[-1] != "tokens_per_second":
        record["error"] = "tokens_per_second is not the last line"
    elif not all(isinstance(values[k], (int, float)) and values[k] > 0
                 for k in ("tokens_per_second", "step_ms", "flops_per_step")):
        record["error"] = "tokens_per_second, step_ms or flops_per_step is not a positive number"
    return record["error"] is None


def report_failure(label, record):
    print(f"FAILED {label}: {record['error']}", file=sys.stderr)
    print("  command: " + " ".join(record["cmd"]), file=sys.stderr)
    for line in record["stderr_tail"].splitlines():
        print("  | " + line, file=sys.stderr)


# ----- the machine -----

def cpu_info():
    """The CPU's name (with family and model: a VM often shows only "AMD EPYC") and which of
    the flags that decide the kernels it has."""
    name, flags, ids = None, set(), {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and name is None:
                    name = value.strip()
                elif key in ("cpu family", "model") and key not in ids:
                    ids[key] = value.strip()
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    if name is None:
        try:
            lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
            name = next((l.split(":", 1)[1].strip() for l in lscpu.splitlines()
                         if l.startswith("Model name")), None)
        except OSError:
            pass
    name = name or "unknown"
    if ids:
        name += f" (family {ids.get('cpu family', '?')}, model {ids.get('model', '?')})"
    return name, {flag: flag in flags for flag in CPU_FLAGS}


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def torch_version(python, threads, timeout):
    record = run_child([python, "-c", "import torch; print('version:', torch.__version__)"],
                       pytorch_env(threads), timeout)
    version = record["values"].get("version")
    return str(version) if record["error"] is None and version is not None else None


def matmul_peak(heed, precision, threads, timeout):
    """heed's on-the-spot oneDNN matmul peak for one precision: (GFLOP/s, ISA) or Nones."""
    record = run_child([heed, "--matmul-peak", "--precision", precision, "--threads", str(threads)],
                       heed_env(threads), timeout)
    values = record["values"]
    gflops = values.get("matmul_gflops")
    if record["error"] or not isinstance(gflops, (int, float)):
        why = record["error"] or "no matmul_gflops line"
        print(f"heed --matmul-peak --precision {precision}: {why}", file=sys.stderr)
        return None, None
    return float(gflops), str(values.get("onednn_isa", "?"))


# ----- the runs -----

class Runner:
    def __init__(self, args):
        self.args = args
        self.heed = args.heed
        self.script = str(HERE / "pytorch_train_step.py")
        self.done, self.total = 0, len(args.models) * len(args.precisions) * 2 * args.repeats

    def command(self, framework, model, precision, steps=None, warmup=None, batch=None, seq=None):
        """The run's command line and environment; the shape is the args' unless given."""
        common = ["--model", model, "--precision", precision,
                  "--steps", str(steps or self.args.steps), "--threads", str(self.args.threads)]
        if warmup is not None:
            common += ["--warmup", str(warmup)]
        for flag, value in (("--batch", batch or self.args.batch), ("--seq", seq or self.args.seq)):
            if value:
                common += [flag, str(value)]
        if framework == "heed":
            return [self.heed] + common, heed_env(self.args.threads)
        return [self.args.python, self.script] + common, pytorch_env(self.args.threads)

    def run(self, framework, model, precision, repeat):
        cmd, env = self.command(framework, model, precision)
        record = run_child(cmd, env, self.args.timeout)
        record.update(framework=framework, model=model, precision=precision, repeat=repeat)
        ok = check_train_step(record)
        self.done += 1
        label = f"{model} {precision} {framework} #{repeat + 1}"
        if ok:
            v = record["values"]
            print(f"[{self.done}/{self.total}] {label}: {v['tokens_per_second']:,.0f} tok/s, "
                  f"step {v['step_ms']:.1f} ms, peak RSS {mb(record['max_rss_kb']):.0f} MB",
                  file=sys.stderr)
        else:
            print(f"[{self.done}/{self.total}] {label}", file=sys.stderr)
            report_failure(label, record)
        record["ok"] = ok
        return record


# ----- the longest sequence at batch 1 -----

def available_memory_kb():
    """MemAvailable: what the machine can give a new process without swapping or reclaiming
    what others use."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def probe_limit_kb(available_kb, limit_mb=None):
    """The resident set past which a probe run is killed: the available memory less a margin
    of 10% (at least 1 GB), which the polling's interval and the rest of the machine need;
    `limit_mb` when lower. None when neither is known."""
    limits = []
    if available_kb is not None:
        limits.append(available_kb - max(available_kb // 10, 1_000_000 * 1000 // 1024))
    if limit_mb is not None:
        limits.append(limit_mb * 1e6 / 1024)
    return int(min(limits)) if limits else None


def probe_lengths(start, largest):
    """start, 2 start, 4 start, ... up to `largest`."""
    lengths = []
    while start <= largest:
        lengths.append(start)
        start *= 2
    return lengths


def longest_sequence(runner, framework, model, precision, lengths, limit_kb):
    """The longest of `lengths` (ascending) at which one training step at batch 1 succeeds,
    stopping at the first that does not; (length or None, the runs' records)."""
    fits, records = None, []
    for seq in lengths:
        cmd, env = runner.command(framework, model, precision, steps=1, warmup=0, batch=1, seq=seq)
        record = run_child(cmd, env, runner.args.timeout, limit_kb)
        record.update(framework=framework, model=model, precision=precision, seq=seq, probe=True)
        ok = check_train_step(record)
        records.append(record)
        label = f"{model} {precision} {framework} 1 x {seq}"
        if not ok:
            print(f"[longest] {label}: does not fit ({record['error']})", file=sys.stderr)
            break
        print(f"[longest] {label}: fits, peak RSS {mb(record['max_rss_kb']):,.0f} MB",
              file=sys.stderr)
        fits = seq
    return fits, records


# ----- the table -----

def mb(kb):
    return kb * 1024 / 1e6


def side_stats(records):
    """Medians over one program's successful runs of a row, with the per-run lists kept for
    the ranges; None if none succeeded."""
    ok = [r for r in records if r["ok"]]
    if not ok:
        return None
    values = [r["values"] for r in ok]
    median = lambda key: statistics.median(v[key] for v in values)
    stats = {k: median(k) for k in ("tokens_per_second", "forward_ms", "backward_ms",
                                    "optimizer_ms", "step_ms")}
    stats["tokens_per_second_runs"] = [v["tokens_per_second"] for v in values]
    # GFLOP/s of each run: its matmul FLOPs over its median step time.
    stats["gflops"] = statistics.median(v["flops_per_step"] / v["step_ms"] * 1e-6 for v in values)
    stats["rss_mb"] = statistics.median(mb(r["max_rss_kb"]) for r in ok)
    stats["work"] = {k: values[0][k] for k in SAME_WORK}
    stats["runs_ok"] = len(ok)
    return stats


def median_range(xs, fmt):
    if len(xs) == 1:
        return fmt(xs[0])
    return f"{fmt(statistics.median(xs))} ({fmt(min(xs))}–{fmt(max(xs))})"


def summarize(model, precision, heed_runs, torch_runs, peak):
    """One table row: its cells, its summary for the JSON, and notes on what went wrong."""
    h, p = side_stats(heed_runs), side_stats(torch_runs)
    summary = {"model": model, "precision": precision, "heed": h, "pytorch": p}
    failed = "failed"

    def tok(st):
        return median_range(st["tokens_per_second_runs"], lambda x: f"{x:,.0f}") if st else failed

    def ms(st):
        parts = ("forward_ms", "backward_ms", "optimizer_ms")
        return " / ".join(f"{st[k]:.1f}" for k in parts) if st else failed

    ratio = "–"
    if h and p:
        summary["ratio"] = h["tokens_per_second"] / p["tokens_per_second"]
        # Per-pair ratios: heed's run i against the PyTorch run right after it.
        pairs = [a["values"]["tokens_per_second"] / b["values"]["tokens_per_second"]
                 for a, b in zip(heed_runs, torch_runs) if a["ok"] and b["ok"]]
        summary["pair_ratios"] = pairs
        ratio = f"{summary['ratio']:.2f}"
        if len(pairs) > 1:
            ratio += f" ({min(pairs):.2f}–{max(pairs):.2f})"
    heed_gflops = failed
    if h:
        heed_gflops = f"{h['gflops']:,.0f}"
        if peak:
            heed_gflops += f" ({100 * h['gflops'] / peak:.0f}%)"
    rss = " / ".join(f"{st['rss_mb']:,.0f}" if st else "–" for st in (h, p))
    if h and p:
        rss += f" ({h['rss_mb'] / p['rss_mb']:.2f})"
    cells = [model + ("" if h and p else " (failed)"), precision, tok(h), tok(p), ratio, ms(h),
             ms(p), heed_gflops, f"{p['gflops']:,.0f}" if p else failed, rss]

    notes = []
    for name, st, records in (("heed", h, heed_runs), ("PyTorch", p, torch_runs)):
        ok = st["runs_ok"] if st else 0
        if ok < len(records):
            notes.append(f"{model} {precision}: {len(records) - ok} of {len(records)} {name} "
                         "runs failed")
    if h and precision == "bf16" and any(r["ok"] and r["values"].get("products_in") == "f32"
                                         for r in heed_runs):
        notes.append(f"{model} bf16: heed ran f32 products: this CPU has no native bf16 ones "
                     "(as `train` does there)")
    if h and p:
        for key, tolerance in SAME_WORK.items():
            if abs(h["work"][key] - p["work"][key]) > tolerance * abs(p["work"][key]):
                notes.append(f"{model} {precision}: not the same work: {key} is "
                             f"{h['work'][key]:,} in heed, {p['work'][key]:,} in PyTorch")
    return cells, summary, notes


HEADER = ["model", "precision", "heed tok/s", "PyTorch tok/s", "heed / PyTorch",
          "heed fwd / bwd / opt ms", "PyTorch fwd / bwd / opt ms", "heed GFLOP/s (% of peak)",
          "PyTorch GFLOP/s", "peak RSS MB heed / PyTorch (ratio)"]


def markdown_table(rows):
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "\n".join(lines)


def print_table(rows, notes, failed):
    print(markdown_table(rows))
    if notes or failed:
        print()
    for note in notes:
        print(f"- note: {note}")
    if failed:
        print("- failed rows (a side without one successful run): " + ", ".join(failed))
    print("\nGFLOP/s: the matmul FLOPs of forward + backward that each program runs "
          "(flops_per_step) over the median step time; % of the oneDNN matmul peak above. "
          "heed runs the last BERT layer's queries and attention on a block of each sequence's "
          "labelled positions (as many as the most any sequence has) and its output projection "
          "and feed-forward on the labelled rows alone, so it runs fewer FLOPs than PyTorch for "
          "the same model "
          "(model_flops_per_step, equal in both).")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated, of " + ", ".join(MODELS + LARGE_MODELS))
    ap.add_argument("--precisions", default=",".join(PRECISIONS), help="comma-separated: f32, bf16")
    ap.add_argument("--repeats", type=int, default=5, help="runs of each program per row")
    ap.add_argument("--steps", type=int, default=10, help="timed steps per run")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--heed", default="build/bench/bench_train_step",
                    help="heed's benchmark binary")
    ap.add_argument("--python", default="/usr/bin/python3", help="the Python that has torch")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds before a run is killed")
    ap.add_argument("--batch", type=int, help="sequences per batch (default: each model's)")
    ap.add_argument("--seq", type=int, help="tokens per sequence (default: each model's)")
    ap.add_argument("--longest", action="store_true",
                    help="also find the longest sequence each framework trains at batch 1")
    ap.add_argument("--longest-start", type=int, default=512, help="the probe's first length")
    ap.add_argument("--longest-max", type=int, default=8192, help="the probe's last length")
    ap.add_argument("--memory-limit-mb", type=float,
                    help="the probe's kill limit, when lower than the available memory's")
    ap.add_argument("--json", help="write every run's raw results here")
    args = ap.parse_args()
    args.models = [m for m in args.models.split(",") if m]
    args.precisions = [p for p in args.precisions.split(",") if p]
    for m in args.models:
        if m not in MODELS + LARGE_MODELS:
            ap.error(f"unknown model {m!r} (expected {', '.join(MODELS + LARGE_MODELS)})")
    for p in args.precisions:
        if p not in PRECISIONS:
            ap.error(f"unknown precision {p!r} (expected f32 or bf16)")
    if args.repeats < (0 if args.longest else 1) or args.steps < 1 or args.threads < 1:
        ap.error("--repeats (but for 0 with --longest), --steps and --threads must be at least 1")
    if any(v is not None and v < 1 for v in (args.batch, args.seq, args.memory_limit_mb)):
        ap.error("--batch, --seq and --memory-limit-mb must be positive")
    if args.longest and not 1 <= args.longest_start <= args.longest_max:
        ap.error("--longest-start must be at least 1 and at most --longest-max")
    if not Path(args.heed).exists() and (REPO / args.heed).exists():
        args.heed = str(REPO / args.heed)  # a path relative to the repository, run from elsewhere
    if not Path(args.heed).exists():
        print(f"heed binary {args.heed} not found (build it: cmake --build build --target "
              "bench_train_step); its runs will fail", file=sys.stderr)

    load = load_average()  # before any run of ours adds to it
    cpu, flags = cpu_info()
    peaks = {p: matmul_peak(args.heed, p, args.threads, args.timeout) for p in args.precisions}
    version = torch_version(args.python, args.threads, args.timeout)
    header = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "load_average_1min": load,
        "cpu": cpu, "cpu_flags": flags, "logical_cpus": os.cpu_count(), "threads": args.threads,
        "matmul_peak_gflops": {p: peaks[p][0] for p in peaks},
        "onednn_isa": {p: peaks[p][1] for p in peaks},
        "torch": version, "steps": args.steps, "repeats": args.repeats,
        "heed": args.heed,
        "pytorch_env": {"GLIBC_TUNABLES": PYTORCH_MALLOC,
                        "removed": ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"]},
    }
    fmt_peak = lambda p: (f"{peaks[p][0]:,.0f} GFLOP/s" if peaks[p][0] else "unavailable")
    print("## heed vs PyTorch: one training step (forward, backward, clip, AdamW)\n")
    print(f"- date: {header['date']}")
    print(f"- CPU: {cpu}, {os.cpu_count()} logical CPUs; "
          + ", ".join(f"{f} {'yes' if v else 'no'}" for f, v in flags.items()))
    print(f"- threads: {args.threads} (OMP_NUM_THREADS and --threads for both)")
    if load is not None:
        busy = " (other work is running: expect slow, noisy runs)" if load > 0.5 else ""
        print(f"- load average at the start: {load:.2f}{busy}")
    print("- heed oneDNN matmul peak: " + "; ".join(
        f"{p} {fmt_peak(p)}" + (f" ({peaks[p][1]})" if peaks[p][1] else "")
        for p in args.precisions))
    print(f"- PyTorch: {version or 'not found'}; malloc keeps freed memory, OpenBLAS picks its "
          "kernels")
    print(f"- {args.steps} timed steps per run after warm-up; runs of each program: "
          f"{args.repeats}, alternating, one process per run; median (min–max) over runs")
    print(flush=True)

    runner = Runner(args)
    runs, rows, summaries, notes, failed = [], [], [], [], []

    longest = []

    def write_json():
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"header": header, "rows": summaries, "runs": runs,
                           "longest_at_batch_1": longest}, f, indent=1)

    for model in args.models:
        for precision in args.precisions:
            if args.repeats == 0:
                continue  # --longest alone
            heed_runs, torch_runs = [], []
            for repeat in range(args.repeats):
                heed_runs.append(runner.run("heed", model, precision, repeat))
                torch_runs.append(runner.run("pytorch", model, precision, repeat))
                runs += [heed_runs[-1], torch_runs[-1]]
            cells, summary, row_notes = summarize(model, precision, heed_runs, torch_runs,
                                                  peaks[precision][0])
            if not summary["heed"] or not summary["pytorch"]:
                failed.append(f"{model} {precision}")
            rows.append(cells)
            summaries.append(summary)
            notes += row_notes
            write_json()

    def probe_longest():
        available = available_memory_kb()
        limit = probe_limit_kb(available, args.memory_limit_mb)
        lengths = probe_lengths(args.longest_start, args.longest_max)
        for model in args.models:
            for precision in args.precisions:
                found = {}
                for framework in ("heed", "pytorch"):
                    found[framework], records = longest_sequence(runner, framework, model,
                                                                 precision, lengths, limit)
                    runs.extend(records)
                longest.append({"model": model, "precision": precision, **found})
                write_json()
        if rows:
            print()
        limit_text = f"{mb(limit):,.0f} MB" if limit else "none known"
        print("Longest sequence trained at batch 1 (one step at each of the lengths "
              f"{', '.join(map(str, lengths))}; a run is killed past {limit_text} resident):\n")
        fmt = lambda n: f"{n:,}" if n else f"none (not even {lengths[0]:,})"
        for entry in longest:
            print(f"- {entry['model']} {entry['precision']}: heed {fmt(entry['heed'])}, "
                  f"PyTorch {fmt(entry['pytorch'])}")

    if rows:
        print_table(rows, notes, failed)
    if args.longest:
        probe_longest()
    write_json()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
