"""Exporter tests for transformers and modern CNNs: the FX targets, MSC patterns (msc.embedding,
msc.attention), FoldConstant cases and the reference interpreter against torch on small models.

Run with ``/usr/bin/python3 -m pytest -q tests/python`` (PYTHONPATH is set by conftest)."""

import math
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from conftest import REPO
from msc_export import ExportError, MSCGraph, UnsupportedOpsError, export_torch, translate_torch, write_export
from msc_export.calibrate import calibrate_batch_norm, reinit_zero_linears
from msc_export.exporter import check_golden_outputs
from msc_export.interp import run_graph
from msc_export.safetensors_np import load_file

torchvision = pytest.importorskip("torchvision")


def _export(model, shapes, dtypes=None, inputs=None, seed=1):
    torch.manual_seed(0)
    return export_torch(model.eval(), shapes, input_dtypes=dtypes, inputs=inputs, seed=seed)


def _check_interp(result, atol=1e-5):
    """The exported graph + weights (reference interpreter) compute the torch model's outputs."""
    got = run_graph(result.graph, result.weights, result.inputs)
    for name in result.graph.outputs:
        assert got[name].shape == result.outputs[name].shape, name
        np.testing.assert_allclose(got[name], result.outputs[name], rtol=1e-4, atol=atol, err_msg=name)


def _counts(graph):
    return Counter(n.optype for n in graph.nodes)


def _check_layouts(graph):
    for n in graph.nodes:
        for t in list(n.outputs) + list(n.weights.values()):
            assert t.layout == "" or len(t.layout) == len(t.shape), (n.name, t.name, t.layout, t.shape)


def _import_example(name):
    sys.path.insert(0, os.path.join(REPO, "examples", name))
    try:
        sys.modules.pop("export", None)
        import export  # noqa: WPS433
        return export
    finally:
        sys.path.pop(0)
        sys.modules.pop("export", None)


TOKENS = np.array([[5, 7, 9, 3, 0, 0], [4, 4, 2, 8, 1, 0]], dtype=np.int64)


# ----------------------------------------------------------------------------- embedding


def test_embedding_patterns():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 8)

        def forward(self, ids, flat):
            return self.emb(ids), F.embedding(flat, self.emb.weight)

    ids = [np.array([[1, 2, 3], [4, 0, 19]]), np.arange(5, dtype=np.int32)]
    r = _export(M(), [[2, 3], [5]], ["int64", "int32"], ids)
    embs = [n for n in r.graph.nodes if n.optype == "msc.embedding"]
    assert [n.name for n in embs] == ["take", "take_1"]
    # N-d indices: astype + reshape([-1]) + take + reshape fused, the shapes as attrs (MSC input types)
    assert dict(embs[0].attrs) == {"dtype": "int32", "axis": "0", "reduce_in": "6,", "expand_out": "2,3,8"}
    assert dict(embs[1].attrs) == {"dtype": "int32", "axis": "0"}
    assert embs[0].inputs == ["inp_0:0"] and embs[1].inputs == ["inp_1:0"]
    assert embs[0].weights["weight"].shape == [20, 8] and embs[0].weights["weight"] is embs[1].weights["weight"]
    assert embs[1].shared_ref == "take"  # the same parameter
    assert [n.optype for n in r.graph.nodes] == ["input", "input", "msc.embedding", "msc.embedding", "tuple"]
    _check_interp(r)


def test_embedding_of_constant_indices_is_folded():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.pos = nn.Embedding(4, 3)
            self.register_buffer("ids", torch.arange(4))

        def forward(self, x):
            return x + self.pos(self.ids)

    r = _export(M(), [[2, 4, 3]])
    assert [n.optype for n in r.graph.nodes] == ["input", "constant", "add"]
    _check_interp(r)


# ----------------------------------------------------------------------------- attention


def test_self_attention_becomes_msc_attention():
    mha = nn.MultiheadAttention(16, 4, batch_first=True)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = mha

        def forward(self, x):
            out, _ = self.mha(x, x, x, need_weights=False)
            return out

    r = _export(M(), [[2, 5, 16]])
    graph = r.graph
    att = graph.node("attention")
    assert att.optype == "msc.attention" and len(att.inputs) == 3
    assert dict(att.attrs) == {"axes": "0,2,1,3", "axes_1": "0,2,1,3", "axes_2": "0,2,1,3", "scale": "",
                               "causal_mask": "", "window_size": "", "axes_3": "0,2,1,3"}
    assert att.outputs[0].shape == [2, 4, 5, 4]  # torch layout [B, heads, S, head_dim]
    # packed projection: one linear with in_proj_weight, split in 3 (torch's _in_projection_packed)
    proj = graph.node("matmul")
    assert proj.optype == "msc.linear_bias" and proj.weights["weight"].shape == [48, 16]
    assert dict(graph.node("split").attrs) == {"indices_or_sections": "3", "axis": "-1"}
    assert _counts(graph) == {"input": 1, "msc.linear_bias": 2, "split": 1, "get_item": 3, "reshape": 4,
                              "permute_dims": 4, "msc.attention": 1}
    _check_layouts(graph)
    _check_interp(r)


def test_attention_with_masks_cross_attention_and_seq_first():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.MultiheadAttention(16, 2, batch_first=True)
            self.b = nn.MultiheadAttention(16, 2, kdim=8, vdim=12)   # separate q/k/v projections

        def forward(self, q, kv, k8, v12, kpm):
            causal = torch.triu(torch.ones(5, 7, dtype=torch.bool), diagonal=1)
            x, _ = self.a(q, kv, kv, attn_mask=causal, key_padding_mask=kpm, need_weights=False)
            return self.b(x.transpose(0, 1), k8, v12)[0]

    kpm = np.array([[False] * 6 + [True], [False] * 7])
    torch.manual_seed(3)
    inputs = [torch.randn(s).numpy() for s in ([2, 5, 16], [2, 7, 16], [3, 2, 8], [3, 2, 12])] + [kpm]
    r = _export(M(), [[2, 5, 16], [2, 7, 16], [3, 2, 8], [3, 2, 12], [2, 7]],
                ["float32"] * 4 + ["bool"], inputs)
    atts = [n for n in r.graph.nodes if n.optype == "msc.attention"]
    assert [n.name for n in atts] == ["attention_bias", "attention"]
    mask = r.graph.find_tensor(atts[0].inputs[3])
    assert mask.shape == [2, 1, 5, 7] and mask.dtype == "float32"  # causal [1,1,5,7] + padding [2,1,1,7]
    where = [n for n in r.graph.nodes if n.optype == "where"]
    assert len(where) == 1 and r.graph.find_tensor(where[0].inputs[1]).shape == []  # -inf scalar
    assert _counts(r.graph)["msc.linear_bias"] == 8  # q/k/v + out projection, twice
    _check_layouts(r.graph)
    _check_interp(r)


def test_attention_weights_output_is_rejected():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            out, weights = self.mha(x, x, x)
            return out + weights.sum()

    with pytest.raises(ExportError, match="attention-weights output of nn.MultiheadAttention is not supported"):
        translate_torch(M(), [[1, 3, 8]])


class Classifier(nn.Module):
    def __init__(self, batch_first=True, norm_first=False, activation="relu", nested=True):
        super().__init__()
        self.emb = nn.Embedding(50, 32)
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=batch_first, norm_first=norm_first,
                                           activation=activation)
        self.enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(32), enable_nested_tensor=nested)
        self.batch_first = batch_first
        self.fc = nn.Linear(32, 3)

    def forward(self, tok):
        x = self.emb(tok)
        if not self.batch_first:
            x = x.transpose(0, 1)
        h = self.enc(x, src_key_padding_mask=tok == 0)
        if not self.batch_first:
            h = h.transpose(0, 1)
        return h, self.fc(h.mean(1))


@pytest.mark.parametrize("kwargs", [{}, {"nested": False}, {"batch_first": False},
                                    {"norm_first": True, "activation": "gelu"}],
                         ids=["nested", "dense", "seq_first", "pre_norm_gelu"])
def test_transformer_encoder(kwargs):
    r = _export(Classifier(**kwargs), [[2, 6]], ["int64"], [TOKENS])
    counts = _counts(r.graph)
    assert counts["msc.attention"] == 2 and counts["msc.embedding"] == 1 and counts["nn.layer_norm"] == 5
    assert counts["equal"] == 1 and counts["where"] == 2  # the bool padding mask as an additive -inf mask
    assert counts["nn.gelu" if kwargs.get("activation") == "gelu" else "nn.relu"] == 2
    # golden data: the dense result (torch 1.13's nested-tensor path would trim the sequence)
    assert r.outputs[r.graph.outputs[0]].shape == (2, 6, 32)
    _check_layouts(r.graph)
    _check_interp(r)


# ----------------------------------------------------------------------------- other FX targets


def test_gelu_tanh_masked_fill_and_causal_softmax():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("causal", torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1))
            self.act = nn.GELU(approximate="tanh")

        def forward(self, x):
            att = (x @ x.transpose(-1, -2)) / math.sqrt(x.size(-1))
            att = F.softmax(att.masked_fill(self.causal, float("-inf")), dim=-1)
            return self.act(att @ x) + F.gelu(x, approximate="tanh")

    r = _export(M(), [[2, 4, 6]])
    assert _counts(r.graph)["nn.gelu_tanh"] == 2
    where = r.graph.node("where")
    assert r.graph.find_tensor(where.inputs[0]).dtype == "bool"
    assert r.graph.node(where.inputs[1].rsplit(":", 1)[0]).attrs["scalar"] == "-inf"
    _check_interp(r)


def test_elementwise_reduce_and_shape_targets():
    class M(nn.Module):
        def forward(self, x, ids):
            torch._assert(x.dim() == 4, "4-d input")           # checked at export time, dropped
            y = torch.roll(x, shifts=(1, -2), dims=(1, 2)) + torch.roll(x, 3)
            y = F.pad(y, (1, 2, 0, 1), value=0.5)
            s = y.sum(dim=-1, keepdim=True) + torch.sum(y, (1, 2))[:, None, None]
            m = torch.where(y > 0.3, y, torch.zeros_like(y))
            z = y.exp() * torch.ones_like(y) + y.tril(-1) + y.triu(1) + (y ** 2).sqrt() - (-y)
            e = x.expand(2, 3, 4, 5).float() + x.half().float() + x[:, :1].expand_as(x)
            flags = (~(x > 0)).float() + (ids != 3).to(torch.float32).sum() + ids.eq(2).float()
            return s, m + z, e, torch.stack([x, x], 1), flags, torch.rsqrt(x.pow(2) + 1)

    r = _export(M(), [[1, 3, 4, 5], [5]], ["float32", "int64"], [torch.randn(1, 3, 4, 5).numpy(),
                                                                np.array([1, 2, 3, 3, 4])])
    c = _counts(r.graph)
    for optype in ("nn.pad", "sum", "greater", "where", "exp", "tril", "triu", "power", "sqrt", "rsqrt", "negative",
                   "broadcast_to", "astype", "logical_not", "not_equal", "equal", "strided_slice", "concat"):
        assert c[optype] >= 1, optype
    pad = r.graph.node("pad")
    assert dict(pad.attrs) == {"pad_width": "0,0,0,0,0,1,1,2", "pad_value": "0.500000", "pad_mode": "constant"}
    assert r.graph.node("tril").attrs["k"] == "-1" and r.graph.node("triu").attrs["k"] == "1"
    assert dict(r.graph.node("broadcast_to").attrs) == {"shape": "2,3,4,5"}
    _check_layouts(r.graph)
    _check_interp(r)


def test_failed_assert_and_unsupported_lists():
    class Bad(nn.Module):
        def forward(self, x):
            torch._assert(x.shape[1] == 7, "expected 7 channels")
            return x

    with pytest.raises(ExportError, match="torch._assert failed at export time: expected 7 channels"):
        translate_torch(Bad(), [[1, 3]])

    class Unsup(nn.Module):
        def forward(self, x):
            return torch.lgamma(x) + x.logcumsumexp(0) + torch.erfinv(x)  # not in TVM's from_fx map

    with pytest.raises(UnsupportedOpsError) as info:
        translate_torch(Unsup(), [[3]])
    assert len(info.value.problems) == 3


def test_constant_subgraphs_fold():
    """FoldConstant (as MSC runs it first): take / broadcast_to / triu / where / astype of constants."""
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = nn.Parameter(torch.randn(7, 2))
            self.register_buffer("idx", torch.tensor([[0, 6], [3, 3]]))
            self.token = nn.Parameter(torch.randn(1, 1, 2))

        def forward(self, x):
            bias = self.table[self.idx].sum(-1)                   # take of constants: [2, 2]
            tri = torch.triu(bias, 1).float() * (bias > 0).float()
            tok = self.token.expand(x.size(0), -1, -1)
            return torch.cat([tok, x + tri.unsqueeze(-1)], dim=1)

    r = _export(M(), [[2, 2, 2]])
    assert [n.optype for n in r.graph.nodes] == ["input", "constant", "add", "constant", "concat"]
    _check_interp(r)


def test_degenerate_golden_outputs_are_rejected(tmp_path):
    class Tiny(nn.Module):
        def forward(self, x):
            return x * 1e-5, x

    with pytest.raises(ExportError, match=r"degenerate golden output\(s\): tuple:0 \(max \|x\| = .*e-05\) <= 0.001"):
        export_torch(Tiny(), [[2, 3]])
    graph_only = export_torch(Tiny(), [[2, 3]], golden=False)   # no golden data: fine
    assert graph_only.outputs == {}
    check_golden_outputs({"a:0": np.array([0.5]), "i:0": np.zeros(3, np.int64), "e:0": np.zeros(0, np.float32)})
    with pytest.raises(ExportError, match="nan"):
        check_golden_outputs({"n:0": np.array([np.nan, 1.0])})
    r = export_torch(nn.ReLU(), [[4]])
    r.outputs = {k: v * 0 for k, v in r.outputs.items()}
    with pytest.raises(ExportError, match="degenerate"):
        write_export(r, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_calibration_makes_outputs_meaningful():
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v2(weights=None).eval()
    with torch.no_grad():
        before = float(model(torch.randn(1, 3, 64, 64)).abs().max())
    assert before < 1e-3
    assert calibrate_batch_norm(model, [4, 3, 64, 64], 2, seed=0) == 52
    assert not model.training
    assert all(m.momentum == 0.1 for m in model.modules() if isinstance(m, nn.BatchNorm2d))
    with torch.no_grad():
        assert float(model(torch.randn(1, 3, 64, 64)).abs().max()) > 1e-2
    vit_head = nn.Sequential(nn.Linear(4, 3))
    nn.init.zeros_(vit_head[0].weight)
    assert reinit_zero_linears(vit_head) == 1 and float(vit_head[0].weight.abs().max()) > 0


# ----------------------------------------------------------------------------- models (small configs)


def test_vision_transformer_small():
    from torchvision.models.vision_transformer import VisionTransformer
    torch.manual_seed(0)
    model = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
                              num_classes=10)
    reinit_zero_linears(model)
    r = _export(model, [[1, 3, 32, 32]])
    c = _counts(r.graph)
    assert c["msc.attention"] == 2 and c["concat"] == 1 and c["nn.gelu"] == 2
    assert not any(n.optype in ("equal", "where") for n in r.graph.nodes)  # torch._assert / dim: dropped
    cls = r.graph.node("concat")
    assert r.graph.find_tensor(cls.inputs[0]).shape == [1, 1, 32]  # the class token, folded expand
    _check_layouts(r.graph)
    _check_interp(r)


@pytest.mark.parametrize("size", [32, 36], ids=["no_pad", "padded_windows"])
def test_swin_transformer_small(size):
    from torchvision.models.swin_transformer import SwinTransformer
    torch.manual_seed(0)
    model = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=[4, 4],
                            num_classes=10)
    r = _export(model, [[1, 3, size, size]])
    c = _counts(r.graph)
    assert c["nn.softmax"] == 4 and c["matmul"] == 8
    shapes = [len(t.shape) for n in r.graph.nodes for t in n.outputs]
    assert max(shapes) == 6                                       # window partition
    if size == 36:                                                # 9x9 patches: windows padded, then cropped
        assert c["nn.pad"] >= 2
    _check_layouts(r.graph)
    _check_interp(r, atol=1e-4)


def test_convnext_small():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    torch.manual_seed(0)
    model = ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)], num_classes=10)
    r = _export(model, [[1, 3, 32, 32]])
    c = _counts(r.graph)
    assert c["nn.layer_norm"] == 5 and c["multiply"] == 2  # layer scale
    _check_interp(r)


@pytest.mark.parametrize("name", ["efficientnet_b0", "shufflenet_v2_x0_5"])
def test_cnn_models_calibrated(name):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    calibrate_batch_norm(model, [4, 3, 64, 64], 2, seed=0)
    r = _export(model, [[1, 3, 64, 64]])
    c = _counts(r.graph)
    if name == "efficientnet_b0":
        assert c["nn.silu"] == 49 and c["sigmoid"] == 16
    else:
        assert c["split"] == 13 and c["permute_dims"] == 16    # chunk + channel shuffle
    _check_interp(r, atol=1e-4)


@pytest.mark.parametrize("name,nodes,optypes", [
    ("swin_t", 518, {"msc.linear_bias": 49, "msc.linear": 3, "nn.softmax": 12, "nn.layer_norm": 29}),
    ("convnext_tiny", 203, {"msc.conv2d_bias": 22, "nn.layer_norm": 23, "multiply": 18}),
    ("efficientnet_b0", 289, {"nn.silu": 49, "sigmoid": 16, "nn.adaptive_avg_pool2d": 17}),
    ("shufflenet_v2_x1_0", 312, {"split": 13, "concat": 16, "permute_dims": 16}),
])
def test_full_size_models_translate(name, nodes, optypes):
    """Export-only (no golden run): the full-size torchvision models translate, as expected."""
    torch.manual_seed(0)
    graph, weights = translate_torch(getattr(torchvision.models, name)(weights=None), [[1, 3, 224, 224]])
    assert len(graph.nodes) == nodes
    c = _counts(graph)
    for k, v in optypes.items():
        assert c[k] == v, k
    assert sorted(weights) == sorted(graph.weight_tensors())
    _check_layouts(graph)


# ----------------------------------------------------------------------------- examples


def test_gpt2_block_example():
    ex = _import_example("gpt2_block")
    torch.manual_seed(0)
    r = _export(ex.TinyGPT2(), [[1, ex.SEQ]], ["int64"], [ex.encode("hello GPT")])
    c = _counts(r.graph)
    assert c["msc.embedding"] == 1 and c["nn.gelu_tanh"] == 1 and c["where"] == 1 and c["msc.linear"] == 1
    head = [n for n in r.graph.nodes if n.optype == "msc.linear"][0]
    np.testing.assert_array_equal(r.weights[head.weights["weight"].name], r.weights["const"])  # tied
    _check_interp(r)


def test_text_transformer_example(tmp_path):
    """The example trains for 1 epoch on the license texts and exports; the graph validates."""
    ex = _import_example("text_transformer")
    if not os.path.isdir(ex.DATA_DIR):
        pytest.skip(f"{ex.DATA_DIR} missing")
    windows, labels, test = ex.load_windows(ex.DATA_DIR, 0)
    assert len(windows) == len(labels) == len(test) and set(labels) == set(range(len(ex.CLASSES)))
    assert all(1 <= len(w) <= ex.SEQ for w in windows)
    assert sum(len(w) < 6 for w in windows) <= len(ex.CLASSES)   # only each text's last window
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = tmp_path / "tt"
    proc = subprocess.run([os.path.join(REPO, "examples", "text_transformer", "export.py"), "--out", str(out),
                           "--epochs", "1", "--dataset"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    graph = MSCGraph.load(str(out / "graph.json"))
    assert graph.find_tensor("inp_0:0").dtype == "int64" and graph.find_tensor("inp_0:0").shape == [1, 16]
    inputs = load_file(str(out / "golden" / "inputs.safetensors"))
    assert (inputs["inp_0:0"] == 0).any()                      # a padded window
    data = load_file(str(out / "golden" / "text_dataset.safetensors"))
    assert data["inputs"].dtype == np.int64 and data["inputs"].shape[1] == 16
    got = run_graph(graph, load_file(str(out / "weights.safetensors")), inputs)
    expected = load_file(str(out / "golden" / "outputs.safetensors"))
    for name in graph.outputs:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-4, atol=1e-5)


def test_casts_and_tensor_indexing():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = nn.Parameter(torch.randn(6, 3))

        def forward(self, x, i):
            y = x.type(torch.float16).to("cpu").float() + i.type("torch.FloatTensor") + x.to(i).float()
            return y, self.table[i]                                 # take(table, i, axis=0)

    r = _export(M(), [[3], [3]], ["float32", "int64"], [np.array([0.5, -1.5, 2.0], np.float32), np.array([1, 5, 0])])
    assert [dict(n.attrs)["dtype"] for n in r.graph.nodes if n.optype == "astype"] == [
        "float16", "float32", "float32", "int64", "float32"]
    take = r.graph.node("take")
    assert take.optype == "take" and take.attrs["axis"] == "0" and take.inputs[1] == "inp_1:0"
    _check_interp(r)

    class Bad(nn.Module):
        def forward(self, x):
            return x.type("torch.cuda.FloatTensor")

    with pytest.raises(ExportError, match=r"\(call_method type\): type\('torch.cuda.FloatTensor'\) is not supported"):
        translate_torch(Bad(), [[3]])
