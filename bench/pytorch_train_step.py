#!/usr/bin/python3
"""The PyTorch baseline for heed's training-step benchmark (build/bench/bench_train_step): one
full training step (zero_grad, forward and loss, backward, gradient clipping, AdamW) of the same
model as heed's, in plain torch (transformers is not installable here), on the same threads.

    /usr/bin/python3 bench/pytorch_train_step.py \
        --model bert-mini|gpt-mini|bert-small|seq2seq|bert-base|gpt2 \
        --precision f32|bf16 --steps 10 --threads 2 [--warmup 2] [--batch B] [--seq T]

Models, in the Hugging Face layouts that heed's nn/models follow:
    bert-mini   BertForMaskedLM, 256 hidden, 4 layers, 4 heads, FFN 1024, vocab 8192, 32 x 128;
                the MLM head (dense + gelu + LayerNorm, decoder tied to the word embeddings)
                runs only on the 15% labelled rows, as heed's only_labeled_logits does.
    bert-small  the same at 512 hidden, 8 heads, FFN 2048, 16 x 128.
    bert-base   the tutorials' BERT-base as bert-base-uncased: 768 hidden, 12 layers, 12 heads,
                FFN 3072, vocab 30522, 512 positions, 16 x 128.
    gpt-mini    GPT2LMHeadModel (pre-LN, tanh GELU, tied head), the bert-mini sizes, causal,
                next-token loss at every position.
    seq2seq     BartForConditionalGeneration shaped like configs/seq2seq_g2p.yaml: d_model 256,
                3 + 3 layers, 4 heads, FFN 1024, vocab 64, 128 pairs of 32 + 32 tokens,
                label smoothing 0.1.
    gpt2        GPT-2 small: 768 hidden, 12 layers, 12 heads, FFN 3072, vocab 50257, 1024
                positions, 4 x 1024.
--batch and --seq change the shape (--seq: BART's source); the position table grows to the
sequence where it is longer, as heed's bench builds it.
Dropout is 0.1 on hidden states, attention probabilities and embeddings (BART's
activation_dropout is 0, heed's default). The batches are heed's bench's: random ids, padding
masks of ones that every attention still applies as Hugging Face does, GPT labels shifted by
the collator. bf16 is autocast around forward and loss over f32 weights, as a PyTorch user
runs mixed precision on a CPU.

Prints `key: value` lines, tokens_per_second last; bench/compare.py reads them.
"""
import argparse
import contextlib
import dataclasses
import math
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

INIT_STD = 0.02  # initializer_range / init_std of all three configs
DROPOUT = 0.1
MLM_FRACTION = 0.15


@dataclasses.dataclass(frozen=True)
class Spec:
    arch: str  # "bert", "gpt" or "bart"
    vocab: int
    hidden: int
    layers: int  # encoder layers for BART
    heads: int
    ffn: int
    batch: int
    seq: int  # the source length for BART
    positions: int  # max_position_embeddings / n_positions
    decoder_layers: int = 0
    target: int = 0  # BART's target length
    label_smoothing: float = 0.0


SPECS = {
    "bert-mini": Spec("bert", 8192, 256, 4, 4, 1024, batch=32, seq=128, positions=128),
    "gpt-mini": Spec("gpt", 8192, 256, 4, 4, 1024, batch=32, seq=128, positions=128),
    "bert-small": Spec("bert", 8192, 512, 4, 8, 2048, batch=16, seq=128, positions=128),
    "bert-base": Spec("bert", 30522, 768, 12, 12, 3072, batch=16, seq=128, positions=512),
    "gpt2": Spec("gpt", 50257, 768, 12, 12, 3072, batch=4, seq=1024, positions=1024),
    # Positions: the longer of the two sequences, as bench/train_step_bench.cpp sets them.
    "seq2seq": Spec("bart", 64, 256, 3, 4, 1024, batch=128, seq=32, positions=32, decoder_layers=3,
                    target=32, label_smoothing=0.1),
}

# Token ids as heed's bench uses them: the configs' defaults for the padding rows (BERT's
# pad_token_id 0, BART's 1), decoder_start_token_id 2, and random ids from 5 up.
BERT_PAD_ID, BART_PAD_ID, DECODER_START_ID, FIRST_ORDINARY_ID = 0, 1, 2, 5


def with_shape(s: Spec, batch, seq) -> Spec:
    """The spec at another batch or sequence length (None: the spec's), its position table
    at least as long as the sequence (BART's: its longer sequence)."""
    batch, seq = batch or s.batch, seq or s.seq
    return dataclasses.replace(s, batch=batch, seq=seq,
                               positions=max(s.positions, seq, s.target) if s.arch == "bart"
                               else max(s.positions, seq))


def labelled_rows(s: Spec) -> int:
    """How many positions carry an MLM label: exactly 15% of the batch, so that the work of a
    step is the same in every run and framework."""
    return round(MLM_FRACTION * s.batch * s.seq)


def tokens_per_step(s: Spec) -> int:
    return s.batch * (s.seq + s.target)


def flops_per_step(s: Spec) -> int:
    """Matmul FLOPs of one forward + backward: each product of m x k by k x n costs 2mkn in
    the forward and 4mkn in the backward (the gradients of both operands), so 6mkn in all.
    Every Linear counts at the rows it runs on; attention counts QK^T and PV over all heads
    (per layer 4 * B * T_q * T_k * hidden forward, x3 with the backward), the full T_q x T_k
    even where a causal mask hides half of it."""
    B, C, I, V = s.batch, s.hidden, s.ffn, s.vocab

    def linear(rows, n_in, n_out):
        return 6 * rows * n_in * n_out

    def attention_products(queries, keys):
        return 3 * 4 * B * queries * keys * C

    def feed_forward(rows):
        return linear(rows, C, I) + linear(rows, I, C)

    if s.arch in ("bert", "gpt"):
        N = B * s.seq
        layer = 4 * linear(N, C, C) + feed_forward(N) + attention_products(s.seq, s.seq)
        if s.arch == "bert":  # transform + tied decoder, at the labelled rows only
            head = linear(labelled_rows(s), C, C) + linear(labelled_rows(s), C, V)
        else:  # the tied LM head runs at every position
            head = linear(N, C, V)
        return s.layers * layer + head
    src, tgt = B * s.seq, B * s.target
    encoder_layer = 4 * linear(src, C, C) + feed_forward(src) + attention_products(s.seq, s.seq)
    decoder_layer = (4 * linear(tgt, C, C) + attention_products(s.target, s.target)  # self
                     + 2 * linear(tgt, C, C) + 2 * linear(src, C, C)  # cross: q, out | k, v
                     + attention_products(s.target, s.seq) + feed_forward(tgt))
    return s.layers * encoder_layer + s.decoder_layers * decoder_layer + linear(tgt, C, V)


def split_heads(x, heads):  # [B, T, C] -> [B, h, T, d], a view
    B, T, C = x.shape
    return x.view(B, T, heads, C // heads).transpose(1, 2)


def merge_heads(x):  # [B, h, T, d] -> [B, T, C]
    B, h, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d)


def additive_padding_mask(attention_mask):
    """[B, Tk] of 1 (token) / 0 (padding) -> [B, 1, 1, Tk] of 0 / finfo.min in the weights'
    dtype, as Hugging Face builds it (f32 even under autocast)."""
    return (1.0 - attention_mask[:, None, None, :].float()) * torch.finfo(torch.float32).min


def init_weights(model, std=INIT_STD):
    """Hugging Face's _init_weights: normal(0, std) weights, zero biases, LayerNorm 1 / 0,
    a zero padding row."""
    for m in model.modules():
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0.0, std)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, 0.0, std)
            if m.padding_idx is not None:
                with torch.no_grad():
                    m.weight[m.padding_idx].zero_()
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


# ----- BERT (modeling_bert): post-LN, exact GELU, LayerNorm eps 1e-12 -----

class BertLayer(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        C = s.hidden
        self.heads = s.heads
        self.query, self.key, self.value = nn.Linear(C, C), nn.Linear(C, C), nn.Linear(C, C)
        self.attention_output = nn.Linear(C, C)
        self.attention_norm = nn.LayerNorm(C, eps=1e-12)
        self.intermediate, self.output = nn.Linear(C, s.ffn), nn.Linear(s.ffn, C)
        self.output_norm = nn.LayerNorm(C, eps=1e-12)

    def forward(self, x, mask):
        q, k, v = (split_heads(p(x), self.heads) for p in (self.query, self.key, self.value))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + mask
        probs = F.dropout(scores.softmax(-1), DROPOUT, self.training)
        context = merge_heads(probs @ v)
        drop = lambda t: F.dropout(t, DROPOUT, self.training)
        x = self.attention_norm(x + drop(self.attention_output(context)))
        return self.output_norm(x + drop(self.output(F.gelu(self.intermediate(x)))))


class BertForMaskedLM(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        C = s.hidden
        self.word_embeddings = nn.Embedding(s.vocab, C, padding_idx=BERT_PAD_ID)
        self.position_embeddings = nn.Embedding(s.positions, C)
        self.token_type_embeddings = nn.Embedding(2, C)
        self.embedding_norm = nn.LayerNorm(C, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(s) for _ in range(s.layers))
        self.transform = nn.Linear(C, C)  # cls.predictions.transform.dense
        self.transform_norm = nn.LayerNorm(C, eps=1e-12)
        self.decoder_bias = nn.Parameter(torch.zeros(s.vocab))  # cls.predictions.bias
        init_weights(self)

    def forward(self, input_ids, token_type_ids, attention_mask, labels):
        T = input_ids.shape[1]
        x = (self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
             + self.position_embeddings(torch.arange(T)))
        x = F.dropout(self.embedding_norm(x), DROPOUT, self.training)
        mask = additive_padding_mask(attention_mask)
        for layer in self.layers:
            x = layer(x, mask)
        # The head runs on the labelled rows only (heed's only_labeled_logits): gather them.
        flat_labels = labels.view(-1)
        rows = (flat_labels != -100).nonzero().squeeze(1)
        h = x.reshape(-1, x.shape[-1]).index_select(0, rows)
        # Under autocast the dense output is bf16, and torch 1.13's CPU LayerNorm rejects a bf16
        # input with f32 weights (the encoder's norms get f32 residual sums): hand it f32.
        h = self.transform_norm(F.gelu(self.transform(h)).float())
        logits = F.linear(h, self.word_embeddings.weight, self.decoder_bias)  # tied decoder
        return F.cross_entropy(logits, flat_labels.index_select(0, rows))


# ----- GPT-2 (modeling_gpt2): pre-LN, Conv1D [in, out] weights, "gelu_new", eps 1e-5 -----

class Conv1D(nn.Module):
    """GPT-2's projection: y = x W + b with W stored [in, out]."""

    def __init__(self, n_in, n_out, std=INIT_STD):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out).normal_(0.0, std))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        y = torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight)
        return y.view(*x.shape[:-1], y.shape[-1])


class GPT2Block(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        C = s.hidden
        proj_std = INIT_STD / math.sqrt(2 * s.layers)  # GPT-2's scaled residual projections
        self.heads = s.heads
        self.ln_1, self.ln_2 = nn.LayerNorm(C, eps=1e-5), nn.LayerNorm(C, eps=1e-5)
        self.c_attn, self.attn_proj = Conv1D(C, 3 * C), Conv1D(C, C, proj_std)
        self.c_fc, self.mlp_proj = Conv1D(C, s.ffn), Conv1D(s.ffn, C, proj_std)

    def forward(self, x, causal, padding_mask):
        C = x.shape[-1]
        q, k, v = (split_heads(t, self.heads) for t in self.c_attn(self.ln_1(x)).split(C, dim=2))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        masked = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        scores = torch.where(causal, scores, masked) + padding_mask
        probs = F.dropout(scores.softmax(-1).type(v.dtype), DROPOUT, self.training)
        x = x + F.dropout(self.attn_proj(merge_heads(probs @ v)), DROPOUT, self.training)
        # "gelu_new" is the tanh approximation; torch's fused kernel computes the same function.
        h = self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
        return x + F.dropout(h, DROPOUT, self.training)


class GPT2LMHeadModel(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.wte = nn.Embedding(s.vocab, s.hidden)
        self.wpe = nn.Embedding(s.positions, s.hidden)
        self.h = nn.ModuleList(GPT2Block(s) for _ in range(s.layers))
        self.ln_f = nn.LayerNorm(s.hidden, eps=1e-5)
        init_weights(self)  # touches the embeddings and LayerNorms; Conv1D set its own init
        causal = torch.tril(torch.ones(s.positions, s.positions, dtype=torch.bool))
        self.register_buffer("causal", causal, persistent=False)

    def forward(self, input_ids, attention_mask, labels):
        T = input_ids.shape[1]
        x = F.dropout(self.wte(input_ids) + self.wpe(torch.arange(T)), DROPOUT, self.training)
        causal = self.causal[None, None, :T, :T]
        padding_mask = additive_padding_mask(attention_mask)
        for block in self.h:
            x = block(x, causal, padding_mask)
        logits = F.linear(self.ln_f(x), self.wte.weight)  # lm_head tied to wte
        # The labels come shifted (labels[t] = token t + 1, -100 at the end), as heed's causal
        # collator makes them: the loss takes every position, with no copy of logits[:, :-1].
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))


# ----- BART (modeling_bart): post-LN, learned positions offset by 2, layernorm_embedding -----

class BartAttention(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        C = s.hidden
        self.heads = s.heads
        self.scaling = (C // s.heads) ** -0.5
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(C, C) for _ in range(4))

    def forward(self, x, memory, mask):
        q = split_heads(self.q_proj(x) * self.scaling, self.heads)
        k = split_heads(self.k_proj(memory), self.heads)
        v = split_heads(self.v_proj(memory), self.heads)
        probs = F.dropout((q @ k.transpose(-1, -2) + mask).softmax(-1), DROPOUT, self.training)
        return self.out_proj(merge_heads(probs @ v))


class BartLayer(nn.Module):
    """An encoder layer, or with cross-attention a decoder layer."""

    def __init__(self, s: Spec, decoder: bool):
        super().__init__()
        C = s.hidden
        self.self_attn = BartAttention(s)
        self.self_attn_layer_norm = nn.LayerNorm(C)
        if decoder:
            self.encoder_attn = BartAttention(s)
            self.encoder_attn_layer_norm = nn.LayerNorm(C)
        self.fc1, self.fc2 = nn.Linear(C, s.ffn), nn.Linear(s.ffn, C)
        self.final_layer_norm = nn.LayerNorm(C)

    def forward(self, x, self_mask, memory=None, memory_mask=None):
        drop = lambda t: F.dropout(t, DROPOUT, self.training)
        x = self.self_attn_layer_norm(x + drop(self.self_attn(x, x, self_mask)))
        if memory is not None:
            x = self.encoder_attn_layer_norm(x + drop(self.encoder_attn(x, memory, memory_mask)))
        # activation_dropout is 0 (heed's default), so nothing between fc1 and fc2.
        return self.final_layer_norm(x + drop(self.fc2(F.gelu(self.fc1(x)))))


class BartStack(nn.Module):
    def __init__(self, s: Spec, decoder: bool):
        super().__init__()
        self.embed_positions = nn.Embedding(s.positions + 2, s.hidden)  # row p + 2 is position p
        self.layernorm_embedding = nn.LayerNorm(s.hidden)
        n = s.decoder_layers if decoder else s.layers
        self.layers = nn.ModuleList(BartLayer(s, decoder) for _ in range(n))

    def embed(self, tokens):
        x = tokens + self.embed_positions(torch.arange(tokens.shape[1]) + 2)
        return F.dropout(self.layernorm_embedding(x), DROPOUT, self.training)


class BartForConditionalGeneration(nn.Module):
    def __init__(self, s: Spec):
        super().__init__()
        self.shared = nn.Embedding(s.vocab, s.hidden, padding_idx=BART_PAD_ID)
        self.encoder, self.decoder = BartStack(s, False), BartStack(s, True)
        self.register_buffer("final_logits_bias", torch.zeros(1, s.vocab))
        self.label_smoothing = s.label_smoothing
        init_weights(self)

    def forward(self, input_ids, attention_mask, decoder_input_ids, decoder_attention_mask, labels):
        memory_mask = additive_padding_mask(attention_mask)
        x = self.encoder.embed(self.shared(input_ids))
        for layer in self.encoder.layers:
            x = layer(x, memory_mask)
        # The decoder's mask: causal plus its padding, one additive [B, 1, T, T] (as Hugging
        # Face combines them).
        T = decoder_input_ids.shape[1]
        causal = torch.full((T, T), torch.finfo(torch.float32).min).triu(1)
        self_mask = causal + additive_padding_mask(decoder_attention_mask)
        y = self.decoder.embed(self.shared(decoder_input_ids))
        for layer in self.decoder.layers:
            y = layer(y, self_mask, x, memory_mask)
        logits = F.linear(y, self.shared.weight) + self.final_logits_bias  # lm_head tied to shared
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1),
                               label_smoothing=self.label_smoothing)


def build(s: Spec):
    models = {"bert": BertForMaskedLM, "gpt": GPT2LMHeadModel, "bart": BartForConditionalGeneration}
    return models[s.arch](s)


def make_batch(s: Spec, seed: int):
    """Random token ids from a seeded generator: the model's keyword arguments."""
    g = torch.Generator().manual_seed(seed)
    ids = lambda T: torch.randint(FIRST_ORDINARY_ID, s.vocab, (s.batch, T), generator=g)
    if s.arch == "bart":
        source, labels = ids(s.seq), ids(s.target)
        # shift_tokens_right: [decoder_start, labels[:, :-1]]
        start = torch.full((s.batch, 1), DECODER_START_ID)
        decoder_input_ids = torch.cat([start, labels[:, :-1]], dim=1)
        return dict(input_ids=source, attention_mask=torch.ones_like(source),
                    decoder_input_ids=decoder_input_ids,
                    decoder_attention_mask=torch.ones_like(decoder_input_ids), labels=labels)
    input_ids = ids(s.seq)
    if s.arch == "gpt":
        labels = torch.full_like(input_ids, -100)
        labels[:, :-1] = input_ids[:, 1:]
        return dict(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), labels=labels)
    labels = torch.full_like(input_ids, -100)
    rows = torch.randperm(input_ids.numel(), generator=g)[:labelled_rows(s)]
    labels.view(-1)[rows] = input_ids.view(-1)[rows]
    return dict(input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids),
                attention_mask=torch.ones_like(input_ids), labels=labels)


def make_optimizer(model, foreach):
    """AdamW over two groups as Hugging Face's Trainer makes them: weight decay on the weight
    matrices and embeddings, none on biases and LayerNorm parameters."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.dim() < 2 or name.endswith("bias") else decay).append(p)
    groups = [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}]
    # torch 1.13 has no fused AdamW on CPU. Its foreach (multi-tensor) path gives the same
    # parameters but measured 10-20% slower than the per-tensor loop here (clip + step on
    # bert-mini and bert-small, 1 and 2 threads): it materializes whole-model temporaries.
    return torch.optim.AdamW(groups, lr=1e-4, betas=(0.9, 0.999), eps=1e-8, foreach=foreach)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=sorted(SPECS), required=True)
    ap.add_argument("--precision", choices=["f32", "bf16"], default="f32")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, help="sequences per batch (default: the model's)")
    ap.add_argument("--seq", type=int, help="tokens per sequence (default: the model's)")
    ap.add_argument("--adamw-foreach", action="store_true",
                    help="AdamW's multi-tensor path (slower on CPU in torch 1.13)")
    a = ap.parse_args()
    if a.steps < 1 or a.warmup < 0:
        ap.error("--steps must be at least 1 and --warmup at least 0")
    if (a.batch is not None and a.batch < 1) or (a.seq is not None and a.seq < 1):
        ap.error("--batch and --seq must be at least 1")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    s = with_shape(SPECS[a.model], a.batch, a.seq)
    model = build(s).train()
    batch = make_batch(s, a.seed + 1)
    params = list(model.parameters())
    optimizer = make_optimizer(model, a.adamw_foreach)
    if a.precision == "bf16":
        autocast = lambda: torch.autocast("cpu", dtype=torch.bfloat16)
    else:
        autocast = contextlib.nullcontext

    forward_s, backward_s, optimizer_s, step_s = [], [], [], []
    loss = None
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        t1 = time.perf_counter()
        with autocast():
            loss = model(**batch)
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        t4 = time.perf_counter()
        if i >= a.warmup:
            forward_s.append(t2 - t1)
            backward_s.append(t3 - t2)
            optimizer_s.append((t1 - t0) + (t4 - t3))
            step_s.append(t4 - t0)

    ms = lambda xs: f"{1e3 * statistics.median(xs):.3f}"
    lines = [
        ("framework", f"pytorch {torch.__version__}"),
        ("model", a.model),
        ("precision", a.precision),
        ("threads", torch.get_num_threads()),
        ("tokens_per_step", tokens_per_step(s)),
        # The model's FLOPs (the comparison's equal-work check) and what this program runs:
        # the same here, as a plain implementation runs every product.
        ("model_flops_per_step", flops_per_step(s)),
        ("flops_per_step", flops_per_step(s)),
        ("parameters", sum(p.numel() for p in params)),
        ("forward_ms", ms(forward_s)),
        ("backward_ms", ms(backward_s)),
        ("optimizer_ms", ms(optimizer_s)),
        ("step_ms", ms(step_s)),
        ("loss", f"{loss.item():.6f}"),
        ("tokens_per_second", f"{tokens_per_step(s) / statistics.median(step_s):.1f}"),
    ]
    for key, value in lines:
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
