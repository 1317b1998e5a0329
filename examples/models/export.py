#!/usr/bin/python3
"""models: export a larger torchvision model (seeded random weights) for a manual end-to-end run.

    examples/models/export.py --model vit_b_16 [--out DIR] [--seed 0] [--image-size 224] [--via fx|export]
    examples/run_example.sh vit_b_16 build/msc-codegen /tmp/ex     # export + validate + generate + test

Models (``torchvision.models.<name>(weights=None)``, ``torch.manual_seed(seed)`` first):

* ``vit_b_16`` (86 M parameters): ``nn.MultiheadAttention`` -> ``msc.attention``, class token
  (``expand`` -> folded constant) + ``concat``; its zero-initialized head is re-drawn (std 0.02);
* ``swin_t``: shifted windows (``roll`` as ``strided_slice`` + ``concat``), 6-d window
  partition ``reshape``/``permute_dims``, relative position bias (``take`` of a constant table:
  folded), shift mask (constant), ``matmul``/``nn.softmax``;
* ``convnext_tiny``: ``nn.layer_norm`` over channels after ``permute_dims``, layer scale
  (``multiply`` by a constant);
* ``efficientnet_b0``: ``nn.silu``, squeeze-excite (``nn.adaptive_avg_pool2d``, ``sigmoid``,
  ``multiply``);
* ``shufflenet_v2_x1_0``: ``split`` (chunk) and channel shuffle (``reshape``/``permute_dims``);
* ``squeezenet1_0``: BN-free (conv + relu, ``concat`` of the expand branches, ``nn.max_pool2d``
  with ``ceil_mode``, a 1x1 conv classifier + ``nn.adaptive_avg_pool2d``); a Vulkan benchmark model
  (scripts/bench_vulkan.py);
* ``mobilenet_v2``, ``resnet18``: for comparison.

Every model with BatchNorm gets its running statistics re-estimated
(:func:`msc_export.calibrate.calibrate_batch_norm`, ``--calib-batches`` passes of seeded
``torch.randn`` [4, 3, S, S]) -- with fresh statistics efficientnet_b0's eval outputs are ~1e-14.
These models are not in CI's e2e tests (export + generate + run for every backend is minutes per
model on 2 cores); tests/python checks the exporter on them with the reference interpreter.
"""

import argparse
import os
import sys
import time
from collections import Counter

import numpy as np
import torch
import torchvision

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from msc_export import export_torch  # noqa: E402
from msc_export.calibrate import calibrate_batch_norm, reinit_zero_linears  # noqa: E402

MODELS = ["vit_b_16", "swin_t", "convnext_tiny", "efficientnet_b0", "shufflenet_v2_x1_0", "mobilenet_v2", "resnet18",
          "squeezenet1_0"]


def build(name: str, seed: int = 0, image_size: int = 224, calib_batches: int = 2) -> torch.nn.Module:
    """The seeded model, calibrated / re-initialized so that its eval outputs are meaningful."""
    torch.manual_seed(seed)
    kwargs = {"image_size": image_size} if name.startswith("vit") else {}
    model = getattr(torchvision.models, name)(weights=None, **kwargs)
    reinit_zero_linears(model, seed=seed)
    calibrate_batch_norm(model, [4, 3, image_size, image_size], calib_batches, seed)
    return model.eval()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, choices=MODELS)
    ap.add_argument("--out", default="")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--calib-batches", type=int, default=2)
    ap.add_argument("--via", choices=["fx", "export"], default="fx", help="frontend (export: torch.export, torch 2.x)")
    args = ap.parse_args()
    out = args.out or os.path.join(REPO, "out", args.model)
    torch.set_num_threads(1)
    model = build(args.model, args.seed, args.image_size, args.calib_batches)
    t0 = time.time()
    result = export_torch(model, [[1, 3, args.image_size, args.image_size]], out, seed=args.seed, via=args.via)
    elapsed = time.time() - t0
    counts = Counter(n.optype for n in result.graph.nodes)
    peak = max(float(np.abs(v).max()) for v in result.outputs.values())
    print(f"{args.model}: {len(result.graph.nodes)} nodes, {len(result.weights)} weights, exported in {elapsed:.1f}s "
          f"(incl. golden run); outputs {result.graph.outputs} (max |x| {peak:.3g}) -> {out}")
    print("  optypes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
