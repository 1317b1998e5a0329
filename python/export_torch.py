#!/usr/bin/python3
"""Export a PyTorch model to MSCGraph + weights + golden data (wrapper around ``python -m msc_export``).

    python/export_torch.py --model torchvision.models:resnet18 --kwargs '{"weights": null}' \
        --input-shape 1,3,224,224 --out out/resnet18

Works without PYTHONPATH (it adds its own folder); see ``msc_export/__main__.py`` for all options.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from msc_export.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
