"""Per-op variant cases for the optypes beyond the first 32 (elementwise, reductions, indexing,
normalization, attention, ...): one small graph per op variant, several per op where attrs change
the semantics. Same conventions as cases.py (seeded inputs, PyTorch as the reference, attrs
stringified as MSC wrote them); cases.py merges CASES from here.
"""
import torch  # noqa: F401
import torch.nn.functional as F  # noqa: F401

from cases_base import Builder  # noqa: F401

CASES = {}
