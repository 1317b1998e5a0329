"""Imported ONNX models merged into one Vulkan build (one project, one compile), run under the
validation layer: the way the ONNX tests check many models on vulkan at the cost of one build."""
import json
import os
import subprocess

from msc_export.graph_merge import merge_graphs
from msc_export.safetensors_np import load_file, save_file


def run_merged_vulkan(binary, imports, work, name, timeout=2400):
    """Merges the `msc-codegen import` folders `imports` (each graph.json, weights.safetensors,
    golden/{inputs,outputs}.safetensors; names prefixed m<i>_) into `work` (a pathlib.Path),
    generates the vulkan project and runs its run_test.sh with MSC_VK_VALIDATION=1. Asserts that
    every model's outputs pass; returns the run's stdout."""
    parts, weights, inputs, outputs = [], {}, {}, {}
    for i, imp in enumerate(imports):
        prefix = "m%d_" % i
        parts.append((prefix, json.loads((imp / "graph.json").read_text())))
        for src, dst in ((imp / "weights.safetensors", weights), (imp / "golden" / "inputs.safetensors", inputs),
                         (imp / "golden" / "outputs.safetensors", outputs)):
            dst.update({prefix + k: v for k, v in load_file(str(src)).items()})
    (work / "golden").mkdir()
    (work / "graph.json").write_text(json.dumps(merge_graphs(parts, name)))
    save_file(weights, str(work / "weights.safetensors"))
    save_file(inputs, str(work / "golden" / "inputs.safetensors"))
    save_file(outputs, str(work / "golden" / "outputs.safetensors"))
    p = subprocess.run([str(binary), "generate", "--graph", str(work / "graph.json"), "--weights",
                        str(work / "weights.safetensors"), "--golden", str(work / "golden"), "--backend", "vulkan",
                        "--out", str(work / "vulkan")], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    run = subprocess.run(["bash", "run_test.sh"], cwd=work / "vulkan", capture_output=True, text=True,
                         timeout=timeout, env=dict(os.environ, MSC_VK_VALIDATION="1"))
    print(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "golden check: PASS" in run.stdout
    assert run.stdout.count(" PASS") == len(imports) + 1
    return run.stdout
