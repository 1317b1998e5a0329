#!/usr/bin/python3
"""gpt2_block: a byte-level GPT-2-style decoder (seeded, untrained), exported.

Model (:class:`TinyGPT2`, the GPT-2 / nanoGPT layout): token ``nn.Embedding(256, 64)`` (bytes) +
position ``nn.Embedding(16, 64)`` (indices from an ``arange`` buffer: folded to a constant), one
pre-norm block -- ``ln_1``, causal self-attention (``c_attn`` -> ``split`` q/k/v -> heads via
``view``/``transpose`` -> ``q @ k^T / sqrt(head_dim)`` -> ``masked_fill(causal, -inf)`` with the
bool mask ``torch.triu(ones, diagonal=1)`` (a buffer) -> ``softmax`` -> ``@ v`` -> merge ->
``c_proj``), residual, ``ln_2``, MLP (``c_fc`` -> ``F.gelu(approximate="tanh")`` -> ``c_proj``),
residual -- then ``ln_f`` and an lm head tied to the token embedding (``F.linear(x, wte.weight)``).
Weights: GPT-2's init (normal std 0.02, zero biases), ``torch.manual_seed(--seed)``.

Graph: ``msc.embedding``, ``nn.layer_norm``, ``msc.linear_bias``, ``split``/``get_item``,
``reshape``/``permute_dims``, ``matmul``, ``multiply``, ``where`` (the masked_fill), ``nn.softmax``,
``nn.gelu_tanh``, ``msc.linear`` (the tied head; its weight is the transposed embedding table,
folded by FoldConstant as in MSC).  Input ``inp_0:0`` int64 [1, 16]: the bytes of ``--text``
(default "MSC codegen: GPT"; padded with spaces / cut to 16); output logits float32 [1, 16, 256].
Writes ``graph.json``, ``weights.safetensors``, ``golden/{inputs,outputs}.safetensors`` into
``--out`` (default ``<repo>/out/gpt2_block``).
"""

import argparse
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from msc_export import export_torch  # noqa: E402

VOCAB, SEQ, DIM, HEADS = 256, 16, 64, 4


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, seq: int):
        super().__init__()
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.heads = heads
        self.register_buffer("causal", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(c, dim=2)
        hd = c // self.heads
        q = q.view(b, t, self.heads, hd).transpose(1, 2)          # [B, H, T, hd]
        k = k.view(b, t, self.heads, hd).transpose(1, 2)
        v = v.view(b, t, self.heads, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(self.causal, float("-inf"))          # future positions
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, seq: int):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, seq)
        self.ln_2 = nn.LayerNorm(dim)
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.c_proj = nn.Linear(4 * dim, dim)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class TinyGPT2(nn.Module):
    """Token + position embeddings, ``layers`` pre-norm blocks, ``ln_f``, tied lm head."""

    def __init__(self, vocab: int = VOCAB, seq: int = SEQ, dim: int = DIM, heads: int = HEADS, layers: int = 1):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(seq, dim)
        self.register_buffer("positions", torch.arange(seq))
        self.blocks = nn.Sequential(*[Block(dim, heads, seq) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        for m in self.modules():  # GPT-2's init
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(self.positions)
        x = self.ln_f(self.blocks(x))
        return F.linear(x, self.wte.weight)                        # tied lm head


def encode(text: str, seq: int = SEQ) -> np.ndarray:
    data = text.encode("utf-8")[:seq].ljust(seq, b" ")
    return np.frombuffer(data, dtype=np.uint8).astype(np.int64).reshape(1, seq)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "out", "gpt2_block"))
    ap.add_argument("--via", choices=["fx", "export"], default="fx",
                    help="frontend: torch.fx (MSC's) or torch.export (torch >= 2.1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--text", default="MSC codegen: GPT")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    model = TinyGPT2().eval()
    result = export_torch(model, [[1, SEQ]], args.out, input_dtypes=["int64"], inputs=[encode(args.text)],
                          via=args.via)
    peak = max(float(np.abs(v).max()) for v in result.outputs.values())
    print(f"gpt2_block: {len(result.graph.nodes)} nodes, {len(result.weights)} weights, outputs "
          f"{result.graph.outputs} (max |logit| {peak:.3g}) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
