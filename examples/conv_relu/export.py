#!/usr/bin/python3
"""conv_relu: ``Conv2d(3, 6, 1, bias=False)`` + ``ReLU``, input float32 [1, 3, 4, 4].

The same model as ``shared/reference/msc-real/conv_relu`` (TVM v0.20 MSC output): with
``torch.manual_seed(0)`` before building it, the weights are identical to that reference.
Golden inputs: ``torch.manual_seed(--seed)`` then ``torch.randn``.

Writes ``graph.json``, ``weights.safetensors``, ``golden/{inputs,outputs}.safetensors`` into
``--out`` (default ``<repo>/out/conv_relu``).
"""

import argparse
import os
import sys

import torch
from torch import nn

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from msc_export import export_torch  # noqa: E402


def build_model() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 6, 1, bias=False), nn.ReLU())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "out", "conv_relu"))
    ap.add_argument("--via", choices=["fx", "export"], default="fx",
                    help="frontend: torch.fx (MSC's) or torch.export (torch >= 2.1)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    model = build_model().eval()
    result = export_torch(model, [[1, 3, 4, 4]], args.out, seed=args.seed, via=args.via)
    print(f"conv_relu: {len(result.graph.nodes)} nodes, outputs {result.graph.outputs} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
