#!/usr/bin/env python3
"""Every model of the exporter through each frontend, generated for each backend, golden-tested.

    <venv python> scripts/check_models.py [--models m1,m2] [--paths fx,export,pt2[,onnx]]
        [--backends B1,B2] [--out out/check_models] [--codegen build/msc-codegen]
        [--image-size 224] [--merge-batch 4] [--markdown FILE]

Run with the project's venv (scripts/install_venv.sh: torch 2.x, the newest apache-tvm). For each
(model, path) it exports graph.json + weights + golden data (`fx`: torch.fx, `export`:
torch.export, `pt2`: torch.export.save then `import_pt2`; `onnx`, not in the default run:
torch.onnx.export(dynamo=True) at its default opset, checked against ONNX Runtime, then
`msc-codegen import`, the C++ ONNX frontend), then generates a project for every
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
torchvision.models classification builder, e.g. densenet121), Hugging Face `transformers`
architectures built from small configs with random weights (no hub download; HF_MODELS: the
default run takes a BERT encoder, GPT-2, a LLaMA decoder (RoPE, RMSNorm, grouped-query attention)
and a ViT, --models any of the 44 hf_* names: encoders, decoders with multi-query / grouped-query
attention and MoE, vision and audio models) and tests/export/aten_models.py's op-family models
(export paths only).
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
from msc_export.mscgraph import output_dtypes  # noqa: E402
from msc_export.safetensors_np import load_file, save_file  # noqa: E402
import backends as suite_backends  # noqa: E402

EXAMPLES = ["conv_relu", "fashion_mnist_mlp", "resnet18", "mobilenet_v2", "text_transformer", "gpt2_block"]
TORCHVISION = ["vit_b_16", "swin_t", "convnext_tiny", "efficientnet_b0", "shufflenet_v2_x1_0", "squeezenet1_0",
               "mobilenet_v3_large"]
# tests/export/aten_models.py: every ATen op family the export importer maps (export paths only)
ATEN = ["aten_families", "aten_more", "aten_composed"]
PATHS = ["fx", "export", "pt2"]  # the default; --paths also takes "onnx" (export_onnx_and_import)
SAVED = "saved_outputs.safetensors"  # --save-outputs, in the project folder


class _LastHidden(torch.nn.Module):
    """A transformers model returning its last hidden state as a plain tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)[0]


_ENC = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
_DEC = dict(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=32)
_PATCH = dict(image_size=32, patch_size=8, **_ENC)
_STAGES = dict(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1])
_WAV = dict(conv_dim=[16, 16], conv_stride=[5, 2], conv_kernel=[10, 3], num_conv_pos_embeddings=8,
            num_conv_pos_embedding_groups=4, **_ENC)
_NO_POOL = {"add_pooling_layer": False}
# MoE layers run with the `batched_mm` experts (gathered expert weights, bmm): the default
# `grouped_mm` is a transformers custom op over data-dependent token groups (sort, histc,
# index_put), which a static graph cannot express.
_MOE = {"_experts_implementation": "batched_mm"}

#: Hugging Face architectures built from small configs (random weights, no hub download):
#: name -> (model class, config class, input: "text" [1, 8] token ids, "image<S>" [1, 3, S, S],
#: "audio" [1, 1600] samples; config keywords, model constructor keywords, config attributes set
#: after construction). The default run covers HF (the first four); all were checked on
#: 2026-11-30 (docs/torch-export.md, Models).
HF_MODELS = {
    "hf_bert": ("BertModel", "BertConfig", "text", dict(vocab_size=100, max_position_embeddings=32, **_ENC), _NO_POOL),
    "hf_gpt2": ("GPT2Model", "GPT2Config", "text", dict(vocab_size=100, n_embd=32, n_layer=2, n_head=4,
                                                          n_positions=32, bos_token_id=0, eos_token_id=0)),
    "hf_llama": ("LlamaModel", "LlamaConfig", "text", _DEC),
    "hf_vit": ("ViTModel", "ViTConfig", "image32", _PATCH, _NO_POOL),
    "hf_distilbert": ("DistilBertModel", "DistilBertConfig", "text", dict(
        vocab_size=100, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=32)),
    "hf_roberta": ("RobertaModel", "RobertaConfig", "text", dict(vocab_size=100, max_position_embeddings=40, **_ENC),
                   _NO_POOL),
    "hf_albert": ("AlbertModel", "AlbertConfig", "text", dict(vocab_size=100, embedding_size=16,
                                                                max_position_embeddings=32, **_ENC), _NO_POOL),
    "hf_electra": ("ElectraModel", "ElectraConfig", "text", dict(vocab_size=100, embedding_size=16,
                                                                   max_position_embeddings=32, **_ENC)),
    "hf_deberta_v2": ("DebertaV2Model", "DebertaV2Config", "text", dict(
        vocab_size=100, max_position_embeddings=32, relative_attention=True, position_buckets=8,
        pos_att_type=["p2c", "c2p"], **_ENC)),
    "hf_t5_encoder": ("T5EncoderModel", "T5Config", "text", dict(vocab_size=100, d_model=32, d_kv=8, d_ff=64,
                                                                   num_layers=2, num_heads=4,
                                                                   relative_attention_num_buckets=8)),
    "hf_mobilebert": ("MobileBertModel", "MobileBertConfig", "text", dict(
        vocab_size=100, hidden_size=32, embedding_size=16, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=32, intra_bottleneck_size=16, true_hidden_size=16, max_position_embeddings=32,
        num_feedforward_networks=2), _NO_POOL),
    "hf_modernbert": ("ModernBertModel", "ModernBertConfig", "text", dict(
        vocab_size=100, max_position_embeddings=32, global_attn_every_n_layers=2, local_attention=4, pad_token_id=0,
        bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2, **_ENC)),
    "hf_clip_text": ("CLIPTextModel", "CLIPTextConfig", "text", dict(vocab_size=100, max_position_embeddings=32,
                                                                       **_ENC)),
    "hf_mistral": ("MistralModel", "MistralConfig", "text", _DEC),
    "hf_qwen2": ("Qwen2Model", "Qwen2Config", "text", _DEC),
    "hf_qwen3": ("Qwen3Model", "Qwen3Config", "text", dict(head_dim=8, **_DEC)),
    "hf_phi": ("PhiModel", "PhiConfig", "text", _DEC),
    "hf_phi3": ("Phi3Model", "Phi3Config", "text", dict(pad_token_id=0, **_DEC)),
    "hf_gemma": ("GemmaModel", "GemmaConfig", "text", dict(head_dim=8, **_DEC)),
    "hf_gemma2": ("Gemma2Model", "Gemma2Config", "text", dict(head_dim=8, sliding_window=4, **_DEC)),
    "hf_gpt_neox": ("GPTNeoXModel", "GPTNeoXConfig", "text", dict(vocab_size=100, max_position_embeddings=32,
                                                                    rotary_pct=0.5, **_ENC)),
    "hf_opt": ("OPTModel", "OPTConfig", "text", dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, ffn_dim=64,
                                                       num_attention_heads=4, max_position_embeddings=32,
                                                       word_embed_proj_dim=32)),
    "hf_bloom": ("BloomModel", "BloomConfig", "text", dict(vocab_size=100, hidden_size=32, n_layer=2, n_head=4)),
    "hf_falcon": ("FalconModel", "FalconConfig", "text", dict(  # multi-query attention: one key / value head
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, new_decoder_architecture=False)),
    "hf_gptj": ("GPTJModel", "GPTJConfig", "text", dict(vocab_size=100, n_embd=32, n_layer=2, n_head=4, rotary_dim=4,
                                                          n_positions=32)),
    "hf_stablelm": ("StableLmModel", "StableLmConfig", "text", _DEC),
    "hf_granite": ("GraniteModel", "GraniteConfig", "text", _DEC),
    "hf_olmo": ("OlmoModel", "OlmoConfig", "text", _DEC),
    "hf_cohere": ("CohereModel", "CohereConfig", "text", _DEC),
    "hf_mamba": ("MambaModel", "MambaConfig", "text", dict(vocab_size=100, hidden_size=32, state_size=4,
                                                             num_hidden_layers=2, use_mambapy=False)),
    "hf_mixtral": ("MixtralModel", "MixtralConfig", "text", dict(num_local_experts=4, num_experts_per_tok=2, **_DEC),
                   {}, _MOE),
    "hf_qwen2_moe": ("Qwen2MoeModel", "Qwen2MoeConfig", "text", dict(
        num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=32, **_DEC),
        {}, _MOE),
    "hf_clip_vision": ("CLIPVisionModel", "CLIPVisionConfig", "image32", _PATCH),
    "hf_deit": ("DeiTModel", "DeiTConfig", "image32", _PATCH, _NO_POOL),
    "hf_beit": ("BeitModel", "BeitConfig", "image32", dict(use_relative_position_bias=True, **_PATCH), _NO_POOL),
    "hf_dinov2": ("Dinov2Model", "Dinov2Config", "image32", _PATCH),
    "hf_convnext": ("ConvNextModel", "ConvNextConfig", "image64", _STAGES),
    "hf_swin": ("SwinModel", "SwinConfig", "image32", dict(image_size=32, patch_size=2, embed_dim=16, depths=[1, 1],
                                                             num_heads=[2, 4], window_size=4)),
    "hf_resnet": ("ResNetModel", "ResNetConfig", "image64", dict(embedding_size=8, **_STAGES)),
    "hf_regnet": ("RegNetModel", "RegNetConfig", "image64", dict(embedding_size=8, groups_width=8, **_STAGES)),
    "hf_segformer": ("SegformerModel", "SegformerConfig", "image64", dict(
        hidden_sizes=[8, 16, 24, 32], num_attention_heads=[1, 2, 2, 4], depths=[1, 1, 1, 1], decoder_hidden_size=32)),
    "hf_poolformer": ("PoolFormerModel", "PoolFormerConfig", "image64", dict(hidden_sizes=[8, 16, 24, 32],
                                                                               depths=[1, 1, 1, 1])),
    "hf_wav2vec2": ("Wav2Vec2Model", "Wav2Vec2Config", "audio", _WAV),
    "hf_hubert": ("HubertModel", "HubertConfig", "audio", _WAV),
}
HF = list(HF_MODELS)[:4]


def hf_model(name):
    """(module, input shapes, input dtypes, inputs) of the small transformers model `name` (a key
    of HF_MODELS), seeded."""
    import transformers as T
    model_cls, config_cls, kind, cfg_kw, *rest = HF_MODELS[name]
    model_kw, attrs = (list(rest) + [{}, {}])[:2]
    torch.manual_seed(0)
    cfg = getattr(T, config_cls)(**cfg_kw)
    for key, value in attrs.items():
        setattr(cfg, key, value)
    model = _LastHidden(getattr(T, model_cls)(cfg, **model_kw))
    rng = np.random.default_rng(0)
    if kind == "text":
        x = np.array([[5, 17, 42, 8, 99, 3, 64, 11]], dtype=np.int64)
    elif kind == "audio":
        x = rng.standard_normal((1, 1600)).astype(np.float32)
    else:
        size = int(kind[len("image"):])
        x = rng.standard_normal((1, 3, size, size)).astype(np.float32)
    return model, [list(x.shape)], [str(x.dtype)], [x]


def export_one(model_name, path, out, image_size, codegen):
    """Exports (model, path) into `out`; returns the number of graph nodes. Raises on failure."""
    via = "fx" if path == "fx" else "export"
    if model_name in EXAMPLES:
        if path in ("pt2", "onnx"):
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
    elif model_name in HF_MODELS:
        model, shapes, dtypes, inputs = hf_model(model_name)
    else:
        raise ValueError("unknown model %r: an example (%s), a torchvision classification builder, one of "
                         "tests/export/aten_models.py's or of HF_MODELS (hf_*)" % (model_name, ", ".join(EXAMPLES)))
    model.eval()
    if path == "onnx":
        return export_onnx_and_import(model_name, model, shapes, inputs, out, codegen)
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


def export_onnx_and_import(name, model, shapes, inputs, out, codegen):
    """The `onnx` path: torch.onnx.export(dynamo=True) at its default opset (msc_export.onnx_models:
    the export is checked, ONNX Runtime must agree with torch), then `msc-codegen import` (the C++
    ONNX frontend) into `out`; returns the number of graph nodes."""
    from msc_export.onnx_models import ModelSpec, export_onnx, opset_range
    if inputs is None:
        rng = np.random.default_rng(0)
        inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    with torch.no_grad():
        outs = model(*[torch.from_numpy(x) for x in inputs])
    n_out = len(outs) if isinstance(outs, (tuple, list)) else 1
    spec = ModelSpec(name, model, inputs, ["input_%d" % i for i in range(len(inputs))],
                     ["output_%d" % i for i in range(n_out)])
    src = out + "_onnx"
    report = export_onnx(name, opset_range("dynamo")[1], src, exporter="dynamo", spec=spec)
    ort, peak = report["ort_max_abs"], max(report["peak"] + [1.0])
    if isinstance(ort, float) and ort > 1e-4 * peak:  # the comparison's rtol, at the outputs' peak
        raise RuntimeError("ONNX Runtime disagrees with torch on the export: max abs %.3g (outputs up to %.3g)" % (
            ort, peak))
    imp = subprocess.run([codegen, "import", report["model"], "--out", out, "--force", "--golden-from",
                          os.path.join(src, "test_data_set_0")], capture_output=True, text=True, timeout=1200)
    if imp.returncode != 0:
        raise RuntimeError("import: " + (imp.stderr.strip().splitlines() or ["failed"])[-1])
    with open(os.path.join(out, "graph.json"), encoding="utf-8") as f:
        return len(json.load(f)["nodes"])


def is_torchvision_builder(name):
    """Whether torchvision.models has a classification model builder `name` (e.g. densenet121):
    --models takes any, beyond the TORCHVISION list that the default run covers."""
    import torchvision
    return name in torchvision.models.list_models(module=torchvision.models)


def bfloat16_outputs(export_dir, prefix=""):
    """The graph outputs of dtype bfloat16 of the export in `export_dir`, named with `prefix`."""
    with open(os.path.join(export_dir, "graph.json"), encoding="utf-8") as f:
        dtypes = output_dtypes(json.load(f))
    return {prefix + name for name, dtype in dtypes.items() if dtype == "bfloat16"}


def check(saved, golden, backend, prefix="", bfloat16=()):
    """Max abs error of the saved outputs against the golden ones (names with `prefix`, which is
    dropped from the golden names); raises RuntimeError naming the first output out of tolerance
    or missing."""
    atol, rtol = max(1e-4, backend.atol), 1e-4
    worst = 0.0
    for name, want in golden.items():
        # a bfloat16 output (read as float32): the harnesses' bfloat16 tolerance (their tolerance())
        bf16 = prefix + name in bfloat16
        atol_t, rtol_t = (max(atol, 1e-2), 1.6e-2) if bf16 else (atol, rtol)
        got = saved.get(prefix + name)
        if got is None or got.shape != want.shape:
            raise RuntimeError("output %s: %s" % (name, "missing" if got is None else "shape %s, golden %s" % (
                list(got.shape), list(want.shape))))
        g, w = got.astype(np.float64), want.astype(np.float64)
        err = np.abs(g - w)
        bad = ~((err <= atol_t + rtol_t * np.abs(w)) | (np.isnan(g) & np.isnan(w)) | (g == w))
        if bad.any():
            raise RuntimeError("output %s: %d of %d elements differ, max abs err %.3g (atol %g, rtol %g)" % (
                name, int(bad.sum()), bad.size, float(np.nanmax(err)), atol_t, rtol_t))
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
            results[key] = check(saved, golden, backend, prefixes[key], bfloat16_outputs(export_dir, prefixes[key]))
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
            if (model in EXAMPLES and path in ("pt2", "onnx")) or (model in ATEN and path == "fx"):
                continue
            key = (model, path)
            out = os.path.join(args.out, model, path)
            t0 = time.time()
            try:
                nodes = export_one(model, path, os.path.join(out, "export"), args.image_size, args.codegen)
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
                    rows[key][backend] = check(saved, golden, found[backend], bfloat16=bfloat16_outputs(exports[key]))
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
