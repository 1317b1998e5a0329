#!/usr/bin/env python3
"""Every model of the exporter through each frontend, generated for each backend, golden-tested.

    <venv python> scripts/check_models.py [--models m1,m2] [--paths fx,export,pt2]
        [--backends torch,relax,vulkan] [--out out/check_models] [--codegen build/msc-codegen]
        [--image-size 224] [--vulkan-batch 4] [--markdown FILE]

Run with the project's venv (scripts/install_venv.sh: torch 2.x, the newest apache-tvm). For each
(model, path) it exports graph.json + weights + golden data (`fx`: torch.fx, `export`:
torch.export, `pt2`: torch.export.save then `import_pt2`), then generates a project per backend
and runs its own golden test: torch and relax with this interpreter (`python test_model.py`;
relax at atol = rtol = 1e-4, see TOLERANCE),
vulkan as merged graphs of --vulkan-batch exported models each (msc_export.graph_merge: one CMake
build, `run_test.sh`, per batch: a merge of every model makes one model.cc too large to compile in
reasonable time). Prints a Markdown table -- model, path, nodes, max abs error per backend
("fail: ..." when the export or a test failed; "n/a" where torch.fx cannot trace the model) --
and exits 1 when anything failed.

Models: the examples (examples/<name>/export.py, their own data and training; paths fx and export),
torchvision's (examples/models/export.py's, calibrated; seeded random weights) and Hugging Face
`transformers` architectures built from small configs with random weights (no hub download): a
BERT encoder, GPT-2, a LLaMA decoder (RoPE, RMSNorm, grouped-query attention) and a ViT; and
tests/export/aten_models.py's op-family models (export paths only).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import warnings

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "examples", "models"))
sys.path.insert(0, os.path.join(REPO, "tests", "export"))

from msc_export import export_torch, import_pt2, write_export  # noqa: E402
from msc_export.graph_merge import merge_graphs  # noqa: E402
from msc_export.safetensors_np import load_file, save_file  # noqa: E402

EXAMPLES = ["conv_relu", "fashion_mnist_mlp", "resnet18", "mobilenet_v2", "text_transformer", "gpt2_block"]
TORCHVISION = ["vit_b_16", "swin_t", "convnext_tiny", "efficientnet_b0", "shufflenet_v2_x1_0", "squeezenet1_0",
               "mobilenet_v3_large"]
HF = ["hf_bert", "hf_gpt2", "hf_llama", "hf_vit"]
# tests/export/aten_models.py: every ATen op family the export importer maps (export paths only)
ATEN = ["aten_families", "aten_more", "aten_composed"]
PATHS = ["fx", "export", "pt2"]
BACKENDS = ["torch", "relax", "vulkan"]


class _LastHidden(torch.nn.Module):
    """A transformers model returning its last hidden state as a plain tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)[0]


def hf_model(name):
    """(module, input shapes, input dtypes, inputs) of a small transformers model, seeded."""
    import transformers as T
    torch.manual_seed(0)
    ids = [np.array([[5, 17, 42, 8, 99, 3, 64, 11]], dtype=np.int64)]
    if name == "hf_bert":
        cfg = T.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=64, max_position_embeddings=32)
        return _LastHidden(T.BertModel(cfg, add_pooling_layer=False)), [[1, 8]], ["int64"], ids
    if name == "hf_gpt2":
        cfg = T.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=32, bos_token_id=0,
                           eos_token_id=0)
        return _LastHidden(T.GPT2Model(cfg)), [[1, 8]], ["int64"], ids
    if name == "hf_llama":
        cfg = T.LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32)
        return _LastHidden(T.LlamaModel(cfg)), [[1, 8]], ["int64"], ids
    if name == "hf_vit":
        cfg = T.ViTConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                          intermediate_size=64)
        x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
        return _LastHidden(T.ViTModel(cfg, add_pooling_layer=False)), [[1, 3, 32, 32]], ["float32"], [x]
    raise KeyError(name)


def export_one(model_name, path, out, image_size):
    """Exports (model, path) into `out`; returns the number of graph nodes. Raises on failure."""
    via = "fx" if path == "fx" else "export"
    if model_name in EXAMPLES:
        if path == "pt2":
            raise ValueError("the examples export through their own scripts (fx, export)")
        proc = subprocess.run([sys.executable, os.path.join(REPO, "examples", model_name, "export.py"), "--out", out,
                               "--via", via], capture_output=True, text=True, timeout=1800,
                              env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")))
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "export failed")
        with open(os.path.join(out, "graph.json"), encoding="utf-8") as f:
            return len(json.load(f)["nodes"])
    if model_name in TORCHVISION:
        import export as models_export  # examples/models/export.py
        model = models_export.build(model_name, 0, image_size)
        shapes, dtypes, inputs = [[1, 3, image_size, image_size]], None, None
    elif model_name in ATEN:
        import aten_models  # tests/export/aten_models.py
        model, shapes, dtypes, inputs = aten_models.MODELS[model_name]()
    else:
        model, shapes, dtypes, inputs = hf_model(model_name)
    model.eval()
    if path == "pt2":
        examples = [torch.from_numpy(x) for x in inputs] if inputs else [torch.randn(s) for s in shapes]
        pt2 = out + ".pt2"
        os.makedirs(os.path.dirname(pt2), exist_ok=True)
        torch.export.save(torch.export.export(model, tuple(examples)), pt2)
        result = import_pt2(pt2, inputs=inputs)
    else:
        result = export_torch(model, shapes, input_dtypes=dtypes, inputs=inputs, via=via)
    write_export(result, out)
    return len(result.graph.nodes)


# Golden-test tolerances other than the project's default (1e-5): TVM's LLVM kernels sum in
# another order than PyTorch (deep convolution stacks differ by ~1e-5 absolute), so relax gets
# 1e-4, as tests/onnx runs it.
TOLERANCE = {"relax": ["--atol", "1e-4", "--rtol", "1e-4"]}
ERR_RE = re.compile(r"max abs err ([0-9.e+-]+|nan|inf)")
VK_RE = re.compile(r"output '([^']*)' \(\d+ values\): max_abs=([0-9.e+-]+|nan|inf)")


def run_python_backend(codegen, export_dir, backend, out):
    """Generates `backend` for the export in `export_dir` and runs its golden test; returns the
    max abs error over the outputs. Raises RuntimeError with the failure."""
    gen = subprocess.run([codegen, "generate", "--graph", os.path.join(export_dir, "graph.json"), "--weights",
                          os.path.join(export_dir, "weights.safetensors"), "--golden",
                          os.path.join(export_dir, "golden"), "--backend", backend, "--out", out, "--force"],
                         capture_output=True, text=True, timeout=600)
    if gen.returncode != 0:
        raise RuntimeError("generate: " + gen.stderr.strip().splitlines()[-1])
    run = subprocess.run([sys.executable, "test_model.py", *TOLERANCE.get(backend, [])], cwd=out, capture_output=True,
                         text=True, timeout=3600)
    errors = [float(e) for e in ERR_RE.findall(run.stdout)]
    if run.returncode != 0 or not errors:
        tail = (run.stdout + run.stderr).strip().splitlines()
        raise RuntimeError("test: " + (tail[-1] if tail else "no output"))
    return max(errors)


def run_vulkan_merged(codegen, exports, out):
    """One Vulkan project of every export (graph_merge), built and run once; returns
    {key: max abs error or failure text}."""
    parts, weights, inputs, outputs, prefixes = [], {}, {}, {}, {}
    for i, (key, export_dir) in enumerate(sorted(exports.items())):
        prefix = "m%d_" % i
        prefixes[prefix] = key
        with open(os.path.join(export_dir, "graph.json"), encoding="utf-8") as f:
            parts.append((prefix, json.load(f)))
        weights.update({prefix + k: v for k, v in load_file(os.path.join(export_dir, "weights.safetensors")).items()})
        for name, store in (("inputs", inputs), ("outputs", outputs)):
            data = load_file(os.path.join(export_dir, "golden", name + ".safetensors"))
            store.update({prefix + k: v for k, v in data.items()})
    merged_dir = os.path.join(out, "merged")
    os.makedirs(os.path.join(merged_dir, "golden"), exist_ok=True)
    with open(os.path.join(merged_dir, "graph.json"), "w", encoding="utf-8") as f:
        json.dump(merge_graphs(parts), f)
    save_file(weights, os.path.join(merged_dir, "weights.safetensors"))
    save_file(inputs, os.path.join(merged_dir, "golden", "inputs.safetensors"))
    save_file(outputs, os.path.join(merged_dir, "golden", "outputs.safetensors"))
    project = os.path.join(out, "vulkan")
    gen = subprocess.run([codegen, "generate", "--graph", os.path.join(merged_dir, "graph.json"), "--weights",
                          os.path.join(merged_dir, "weights.safetensors"), "--golden",
                          os.path.join(merged_dir, "golden"), "--backend", "vulkan", "--out", project, "--force"],
                         capture_output=True, text=True, timeout=1200)
    if gen.returncode != 0:
        return {key: "fail: generate: " + gen.stderr.strip().splitlines()[-1] for key in exports}
    run = subprocess.run(["bash", "run_test.sh"], cwd=project, capture_output=True, text=True, timeout=7200)
    found = {}
    for name, err in VK_RE.findall(run.stdout):
        for prefix, key in prefixes.items():
            if name.startswith(prefix):
                found[key] = max(found.get(key, 0.0), float(err))
    results = {}
    for key in exports:
        if key in found and run.returncode == 0:
            results[key] = found[key]
        elif key in found:  # the run failed: which outputs broke is in its lines
            bad = [line for line in run.stdout.splitlines() if "FAIL" in line and any(
                line.find("'" + p) >= 0 for p, k in prefixes.items() if k == key)]
            results[key] = found[key] if not bad else "fail: " + bad[0].strip()
        else:
            tail = (run.stdout + run.stderr).strip().splitlines()
            results[key] = "fail: " + (tail[-1] if tail else "no output")
    return results


def main():
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(EXAMPLES + TORCHVISION + HF + ATEN))
    ap.add_argument("--paths", default=",".join(PATHS))
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--out", default=os.path.join(REPO, "out", "check_models"))
    ap.add_argument("--codegen", default=os.path.join(REPO, "build", "msc-codegen"))
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--vulkan-batch", type=int, default=4, help="exports merged into one Vulkan build")
    ap.add_argument("--markdown", default="", help="also write the table to this file")
    args = ap.parse_args()
    models, paths, backends = (v.split(",") for v in (args.models, args.paths, args.backends))
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    rows, exports = {}, {}
    for model in models:
        for path in paths:
            if (model in EXAMPLES and path == "pt2") or (model in ATEN and path == "fx"):
                continue
            key = (model, path)
            out = os.path.join(args.out, model, path)
            t0 = time.time()
            try:
                nodes = export_one(model, path, os.path.join(out, "export"), args.image_size)
            except Exception as err:  # noqa: BLE001  (reported in the table)
                text = str(err).strip().splitlines()[0][:160]
                # a model torch.fx cannot trace (data-dependent control flow) is not ours to convert
                untraceable = path == "fx" and "symbolic_trace failed" in text
                rows[key] = {"nodes": "-", "export": ("n/a (torch.fx cannot trace it)" if untraceable else
                                                      "fail: " + text)}
                print("%s %s: export failed: %s" % (model, path, text), flush=True)
                continue
            rows[key] = {"nodes": nodes}
            exports[key] = os.path.join(out, "export")
            for backend in backends:
                if backend == "vulkan":
                    continue
                try:
                    rows[key][backend] = run_python_backend(args.codegen, exports[key], backend,
                                                            os.path.join(out, backend))
                except Exception as err:  # noqa: BLE001
                    rows[key][backend] = "fail: %s" % str(err)[:160]
            print("%s %s: %d nodes %s (%.0f s)" % (model, path, nodes, {b: rows[key].get(b) for b in backends
                                                                         if b != "vulkan"}, time.time() - t0),
                  flush=True)
    if "vulkan" in backends and exports:
        keys = sorted(exports)
        for start in range(0, len(keys), args.vulkan_batch):
            batch = {k: exports[k] for k in keys[start:start + args.vulkan_batch]}
            t0 = time.time()
            for key, value in run_vulkan_merged(args.codegen, batch, os.path.join(
                    args.out, "vulkan_batch%d" % (start // args.vulkan_batch))).items():
                rows[key]["vulkan"] = value
            print("vulkan %s: %s (%.0f s)" % (", ".join("%s/%s" % k for k in batch),
                                              {k: rows[k]["vulkan"] for k in batch}, time.time() - t0), flush=True)
    lines = ["| model | path | nodes | " + " | ".join(backends) + " |", "|---|---|---|" + "---|" * len(backends)]
    failed = False
    for (model, path), row in rows.items():
        cells = []
        for i, b in enumerate(backends):
            v = row.get(b, row.get("export", "-") if i == 0 else "-")
            failed |= isinstance(v, str) and v.startswith("fail")
            cells.append("%.2e" % v if isinstance(v, float) else str(v))
        lines.append("| %s | %s | %s | %s |" % (model, path, row["nodes"], " | ".join(cells)))
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(table + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
