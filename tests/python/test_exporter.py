"""Tests of python/msc_export: run with ``/usr/bin/python3 -m pytest -q tests/python``."""

import json
import os
import struct
import subprocess
import sys
from collections import OrderedDict

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from conftest import REFERENCE_DIR, REPO
from msc_export import (ExportError, GraphError, MSCGraph, UnsupportedOpsError, export_torch, translate_torch,
                        validate)
from msc_export.hostile import build_hostile, hostile_data, write_hostile
from msc_export.interp import run_graph
from msc_export.mscfmt import attr_str, float_str, scalar_str
from msc_export.mscgraph import split_tensor_name, to_json
from msc_export.safetensors_np import load_bytes, load_file, save_bytes, save_file
from msc_graph_build_cases import CASES

MSC_REAL = os.path.join(REFERENCE_DIR, "msc-real")
needs_reference = pytest.mark.skipif(not os.path.isdir(MSC_REAL), reason=f"no {MSC_REAL}")


# ----------------------------------------------------------------------------- models


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def conv_relu():
    return nn.Sequential(nn.Conv2d(3, 6, 1, bias=False), nn.ReLU())


class Zoo(nn.Module):
    """Many converters at once: conv+bias, BN, ReLU6, depthwise conv, parameter * x, scalar ops,
    avg pools with/without count_include_pad, concat, Hardtanh, int/slice indexing, flatten,
    reshape with size(), linear, softmax, mean over two axes, tuple output."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)
        self.pool = nn.AvgPool2d(3, stride=2, padding=1)
        self.pool2 = nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)
        self.ht = nn.Hardtanh(-0.5, 0.5)
        self.r6 = nn.ReLU6()
        self.fc = nn.Linear(4, 5)
        self.scale = nn.Parameter(torch.randn(1, 8, 1, 1))
        self.drop = nn.Dropout(0.3)

    def forward(self, x):
        y = self.r6(self.bn(self.c1(x)))
        y = self.drop(self.c2(y) * self.scale + 0.5)
        y = torch.cat([self.pool(y), self.pool2(y)], dim=1)
        y = self.ht(y - 2) / 3.0
        z = y[:, 0, 1:3, ::2]
        z = z.flatten(1)
        z = z.reshape(z.size(0), -1)
        return F.softmax(self.fc(z), dim=-1), torch.sigmoid(y.mean(dim=(2, 3)))


class Zoo2(nn.Module):
    """Shared conv weights, permute/transpose, unsqueeze/squeeze, clamp(max=), matmul, gelu,
    ellipsis indexing, view, tanh, chunk + getitem on a tuple, LayerNorm, SiLU, MaxPool2d."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.ln = nn.LayerNorm(5)
        self.pool = nn.MaxPool2d(2, ceil_mode=True)

    def forward(self, x):
        a = self.conv(x)
        b = self.conv(a)
        c = torch.tanh(a + b).permute(0, 2, 3, 1).contiguous()
        d = c.transpose(1, 2).unsqueeze(0).squeeze(0)
        e = torch.clamp(d, max=0.3)
        f = torch.matmul(e, e.transpose(-1, -2))
        g = F.gelu(f[..., 0])
        h = torch.chunk(self.pool(x), 2, dim=1)  # (tuple unpacking of a Proxy breaks on py3.11)
        h0, h1 = h[0], h[1]
        return self.ln(F.silu(g)).view(1, -1) * 2 + 1, h0 - h1


# ----------------------------------------------------------------------------- msc-real


def _real(model_name):
    d = os.path.join(MSC_REAL, model_name)
    with open(os.path.join(d, "graph.json"), encoding="utf-8") as f:
        text = f.read()
    return (text, load_file(os.path.join(d, "weights.safetensors")),
            dict(np.load(os.path.join(d, "inputs.npz"))), dict(np.load(os.path.join(d, "outputs.npz"))))


def _compare_with_real(model, shape, real_name):
    text, real_w, real_in, real_out = _real(real_name)
    real = json.loads(text)
    result = export_torch(model, [shape], inputs=[real_in["inp_0:0"]])
    mine = json.loads(result.graph.to_json())
    # structure: graph name, inputs/outputs, and per node everything MSC wrote
    assert mine["name"] == real["name"]
    assert mine["inputs"] == real["inputs"] and mine["outputs"] == real["outputs"]
    assert [n["name"] for n in mine["nodes"]] == [n["name"] for n in real["nodes"]]
    for a, b in zip(mine["nodes"], real["nodes"]):
        for key in ("index", "shared_ref", "optype", "parents", "inputs", "outputs", "attrs"):
            assert a[key] == b[key], (a["name"], key)
        assert a["weights"] == b["weights"], a["name"]  # names, aliases, dtypes, layouts, shapes
    assert mine == real
    # weights: same names, shapes, dtypes and values (the model is seeded like the reference run)
    assert sorted(result.weights) == sorted(real_w)
    for k, v in real_w.items():
        assert result.weights[k].shape == v.shape and result.weights[k].dtype == v.dtype
        np.testing.assert_array_equal(result.weights[k], v)
    # golden outputs of the original torch model for the reference inputs
    assert sorted(result.outputs) == sorted(real_out)
    for k, v in real_out.items():
        np.testing.assert_allclose(result.outputs[k], v, rtol=1e-5, atol=1e-6)
    return result, text


@needs_reference
def test_msc_real_conv_relu():
    torch.manual_seed(0)
    result, text = _compare_with_real(conv_relu(), [1, 3, 4, 4], "conv_relu")
    # the JSON layout is dmlc::JSONWriter's; only attr order (a hash map in MSC) may differ
    real = json.loads(text, object_pairs_hook=OrderedDict)
    mine = json.loads(result.graph.to_json(), object_pairs_hook=OrderedDict)
    mine["nodes"][1]["attrs"] = real["nodes"][1]["attrs"]
    assert to_json(mine) == text


@needs_reference
def test_msc_real_mlp():
    torch.manual_seed(0)
    result, text = _compare_with_real(MLP(), [1, 784], "mlp")
    assert result.graph.to_json() == text  # byte-identical to TVM v0.20's graph.to_json()


@needs_reference
@pytest.mark.parametrize("name", ["conv_relu", "mlp"])
def test_json_writer_reproduces_msc_layout(name):
    text = _real(name)[0]
    assert to_json(json.loads(text, object_pairs_hook=OrderedDict)) == text
    assert MSCGraph.from_json(text).to_json() == text


@needs_reference
@pytest.mark.parametrize("name", ["conv_relu", "mlp"])
def test_safetensors_reencode_reference_weights(name):
    path = os.path.join(MSC_REAL, name, "weights.safetensors")
    with open(path, "rb") as f:
        blob = f.read()
    tensors, meta = load_bytes(blob)
    assert meta == {}
    assert save_bytes(tensors) == blob


# ----------------------------------------------------------------------------- MSC's own expectations


def _inspect(graph):
    """``MSCGraph.inspect()`` of MSC: inputs/outputs by alias, node counts per optype."""
    def tensor(t):
        return {"name": t.alias, "shape": t.shape, "dtype": t.dtype, "layout": t.layout}
    nodes = {"total": len(graph.nodes)}
    for n in graph.nodes:
        nodes[n.optype] = nodes.get(n.optype, 0) + 1
    return {"inputs": [tensor(graph.find_tensor(i)) for i in graph.inputs],
            "outputs": [tensor(graph.find_tensor(o)) for o in graph.outputs], "nodes": nodes}


@pytest.mark.parametrize("name,model,shapes,expected", CASES, ids=[c[0] for c in CASES])
def test_msc_graph_build_expectations(name, model, shapes, expected):
    graph, _ = translate_torch(model, shapes)
    assert _inspect(graph) == expected


# ----------------------------------------------------------------------------- attribute strings


def test_attr_strings():
    assert attr_str([1, 1]) == "1,1"
    assert attr_str([1]) == "1,"
    assert attr_str((7,)) == "7,"
    assert attr_str([]) == ""
    assert attr_str(None) == ""
    assert attr_str([[1, 2], [3, 4]]) == "1,2,3,4"
    assert attr_str(True) == "1" and attr_str(False) == "0"
    assert attr_str(3) == "3" and attr_str(-1) == "-1"
    assert attr_str(1e-5) == "0.000010"
    assert attr_str(0.1) == "0.100000"
    assert attr_str(6.0) == "6.000000"
    assert attr_str(float("inf")) == "inf" and attr_str(-float("inf")) == "-inf"
    assert attr_str("NCHW") == "NCHW" and attr_str("") == ""
    # MSC's 6-decimal form would lose these: written so that they round-trip (atof-compatible)
    assert float_str(1e-12) == "1e-12" and float(float_str(1e-12)) == 1e-12
    assert float(float_str(0.7071067811865476)) == 0.7071067811865476
    assert scalar_str(np.float32(0.5)) == "0.500000"
    assert scalar_str(np.float32(1e-12)) == "1e-12"
    assert np.float32(float(scalar_str(np.float32(0.7071067811865476)))) == np.float32(0.7071067811865476)
    assert scalar_str(np.int64(3)) == "3"


def test_attr_strings_in_exported_graph():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(6, eps=1e-12)
            self.pool = nn.MaxPool2d(2)

        def forward(self, x):
            y = self.pool(x).squeeze(1)          # axis "1,"
            y = torch.clamp(y, min=0.25)         # min "0.250000", max "inf"
            return self.ln(y.mean(-1, keepdim=True) * 0.7071067811865476 + y)

    graph, _ = translate_torch(M(), [[2, 1, 4, 12]])
    attrs = {n.optype: dict(n.attrs) for n in graph.nodes}
    assert attrs["nn.max_pool2d"]["pool_size"] == "2,2" and attrs["nn.max_pool2d"]["ceil_mode"] == "0"
    assert attrs["nn.max_pool2d"]["padding"] == "0,0,0,0"
    assert attrs["squeeze"] == {"axis": "1,"}
    assert attrs["clip"] == {"min": "0.250000", "max": "inf"}
    assert attrs["mean"] == {"axis": "-1,", "keepdims": "1"}
    assert attrs["nn.layer_norm"]["epsilon"] == "1e-12"
    assert attrs["nn.layer_norm"]["axes"] == "-1,"
    scalars = [n for n in graph.nodes if n.optype == "constant"]
    assert len(scalars) == 1 and scalars[0].outputs[0].shape == []
    assert np.float32(float(scalars[0].attrs["scalar"])) == np.float32(0.7071067811865476)


# ----------------------------------------------------------------------------- unsupported targets


class Unsupported(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2)
        self.act = nn.Mish()

    def forward(self, x):  # none of these is in TVM's from_fx map (docs/torch-fx.md)
        y = torch.erfinv(x) + F.mish(x)
        return self.act(self.up(y)).logcumsumexp(0), x.erfinv()


def test_unsupported_targets_listed_all_at_once():
    with pytest.raises(UnsupportedOpsError) as info:
        translate_torch(Unsupported(), [[1, 3, 4, 4]])
    problems = info.value.problems
    assert problems == [
        "erfinv: call_function torch.erfinv",
        "mish: call_function torch.nn.functional.mish",
        "up: call_module up (torch.nn.modules.upsampling.Upsample)",
        "act: call_module act (torch.nn.modules.activation.Mish)",
        "logcumsumexp: call_method Tensor.logcumsumexp",
        "erfinv_1: call_method Tensor.erfinv",
    ]
    assert str(info.value).startswith("6 unsupported FX node(s):\n")
    for p in problems:
        assert p in str(info.value)


def test_unsupported_cli_exit_status(tmp_path):
    model_file = tmp_path / "model.py"
    model_file.write_text("import torch\nclass M(torch.nn.Module):\n"
                          "    def forward(self, x):\n        return torch.erfinv(x).logcumsumexp(0) + torch.lgamma(x)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    proc = subprocess.run([sys.executable, "-m", "msc_export", "--model", f"{model_file}:M", "--input-shape", "1,3",
                           "--out", str(tmp_path / "out")], env=env, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "3 unsupported FX node(s)" in proc.stderr
    for frag in ("erfinv: call_function torch.erfinv", "logcumsumexp: call_method Tensor.logcumsumexp",
                 "lgamma: call_function torch.lgamma"):
        assert frag in proc.stderr
    assert not (tmp_path / "out").exists()


def test_bad_argument_value_names_the_node():
    class M(nn.Module):
        def forward(self, x):
            return torch.add(x, x, alpha=2)

    with pytest.raises(ExportError, match=r"node 'add' \(call_function torch.add\): alpha=2 is not supported"):
        translate_torch(M(), [[2, 2]])


# ----------------------------------------------------------------------------- safetensors


def test_safetensors_roundtrip(tmp_path):
    tensors = {
        "scalar_f32": np.array(1.5, dtype=np.float32),          # 0-d stays 0-d
        "half": np.arange(6, dtype=np.float16).reshape(2, 3),
        "i64": np.array([-1, 2, 3], dtype=np.int64),
        "i32": np.array([[7]], dtype=np.int32),
        "flags": np.array([True, False, True]),
        "empty": np.zeros((0, 4), dtype=np.float32),
        "f64": np.array([np.pi]),
        "u8": np.array([255, 0], dtype=np.uint8),
        'weird "name"\\ 卷积:0': np.ones((2, 2), dtype=np.float32),
    }
    path = tmp_path / "t.safetensors"
    save_file(tensors, str(path), metadata={"format": "pt"})
    blob = path.read_bytes()
    (n,) = struct.unpack("<Q", blob[:8])
    assert (8 + n) % 8 == 0
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    assert list(header)[0] == "__metadata__" and header["__metadata__"] == {"format": "pt"}
    assert blob[8:8 + n].rstrip(b" ") == blob[8:8 + n].rstrip()  # padded with spaces only
    assert header["scalar_f32"]["shape"] == [] and header["half"]["dtype"] == "F16"
    assert header["flags"]["dtype"] == "BOOL" and header["i64"]["dtype"] == "I64"
    # data laid out as the reference implementation does: by its Dtype enum order, descending
    # (U64, I64, F64, F32, U32, I32, BF16, F16, U16, I16, I8, U8, BOOL), then by name
    order = [k for k in header if k != "__metadata__"]
    assert order == ["i64", "f64", "empty", "scalar_f32", 'weird "name"\\ 卷积:0', "i32", "half", "u8", "flags"]
    offsets = [header[k]["data_offsets"] for k in order]
    assert offsets[0][0] == 0 and all(a[1] == b[0] for a, b in zip(offsets, offsets[1:]))
    back = load_file(str(path))
    assert sorted(back) == sorted(tensors)
    for k, v in tensors.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape, k
        np.testing.assert_array_equal(back[k], v)
    assert back["scalar_f32"].ndim == 0
    assert save_bytes(back, {"format": "pt"}) == blob


def test_safetensors_single_dtype_sorted_by_name():
    blob = save_bytes({"b": np.zeros(1, np.float32), "a": np.zeros(3, np.float32), "c": np.zeros(2, np.float32)})
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    assert list(header) == ["a", "b", "c"]
    assert header["a"]["data_offsets"] == [0, 12] and header["b"]["data_offsets"] == [12, 16]


def test_safetensors_rejects_corrupt_files():
    blob = save_bytes({"a": np.zeros(4, np.float32)})
    with pytest.raises(ValueError):
        load_bytes(blob[:-4])
    with pytest.raises(ValueError):
        load_bytes(blob[:6])


def test_safetensors_reads_bfloat16_as_float32():
    """numpy has no bfloat16: BF16 (ONNX's bf16 goldens) is read as float32, exactly."""
    import json
    import struct
    bits = np.array([0x3F80, 0xC040, 0x7F80, 0x0001], dtype="<u2")  # 1, -3, inf, smallest subnormal
    header = json.dumps({"b": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]}}).encode()
    header += b" " * (-len(header) % 8)
    got = load_bytes(struct.pack("<Q", len(header)) + header + bits.tobytes())[0]["b"]
    assert got.dtype == np.float32 and got.shape == (2, 2)
    assert got.ravel().tolist() == [1.0, -3.0, float("inf"), float(np.uint32(0x10000).view(np.float32))]
    header = json.dumps({"s": {"dtype": "BF16", "shape": [], "data_offsets": [0, 2]}}).encode()  # 0-d
    header += b" " * (-len(header) % 8)
    got = load_bytes(struct.pack("<Q", len(header)) + header + bits[1:2].tobytes())[0]["s"]
    assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.shape == () and float(got) == -3.0


# ----------------------------------------------------------------------------- golden data & semantics


@pytest.mark.parametrize("factory,shapes", [(Zoo, [[2, 3, 8, 8]]), (Zoo2, [[1, 4, 5, 6]]), (MLP, [[3, 784]])])
def test_golden_outputs_equal_model_outputs(factory, shapes):
    torch.manual_seed(0)
    model = factory().eval()
    result = export_torch(model, shapes, seed=123)
    torch.manual_seed(123)
    x = [torch.randn(s) for s in shapes]
    assert list(result.inputs) == [f"inp_{i}:0" for i in range(len(shapes))]
    for i, t in enumerate(x):
        np.testing.assert_array_equal(result.inputs[f"inp_{i}:0"], t.numpy())
    with torch.no_grad():
        out = model(*x)
    out = list(out) if isinstance(out, tuple) else [out]
    assert list(result.outputs) == result.graph.outputs
    for name, t in zip(result.graph.outputs, out):
        np.testing.assert_array_equal(result.outputs[name], t.numpy())
    # the exported graph + weights compute the same thing (reference interpreter)
    got = run_graph(result.graph, result.weights, result.inputs)
    for name in result.graph.outputs:
        np.testing.assert_allclose(got[name], result.outputs[name], rtol=1e-5, atol=1e-5)


def test_export_writes_files_and_is_deterministic(tmp_path):
    torch.manual_seed(0)
    model = Zoo().eval()
    export_torch(model, [[1, 3, 8, 8]], str(tmp_path / "a"), seed=5)
    export_torch(model, [[1, 3, 8, 8]], str(tmp_path / "b"), seed=5)
    for rel in ("graph.json", "weights.safetensors", "golden/inputs.safetensors", "golden/outputs.safetensors"):
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    graph = MSCGraph.load(str(tmp_path / "a" / "graph.json"))
    weights = load_file(str(tmp_path / "a" / "weights.safetensors"))
    assert sorted(weights) == sorted(graph.weight_tensors())
    for name, t in graph.weight_tensors().items():
        assert list(weights[name].shape) == t.shape and str(weights[name].dtype) == t.dtype
    assert list(load_file(str(tmp_path / "a" / "golden" / "inputs.safetensors"))) == graph.inputs
    assert sorted(load_file(str(tmp_path / "a" / "golden" / "outputs.safetensors"))) == sorted(graph.outputs)


def test_zoo_conventions():
    torch.manual_seed(0)
    graph, weights = translate_torch(Zoo(), [[2, 3, 8, 8]])
    by_name = {n.name: n for n in graph.nodes}
    conv = by_name["conv2d"]
    assert conv.optype == "msc.conv2d_bias"
    assert {k: (v.name, v.alias, v.layout, v.shape) for k, v in conv.weights.items()} == {
        "weight": ("const", "conv2d.weight", "OIHW", [8, 3, 3, 3]), "bias": ("const_1", "conv2d.bias", "O", [8])}
    bn = by_name["batch_norm"]
    assert [n.name for n in graph.nodes[2:4]] == ["batch_norm", "batch_norm.0"]
    assert {k: v.alias for k, v in bn.weights.items()} == {
        "gamma": "batch_norm.weight", "beta": "batch_norm.bias", "mean": "batch_norm.running_mean",
        "var": "batch_norm.running_var"}
    assert dict(bn.attrs) == {"axis": "1", "epsilon": "0.000010", "center": "1", "scale": "1",
                              "momentum": "0.100000", "training": "1"}
    assert len(bn.outputs) == 1
    item = by_name["batch_norm.0"]
    assert item.optype == "get_item" and item.inputs == ["batch_norm:0"] and item.attrs == {"index": "0"}
    assert dict(by_name["clip"].attrs) == {"min": "0", "max": "6"}              # ReLU6: int bounds
    assert dict(by_name["clip_1"].attrs) == {"min": "-0.500000", "max": "0.500000"}  # Hardtanh
    assert by_name["avg_pool2d"].attrs["count_include_pad"] == "1"
    assert by_name["avg_pool2d_1"].attrs["count_include_pad"] == "0"
    # the conv-bias add took the name "add" before fusion, so the next add is "add_1"
    assert "add" not in by_name and by_name["add_1"].optype == "add"
    # a parameter used as an operand is a constant node with a "const" weight aliased by node name
    scale = by_name["const_7"]
    assert scale.optype == "constant" and scale.weights["const"].alias == "const_7"
    assert scale.weights["const"].shape == [1, 8, 1, 1] and weights["const_7"].shape == (1, 8, 1, 1)
    # scalar operands: 0-d constant nodes with a "scalar" attr, 0-d weights
    half = by_name["const_8"]
    assert half.attrs == {"scalar": "0.500000"} and weights["const_8"].shape == ()
    # x[:, 0, 1:3, ::2]: strided_slice then reshape (the integer index drops the dim, as torch does)
    ss = by_name["strided_slice"]
    assert dict(ss.attrs) == {"assume_inbound": "0", "axes": "0,1,2,3", "begin": "0,0,1,0", "end": "2,1,3,4",
                              "strides": "1,1,1,2"}
    assert by_name["reshape"].attrs["shape"] == "2,2,2"
    lin = by_name["matmul"]
    assert lin.optype == "msc.linear_bias" and lin.weights["weight"].layout == "OI"
    assert lin.weights["weight"].shape == [5, 4] and weights[lin.weights["weight"].name].shape == (5, 4)
    out = by_name["tuple"]
    assert graph.outputs == ["tuple:0", "tuple:1"]
    assert [t.alias for t in out.outputs] == ["tuple_0", "tuple_1"]


def test_shared_weights_get_shared_ref():
    torch.manual_seed(0)
    graph, weights = translate_torch(Zoo2(), [[1, 4, 5, 6]])
    c0, c1 = graph.node("conv2d"), graph.node("conv2d_1")
    assert c0.shared_ref == "" and c1.shared_ref == "conv2d"
    assert c0.weights["weight"].name == c1.weights["weight"].name == "const"
    assert c0.weights["bias"].name != c1.weights["bias"].name  # bias constants are folded per use
    chunk = graph.node("split")
    assert [t.name for t in chunk.outputs] == ["split:0", "split:1"]
    items = [n for n in graph.nodes if n.optype == "get_item"]
    assert [(n.name, n.inputs, n.attrs["index"]) for n in items] == [
        ("split.0", ["split:0", "split:1"], "0"), ("split.1", ["split:0", "split:1"], "1")]


# ----------------------------------------------------------------------------- structure


def _check_topology(graph):
    produced = {}
    for pos, node in enumerate(graph.nodes):
        assert node.index == pos
        parents = []
        for t in node.inputs:
            producer, idx = t.rsplit(":", 1)
            assert t in produced and produced[t] == producer, (node.name, t)
            if producer not in parents:
                parents.append(producer)
        assert node.parents == parents, node.name
        for i, t in enumerate(node.outputs):
            assert t.name == f"{node.name}:{i}"
            produced[t.name] = node.name
    assert all(i in produced for i in graph.inputs) and all(o in produced for o in graph.outputs)


@pytest.mark.parametrize("factory,shapes", [(Zoo, [[2, 3, 8, 8]]), (Zoo2, [[1, 4, 5, 6]])])
def test_topological_order_and_parents(factory, shapes):
    torch.manual_seed(0)
    graph, _ = translate_torch(factory(), shapes)
    _check_topology(graph)
    _check_topology(MSCGraph.from_json(graph.to_json()))


def test_validate_reports_every_problem():
    graph = build_hostile()
    graph.nodes[3].inputs = ["nowhere:0"]
    graph.nodes[4].index = 9
    graph.nodes[5], graph.nodes[6] = graph.nodes[6], graph.nodes[5]
    with pytest.raises(GraphError) as info:
        validate(graph)
    msg = str(info.value)
    assert "input 'nowhere:0' is not produced by an earlier node" in msg
    assert "index 9 != position 4" in msg
    assert "is not produced by an earlier node" in msg.split("index 9")[1]  # the swapped reshape/linear


def test_resnet18():
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    result = export_torch(model, [[1, 3, 224, 224]], seed=0)
    graph = result.graph
    _check_topology(graph)
    counts = {}
    for n in graph.nodes:
        counts[n.optype] = counts.get(n.optype, 0) + 1
    assert counts == {"input": 1, "nn.conv2d": 20, "nn.batch_norm": 20, "get_item": 20, "nn.relu": 17, "add": 8,
                      "nn.max_pool2d": 1, "nn.adaptive_avg_pool2d": 1, "reshape": 1, "msc.linear_bias": 1}
    assert [n.name for n in graph.nodes[:6]] == ["inp_0", "conv2d", "batch_norm", "batch_norm.0", "relu",
                                                 "max_pool2d"]
    assert graph.outputs == ["matmul:0"] and graph.find_tensor("matmul:0").alias == "matmul"
    assert len(result.weights) == 102 and sorted(result.weights)[:3] == ["const", "const_1", "const_10"]
    assert graph.node("reshape").outputs[0].layout == "NW"  # MSC's reshape layout rule (InferReshapeAxes)
    got = run_graph(graph, result.weights, result.inputs)
    np.testing.assert_allclose(got["matmul:0"], result.outputs["matmul:0"], rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------------- hostile graph


def test_hostile_graph(tmp_path):
    paths = write_hostile(str(tmp_path))
    with open(paths["graph"], encoding="utf-8") as f:
        text = f.read()
    data = json.loads(text)  # valid JSON
    graph = MSCGraph.from_json(text)
    validate(graph)
    _check_topology(graph)
    names = [graph.name] + [n.name for n in graph.nodes] + list(graph.weight_tensors())
    blob = "".join(names)
    for frag in ('"', "\\", "\n", " ", ":", ".", "/", "../", "class", "def", "return", "int", "namespace",
                 "nœud", "卷积"):
        assert frag in blob, frag
    assert any(":" in n.name for n in graph.nodes)                      # split on the LAST ':'
    for node in graph.nodes:
        for t in node.inputs:
            assert split_tensor_name(t)[0] in node.parents
    assert sorted({n["optype"] for n in data["nodes"]}) == ["add", "concat", "input", "msc.linear_bias",
                                                            "nn.conv2d", "nn.relu", "reshape"]
    weights = load_file(paths["weights"])
    inputs = load_file(paths["golden_inputs"])
    outputs = load_file(paths["golden_outputs"])
    assert sorted(weights) == sorted(graph.weight_tensors())
    assert sorted(inputs) == sorted(graph.inputs) and sorted(outputs) == sorted(graph.outputs)
    got = run_graph(graph, weights, inputs)
    np.testing.assert_allclose(got[graph.outputs[0]], outputs[graph.outputs[0]], rtol=1e-5, atol=1e-6)
    w, i, o = hostile_data(0)
    np.testing.assert_array_equal(o[graph.outputs[0]], outputs[graph.outputs[0]])


# ----------------------------------------------------------------------------- CLI


def test_cli_export_and_validate(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    out = tmp_path / "cr"
    cmd = [sys.executable, "-m", "msc_export", "export", "--model", "torch.nn:Linear", "--kwargs",
           '{"in_features": 4, "out_features": 3}', "--input-shape", "2,4", "--out", str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    graph = MSCGraph.load(str(out / "graph.json"))
    assert [n.optype for n in graph.nodes] == ["input", "msc.linear_bias"]
    proc = subprocess.run([sys.executable, "-m", "msc_export", "validate", str(out / "graph.json"), "--weights",
                           str(out / "weights.safetensors"), "--golden", str(out / "golden")],
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "max abs error" in proc.stdout
    script = os.path.join(REPO, "python", "export_torch.py")
    proc = subprocess.run([script, "--model", "torch.nn:ReLU", "--input-shape", "1,5", "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                               if k != "PYTHONPATH"})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r" / "golden" / "outputs.safetensors").exists()


# ----------------------------------------------------------------------------- examples


def test_fashion_mnist_idx_reader():
    data_dir = "/usr/share/datasets/fashion-mnist"
    if not os.path.isdir(data_dir):
        pytest.skip("dataset-fashion-mnist is not installed")
    sys.path.insert(0, os.path.join(REPO, "examples", "fashion_mnist_mlp"))
    try:
        import export as fm  # noqa: WPS433
    finally:
        sys.path.pop(0)
    x, y = fm.load_split("t10k", data_dir)
    assert x.shape == (10000, 784) and x.dtype == np.float32 and 0.0 <= x.min() and x.max() <= 1.0
    assert y.shape == (10000,) and y.dtype == np.int64 and sorted(set(y.tolist())) == list(range(10))


def test_getitem_forms():
    class M(nn.Module):
        def forward(self, x):
            return x[:, :x.size(1) // 2, -3:], x[0, ..., None], x[1]

    result = export_torch(M(), [[2, 6, 5]])
    got = run_graph(result.graph, result.weights, result.inputs)
    for name in result.graph.outputs:
        np.testing.assert_array_equal(got[name], result.outputs[name])
    slices = [dict(n.attrs) for n in result.graph.nodes if n.optype == "strided_slice"]
    assert slices[0] == {"assume_inbound": "0", "axes": "0,1,2", "begin": "0,0,-3", "end": "2,3,5",
                         "strides": "1,1,1"}
    assert [n.attrs["shape"] for n in result.graph.nodes if n.optype == "reshape"] == ["2,3,3", "6,5,1", "6,5"]


def test_example_scripts(tmp_path):
    """examples/conv_relu/export.py and the run_example.sh driver (export side) work from a clean env."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([os.path.join(REPO, "examples", "conv_relu", "export.py"), "--out", str(tmp_path / "cr")],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    graph = MSCGraph.load(str(tmp_path / "cr" / "graph.json"))
    assert [n.name for n in graph.nodes] == ["inp_0", "conv2d", "relu"]
    if os.path.isdir(MSC_REAL):  # seeded like the reference: identical weights
        real = load_file(os.path.join(MSC_REAL, "conv_relu", "weights.safetensors"))
        np.testing.assert_array_equal(load_file(str(tmp_path / "cr" / "weights.safetensors"))["const"], real["const"])
    proc = subprocess.run(["bash", os.path.join(REPO, "examples", "run_example.sh"), "hostile", "", str(tmp_path / "ex")],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "export side done" in proc.stdout
    assert (tmp_path / "ex" / "hostile" / "export" / "golden" / "outputs.safetensors").exists()


def test_tuple_unpacking_and_trace_errors():
    torchvision = pytest.importorskip("torchvision")

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(4))

        def forward(self, x):
            b, c, h, w = x.size()                      # tuple unpacking of a proxy (py3.11 + torch 1.13)
            lo, hi = torch.chunk(x, 2, dim=1)
            y = torch.cat([hi, lo], 1).view(b, c, h * w).permute(0, 2, 1)
            y = F.layer_norm(y, (c,), self.w, None, 1e-6)
            return torchvision.ops.stochastic_depth(y, 0.2, "row", training=False)

    torch.manual_seed(0)
    result = export_torch(M(), [[2, 4, 3, 3]])
    assert [n.optype for n in result.graph.nodes] == ["input", "split", "get_item", "get_item", "concat", "reshape",
                                                      "permute_dims", "nn.layer_norm"]
    ln = result.graph.node("layer_norm")
    assert ln.attrs["epsilon"] == "0.000001" and ln.weights["beta"].shape == [4]
    got = run_graph(result.graph, result.weights, result.inputs)
    np.testing.assert_allclose(got[result.graph.outputs[0]], result.outputs[result.graph.outputs[0]], atol=1e-6)

    class Dynamic(nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x

    with pytest.raises(ExportError, match="torch.fx.symbolic_trace failed"):
        translate_torch(Dynamic(), [[2]])


def test_frontend_choice_errors():
    """`via` names a frontend; on a torch without torch.export (Debian's 1.13) the export path is
    an error naming the version and the way out, not an AttributeError."""
    model = torch.nn.Linear(3, 2)
    with pytest.raises(ExportError, match="via must be one of fx, export, got 'onnx'"):
        export_torch(model, [[1, 3]], via="onnx")
    if not hasattr(torch, "export"):
        with pytest.raises(ExportError, match=r"needs torch >= 2.1 \(torch.export\); this is torch 1\."):
            export_torch(model, [[1, 3]], via="export")
    else:  # torch 2.x (the venv): the same model through both paths gives the same graph
        a, b = (export_torch(model.eval(), [[1, 3]], via=v) for v in ("fx", "export"))
        assert [n.optype for n in a.graph.nodes] == [n.optype for n in b.graph.nodes] == ["input", "msc.linear_bias"]
