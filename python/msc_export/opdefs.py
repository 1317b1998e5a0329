"""The repository's opdefs (opdefs/*.yaml) as the Python tools read them: traits, the test oracle.

The C++ loader (generator/opdef/opdef.cc) is the strict one and the one that defines the format
(opdefs/README.md); the tools read a checked tree, so this reads plainly.

``load()`` returns ``{optype: entry}`` (the YAML mapping of each op); ``with_trait(name)`` the
sorted optypes with that trait (``msc-codegen ops --traits``); ``reference(optype)`` the op's
oracle: ``(fn, domain)`` with ``fn`` the PyTorch callable its ``reference`` names (e.g.
``torch.acosh``) and ``domain`` its ``[lo, hi]`` input interval or ``None``, or ``None`` when the
opdef has no reference.
"""
import functools
import glob
import importlib
import os
from typing import Callable, Dict, List, Optional, Tuple

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OPDEFS = os.path.join(ROOT, "opdefs")


@functools.lru_cache(maxsize=None)
def load(folder: str = OPDEFS) -> Dict[str, dict]:
    """Every opdef of `folder` (default: the repository's), keyed by optype."""
    defs: Dict[str, dict] = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            defs.update(yaml.safe_load(f) or {})
    return defs


def with_trait(trait: str, folder: str = OPDEFS) -> List[str]:
    """The optypes whose opdef lists `trait`, sorted."""
    return sorted(op for op, d in load(folder).items() if trait in (d.get("traits") or []))


def reference(optype: str, folder: str = OPDEFS) -> Optional[Tuple[Callable, Optional[Tuple[float, float]]]]:
    """(torch callable, (lo, hi) or None) from the opdef's `reference` / `domain`, or None."""
    d = load(folder).get(optype) or {}
    if not d.get("reference"):
        return None
    module, _, name = d["reference"].rpartition(".")
    fn = getattr(importlib.import_module(module), name)
    dom = d.get("domain")
    return fn, (float(dom[0]), float(dom[1])) if dom else None
