"""Many graphs as one generated project: the way tests run a backend whose projects cost a build
each (backend.yaml `test.merge`, e.g. vulkan) over many models at the cost of one build."""
import json
import subprocess

from backends import run_project
from msc_export.graph_merge import merge_graphs
from msc_export.safetensors_np import load_file, save_file


def merge_folders(folders, work, name):
    """Merges model folders (each graph.json, weights.safetensors, golden/{inputs,outputs}
    .safetensors, as `msc-codegen import` and the examples' exports write them; names prefixed
    m<i>_) into the folder `work` (a pathlib.Path) as one graph `name`."""
    parts, weights, inputs, outputs = [], {}, {}, {}
    for i, folder in enumerate(folders):
        prefix = "m%d_" % i
        parts.append((prefix, json.loads((folder / "graph.json").read_text())))
        for src, dst in ((folder / "weights.safetensors", weights), (folder / "golden" / "inputs.safetensors", inputs),
                         (folder / "golden" / "outputs.safetensors", outputs)):
            dst.update({prefix + k: v for k, v in load_file(str(src)).items()})
    (work / "golden").mkdir(parents=True, exist_ok=True)
    (work / "graph.json").write_text(json.dumps(merge_graphs(parts, name)))
    save_file(weights, str(work / "weights.safetensors"))
    save_file(inputs, str(work / "golden" / "inputs.safetensors"))
    save_file(outputs, str(work / "golden" / "outputs.safetensors"))


def run_merged(binary, backend, folders, work, name, extra_args=(), timeout=2400):
    """merge_folders(folders, work, name), `msc-codegen generate` for `backend` (a
    backends.Backend) into work/<backend> and the project's golden test run there. Asserts that
    generation and the run succeed (a run fails when any model's output is wrong); returns the
    run's stdout."""
    merge_folders(folders, work, name)
    project = work / backend.name
    p = subprocess.run([str(binary), "generate", "--graph", str(work / "graph.json"), "--weights",
                        str(work / "weights.safetensors"), "--golden", str(work / "golden"), "--backend",
                        backend.name, "--out", str(project), "--force", *extra_args],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    run = run_project(backend, project, timeout=timeout)
    print(run.stdout)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-6000:]
    return run.stdout
