#!/usr/bin/python3
"""Data-parallel training under mpirun against one process, through the real `train` program.

    check_data_parallel.py CASE --train build/programs/train --work DIR

Each case trains tiny models (configs/tiny/) for a few steps and compares what the runs wrote:
the logged losses (metrics.jsonl, every step) and the checkpoint's tensors. Exits 77 (ctest:
skipped) with a message when mpirun is absent or `train` was built without MPI.
"""
import argparse
import hashlib
import json
import math
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from array import array

MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root"]
# The runs start from the same seed and see the same global batches; one process sums a
# micro-batch's gradient in one order, two ranks in another, so float round-off differs: the
# logged loss agrees to about 1e-7 relative, parameters after a dozen AdamW steps to about 1e-6.
LOSS_RTOL = 1e-5
PARAM_ATOL = 1e-4

failures = []


def mpi_environment():
    """The environment of every run. Under the sanitized build, LeakSanitizer would report what
    Open MPI never frees: its components stay loaded (so their frames have names), stacks are
    unwound in full, and leaks inside Open MPI are suppressed (open_mpi_leaks.supp); any other
    leak still fails the run."""
    env = dict(os.environ)
    env["OMPI_MCA_mca_base_component_disable_dlclose"] = "1"
    here = os.path.dirname(os.path.abspath(__file__))
    env["LSAN_OPTIONS"] = f"suppressions={here}/open_mpi_leaks.supp:print_suppressions=0"
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":fast_unwind_on_malloc=0"
    return env


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def safetensors(path):
    """{name: (shape, values)} of a safetensors file, read with the standard library."""
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        values = array({"F32": "f", "I64": "q"}[entry["dtype"]])
        values.frombytes(body[begin:end])
        out[name] = (entry["shape"], values)
    return out


def max_difference(a, b):
    """The largest absolute difference over all tensors of two files with the same names."""
    assert a.keys() == b.keys(), f"tensor names differ: {sorted(a.keys() ^ b.keys())}"
    worst = 0.0
    for name in a:
        assert a[name][0] == b[name][0], f"{name}: shapes {a[name][0]} and {b[name][0]}"
        for x, y in zip(a[name][1], b[name][1]):
            d = abs(x - y)
            if d > worst or math.isnan(d):
                worst = d
    return worst


def losses(run):
    with open(os.path.join(run, "metrics.jsonl")) as f:
        records = map(json.loads, f)
        return {r["step"]: r["loss"] for r in records if "loss" in r and "split" not in r}


class Runner:
    def __init__(self, train, work):
        self.train, self.work = os.path.abspath(train), os.path.abspath(work)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)

    def command(self, config, name, sets):
        out = os.path.join(self.work, name)
        args = [self.train, "--config", config, "--set", f"train.output_dir={out}"]
        if "tiny/bert_mlm" in config or "tiny/gpt_lm" in config:  # they train a vocabulary
            args += ["--set", f"tokenizer.vocab={self.work}/vocab_{os.path.basename(config)}.txt"]
        args += ["--set", "logging.every_steps=1", "--set", "logging.progress=never",
                "--set", "eval.every_steps=0", "--set", "train.eval_at_end=false",
                "--set", "train.threads=1", "--set", "schedule.warmup_steps=2"]
        for s in sets:
            args += ["--set", s]
        return out, args

    def run(self, config, name, sets=(), ranks=1, extra=()):
        out, args = self.command(config, name, sets)
        if ranks > 1:
            args = MPIRUN + ["-np", str(ranks)] + args
        result = subprocess.run(list(args) + list(extra), capture_output=True, text=True,
                                timeout=300, env=mpi_environment())
        if result.returncode != 0:
            sys.exit(f"{name}: exit {result.returncode}\n{result.stderr[-3000:]}")
        self.last_stderr = result.stderr
        return out


NO_DROPOUT = ["model.hidden_dropout_prob=0", "model.attention_probs_dropout_prob=0"]
GPT_NO_DROPOUT = ["model.resid_pdrop=0", "model.embd_pdrop=0", "model.attn_pdrop=0"]


def compare_runs(one, two, step, label):
    a, b = losses(one), losses(two)
    check(a.keys() == b.keys() and len(a) > 0, f"{label}: both logged steps {sorted(a)[:3]}...")
    worst = max(abs(a[s] - b[s]) / abs(a[s]) for s in a)
    check(worst <= LOSS_RTOL, f"{label}: losses agree (largest relative difference {worst:.2e})")
    d = max_difference(safetensors(f"{one}/checkpoint-{step}/model.safetensors"),
                       safetensors(f"{two}/checkpoint-{step}/model.safetensors"))
    check(d <= PARAM_ATOL, f"{label}: parameters agree (largest difference {d:.2e})")


def case_bert(r):
    """BERT MLM, 2 ranks against 1 process; with gradient accumulation over 2 micro-batches."""
    sets = NO_DROPOUT + ["train.max_steps=12", "train.grad_accum_steps=2"]
    one = r.run("configs/tiny/bert_mlm.yaml", "one", sets)
    two = r.run("configs/tiny/bert_mlm.yaml", "two", sets, ranks=2)
    compare_runs(one, two, 12, "BERT MLM, 1 process vs 2 ranks")


def case_gpt(r):
    """Tiny GPT, a global batch that two ranks split unevenly."""
    sets = GPT_NO_DROPOUT + ["train.max_steps=12", "train.batch_size=15"]  # 7 + 8 rows
    one = r.run("configs/tiny/gpt_lm.yaml", "one", sets)
    two = r.run("configs/tiny/gpt_lm.yaml", "two", sets, ranks=2)
    compare_runs(one, two, 12, "GPT LM, 1 process vs 2 ranks")


def case_tasks(r):
    """The other tasks, each from a model that 2 ranks pretrained (init_from): sequence and
    token classification and seq2seq, 2 ranks against 1 process."""
    mlm = r.run("configs/tiny/bert_mlm.yaml", "mlm", ["train.max_steps=10"], ranks=2)
    init = [f"init_from={mlm}/checkpoint-10", "train.max_steps=8"]
    for config, sets in [("bert_classify", init + NO_DROPOUT), ("bert_pos", init + NO_DROPOUT),
                         ("seq2seq_g2p", ["train.max_steps=8", "model.dropout=0"])]:
        path = f"configs/tiny/{config}.yaml"
        one = r.run(path, config + "_one", sets + ["checkpoint.every_steps=8"])
        two = r.run(path, config + "_two", sets + ["checkpoint.every_steps=8"], ranks=2)
        compare_runs(one, two, 8, f"{config}, 1 process vs 2 ranks")


def case_lora(r):
    """LoRA: only the adapters and the modules_to_save are reduced (the frozen base has no
    gradient); 2 ranks against 1 process, and ZeRO-1 against plain data parallelism bit for bit."""
    mlm = r.run("configs/tiny/bert_mlm.yaml", "mlm", ["train.max_steps=10"], ranks=2)
    sets = [f"init_from={mlm}/checkpoint-10", "train.max_steps=8", "checkpoint.every_steps=8",
            "lora.lora_dropout=0"] + NO_DROPOUT
    one = r.run("configs/tiny/lora_classify.yaml", "lora_one", sets)
    two = r.run("configs/tiny/lora_classify.yaml", "lora_two", sets, ranks=2)
    compare_runs(one, two, 8, "LoRA, 1 process vs 2 ranks")
    d = max_difference(safetensors(f"{one}/checkpoint-8/adapter_model.safetensors"),
                       safetensors(f"{two}/checkpoint-8/adapter_model.safetensors"))
    check(d <= PARAM_ATOL,
          f"LoRA, 1 process vs 2 ranks: adapters agree (largest difference {d:.2e})")
    zero = r.run("configs/tiny/lora_classify.yaml", "lora_zero1", sets + ["train.zero_stage=1"],
                 ranks=2)
    for f in ["model", "optimizer", "adapter_model"]:
        d = max_difference(safetensors(f"{two}/checkpoint-8/{f}.safetensors"),
                           safetensors(f"{zero}/checkpoint-8/{f}.safetensors"))
        check(d == 0.0, f"LoRA, ZeRO-1 vs DDP: {f}.safetensors identical (largest difference {d})")


def case_pipeline(r):
    """A pipeline under mpirun: the second stage starts from the model the first ended with, on
    every rank, and the job ends when both are done."""
    out = {name: os.path.join(r.work, name) for name in ["mlm", "classify"]}
    common = "logging.progress=never, train.threads=1, train.eval_at_end=false"
    with open(os.path.join(r.work, "pipeline.yaml"), "w") as f:
        f.write("pipeline:\n"
                f"  - {{config: configs/tiny/bert_mlm.yaml, set: [train.output_dir={out['mlm']}, "
                f"tokenizer.vocab={r.work}/vocab.txt, train.max_steps=6, "
                f"schedule.warmup_steps=2, {common}]}}\n"
                f"  - {{config: configs/tiny/bert_classify.yaml, set: [train.output_dir="
                f"{out['classify']}, train.max_steps=4, schedule.warmup_steps=2, {common}]}}\n")
    result = subprocess.run(MPIRUN + ["-np", "2", r.train, "--config",
                                      os.path.join(r.work, "pipeline.yaml")],
                            capture_output=True, text=True, timeout=300, env=mpi_environment())
    check(result.returncode == 0, f"the pipeline ends with exit 0 ({result.returncode})")
    check(f"stage 2/2 (configs/tiny/bert_classify.yaml), from {out['mlm']}/checkpoint-6"
          in result.stderr, "the second stage starts from the first one's model")
    check(os.path.exists(f"{out['classify']}/final_metrics.json"), "the second stage finished")


def case_zero1(r):
    """ZeRO-1 makes the same update as plain data parallelism, bit for bit, and its checkpoint
    holds the whole optimizer state."""
    sets = ["train.max_steps=10"]  # dropout on: the same rank streams in both runs
    ddp = r.run("configs/tiny/bert_mlm.yaml", "ddp", sets, ranks=2)
    zero = r.run("configs/tiny/bert_mlm.yaml", "zero1", sets + ["train.zero_stage=1"], ranks=2)
    for f in ["model", "optimizer"]:
        d = max_difference(safetensors(f"{ddp}/checkpoint-10/{f}.safetensors"),
                           safetensors(f"{zero}/checkpoint-10/{f}.safetensors"))
        check(d == 0.0, f"ZeRO-1 vs DDP: {f}.safetensors identical (largest difference {d})")
    check(losses(ddp) == losses(zero), "ZeRO-1 vs DDP: the same losses")


def case_resume(r):
    """A checkpoint of 2 ranks resumes on 2 (dropout on: each rank's stream carries over) and on
    1, and continues as the uninterrupted run."""
    # 15 rows: 7 on rank 0, 8 on rank 1, so the ranks' dropout streams advance differently and
    # the resume must restore each rank's own position.
    base = ["schedule.name=constant", "schedule.warmup_steps=0", "checkpoint.every_steps=8",
            "train.batch_size=15"]
    config = "configs/tiny/bert_mlm.yaml"
    whole = r.run(config, "whole", base + ["train.max_steps=16"], ranks=2)
    half = r.run(config, "half", base + ["train.max_steps=8"], ranks=2)
    state = json.load(open(f"{half}/checkpoint-8/trainer_state.json"))
    check(state.get("world_size") == 2, "the checkpoint records world_size 2")
    for zero in ["0", "1"]:
        again = os.path.join(r.work, f"again_zero{zero}")
        shutil.copytree(half, again)
        r.run(config, os.path.basename(again),
              base + ["train.max_steps=16", f"train.zero_stage={zero}"], ranks=2,
              extra=["--resume"])
        d = max_difference(safetensors(f"{whole}/checkpoint-16/model.safetensors"),
                           safetensors(f"{again}/checkpoint-16/model.safetensors"))
        check(d == 0.0, f"2 ranks -> resumed on 2 (zero_stage {zero}): the uninterrupted "
                        f"parameters (largest difference {d})")
        check(losses(whole) == losses(again), f"2 ranks -> resumed on 2 (zero_stage {zero}): "
                                              "the same losses at every step")
        check("will not match" not in r.last_stderr, "2 ranks -> 2: no note of other results")
    # One process: without dropout, so that only round-off differs.
    base += NO_DROPOUT
    whole = r.run(config, "whole_nodrop", base + ["train.max_steps=16"], ranks=2)
    half = r.run(config, "half_nodrop", base + ["train.max_steps=8"], ranks=2)
    r.run(config, "half_nodrop", base + ["train.max_steps=16"], extra=["--resume"])
    check("was written by a job of 2 ranks, and this one has 1: training goes on" in
          r.last_stderr, "2 ranks -> 1: the resume says its results will not match bit for bit")
    compare_runs(whole, half, 16, "2 ranks -> resumed on 1 process")


def case_unshared(r):
    """Ranks that do not share output_dir (each its own working directory, as nodes without a
    shared filesystem): rank 0 alone writes and reads the checkpoint, and the resumed run ends
    with the uninterrupted one's parameters."""
    config = "configs/tiny/bert_mlm.yaml"
    data = [f"data.{split}=" + os.path.abspath(f"tests/tiny_data/lm_{split}.txt")
            for split in ["train", "valid", "test"]]
    base = ["schedule.name=constant", "schedule.warmup_steps=0", "checkpoint.every_steps=8",
            "train.batch_size=15"] + data
    whole = r.run(config, "whole", base + ["train.max_steps=16"], ranks=2)
    homes = [os.path.join(r.work, f"node{k}") for k in range(2)]
    for home in homes:
        os.makedirs(home)
    for steps, extra in [(8, []), (16, ["--resume"])]:
        _, args = r.command(config, "unused", base + [f"train.max_steps={steps}",
                                                      "train.output_dir=out"])
        args = [os.path.abspath(a) if a == config else a for a in args] + extra
        command = MPIRUN + ["-np", "1", "--wdir", homes[0]] + args + [
            ":", "-np", "1", "--wdir", homes[1]] + args
        result = subprocess.run(command, capture_output=True, text=True, timeout=300,
                                env=mpi_environment())
        failure = ("" if result.returncode == 0
                   else f" (exit {result.returncode})\n" + result.stderr[-2000:])
        check(result.returncode == 0, f"{steps} steps, each rank in its own directory{failure}")
    check(not os.path.exists(os.path.join(homes[1], "out", "checkpoint-8")),
          "rank 1 wrote no checkpoint")
    d = max_difference(safetensors(f"{whole}/checkpoint-16/model.safetensors"),
                       safetensors(f"{homes[0]}/out/checkpoint-16/model.safetensors"))
    check(d == 0.0, f"resumed without a shared output_dir: the uninterrupted parameters ({d})")


def g2p_job_in_two_directories(r, edit_rank1_train):
    """mpirun of the tiny G2P config with each of 2 ranks in its own working directory holding
    its own copy of the data, rank 1's training file changed by `edit_rank1_train(path)`.
    Returns (the finished process, the 2 directories, seconds it took)."""
    dirs = []
    for k in range(2):
        d = os.path.join(r.work, f"rank{k}")
        os.makedirs(os.path.join(d, "data"))
        for split in ["train", "valid", "test"]:
            shutil.copy(f"tests/tiny_data/g2p_{split}.tsv", os.path.join(d, "data"))
        dirs.append(d)
    edit_rank1_train(os.path.join(dirs[1], "data", "g2p_train.tsv"))
    config = os.path.abspath("configs/tiny/seq2seq_g2p.yaml")
    args = [r.train, "--config", config] + sum(
        [["--set", s] for s in ["data.train=data/g2p_train.tsv", "data.valid=data/g2p_valid.tsv",
                                "data.test=data/g2p_test.tsv", "train.output_dir=out"]], [])
    command = MPIRUN + ["-np", "1", "--wdir", dirs[0]] + args + [":", "-np", "1", "--wdir",
                                                                   dirs[1]] + args
    start = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=120,
                            env=mpi_environment())
    return result, dirs, time.monotonic() - start


def case_bad_data(r):
    """A data file that only rank 1 sees is malformed: the job ends at once, rank 1 says why."""
    def add_a_bad_line(path):
        with open(path, "a") as f:
            f.write("a line without its target\n")
    result, dirs, seconds = g2p_job_in_two_directories(r, add_a_bad_line)
    lines = sum(1 for _ in open(os.path.join(dirs[1], "data", "g2p_train.tsv")))
    check(result.returncode != 0, f"mpirun exits non-zero ({result.returncode})")
    expected = f"train: rank 1 of 2: error: data/g2p_train.tsv:{lines}: expected source<TAB>target"
    check(expected in result.stderr, f"the failing rank's line: {expected!r}")
    check(seconds < 30, f"within seconds ({seconds:.1f} s)")


def case_different_data(r):
    """A training file that is valid on both ranks but differs (another working directory, another
    node): found training silently to "done" by the second fault matrix. Now the job ends before
    any step, the differing rank naming the key and the file."""
    def reorder(path):  # the same pairs, another order
        lines = open(path).read().splitlines(keepends=True)
        open(path, "w").writelines(lines[1:] + lines[:1])
    result, dirs, _ = g2p_job_in_two_directories(r, reorder)
    check(result.returncode != 0, f"mpirun exits non-zero ({result.returncode})")
    expected = ("train: rank 1 of 2: error: data.train: data/g2p_train.tsv differs from rank 0's "
                "(SHA-256 ")
    check(expected in result.stderr, f"the differing rank's line: {expected!r}\n{result.stderr}")
    check(not os.path.exists(os.path.join(dirs[0], "out", "metrics.jsonl")),
          "no step was trained")


def case_signal(r):
    """A stop request during training: every rank stops after the same step, rank 0 writes a
    checkpoint, it is whole (its manifest matches its files), and every process exits 0. Sent
    twice: SIGUSR1 to mpirun, which Open MPI forwards to every rank unchanged, and SIGTERM to
    each rank, as a scheduler does (SLURM's scancel). SIGTERM to mpirun is left out: Open MPI
    4.1 then kills the ranks two seconds later, so whether the checkpoint is written depends on
    how long a step takes (train/run/stop_signals.h)."""
    for name, signum, to_ranks in [("usr1_to_mpirun", signal.SIGUSR1, False),
                                   ("term_to_ranks", signal.SIGTERM, True)]:
        out, args = r.command("configs/tiny/bert_mlm.yaml", name,
                              ["train.max_steps=1000000", "checkpoint.every_steps=0"])
        job = subprocess.Popen(MPIRUN + ["-np", "2"] + args, stderr=subprocess.PIPE, text=True,
                               env=mpi_environment())
        metrics = os.path.join(out, "metrics.jsonl")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (os.path.exists(metrics) and
                                                   os.path.getsize(metrics) > 2000):
            time.sleep(0.1)
        for pid in children_of(job.pid) if to_ranks else [job.pid]:
            os.kill(pid, signum)
        try:
            _, err = job.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            job.kill()
            check(False, f"{name}: the job ends within 60 s of the signal")
            continue
        said = f"received signal {int(signum)}: saving a checkpoint" in err
        check(said, f"{name}: rank 0 says it saves and stops")
        check(job.returncode == 0, f"{name}: mpirun exits 0 (got {job.returncode})" +
              ("" if job.returncode == 0 else "\n" + err[-2000:]))
        saved = [d for d in os.listdir(out) if d.startswith("checkpoint-")]
        check(len(saved) == 1, f"{name}: one checkpoint written: {saved}")
        check(checkpoints_whole(out), f"{name}: {saved} is whole: its files match manifest.json")


def children_of(pid):
    """The processes whose parent is `pid` (mpirun's ranks), from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


def checkpoints_whole(out):
    """Each checkpoint directory's files match its manifest.json: sizes and SHA-256 digests."""
    saved = [d for d in os.listdir(out) if d.startswith("checkpoint-")]
    for d in saved:
        files = json.load(open(os.path.join(out, d, "manifest.json")))["files"]
        path = os.path.join(out, d)
        if not files:
            return False
        for name, entry in files.items():
            data = open(os.path.join(path, name), "rb").read()
            if len(data) != entry["size"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
                return False
    return bool(saved)


def case_killed_rank(r):
    """kill -9 of one rank (as the kernel's OOM killer would): mpirun ends the whole job at once,
    and the checkpoint written before stays whole."""
    out, args = r.command("configs/tiny/bert_mlm.yaml", "killed",
                          ["train.max_steps=1000000", "checkpoint.every_steps=50"])
    job = subprocess.Popen(MPIRUN + ["-np", "2"] + args, stderr=subprocess.PIPE, text=True,
                           env=mpi_environment())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (os.path.isdir(out) and any(
            d.startswith("checkpoint-") for d in os.listdir(out))):
        time.sleep(0.1)
    ranks = children_of(job.pid)
    check(len(ranks) == 2, f"mpirun started 2 ranks ({ranks})")
    if not ranks:
        job.kill()
        return
    os.kill(max(ranks), signal.SIGKILL)
    killed = time.monotonic()
    try:
        job.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        job.kill()
        check(False, "the job ends within 60 s of a rank's death")
        return
    check(job.returncode != 0, f"mpirun exits non-zero ({job.returncode})")
    check(time.monotonic() - killed < 30, f"within seconds ({time.monotonic() - killed:.1f} s)")
    check(checkpoints_whole(out), "the checkpoints written before are whole")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=["bert", "gpt", "tasks", "lora", "pipeline", "zero1",
                                         "resume", "unshared", "bad_data", "different_data",
                                         "signal", "killed_rank"])
    parser.add_argument("--train", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    if shutil.which("mpirun") is None:
        print("skipped: mpirun is not installed (scripts/setup.sh installs Open MPI)")
        sys.exit(77)
    probe = subprocess.run(MPIRUN + ["-np", "1", args.train, "--config", "/nonexistent.yaml"],
                           capture_output=True, text=True, timeout=60, env=mpi_environment())
    if "this build has no MPI" in probe.stderr:
        print("skipped: train was built without MPI")
        sys.exit(77)
    globals()["case_" + args.case](Runner(args.train, args.work))
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")


if __name__ == "__main__":
    main()
