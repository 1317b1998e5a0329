#!/usr/bin/python3
"""text_transformer: an nn.TransformerEncoder text classifier trained on real text, exported.

Task: which license a 16-word window of text comes from.  Data: Debian's ``base-files`` package
(essential, so always installed) ships the full texts of common licenses in
``/usr/share/common-licenses``; the classes are Apache-2.0, Artistic, GFDL-1.3, GPL-3, LGPL-2.1
and MPL-2.0 (~18 700 words).  Each text is lower-cased, split into words (``[a-z0-9]+``) and cut
into consecutive windows of 6..16 words (lengths drawn from a seeded generator), right-padded
with token 0 to 16; every 5th window is a test window.  Vocabulary: the ``--vocab`` - 2 most
frequent training words (ties by word), 0 = padding, 1 = unknown word.

Model (:class:`TextTransformer`): ``nn.Embedding(V, 64)`` + a learned position table,
``nn.TransformerEncoder`` (2 ``nn.TransformerEncoderLayer``: d_model 64, 4 heads, feed-forward
128, ReLU, post-norm, batch_first) with ``src_key_padding_mask = tokens == 0``, mean-pool over the
unpadded positions, ``nn.Linear(64, 6)``.  The graph: ``msc.embedding``, ``equal`` + ``where``
(the bool mask as an additive -inf mask), ``msc.attention`` with that mask as its 4th input,
``nn.layer_norm``, ``msc.linear_bias``, ``sum``/``divide`` for the pooling.

Training is deterministic: ``torch.manual_seed(seed)``, ``torch.set_num_threads(1)``, a seeded
shuffling generator, Adam (lr 2e-3), batch 32, ``--epochs`` (default 10, ~10 s).

Exported into ``--out`` (default ``<repo>/out/text_transformer``): ``graph.json``,
``weights.safetensors``, ``golden/inputs.safetensors`` (input ``inp_0:0`` int64 [1, 16]: the
first test window that is padded) and ``golden/outputs.safetensors`` (the trained model's logits
[1, 6]).  ``--dataset`` also writes ``golden/text_dataset.safetensors`` (``inputs`` int64 [N,
16], ``labels``, ``predictions``; not named ``dataset.safetensors``, whose harness checks take
float inputs).
"""

import argparse
import collections
import os
import re
import sys
import time
from typing import Dict, List, Tuple

import numpy as np
import torch
from torch import nn

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from msc_export import export_torch, write_export  # noqa: E402

DATA_DIR = "/usr/share/common-licenses"
CLASSES = ["Apache-2.0", "Artistic", "GFDL-1.3", "GPL-3", "LGPL-2.1", "MPL-2.0"]
SEQ = 16
PAD, UNK = 0, 1


def load_windows(data_dir: str, seed: int) -> Tuple[List[List[str]], List[int], List[bool]]:
    """(windows of words, class index per window, is-test flag per window); deterministic."""
    rng = np.random.default_rng(seed)
    windows, labels, test = [], [], []
    for label, name in enumerate(CLASSES):
        with open(os.path.join(data_dir, name), encoding="utf-8", errors="replace") as f:
            words = re.findall(r"[a-z0-9]+", f.read().lower())
        pos, k = 0, 0
        while pos < len(words):
            n = int(rng.integers(6, SEQ + 1))
            windows.append(words[pos:pos + n])
            labels.append(label)
            test.append(k % 5 == 4)
            pos += n
            k += 1
    return windows, labels, test


def build_vocab(windows: List[List[str]], size: int) -> Dict[str, int]:
    counts = collections.Counter(w for win in windows for w in win)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:size - 2]
    return {w: i + 2 for i, (w, _) in enumerate(ranked)}


def encode(windows: List[List[str]], vocab: Dict[str, int]) -> np.ndarray:
    out = np.full((len(windows), SEQ), PAD, dtype=np.int64)
    for i, win in enumerate(windows):
        ids = [vocab.get(w, UNK) for w in win[:SEQ]]
        out[i, :len(ids)] = ids
    return out


class TextTransformer(nn.Module):
    """Embedding + positions -> 2-layer TransformerEncoder (padding mask) -> masked mean -> Linear."""

    def __init__(self, vocab: int, classes: int, d_model: int = 64, heads: int = 4, ff: int = 128, layers: int = 2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.pos = nn.Parameter(torch.randn(1, SEQ, d_model) * 0.1)
        layer = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens):
        pad = tokens == PAD                                   # [B, S] bool, True = padding
        h = self.encoder(self.embed(tokens) + self.pos, src_key_padding_mask=pad)
        keep = (tokens != PAD).unsqueeze(-1).float()          # [B, S, 1]
        pooled = (h * keep).sum(dim=1) / keep.sum(dim=1)      # mean over the unpadded positions
        return self.head(pooled)


def train(model: nn.Module, x: np.ndarray, y: np.ndarray, epochs: int, seed: int, batch: int = 32) -> None:
    gen = torch.Generator().manual_seed(seed)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for epoch in range(epochs):
        perm = torch.randperm(len(xt), generator=gen)
        total = 0.0
        for i in range(0, len(xt), batch):
            idx = perm[i:i + batch]
            opt.zero_grad()
            loss = loss_fn(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            total += float(loss) * len(idx)
        print(f"epoch {epoch + 1}/{epochs}: train loss {total / len(xt):.4f}")
    model.eval()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "out", "text_transformer"))
    ap.add_argument("--via", choices=["fx", "export"], default="fx",
                    help="frontend: torch.fx (MSC's) or torch.export (torch >= 2.1)")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--data-dir", default=DATA_DIR)
    ap.add_argument("--dataset", action="store_true", help="also write golden/text_dataset.safetensors")
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    windows, labels, is_test = load_windows(args.data_dir, args.seed)
    train_w = [w for w, t in zip(windows, is_test) if not t]
    vocab = build_vocab(train_w, args.vocab)
    x = encode(windows, vocab)
    y = np.array(labels, dtype=np.int64)
    test = np.array(is_test)
    x_train, y_train, x_test, y_test = x[~test], y[~test], x[test], y[test]
    print(f"{len(x_train)} train / {len(x_test)} test windows, vocabulary {len(vocab) + 2}")

    model = TextTransformer(len(vocab) + 2, len(CLASSES))
    t0 = time.time()
    train(model, x_train, y_train, args.epochs, args.seed)
    with torch.no_grad():
        pred = model(torch.from_numpy(x_test)).argmax(1).numpy().astype(np.int64)
    print(f"trained in {time.time() - t0:.1f}s; test accuracy {float((pred == y_test).mean()) * 100:.2f}% "
          f"on {len(y_test)} windows")

    first = int(np.flatnonzero((x_test == PAD).any(1))[0])  # a window with padding
    result = export_torch(model, [[1, SEQ]], input_dtypes=["int64"], inputs=[x_test[first:first + 1]],
                          via=args.via)
    extra = {}
    if args.dataset:
        extra["text_dataset.safetensors"] = {"inputs": x_test, "labels": y_test, "predictions": pred}
    paths = write_export(result, args.out, extra)
    words = [w for w in windows[int(np.flatnonzero(test)[first])]]
    print(f"golden window ({CLASSES[y_test[first]]}, predicted {CLASSES[pred[first]]}): {' '.join(words)!r}")
    print(f"graph: {len(result.graph.nodes)} nodes -> {args.out}")
    for key in sorted(paths):
        print(f"  {key}: {paths[key]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
