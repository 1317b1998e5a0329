#!/usr/bin/env python3
"""Every model of the exporter through each frontend, generated for each backend, golden-tested.

    <venv python> scripts/check_models.py [--models m1,m2] [--paths fx,export,pt2]
        [--backends B1,B2] [--out out/check_models] [--codegen build/msc-codegen]
        [--image-size 224] [--merge-batch 4] [--markdown FILE]

Run with the project's venv (scripts/install_venv.sh: torch 2.x, the newest apache-tvm). For each
(model, path) it exports graph.json + weights + golden data (`fx`: torch.fx, `export`:
torch.export, `pt2`: torch.export.save then `import_pt2`), then generates a project for every
backend the test suite finds (tests/common/backends.py; --backends picks some) and runs it as its
backend.yaml `test` says with `--save-outputs`, on this interpreter (a `python: tvm` backend on
this venv's apache-tvm unless MSC_TVM_PYTHON / MSC_TVM_HOME say otherwise); the outputs are
compared here with the golden ones: |got - golden| <= atol + rtol * |golden|, rtol 1e-4 and atol
max(1e-4, the backend's test.atol) (TVM's LLVM kernels and GPU transcendentals sum and round in
another order than PyTorch: deep convolution stacks differ by ~1e-5). A backend whose projects are
merged (test.merge: a build costs minutes) gets one project per --merge-batch exported models
(msc_export.graph_merge; a merge of every model makes one source too large to compile in reasonable
time). Prints a Markdown table -- model, path, nodes, max abs error per backend ("fail: ..." when
the export or a check failed; "n/a" where torch.fx cannot trace the model) -- and exits 1 when
anything failed.

Models: the examples (examples/<name>/export.py, their own data and training; paths fx and export),
torchvision's (examples/models/export.py's, calibrated; seeded random weights; --models takes any
torchvision.models classification builder, e.g. densenet121) and Hugging Face
`transformers` architectures built from small configs with random weights (no hub download): a
BERT encoder, GPT-2, a LLaMA decoder (RoPE, RMSNorm, grouped-query attention) and a ViT; and
tests/export/aten_models.py's op-family models (export paths only).
"""
import argparse
import json
import os
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
sys.path.insert(0, os.path.join(REPO, "tests", "common"))

from msc_export import export_torch, import_pt2, write_export  # noqa: E402
from msc_export.graph_merge import merge_graphs  # noqa: E402
from msc_export.safetensors_np import load_file, save_file  # noqa: E402
import backends as suite_backends  # noqa: E402

EXAMPLES = ["conv_relu", "fashion_mnist_mlp", "resnet18", "mobilenet_v2", "text_transformer", "gpt2_block"]
TORCHVISION = ["vit_b_16", "swin_t", "convnext_tiny", "efficientnet_b0", "shufflenet_v2_x1_0", "squeezenet1_0",
               "mobilenet_v3_large"]
HF = ["hf_bert", "hf_gpt2", "hf_llama", "hf_vit"]
# tests/export/aten_models.py: every ATen op family the export importer maps (export paths only)
ATEN = ["aten_families", "aten_more", "aten_composed"]
PATHS = ["fx", "export", "pt2"]
SAVED = "saved_outputs.safetensors"  # --save-outputs, in the project folder


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
    if model_name in TORCHVISION or is_torchvision_builder(model_name):
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


def is_torchvision_builder(name):
    """Whether torchvision.models has a classification model builder `name` (e.g. densenet121):
    --models takes any, beyond the TORCHVISION list that the default run covers."""
    import torchvision
    return name in torchvision.models.list_models(module=torchvision.models)


def check(saved, golden, backend, prefix=""):
    """Max abs error of the saved outputs against the golden ones (names with `prefix`, which is
    dropped from the golden names); raises RuntimeError naming the first output out of tolerance
    or missing."""
    atol, rtol = max(1e-4, backend.atol), 1e-4
    worst = 0.0
    for name, want in golden.items():
        got = saved.get(prefix + name)
        if got is None or got.shape != want.shape:
            raise RuntimeError("output %s: %s" % (name, "missing" if got is None else "shape %s, golden %s" % (
                list(got.shape), list(want.shape))))
        g, w = got.astype(np.float64), want.astype(np.float64)
        err = np.abs(g - w)
        bad = ~((err <= atol + rtol * np.abs(w)) | (np.isnan(g) & np.isnan(w)) | (g == w))
        if bad.any():
            raise RuntimeError("output %s: %d of %d elements differ, max abs err %.3g (atol %g, rtol %g)" % (
                name, int(bad.sum()), bad.size, float(np.nanmax(err)), atol, rtol))
        worst = max(worst, float(np.nanmax(err)) if err.size else 0.0)
    return worst


def run_project(codegen, backend, export_dir, out):
    """Generates `backend` for the export in `export_dir` and runs it on the golden inputs; returns
    its outputs ({MSC tensor name: array}, for check). Raises RuntimeError with the failure."""
    gen = subprocess.run([codegen, "generate", "--graph", os.path.join(export_dir, "graph.json"), "--weights",
                          os.path.join(export_dir, "weights.safetensors"), "--golden",
                          os.path.join(export_dir, "golden"), "--backend", backend.name, "--out", out, "--force"],
                         capture_output=True, text=True, timeout=1200)
    if gen.returncode != 0:
        raise RuntimeError("generate: " + gen.stderr.strip().splitlines()[-1])
    run = suite_backends.run_project(backend, out, debian_python=sys.executable, timeout=7200,
                                     args=["--save-outputs", SAVED])
    if run.returncode != 0 or not os.path.isfile(os.path.join(out, SAVED)):
        tail = (run.stdout + run.stderr).strip().splitlines()
        raise RuntimeError("run: " + (tail[-1] if tail else "no output"))
    return load_file(os.path.join(out, SAVED))


def run_merged(codegen, backend, exports, out):
    """One project of every export (graph_merge, names prefixed per export), run once; returns
    {key: max abs error or failure text}."""
    parts, weights, inputs, outputs, prefixes = [], {}, {}, {}, {}
    for i, (key, export_dir) in enumerate(sorted(exports.items())):
        prefix = "m%d_" % i
        prefixes[key] = prefix
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
    try:
        saved = run_project(codegen, backend, merged_dir, os.path.join(out, backend.name))
    except RuntimeError as err:
        return {key: "fail: %s" % err for key in exports}
    results = {}
    for key, export_dir in exports.items():
        golden = load_file(os.path.join(export_dir, "golden", "outputs.safetensors"))
        try:
            results[key] = check(saved, golden, backend, prefixes[key])
        except RuntimeError as err:
            results[key] = "fail: %s" % err
    return results


def main():
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(EXAMPLES + TORCHVISION + HF + ATEN))
    ap.add_argument("--paths", default=",".join(PATHS))
    ap.add_argument("--backends", default="", help="comma-separated (default: every backend the suite finds)")
    ap.add_argument("--out", default=os.path.join(REPO, "out", "check_models"))
    ap.add_argument("--codegen", default=os.path.join(REPO, "build", "msc-codegen"))
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--merge-batch", type=int, default=4, help="exports merged into one project of a merge backend")
    ap.add_argument("--markdown", default="", help="also write the table to this file")
    args = ap.parse_args()
    models, paths = args.models.split(","), args.paths.split(",")
    found = {b.name: b for b in suite_backends.discover(args.codegen)}
    backends = args.backends.split(",") if args.backends else sorted(found)
    unknown = [b for b in backends if b not in found]
    if unknown:
        ap.error("unknown backend(s) %s (found: %s)" % (", ".join(unknown), ", ".join(sorted(found))))
    if "MSC_TVM_PYTHON" not in os.environ and "MSC_TVM_HOME" not in os.environ:
        os.environ["MSC_TVM_PYTHON"] = sys.executable  # relax on this venv's apache-tvm, not the stand-in
    one_by_one = [b for b in backends if not found[b].merge]
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
            for backend in one_by_one:
                try:
                    saved = run_project(args.codegen, found[backend], exports[key], os.path.join(out, backend))
                    golden = load_file(os.path.join(exports[key], "golden", "outputs.safetensors"))
                    rows[key][backend] = check(saved, golden, found[backend])
                except Exception as err:  # noqa: BLE001
                    rows[key][backend] = "fail: %s" % str(err)[:160]
            print("%s %s: %d nodes %s (%.0f s)" % (model, path, nodes, {b: rows[key].get(b) for b in one_by_one},
                                                   time.time() - t0), flush=True)
    for backend in [b for b in backends if found[b].merge]:
        keys = sorted(exports)
        for start in range(0, len(keys), args.merge_batch):
            batch = {k: exports[k] for k in keys[start:start + args.merge_batch]}
            t0 = time.time()
            for key, value in run_merged(args.codegen, found[backend], batch, os.path.join(
                    args.out, "%s_batch%d" % (backend, start // args.merge_batch))).items():
                rows[key][backend] = value
            print("%s %s: %s (%.0f s)" % (backend, ", ".join("%s/%s" % k for k in batch),
                                          {k: rows[k][backend] for k in batch}, time.time() - t0), flush=True)
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
