#!/usr/bin/python3
"""Fashion-MNIST MLP (784-128-10, the TVM/MLC lecture model): train on real data, export.

Data: Debian's ``dataset-fashion-mnist`` package (``/usr/share/datasets/fashion-mnist/*.gz``,
IDX format parsed with numpy).  Images are scaled to float32 in [0, 1] and flattened to 784.

Training is deterministic: ``torch.manual_seed(seed)``, ``torch.set_num_threads(2)``, a seeded
shuffling generator, Adam (lr 1e-3), batch 64, ``--epochs`` epochs (default 2, a few seconds).

Exported into ``--out`` (default ``<repo>/out/fashion_mnist_mlp``):

* ``graph.json`` / ``weights.safetensors``: the MSCGraph, input ``inp_0:0`` float32 [1, 784]
  (batch 1), output ``matmul_1:0`` float32 [1, 10] (logits);
* ``golden/inputs.safetensors`` / ``golden/outputs.safetensors``: test image 0 and the trained
  model's logits for it;
* ``golden/dataset.safetensors`` (the harnesses' dataset check): the first ``--num-test`` test images, ``inputs`` float32
  [N, 784], ``labels`` int64 [N] and the trained torch model's ``predictions`` int64 [N]
  (argmax), so a generated project can check it predicts the same classes and print accuracy.
"""

import argparse
import gzip
import os
import sys
import time

import numpy as np
import torch
from torch import nn

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from msc_export import export_torch, write_export  # noqa: E402

DATA_DIR = "/usr/share/datasets/fashion-mnist"
CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
           "Ankle boot"]


def read_idx(path: str) -> np.ndarray:
    """Parse an IDX file (optionally gzipped): magic 0x0000 <dtype 0x08=uint8> <ndim>, big-endian dims."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_split(kind: str, data_dir: str = DATA_DIR):
    images = read_idx(os.path.join(data_dir, f"{kind}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data_dir, f"{kind}-labels-idx1-ubyte.gz"))
    return (images.reshape(len(images), 784).astype(np.float32) / 255.0), labels.astype(np.int64)


class MLP(nn.Module):
    """The lecture's model: Linear(784, 128) -> ReLU -> Linear(128, 10)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def train(model: nn.Module, x: np.ndarray, y: np.ndarray, epochs: int, seed: int, batch: int = 64) -> None:
    gen = torch.Generator().manual_seed(seed)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
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
    ap.add_argument("--out", default=os.path.join(REPO, "out", "fashion_mnist_mlp"))
    ap.add_argument("--via", choices=["fx", "export"], default="fx",
                    help="frontend: torch.fx (MSC's) or torch.export (torch >= 2.1)")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--num-test", type=int, default=1000, help="test images stored for generated projects")
    ap.add_argument("--data-dir", default=DATA_DIR)
    args = ap.parse_args()

    torch.set_num_threads(2)
    torch.manual_seed(args.seed)
    x_train, y_train = load_split("train", args.data_dir)
    x_test, y_test = load_split("t10k", args.data_dir)
    model = MLP()
    t0 = time.time()
    train(model, x_train, y_train, args.epochs, args.seed)
    with torch.no_grad():
        pred = model(torch.from_numpy(x_test)).argmax(1).numpy().astype(np.int64)
    acc = float((pred == y_test).mean())
    print(f"trained in {time.time() - t0:.1f}s; test accuracy {acc * 100:.2f}% on {len(y_test)} images")

    n = min(args.num_test, len(x_test))
    result = export_torch(model, [[1, 784]], inputs=[x_test[:1]], via=args.via)
    extra = {"dataset.safetensors": {"inputs": x_test[:n], "labels": y_test[:n], "predictions": pred[:n]}}
    paths = write_export(result, args.out, extra)
    print(f"first {n} test images: accuracy {float((pred[:n] == y_test[:n]).mean()) * 100:.2f}%; "
          f"golden image 0 is a {CLASSES[y_test[0]]} (predicted {CLASSES[pred[0]]})")
    for key in sorted(paths):
        print(f"  {key}: {paths[key]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
