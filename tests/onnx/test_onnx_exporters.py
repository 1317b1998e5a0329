"""Real models exported by today's torch.onnx (the project venv's torch 2.x), with both exporters,
imported and golden-tested on every backend; ONNX Runtime as a second reference.

Exports (python/msc_export/onnx_models.py, seeded weights): every model of ``MODELS`` with
``torch.onnx.export(dynamo=False)`` at its default (= newest) opset and ``dynamo=True`` at its
default and its newest opset (torch 2.15: 20, 20 and 23). Each export's golden outputs are
torch's own; ONNX Runtime must agree with them (max abs error <= ORT_ATOL) unless it cannot run
the model at all (its Attention kernel refuses masks that broadcast over the query length, which
the ONNX spec allows), which the export records. Then:

then every backend the suite finds (tests/common/backends.py), on every distinct imported graph --
an export whose graph (aliases aside) and weights equal an earlier one's (dynamo at opsets 20 and
23 often do) is the same project -- at atol / rtol 1e-4:

* a backend with one project per graph (torch, numpy, relax on the newest apache-tvm through
  MSC_TVM_PYTHON): ``generate --graph model.onnx`` (the ONNX path of generate) + its golden test;
* a backend that builds (vulkan, under the validation layer): the imports of one export
  configuration merged into one project.

Runs under the venv's Python (today's torch, onnx, onnxruntime, onnxscript).
"""
import hashlib
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
import backends  # noqa: E402
from merged import run_merged  # noqa: E402
from msc_export.onnx_models import MODELS, opset_range  # noqa: E402

BINARY = os.environ.get("MSC_CODEGEN", os.path.join(ROOT, "build", "msc-codegen"))
PY = sys.executable
ORT_ATOL = 1e-4
TOLERANCE = ["--atol", "1e-4", "--rtol", "1e-4"]
BACKENDS = backends.discover(BINARY)


def configs():
    legacy, dynamo = opset_range("legacy"), opset_range("dynamo")
    out = [("legacy", legacy[1])]
    for opset in sorted({dynamo[1], dynamo[2]}):
        out.append(("dynamo", opset))
    return out


CASES = [(m, e, o) for m in MODELS for e, o in configs()]


def cli(*args):
    return subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True, timeout=900)


def _digest(folder):
    """The imported graph and weights, less what only names them: the tensors' aliases (ONNX value
    names, which differ between exporter runs) and the graph's source path."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in ("alias", "source")}
        return [strip(v) for v in x] if isinstance(x, list) else x
    h = hashlib.sha256()
    with open(os.path.join(folder, "graph.json")) as f:
        h.update(json.dumps(strip(json.load(f)), sort_keys=True).encode())
    with open(os.path.join(folder, "weights.safetensors"), "rb") as f:
        h.update(f.read())
    return h.hexdigest()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("onnx_today")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    dirs, seen = {}, {}
    for model, exporter, opset in CASES:
        out = root / ("%s_%s_%d" % (model, exporter, opset))
        p = subprocess.run([PY, "-m", "msc_export.onnx_models", model, "--exporter", exporter, "--opset", str(opset),
                            "--out", str(out)], env=env, cwd="/", capture_output=True, text=True, timeout=900)
        assert p.returncode == 0, p.stderr
        print(p.stdout)
        imp = root / ("%s_%s_%d_import" % (model, exporter, opset))
        r = cli("import", out / "model.onnx", "--out", imp, "--golden-from", out / "test_data_set_0")
        assert r.returncode == 0, r.stderr
        digest = _digest(imp)
        dirs[(model, exporter, opset)] = (out, imp, seen.get(digest), p.stdout)
        seen.setdefault(digest, (model, exporter, opset))
    return dirs


@pytest.mark.parametrize("model,exporter,opset", CASES)
def test_export_agrees_with_onnxruntime(exported, model, exporter, opset):
    line = [ln for ln in exported[(model, exporter, opset)][3].splitlines() if "ONNX Runtime" in ln]
    assert line, "onnxruntime is not installed in %s" % PY
    if "cannot run it" in line[0]:
        assert "Attention" in line[0], line[0]  # ONNX Runtime's own limit, see the docstring
        return
    assert float(line[0].split("=")[-1]) <= ORT_ATOL, line[0]


@pytest.mark.parametrize("backend", [b for b in BACKENDS if not b.merge], ids=lambda b: b.name)
@pytest.mark.parametrize("model,exporter,opset", CASES)
def test_backend(exported, model, exporter, opset, backend, tmp_path):
    out, _, same_as, _ = exported[(model, exporter, opset)]
    if same_as is not None:
        pytest.skip("the same graph and weights as %s_%s_%d" % same_as)
    if backend.python == "tvm":
        assert backends.tvm_under_test(PY), "MSC_TVM_PYTHON (the venv with apache-tvm) is not set"
    assert backends.generate_and_run(BINARY, backend, ["--graph", out / "model.onnx", "--golden",
                                                       out / "test_data_set_0"], tmp_path / backend.name, PY,
                                     timeout=1800, args=TOLERANCE) == ""


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b.merge], ids=lambda b: b.name)
@pytest.mark.parametrize("exporter,opset", configs())
def test_merged_backend(exported, exporter, opset, backend, tmp_path):
    # one merged build per export configuration: one translation unit of every model would take
    # gcc ~10 minutes
    imports = [exported[key][1] for key in CASES if key[1:] == (exporter, opset) and exported[key][2] is None]
    if not imports:
        pytest.skip("every graph equals one of an earlier configuration")
    run_merged(BINARY, backend, imports, tmp_path, "onnx_today")
