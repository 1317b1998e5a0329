"""Give randomly initialized models meaningful eval-mode outputs before exporting them.

Why: a freshly built torchvision model has BatchNorm running statistics mean 0 / var 1, which do
not match its activations; in eval mode the activations then shrink layer after layer
(mobilenet_v2: outputs ~1e-9, efficientnet_b0: ~1e-14), and vit_b_16's classifier head is
zero-initialized (outputs exactly 0).  A golden check against such outputs proves nothing
(:func:`msc_export.exporter.check_golden_outputs` rejects them).

* :func:`calibrate_batch_norm`: reset every BatchNorm's running statistics and re-estimate them
  from a few train-mode forward passes on seeded random data (``momentum=None``: a cumulative
  average over the batches, torch's ``_BatchNorm`` semantics), then restore eval mode.
* :func:`reinit_zero_linears`: re-draw ``nn.Linear`` weights that are all zero (seeded normal).
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

__all__ = ["calibrate_batch_norm", "reinit_zero_linears"]


def calibrate_batch_norm(model: nn.Module, input_shape: Sequence[int], batches: int = 4, seed: int = 0) -> int:
    """Re-estimate BatchNorm running statistics; returns the number of BatchNorm modules.

    ``batches`` forward passes of ``torch.randn(input_shape)`` (generator seeded with ``seed``) in
    train mode without gradients; each BatchNorm's ``momentum`` is ``None`` during the passes
    (cumulative average) and restored afterwards.  The model is left in eval mode."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    saved = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None
    gen = torch.Generator().manual_seed(seed)
    model.train()
    try:
        with torch.no_grad():
            for _ in range(batches):
                model(torch.randn(*input_shape, generator=gen))
    finally:
        for m, momentum in zip(norms, saved):
            m.momentum = momentum
        model.eval()
    return len(norms)


def reinit_zero_linears(model: nn.Module, std: float = 0.02, seed: int = 0) -> int:
    """Re-draw every all-zero ``nn.Linear`` weight from N(0, std^2) (seeded); returns how many."""
    gen = torch.Generator().manual_seed(seed)
    count = 0
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear) and not torch.any(m.weight):
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * std)
                count += 1
    return count
