"""Coverage of the relax backend and its behaviour on input it cannot handle."""
import glob
import json
import os
import shutil

import yaml

from conftest import REFERENCE, ROOT, codegen

RELAX = os.path.join(ROOT, "templates", "relax")
TORCH = os.path.join(ROOT, "templates", "torch")


def _snippets(backend_dir):
    ops = os.path.join(backend_dir, "ops")
    return {os.path.relpath(p, ops)[:-len(".py.j2")].replace(os.sep, ".")
            for p in glob.glob(os.path.join(ops, "**", "*.py.j2"), recursive=True)}


def _opdef_optypes():
    optypes = set()
    for f in glob.glob(os.path.join(ROOT, "opdefs", "*.yaml")):
        with open(f, encoding="utf-8") as fh:
            optypes |= set((yaml.safe_load(fh) or {}).keys())
    return optypes


def test_every_torch_optype_has_a_relax_snippet():
    missing = _snippets(TORCH) - _snippets(RELAX)
    assert not missing, "torch supports %s, relax does not" % sorted(missing)


def test_every_opdef_optype_is_covered():
    with open(os.path.join(RELAX, "backend.yaml"), encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    missing = _opdef_optypes() - _snippets(RELAX) - set(spec["no_snippet"])
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
    for line in out[1:]:
        if line.startswith("-"):
            break
        assert line.split()[col] == "yes", line
    total = out[-1].split()
    assert total[0] == "total" and total[1 + col] == total[1], out[-1]


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
        "nn.silu:\n  summary: x * sigmoid(x) (test-only opdef with no relax snippet)\n  inputs: [data]\n", encoding="utf-8")
    graph = _conv_relu_as(tmp_path, "nn.silu")
    out = tmp_path / "out"
    proc = codegen("--opdefs", opdefs, "generate", "--graph", graph, "--backend", "relax", "--out", out,
                   "--weights", os.path.join(REFERENCE, "msc-real", "conv_relu", "weights.safetensors"), check=False)
    assert proc.returncode == 1, proc.stderr
    expected = os.path.join(ROOT, "templates", "relax", "ops", "nn", "silu.py.j2")
    assert "'nn.silu'" in proc.stderr and '"relu"' in proc.stderr and "relax" in proc.stderr, proc.stderr
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
    with open(os.path.join(ROOT, "tests", "relax", "graphs", "dynamic.json"), encoding="utf-8") as f:
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
