#!/usr/bin/python3
"""One process against `mpirun -np N`, through the real `train` program, at the same global batch.

    /usr/bin/python3 bench/data_parallel.py [--config configs/bert_mlm.yaml] [--steps 100]
                                            [--repeats 3] [--ranks 2] [--set KEY=VALUE ...]

The two runs alternate, each in its own process(es): one process with N threads against N ranks
of one thread each, so both use the same cores. Each run's speed is the median of its
metrics.jsonl records (tokens/s over each logging interval) after the first, which holds the
start-up. Prints the median over the repeats with min and max, the CPU, and for the parallel run
the gradient bytes each rank sends per step and the time a step waited for their sums.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys

MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root"]


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def run(train, config, overrides, out, steps, ranks, threads):
    args = [train, "--config", config] + sum([["--set", s] for s in overrides + [
        f"train.max_steps={steps}", f"train.threads={threads}", f"train.output_dir={out}",
        "train.overwrite_output_dir=true", "train.eval_at_end=false", "eval.every_steps=0",
        "checkpoint.every_steps=0", "logging.every_steps=10", "logging.progress=never",
        f"schedule.warmup_steps={steps // 2}"]], [])
    if ranks > 1:
        args = MPIRUN + ["-np", str(ranks)] + args
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {result.returncode}\n{result.stderr[-2000:]}")
    records = [json.loads(line) for line in open(os.path.join(out, "metrics.jsonl"))]
    records = [r for r in records if "tokens_per_second" in r][1:]
    speed = statistics.median(r["tokens_per_second"] for r in records)
    wait = [r["allreduce_wait_seconds"] for r in records if "allreduce_wait_seconds" in r]
    sent = [r["allreduce_bytes"] for r in records if "allreduce_bytes" in r]
    return speed, (statistics.median(wait) if wait else None), (sent[0] if sent else None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="configs/bert_mlm.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a config override for both runs, e.g. train.dtype=f32 (repeatable)")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--train", default="build/programs/train")
    parser.add_argument("--work", default="/tmp/heed_data_parallel_bench")
    a = parser.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    speeds = {"one": [], "ranks": []}
    waits, sent = [], None
    for k in range(a.repeats):
        s, _, _ = run(a.train, a.config, a.set, f"{a.work}/one", a.steps, 1, a.ranks)
        speeds["one"].append(s)
        s, w, sent = run(a.train, a.config, a.set, f"{a.work}/ranks", a.steps, a.ranks, 1)
        speeds["ranks"].append(s)
        waits.append(w)
        print(f"repeat {k + 1}: 1 process {speeds['one'][-1]:.0f} tok/s, {a.ranks} ranks "
              f"{speeds['ranks'][-1]:.0f} tok/s", flush=True)

    def summary(v):
        return f"{statistics.median(v):,.0f} tok/s (min {min(v):,.0f}, max {max(v):,.0f})"

    print(f"cpu: {cpu_model()}, {os.cpu_count()} CPUs")
    print(f"config: {a.config}, {a.steps} steps, {a.repeats} repeats, same global batch")
    print(f"1 process x {a.ranks} threads: {summary(speeds['one'])}")
    print(f"{a.ranks} ranks x 1 thread:    {summary(speeds['ranks'])}")
    print(f"ratio: {statistics.median(speeds['ranks']) / statistics.median(speeds['one']):.2f}")
    print(f"gradient bytes each rank sends into the sums per step: {sent:,}")
    print(f"a step's wait for the sums (median over intervals): {1e3 * statistics.median(waits):.2f} ms")
    final = json.load(open(f"{a.work}/one/final_metrics.json"))
    cluster_table(final["tokens_seen"] / final["step"], statistics.median(speeds["one"]), sent)


def cluster_table(tokens_per_step, tokens_per_second, gradient_bytes):
    """A cluster of nodes like this one: a ring allreduce of B bytes over N nodes takes
    2 (N - 1) / N * B / bandwidth; a node computes its 1/N of the global batch in T1 / N. The
    sums cost as much as the compute (without overlap, half the time goes to them) at
    N* = 1 + k T1 bandwidth / (2 B), with gradient accumulation over k micro-batches (the
    sums are paid once per k micro-batches)."""
    t1 = tokens_per_step / tokens_per_second
    print(f"\ncluster arithmetic: {tokens_per_step:.0f} tokens per step, {1e3 * t1:.0f} ms per "
          f"step on one node like this one, {gradient_bytes / 1e6:.1f} MB of gradients")
    print("link      | allreduce, N=2 / N=8 / N->inf | efficiency (no overlap) N=2, 4, 8, 16 "
          "| N* (k=1, 4, 16)")
    for gbps in [10, 25, 100]:
        bandwidth = gbps * 1e9 / 8
        comm = [2 * (n - 1) / n * gradient_bytes / bandwidth for n in (2, 8)]
        limit = 2 * gradient_bytes / bandwidth
        eff = [(t1 / n) / (t1 / n + 2 * (n - 1) / n * gradient_bytes / bandwidth)
               for n in (2, 4, 8, 16)]
        stars = [1 + k * t1 * bandwidth / (2 * gradient_bytes) for k in (1, 4, 16)]
        print(f"{gbps:3d} Gb/s | {1e3 * comm[0]:5.1f} / {1e3 * comm[1]:5.1f} / {1e3 * limit:5.1f} ms"
              f"        | {', '.join(f'{e:.0%}' for e in eff):28s} | "
              f"{', '.join(f'{x:.0f}' for x in stars)}")


if __name__ == "__main__":
    main()
