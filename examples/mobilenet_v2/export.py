#!/usr/bin/python3
"""mobilenet_v2: ``torchvision.models.mobilenet_v2(weights=None)``, BatchNorm statistics calibrated.

``torch.manual_seed(--seed)`` (default 0) builds the model.  With torchvision's default init and
fresh running statistics (mean 0, var 1) the eval-mode logits are ~1e-9: a golden check against
them would prove nothing (the exporter rejects outputs with max |x| <= 1e-3).  So the BatchNorm
running statistics are re-estimated first (:func:`msc_export.calibrate.calibrate_batch_norm`:
``--calib-batches`` train-mode passes, default 4, of seeded ``torch.randn`` [8, 3, 224, 224],
cumulative average), then the model is exported in eval mode; golden input: ``torch.randn``
[1, 3, 224, 224] after ``torch.manual_seed(seed)``.

As in TVM v0.20 MSC the batch norms are not folded (52 ``nn.batch_norm`` + ``get_item``); ReLU6
is ``clip`` [0, 6]; the depthwise convolutions are ``nn.conv2d`` with ``groups`` = channels
(weight OIHW, I = 1); the classifier is ``msc.linear_bias``.  205 nodes, output ``matmul:0``
[1, 1000].  Writes ``graph.json``, ``weights.safetensors`` (~14 MB) and
``golden/{inputs,outputs}.safetensors`` into ``--out`` (default ``<repo>/out/mobilenet_v2``).
"""

import argparse
import os
import sys

import numpy as np
import torch
import torchvision

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from msc_export import export_torch  # noqa: E402
from msc_export.calibrate import calibrate_batch_norm  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "out", "mobilenet_v2"))
    ap.add_argument("--via", choices=["fx", "export"], default="fx",
                    help="frontend: torch.fx (MSC's) or torch.export (torch >= 2.1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--calib-batches", type=int, default=4)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    model = torchvision.models.mobilenet_v2(weights=None)
    n = calibrate_batch_norm(model, [8, 3, 224, 224], args.calib_batches, args.seed)
    result = export_torch(model, [[1, 3, 224, 224]], args.out, seed=args.seed, via=args.via)
    peak = max(float(np.abs(v).max()) for v in result.outputs.values())
    print(f"mobilenet_v2: {n} BatchNorms calibrated; {len(result.graph.nodes)} nodes, {len(result.weights)} weights, "
          f"outputs {result.graph.outputs} (max |logit| {peak:.3g}) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
