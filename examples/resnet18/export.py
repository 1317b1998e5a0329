#!/usr/bin/python3
"""resnet18: ``torchvision.models.resnet18(weights=None)`` (random init), input float32 [1, 3, 224, 224].

``torch.manual_seed(--seed)`` (default 0) before building the model and again before drawing the
golden input (``torch.randn``); the model is exported in eval mode.  As in TVM v0.20 MSC the
batch norms are NOT folded: each is an ``nn.batch_norm`` node (weights gamma/beta/mean/var,
``training="1"`` although the running statistics are what it means) followed by a ``get_item``
node ``batch_norm.0``; the convolutions have no bias, so they are ``nn.conv2d``; the classifier is
``msc.linear_bias`` named ``matmul``.  90 nodes, 102 weight tensors, output ``matmul:0`` [1, 1000].

Writes ``graph.json``, ``weights.safetensors`` (~47 MB), ``golden/{inputs,outputs}.safetensors``
into ``--out`` (default ``<repo>/out/resnet18``).
"""

import argparse
import os
import sys

import torch
import torchvision

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from msc_export import export_torch  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "out", "resnet18"))
    ap.add_argument("--via", choices=["fx", "export"], default="fx",
                    help="frontend: torch.fx (MSC's) or torch.export (torch >= 2.1)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    model = torchvision.models.resnet18(weights=None).eval()
    result = export_torch(model, [[1, 3, 224, 224]], args.out, seed=args.seed, via=args.via)
    print(f"resnet18: {len(result.graph.nodes)} nodes, {len(result.weights)} weights, "
          f"outputs {result.graph.outputs} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
