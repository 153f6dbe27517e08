#!/usr/bin/python3
"""The PyTorch baseline for bench/train_step_bench.cpp: one BERT masked-LM training step
(forward + backward, no optimizer) of the same model, in the Hugging Face layout, on the same
number of threads. Uses only Debian's python3-torch (transformers is not installable here).

    /usr/bin/python3 bench/pytorch_bert_step.py --hidden 256 --layers 4 --batch 32 --seq 128
"""
import argparse
import math
import time

import torch
import torch.nn.functional as F
from torch import nn


class Layer(nn.Module):
    def __init__(self, h, heads, p):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(h, h) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(h, eps=1e-12), nn.LayerNorm(h, eps=1e-12)
        self.fc1, self.fc2 = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)
        self.p = p

    def forward(self, x, mask):
        B, T, C = x.shape
        d = C // self.heads
        split = lambda t: t.view(B, T, self.heads, d).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d) + mask
        probs = F.dropout(scores.softmax(-1), self.p, self.training)
        ctx = (probs @ v).transpose(1, 2).reshape(B, T, C)
        x = self.ln1(x + F.dropout(self.o(ctx), self.p, self.training))
        h = F.dropout(self.fc2(F.gelu(self.fc1(x))), self.p, self.training)
        return self.ln2(x + h)


class BertMLM(nn.Module):
    def __init__(self, vocab, h, layers, heads, positions, p=0.1):
        super().__init__()
        self.word, self.pos, self.token_type = nn.Embedding(vocab, h), nn.Embedding(positions, h), nn.Embedding(2, h)
        self.ln = nn.LayerNorm(h, eps=1e-12)
        self.layers = nn.ModuleList(Layer(h, heads, p) for _ in range(layers))
        self.transform, self.tln = nn.Linear(h, h), nn.LayerNorm(h, eps=1e-12)
        self.bias = nn.Parameter(torch.zeros(vocab))
        self.p = p

    def forward(self, ids, attention_mask, labels):
        T = ids.shape[1]
        x = self.word(ids) + self.pos(torch.arange(T)) + self.token_type(torch.zeros_like(ids))
        x = F.dropout(self.ln(x), self.p, self.training)
        mask = (1.0 - attention_mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        for layer in self.layers:
            x = layer(x, mask)
        x = self.tln(F.gelu(self.transform(x)))
        logits = x @ self.word.weight.t() + self.bias
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))


def main():
    ap = argparse.ArgumentParser()
    for name, default in [("hidden", 256), ("layers", 4), ("heads", 4), ("batch", 32), ("seq", 128),
                          ("vocab", 8192), ("steps", 10), ("threads", 2)]:
        ap.add_argument("--" + name, type=int, default=default)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = BertMLM(a.vocab, a.hidden, a.layers, a.heads, a.seq)
    ids = torch.randint(5, a.vocab, (a.batch, a.seq))
    labels = torch.where(torch.rand(a.batch, a.seq) < 0.15, ids, torch.full_like(ids, -100))
    mask = torch.ones_like(ids)

    def step():
        model.zero_grad(set_to_none=True)
        loss = model(ids, mask, labels)
        loss.backward()
        return loss.item()

    step()
    start = time.perf_counter()
    for _ in range(a.steps):
        loss = step()
    seconds = time.perf_counter() - start
    tokens = a.batch * a.seq * a.steps / seconds
    print(f"pytorch {torch.__version__} BERT-MLM step: hidden {a.hidden}, layers {a.layers}, "
          f"batch {a.batch} x {a.seq}: {seconds / a.steps:.3f} s/step, {tokens:.0f} tokens/s "
          f"(loss {loss:.4f}, threads {torch.get_num_threads()})")


if __name__ == "__main__":
    main()
