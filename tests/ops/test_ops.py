"""Per-op numerical tests across backends, PyTorch as the reference.

The cases (one small graph per optype, plus dynamic/multi-output/hostile graphs) come from
tests/relax/graphs/cases.py: each is built eagerly with torch on seeded data, so its golden
outputs are torch's. torch: one generated project per case, tolerance 1e-5. vulkan: all
static-shape cases merged into one graph (names prefixed per case), one project built and run
under VK_LAYER_KHRONOS_validation, tolerance 1e-3 for float32/float16 outputs, exact for integer
and bool outputs.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "relax", "graphs"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import cases  # noqa: E402
from msc_export.graph_merge import prefix_graph  # noqa: E402
from msc_export.safetensors_np import save_file  # noqa: E402

BINARY = os.environ.get("MSC_CODEGEN", os.path.join(ROOT, "build", "msc-codegen"))
PY = "/usr/bin/python3"


def write_case(folder, graph, weights, inputs, outputs):
    import json
    os.makedirs(os.path.join(folder, "golden"), exist_ok=True)
    with open(os.path.join(folder, "graph.json"), "w") as f:
        json.dump(graph, f, indent=1)
    save_file(weights, os.path.join(folder, "weights.safetensors"))
    save_file(inputs, os.path.join(folder, "golden", "inputs.safetensors"))
    save_file(outputs, os.path.join(folder, "golden", "outputs.safetensors"))


def generate(folder, backend, out):
    proc = subprocess.run([BINARY, "generate", "--graph", os.path.join(folder, "graph.json"),
                           "--weights", os.path.join(folder, "weights.safetensors"), "--golden",
                           os.path.join(folder, "golden"), "--backend", backend, "--out", out],
                          capture_output=True, text=True)
    return proc


@pytest.mark.parametrize("backend", ["torch", "numpy"])
@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_python_backend_per_op(name, backend, tmp_path):
    """torch, and numpy (templates/numpy, written from docs/ alone): one project per case, 1e-5."""
    case = cases.build_case(name)
    write_case(str(tmp_path), case.graph, case.weights, case.inputs, case.outputs)
    proc = generate(str(tmp_path), backend, str(tmp_path / backend))
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([PY, "test_model.py"], cwd=tmp_path / backend, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PASSED" in run.stdout


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
        tensors = [t for n in case.graph["nodes"] for t in n["outputs"] + list(n.get("weights", {}).values())]
        if case.graph["prims"] or any(-1 in t["shape"] for t in tensors):
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


def test_vulkan_backend_all_ops(tmp_path):
    graph, weights, inputs, outputs, names = merged_static_cases()
    assert {"nn_conv2d", "msc_conv2d_bias", "nn_batch_norm", "nn_softmax", "strided_slice", "tuple_get_item",
            "constant", "concat", "mean", "nn_avg_pool2d", "matmul"} <= set(names)
    write_case(str(tmp_path), graph, weights, inputs, outputs)
    proc = generate(str(tmp_path), "vulkan", str(tmp_path / "vulkan"))
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run(["bash", "run_test.sh"], cwd=tmp_path / "vulkan", capture_output=True, text=True, timeout=1200,
                         env=dict(os.environ, MSC_VK_VALIDATION="1"))
    print(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "golden check: PASS" in run.stdout
    assert run.stdout.count(" PASS") == len(graph["outputs"]) + 1


def test_vulkan_rejects_dynamic_shapes_clearly(tmp_path):
    case = cases.build_case("dynamic")
    write_case(str(tmp_path), case.graph, case.weights, case.inputs, case.outputs)
    proc = generate(str(tmp_path), "vulkan", str(tmp_path / "vulkan"))
    assert proc.returncode == 1
    assert 'has a dynamic shape (axis 0 = prim "bz")' in proc.stderr
    assert "this backend needs static shapes" in proc.stderr
    assert not (tmp_path / "vulkan").exists()
