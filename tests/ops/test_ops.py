"""Per-op numerical tests on every backend the suite finds (tests/common/backends.py), PyTorch as
the reference.

The cases (one small graph per optype, plus dynamic/multi-output/hostile graphs) come from
tests/ops/cases/cases.py: each is built eagerly with torch on seeded data, so its golden
outputs are torch's. A backend that runs one project per graph (backend.yaml test.merge false:
torch, numpy, relax) gets one project per case, run in batches, at its harness's default tolerance
(the Python harnesses: 1e-5). A backend that builds (test.merge true: vulkan) gets every
static-shape case merged into one graph (names prefixed per case), one project built and run
(vulkan: under the validation layer, tolerance 1e-3 for float32/float16 outputs, exact for integer
and bool outputs).
"""
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "ops", "cases"))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
import backends  # noqa: E402
import cases  # noqa: E402
from msc_export.graph_merge import prefix_graph  # noqa: E402
from msc_export.safetensors_np import save_file  # noqa: E402

BINARY = os.environ.get("MSC_CODEGEN", os.path.join(ROOT, "build", "msc-codegen"))
PY = sys.executable  # MSC_PYTHON: Debian's stack + safetensors (scripts/install_venv.sh debian)
BACKENDS = backends.discover(BINARY)
ONE_PROJECT_EACH = [b for b in BACKENDS if not b.merge]
MERGED = [b for b in BACKENDS if b.merge]


def write_case(folder, graph, weights, inputs, outputs):
    import json
    os.makedirs(os.path.join(folder, "golden"), exist_ok=True)
    with open(os.path.join(folder, "graph.json"), "w") as f:
        json.dump(graph, f, indent=1)
    save_file(weights, os.path.join(folder, "weights.safetensors"))
    save_file(inputs, os.path.join(folder, "golden", "inputs.safetensors"))
    save_file(outputs, os.path.join(folder, "golden", "outputs.safetensors"))


def generate(folder, backend, out, passes=True):
    """msc-codegen generate of the case in `folder`; passes=False adds --no-passes (every node
    through its own snippet, e.g. arange / full, which fold_constant would compute)."""
    proc = subprocess.run([BINARY, "generate", "--graph", os.path.join(folder, "graph.json"),
                           "--weights", os.path.join(folder, "weights.safetensors"), "--golden",
                           os.path.join(folder, "golden"), "--backend", backend, "--out", out]
                          + ([] if passes else ["--no-passes"]), capture_output=True, text=True)
    return proc


# Cases whose nodes fold_constant computes at generation time (all of their nodes, or the source
# ops arange / full / ones / zeros): run once more without the passes so that the ops' snippets run.
FOLDED_CASES = ["arange", "fold_constant", "full", "ones_zeros"]


PER_OP = [(n, True) for n in sorted(cases.CASES)] + [(n, False) for n in FOLDED_CASES]


@pytest.fixture(scope="module")
def per_op_runs(tmp_path_factory):
    """{(backend, case, passes): (generate's CompletedProcess, project dir, (returncode, output) of
    its golden test or None)}: every case generated for every one-project-per-graph backend; each
    backend's projects run in one batch (backends.run_projects)."""
    assert set(FOLDED_CASES) <= set(cases.CASES)
    root = tmp_path_factory.mktemp("per_op")
    dynamic = {}
    for name in sorted(cases.CASES):
        case = cases.build_case(name)
        write_case(str(root / name), case.graph, case.weights, case.inputs, case.outputs)
        dynamic[name] = backends.is_dynamic(case.graph)
    runs = {}
    for b in ONE_PROJECT_EACH:
        made = {}
        for name, passes in PER_OP:
            out = root / name / (b.name if passes else b.name + "_no_passes")
            made[(name, passes)] = (generate(str(root / name), b.name, str(out), passes), out)
        ran = backends.run_projects(b, [out for proc, out in made.values() if proc.returncode == 0])
        for (name, passes), (proc, out) in made.items():
            runs[(b.name, name, passes)] = (proc, out, ran.get(os.path.abspath(str(out))), dynamic[name])
    return runs


@pytest.mark.parametrize("backend", [b.name for b in ONE_PROJECT_EACH])
@pytest.mark.parametrize("name,passes", PER_OP)
def test_backend_per_op(name, passes, backend, per_op_runs):
    """One project per case on each backend that builds nothing; the cases fold_constant computes
    also without the passes. A backend without dynamic shapes must refuse a dynamic case clearly."""
    proc, out, run, dynamic = per_op_runs[(backend, name, passes)]
    if dynamic and not next(b for b in BACKENDS if b.name == backend).dynamic_shapes:
        assert proc.returncode == 1 and "this backend needs static shapes" in proc.stderr, proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    code = "".join(p.read_text() for p in out.iterdir() if p.is_file() and p.suffix in (".py", ".cc"))
    assert ("(computed at generation time)" in code) == (passes and name in FOLDED_CASES)
    rc, output = run
    assert rc == 0, output


def _torch_golden_run(tmp_path, case, outputs):
    """Generates the torch project of `case` with golden outputs `outputs`; runs test_model.py."""
    write_case(str(tmp_path), case.graph, case.weights, case.inputs, outputs)
    proc = generate(str(tmp_path), "torch", str(tmp_path / "torch"))
    assert proc.returncode == 0, proc.stderr
    return subprocess.run([PY, "test_model.py"], cwd=tmp_path / "torch", capture_output=True, text=True, timeout=300)


def test_torch_golden_check_compares_ints_exactly(tmp_path):
    """argmax's int64 outputs: one index off by one fails, naming the count of differing elements."""
    case = cases.build_case("argmax")
    outputs = {k: v.copy() for k, v in case.outputs.items()}
    first = case.graph["outputs"][0]
    outputs[first].reshape(-1)[0] += 1
    run = _torch_golden_run(tmp_path, case, outputs)
    assert run.returncode == 1, run.stdout
    assert "argmax: 1 of 8 elements differ" in run.stdout and "FAILED" in run.stdout


def test_torch_golden_check_rejects_degenerate_outputs(tmp_path):
    """A float golden output with max |x| <= 1e-3 cannot catch a wrong result at atol 1e-5: it is
    reported as an invalid case, even though the model reproduces it."""
    case = cases.build_case("nn_relu")
    case = case._replace(inputs={k: v * 1e-4 for k, v in case.inputs.items()})
    outputs = {k: np.maximum(case.inputs["x:0"], 0) for k in case.outputs}
    run = _torch_golden_run(tmp_path, case, outputs)
    assert run.returncode == 1, run.stdout
    assert "relu: invalid golden case: max |expected| = " in run.stdout and "<= 0.001" in run.stdout


@pytest.mark.parametrize("optype", ["nn.nll_loss", "plugin"])
def test_torch_rejects_ops_without_inference_meaning(optype, tmp_path):
    """nn.nll_loss (a training loss) and plugin (an extern symbol) stop generation with an error
    naming the node; nothing is written."""
    import torch
    import torch.nn.functional as F
    from cases_base import Builder
    b = Builder()
    x = b.input("x", [4, 3])
    if optype == "nn.nll_loss":
        t = b.input("targets", [4], dtype=torch.int64, value=torch.tensor([0, 2, 1, 0]))
        out = b.node("loss", optype, [x, t], F.nll_loss, attrs={"reduction": "mean", "ignore_index": "-100"})
        expected = "node \"loss\" (nn.nll_loss): nn.nll_loss is a training loss"
    else:
        out = b.node("my_op", optype, [x], torch.relu)
        expected = "node \"my_op\" (plugin): a plugin op has no meaning without the plugin's own implementation"
    case = b.finish([out])
    write_case(str(tmp_path), case.graph, case.weights, case.inputs, case.outputs)
    proc = generate(str(tmp_path), "torch", str(tmp_path / "torch"))
    assert proc.returncode == 1, proc.stderr
    assert expected in proc.stderr, proc.stderr
    assert not (tmp_path / "torch").exists()


def merged_static_cases():
    """All static-shape cases (every dtype) merged into one graph; returns (graph, w, in, out, names)."""
    merged = {"name": "all_ops", "inputs": [], "outputs": [], "nodes": [], "prims": []}
    weights, inputs, outputs, names = {}, {}, {}, []
    for i, name in enumerate(sorted(cases.CASES)):
        case = cases.build_case(name)
        if backends.is_dynamic(case.graph):
            continue
        prefix = "c%d_" % i
        g = prefix_graph(case.graph, prefix)
        for node in g["nodes"]:
            node["index"] = len(merged["nodes"])
            merged["nodes"].append(node)
        merged["inputs"] += g["inputs"]
        merged["outputs"] += g["outputs"]
        weights.update({prefix + k: v for k, v in case.weights.items()})
        inputs.update({prefix + k: v for k, v in case.inputs.items()})
        outputs.update({prefix + k: v for k, v in case.outputs.items()})
        names.append(name)
    return merged, weights, inputs, outputs, names


@pytest.mark.parametrize("backend", [b.name for b in MERGED])
def test_merged_backend_all_ops(backend, tmp_path):
    """Every static case in one project of a backend that builds, without the graph passes
    (--no-passes), so that every op's snippet and kernel runs (with them, fold_constant would
    compute the arange / full / ones cases at generation time and fold_batch_norm the batch_norm).
    The project's golden test fails when any output is wrong."""
    b = next(x for x in MERGED if x.name == backend)
    graph, weights, inputs, outputs, names = merged_static_cases()
    assert {"nn_conv2d", "msc_conv2d_bias", "nn_batch_norm", "nn_softmax", "strided_slice", "tuple_get_item",
            "constant", "concat", "mean", "nn_avg_pool2d", "matmul", *FOLDED_CASES} <= set(names)
    write_case(str(tmp_path), graph, weights, inputs, outputs)
    proc = generate(str(tmp_path), backend, str(tmp_path / backend), passes=False)
    assert proc.returncode == 0, proc.stderr
    run = backends.run_project(b, tmp_path / backend, timeout=1200)
    print(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("backend", [b.name for b in BACKENDS if not b.dynamic_shapes])
def test_static_backend_rejects_dynamic_shapes_clearly(backend, tmp_path):
    case = cases.build_case("dynamic")
    write_case(str(tmp_path), case.graph, case.weights, case.inputs, case.outputs)
    proc = generate(str(tmp_path), backend, str(tmp_path / backend))
    assert proc.returncode == 1
    assert 'has a dynamic shape (axis 0 = prim "bz")' in proc.stderr
    assert "this backend needs static shapes" in proc.stderr
    assert not (tmp_path / backend).exists()


@pytest.mark.parametrize("backend", [b.name for b in BACKENDS])
def test_fold_constant_pass_folds_constant_subgraphs(backend, tmp_path):
    """Every backend runs the fold_constant pass (backend.yaml `passes`): in the fold_constant case
    the transposed weight (constant -> permute_dims), the int32 scale cast to float32 and the
    arange / expand_dims / less_equal mask and the where on it become constants whose values are
    in the project's weights; the 16 nodes become 10. (The case's golden outputs are checked by
    the per-op tests above and the merged project.)"""
    from msc_export.safetensors_np import load_file
    case = cases.build_case("fold_constant")
    write_case(str(tmp_path), case.graph, case.weights, case.inputs, case.outputs)
    out = tmp_path / backend
    proc = generate(str(tmp_path), backend, str(out))
    assert proc.returncode == 0, proc.stderr
    assert "(10 nodes, 5 weights)" in proc.stderr, proc.stderr
    w = load_file(str(out / "weights.safetensors"))
    assert sorted(k for k in w if k.endswith(".folded")) == ["bias.folded", "keep.folded", "scale.folded", "w_t.folded"]
    weight_of_w = next(n["weights"]["const"]["name"] for n in case.graph["nodes"] if n["name"] == "w")
    assert np.array_equal(w["w_t.folded"], case.weights[weight_of_w].T)
    assert np.array_equal(w["keep.folded"], np.tril(np.ones((4, 5), dtype=bool)))
    assert np.array_equal(w["bias.folded"], case.outputs["bias:0"])
    assert w["scale.folded"].dtype == np.float32 and w["scale.folded"].tolist() == [1, 2, 3, 4, 5]
    # the project says what was folded (each backend's model file, in its comment syntax)
    code = "".join(p.read_text() for p in out.iterdir() if p.is_file() and p.suffix in (".py", ".cc"))
    assert 'folded: "w" into "w_t"' in code and 'folded: "cols" into "keep"' in code
    assert 'folded: "keep" (computed at generation time)' in code
