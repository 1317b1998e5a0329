"""The torch.fx path converts every module and function TVM's own ``from_fx`` converts (v0.20 and
the newest release), or docs/torch-fx.md says why not; run with ``/usr/bin/python3 -m pytest -q
tests/python`` (torch 1.13) and with the venv's python (torch 2.x).

* one tiny model per family (tests/python/fx_models.py) exported with ``via="fx"``: the reference
  interpreter's outputs equal the torch model's;
* every key of TVM's convert maps (tests/python/tvm_fx_keys.json, copied from TVM's sources) is in
  :class:`FXImporter`'s maps or listed in docs/torch-fx.md as not converted, with a reason; the
  document's list matches the maps both ways, so neither can drift silently.
"""
import json
import os
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from conftest import HERE, REPO
from msc_export import ExportError, UnsupportedOpsError, export_torch, translate_torch
from msc_export.exporter import ExportResult, _input_info, _msc_passes, golden_data
from msc_export.fx_importer import FXImporter
from msc_export.interp import run_graph

import fx_models

KEYS = json.load(open(os.path.join(HERE, "tvm_fx_keys.json")))
DOC = os.path.join(REPO, "docs", "torch-fx.md")


def _check(result, atol=1e-5):
    got = run_graph(result.graph, result.weights, result.inputs)
    for name in result.graph.outputs:
        want = result.outputs[name]
        assert got[name].dtype == want.dtype, name
        np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=atol, err_msg=name)


def _export(name):
    factory, shapes, dtypes = fx_models.CASES[name]
    torch.manual_seed(0)
    if name != "creation":
        return export_torch(factory(), shapes, input_dtypes=dtypes, via="fx")
    gm = factory()  # hand-built: translated as export_torch does after tracing
    graph, weights = _msc_passes(FXImporter().from_fx(gm, _input_info(shapes, dtypes)), "main")
    result = ExportResult(graph, weights)
    result.inputs, result.outputs = golden_data(gm, graph, shapes, dtypes)
    return result


@pytest.mark.parametrize("name", sorted(fx_models.CASES))
def test_family_matches_torch(name):
    _check(_export(name))


def test_family_optypes():
    """The families lower to the MSC optypes the converters document."""
    optypes = {n.optype for name in ("activations", "nn", "reductions") for n in _export(name).graph.nodes}
    for op in ("nn.selu", "nn.softplus", "nn.leakyrelu", "nn.log_softmax", "nn.conv1d_transpose",
               "nn.conv2d_transpose", "nn.group_norm", "nn.max_pool1d", "nn.avg_pool1d", "nn.adaptive_avg_pool1d",
               "einsum", "image.resize2d", "topk", "cumsum", "variance", "prod", "argmax", "argmin"):
        assert op in optypes, op


def test_sort_ties_are_stable():
    class M(nn.Module):
        def forward(self, x):
            return torch.sort(x, dim=1, stable=True)

    r = export_torch(M(), [[2, 7]], inputs=[np.array([[1, 0, 1, 2, 0, 1, 2], [3, 3, 1, 1, 2, 2, 0]], np.float32)])
    _check(r)


def test_rejected_arguments_are_clear():
    class OneHot(nn.Module):
        def forward(self, x):
            return F.one_hot(x)

    with pytest.raises(ExportError, match="one_hot needs num_classes"):
        translate_torch(OneHot(), [[3]], ["int64"])

    class Shift(nn.Module):
        def forward(self, x, y):
            return x << y

    with pytest.raises(ExportError, match="shift by a tensor amount"):
        translate_torch(Shift(), [[3], [3]], ["int64", "int64"])

    class Conv3d(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv3d(1, 1, 1)

        def forward(self, x):
            return self.c(x)

    with pytest.raises(UnsupportedOpsError, match="Conv3d"):
        translate_torch(Conv3d(), [[1, 1, 2, 2, 2]])


# ----------------------------------------------------------------------------- TVM's key lists


def _converted():
    imp = FXImporter()
    modules = {c.__name__ for c in imp.module_map}
    functions = {getattr(f, "__name__", None) for f in imp.function_map} | set(imp.method_map)
    return modules, functions


def _doc_rows():
    """docs/torch-fx.md's coverage table: key -> status text ("converted: ..." / "not converted: ...")."""
    rows = {}
    for line in open(DOC, encoding="utf-8"):
        m = re.match(r"\|\s*`([^`]+)`\s*\|\s*(module|function)\s*\|[^|]*\|\s*(.+?)\s*\|\s*$", line)
        if m:
            rows[(m.group(2), m.group(1))] = m.group(3)
    return rows


def _exists_here(key):
    """Whether this torch has the thing TVM's key names (F.scaled_dot_product_attention is torch >= 2.0)."""
    return any(hasattr(ns, key) for ns in (torch, F, torch.Tensor)) or key in ("and_", "or_", "xor", "lshift",
                                                                                "rshift", "getattr", "getitem",
                                                                                "iadd", "floordiv", "mod", "truediv",
                                                                                "astype") or "." in key


@pytest.mark.parametrize("tier", ["v020", "newest"])
def test_every_tvm_key_converted_or_documented(tier):
    modules, functions = _converted()
    rows = _doc_rows()
    problems = []
    for kind, have, keys in (("module", modules, KEYS[tier]["modules"]), ("function", functions,
                                                                          KEYS[tier]["functions"])):
        for key in keys:
            status = rows.get((kind, key))
            if status is None:
                problems.append(f"{kind} {key}: not in docs/torch-fx.md")
            elif key in have:
                if not status.startswith("converted"):
                    problems.append(f"{kind} {key}: converted, but the doc says {status!r}")
            elif status.startswith("converted") and _exists_here(key):
                problems.append(f"{kind} {key}: not converted, but the doc says {status!r}")
            elif status.startswith("not converted") and len(status) < len("not converted: ") + 10:
                problems.append(f"{kind} {key}: no reason given")
    assert not problems, "\n".join(problems)


def test_doc_lists_only_tvm_keys():
    keys = {("module", k) for t in ("v020", "newest") for k in KEYS[t]["modules"]} | \
        {("function", k) for t in ("v020", "newest") for k in KEYS[t]["functions"]}
    extra = sorted(set(_doc_rows()) - keys)
    assert not extra, extra
