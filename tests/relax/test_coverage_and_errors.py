"""Coverage of the relax backend and its behaviour on input it cannot handle."""
import glob
import json
import os
import shutil

import pytest
import torch
import yaml

from conftest import REFERENCE, ROOT, codegen

RELAX = os.path.join(ROOT, "templates", "relax")
TORCH = os.path.join(ROOT, "templates", "torch")


def _snippets(backend_dir):
    ops = os.path.join(backend_dir, "ops")
    return {os.path.relpath(p, ops)[:-len(".py.j2")].replace(os.sep, ".")
            for p in glob.glob(os.path.join(ops, "**", "*.py.j2"), recursive=True)}


def _opdef_optypes(inference_only=False):
    """Optypes defined in opdefs/*.yaml; inference_only drops those marked not_for_inference
    (generation rejects them before any snippet is looked up, so they have none)."""
    optypes = set()
    for f in glob.glob(os.path.join(ROOT, "opdefs", "*.yaml")):
        with open(f, encoding="utf-8") as fh:
            defs = yaml.safe_load(fh) or {}
        optypes |= {k for k, v in defs.items() if not (inference_only and "not_for_inference" in v)}
    return optypes


def test_every_torch_optype_has_a_relax_snippet():
    missing = _snippets(TORCH) - _snippets(RELAX)
    assert not missing, "torch supports %s, relax does not" % sorted(missing)


def test_every_opdef_optype_is_covered():
    with open(os.path.join(RELAX, "backend.yaml"), encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    missing = _opdef_optypes(inference_only=True) - _snippets(RELAX) - set(spec["no_snippet"])
    assert not missing, sorted(missing)
    stray = _snippets(RELAX) - _opdef_optypes()
    assert not stray, "relax snippets for optypes no opdef defines: %s" % sorted(stray)


def test_ops_matrix_lists_relax_with_full_coverage(tmp_path):
    # only the relax folder: other backends' state must not decide this test
    shutil.copytree(RELAX, tmp_path / "relax")
    out = codegen("--templates", tmp_path, "ops").stdout.splitlines()
    header = out[0].split()
    assert "relax" in header
    col = header.index("relax")
    na = []
    for line in out[1:]:
        if line.startswith("-"):
            break
        assert line.split()[col] in ("yes", "n/a"), line
        if line.split()[col] == "n/a":
            na.append(line.split()[0])
    # optypes without an inference meaning are n/a (with their reason below the total), the rest yes
    assert sorted(na) == ["nn.nll_loss", "plugin"], na
    total = next(line for line in out if line.startswith("total")).split()
    assert int(total[1 + col]) == int(total[1]) - len(na), total


def _conv_relu_as(tmp_path, optype):
    with open(os.path.join(REFERENCE, "msc-real", "conv_relu", "graph.json"), encoding="utf-8") as f:
        graph = json.load(f)
    graph["nodes"][2]["optype"] = optype
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(graph), encoding="utf-8")
    return str(path)


def test_optype_without_relax_snippet_is_an_error_naming_it(tmp_path):
    """An optype the opdefs know but relax has no snippet for: the error names the optype, the node
    and the expected template file; nothing is written."""
    opdefs = tmp_path / "opdefs"
    shutil.copytree(os.path.join(ROOT, "opdefs"), opdefs)
    (opdefs / "zz_test_extra.yaml").write_text(
        "nn.zz_test_only:\n  summary: test-only opdef with no relax snippet\n  inputs: [data]\n", encoding="utf-8")
    graph = _conv_relu_as(tmp_path, "nn.zz_test_only")
    out = tmp_path / "out"
    proc = codegen("--opdefs", opdefs, "generate", "--graph", graph, "--backend", "relax", "--out", out,
                   "--weights", os.path.join(REFERENCE, "msc-real", "conv_relu", "weights.safetensors"), check=False)
    assert proc.returncode == 1, proc.stderr
    expected = os.path.join(ROOT, "templates", "relax", "ops", "nn", "zz_test_only.py.j2")
    assert "'nn.zz_test_only'" in proc.stderr and '"relu"' in proc.stderr and "relax" in proc.stderr, proc.stderr
    assert os.path.normpath(expected) in proc.stderr or expected in proc.stderr, proc.stderr
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("out")], list(tmp_path.iterdir())


def test_missing_snippet_in_a_copy_of_the_backend(tmp_path):
    """Same through --templates: a relax folder lacking ops/nn/relu.py.j2."""
    templates = tmp_path / "templates"
    shutil.copytree(RELAX, templates / "relax")
    os.remove(templates / "relax" / "ops" / "nn" / "relu.py.j2")
    out = tmp_path / "out"
    proc = codegen("--templates", templates, "generate", "--graph", os.path.join(REFERENCE, "msc-real", "conv_relu", "graph.json"),
                   "--backend", "relax", "--out", out,
                   "--weights", os.path.join(REFERENCE, "msc-real", "conv_relu", "weights.safetensors"), check=False)
    assert proc.returncode == 1
    assert "'nn.relu'" in proc.stderr and str(templates / "relax" / "ops" / "nn" / "relu.py.j2") in proc.stderr, proc.stderr
    assert not out.exists()


def test_unsupported_prim_is_an_error_naming_it(tmp_path):
    """A dynamic dim computed by a prim the backend cannot express fails generation, by name."""
    with open(os.path.join(ROOT, "tests", "ops", "cases", "dynamic.json"), encoding="utf-8") as f:
        graph = json.load(f)
    graph["prims"].append({"index": 3, "name": "LT_1", "optype": "LT", "parents": ["bz", "Int_3"], "attrs": {}})
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(graph), encoding="utf-8")
    weights = tmp_path / "w.safetensors"
    import numpy as np
    from conftest import write_safetensors
    write_safetensors(weights, {"const": np.zeros([3, 3, 1, 1], np.float32)})
    out = tmp_path / "out"
    proc = codegen("generate", "--graph", path, "--backend", "relax", "--out", out, "--weights", weights, check=False)
    assert proc.returncode == 1
    assert '"LT_1"' in proc.stderr and "LT" in proc.stderr, proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("optype,text", [
    ("nn.nll_loss", "nn.nll_loss is a training loss"),
    ("plugin", "a plugin op has no meaning without the plugin's own implementation"),
])
def test_ops_without_inference_meaning_fail_naming_the_node(tmp_path, optype, text):
    """nn.nll_loss and plugin (opdef not_for_inference) fail generation with a message naming the
    node and why; nothing is written."""
    graph = _conv_relu_as(tmp_path, optype)
    out = tmp_path / "out"
    proc = codegen("generate", "--graph", graph, "--backend", "relax", "--out", out,
                   "--weights", os.path.join(REFERENCE, "msc-real", "conv_relu", "weights.safetensors"), check=False)
    assert proc.returncode == 1, proc.stderr
    assert text in proc.stderr and 'node "relu"' in proc.stderr, proc.stderr
    assert not out.exists()


def _bad_attention(b):
    q = b.input("q", [1, 2, 3, 4])
    return b.node("attention", "msc.attention", [q, q, q], lambda x, y, z: x,
                  attrs={"axes": "0,2,1,3", "axes_1": "0,2,1,3", "axes_2": "0,2,1,3", "axes_3": "0,2,1,3", "scale": "",
                         "causal_mask": "", "window_size": "2"})


def _bad_slice(b):
    b.prim("bz", "shape", producer="x", out_idx=0, dim=0)
    x = b.input("x", [4, 3], dyn={0: "bz"})
    return b.node("strided_slice", "strided_slice", [x], lambda v: v[-2:], dyn={0: "bz"},
                  attrs={"axes": "0,", "begin": "-2,", "end": "9223372036854775807,", "strides": ""})


def _bad_pad_dynamic(b):
    b.prim("bz", "shape", producer="x", out_idx=0, dim=0)
    x = b.input("x", [4, 3], dyn={0: "bz"})
    return b.node("pad", "nn.pad", [x], lambda v: torch.cat([v[1:2], v]), dyn={0: "bz"},
                  attrs={"pad_width": "1,0,0,0", "pad_mode": "reflect", "pad_value": "0.000000"})


def _bad_pad_wide(b):
    x = b.input("x", [2, 3])
    return b.node("pad", "nn.pad", [x], lambda v: torch.zeros(2, 7),
                  attrs={"pad_width": "0,0,3,1", "pad_mode": "reflect", "pad_value": "0.000000"})


def _no_weight(b):
    x = b.input("x", [1, 2, 5], "NCW")
    return b.node("conv1d", "nn.conv1d", [x], lambda v: v[:, :, :3], layout="NCW",
                  attrs={"strides": "1,", "padding": "0,0", "dilation": "1,", "groups": "1", "data_layout": "NCW",
                         "kernel_layout": "OIW", "out_layout": "NCW", "out_dtype": ""})


@pytest.mark.parametrize("build,text", [
    (_bad_attention, "window_size 2 (sliding window) cannot be built"),
    (_bad_slice, "negative begin -2 on dynamic dim 0"),
    (_bad_pad_dynamic, "nn.pad reflect along dim 0, which is dynamic"),
    (_bad_pad_wide, "reflect padding must be smaller than the dim"),
    (_no_weight, "nn.conv1d has no weight"),
])
def test_what_relax_cannot_express_is_a_generation_error(tmp_path, build, text):
    """Snippet raise_error()s: the message names the node and the reason; nothing is written."""
    from cases_base import Builder
    from cases import graph_text
    b = Builder()
    case = b.finish([build(b)])
    graph = tmp_path / "graph.json"
    graph.write_text(graph_text(case.graph), encoding="utf-8")
    out = tmp_path / "out"
    proc = codegen("generate", "--graph", graph, "--backend", "relax", "--out", out, check=False)
    assert proc.returncode == 1, proc.stderr
    assert text in proc.stderr and "node \"%s\"" % case.graph["nodes"][-1]["name"] in proc.stderr, proc.stderr
    assert not out.exists()
