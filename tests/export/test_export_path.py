"""The torch.export frontend (python/msc_export/export_importer.py) on torch 2.x: run with the
project's venv (ctest `export_path`; scripts/install_venv.sh), never with Debian's torch 1.13.

* small models through both frontends (fx and export) give graphs whose reference-interpreter
  outputs equal the torch model's, and the same MSC optypes where the two paths should agree;
* the ATen ops the importer maps (one model per family) compute the model's outputs;
* `python -m msc_export import-pt2` on a torch.export.save file writes a graph, weights and golden
  data that validate; the generated torch project passes its golden test on this torch;
* torch.export.Dim dims become MSC prims, and the projects generated from such a graph compute
  the model at other sizes; what cannot be written as prims is a clear error;
* unsupported ATen ops are one error listing every node, and nothing is written; a missing or a
  corrupt .pt2 are clear errors.
"""
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

from msc_export import ExportError, UnsupportedOpsError, export_torch, import_pt2  # noqa: E402
from msc_export.interp import run_graph  # noqa: E402

sys.path.insert(0, HERE)
import aten_models  # noqa: E402

BINARY = os.environ.get("MSC_CODEGEN", os.path.join(ROOT, "build", "msc-codegen"))


def _check(result, atol=1e-5):
    got = run_graph(result.graph, result.weights, result.inputs)
    for name in result.graph.outputs:
        np.testing.assert_allclose(got[name], result.outputs[name], rtol=1e-4, atol=atol, err_msg=name)


def _counts(result):
    return Counter(n.optype for n in result.graph.nodes)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, groups=2, bias=False)
        self.pool = nn.MaxPool2d(2, ceil_mode=True)
        self.avg = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        x = F.hardswish(self.conv2(x))
        x = self.pool(x)
        return self.fc(torch.flatten(self.avg(x), 1))


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.proj = nn.Linear(16, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, s, 3, 2, 8).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.proj(y.transpose(1, 2).reshape(b, s, 16))


def _calibrated(model):
    torch.manual_seed(0)
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(4, 3, 16, 16))
    return model.eval()


@pytest.mark.parametrize("via", ["fx", "export"])
def test_small_cnn_both_paths(via):
    r = export_torch(_calibrated(SmallCNN()), [[1, 3, 16, 16]], via=via)
    _check(r)
    c = _counts(r)
    assert c["nn.batch_norm"] == 1 and c["msc.linear_bias"] == 1 and c["nn.max_pool2d"] == 1
    assert c["nn.adaptive_avg_pool2d"] == 1  # kept whole on the export path (PRESERVED_OPS)
    assert c["msc.conv2d_bias"] + c["nn.conv2d"] == 2


def test_export_and_fx_agree_on_the_cnn():
    model = _calibrated(SmallCNN())
    a, b = (export_torch(model, [[1, 3, 16, 16]], via=v) for v in ("fx", "export"))
    assert _counts(a) == _counts(b)
    assert [t.shape for t in a.weights.values()] == [t.shape for t in b.weights.values()]


@pytest.mark.parametrize("via", ["fx", "export"])
def test_attention_becomes_msc_attention(via):
    torch.manual_seed(0)
    r = export_torch(Attention().eval(), [[2, 5, 16]], via=via)
    _check(r)
    c = _counts(r)
    assert c["msc.attention"] == 1 and c["nn.layer_norm"] == 1 and c["msc.linear_bias"] == 2


@pytest.mark.parametrize("name", sorted(aten_models.MODELS))
def test_aten_op_families(name):
    """Every mapped ATen op family computes the model's outputs (reference interpreter)."""
    model, shapes, dtypes, inputs = aten_models.MODELS[name]()
    r = export_torch(model, shapes, input_dtypes=dtypes, inputs=inputs, via="export")
    _check(r)
    assert len(r.graph.outputs) == {"aten_families": 7, "aten_more": 9, "aten_composed": 6}[name]
    if name == "aten_more":  # kept whole or mapped one to one, not decomposed into gathers
        c = _counts(r)
        for optype in ("image.resize2d", "nn.pad", "nn.group_norm", "topk", "scatter_elements", "cumsum",
                       "variance", "argmax", "nn.log_softmax", "nn.leakyrelu", "tile", "floor_mod"):
            assert c[optype] >= 1, optype


def test_import_pt2_cli_and_torch_project(tmp_path):
    model = _calibrated(SmallCNN())
    ep = torch.export.export(model, (torch.randn(1, 3, 16, 16),))
    pt2 = tmp_path / "model.pt2"
    torch.export.save(ep, str(pt2))
    out = tmp_path / "graph"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    proc = subprocess.run([sys.executable, "-m", "msc_export", "import-pt2", str(pt2), "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "imported" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "msc_export", "validate", str(out / "graph.json"), "--weights",
                           str(out / "weights.safetensors"), "--golden", str(out / "golden")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # golden outputs are the program's own, and the graph equals a direct export's
    direct = import_pt2(str(pt2))
    np.testing.assert_allclose(list(direct.outputs.values())[0],
                               model(torch.from_numpy(direct.inputs["inp_0:0"])).detach().numpy(), atol=1e-6)
    if os.path.isfile(BINARY):
        project = tmp_path / "torch"
        gen = subprocess.run([BINARY, "generate", "--graph", str(out / "graph.json"), "--weights",
                              str(out / "weights.safetensors"), "--golden", str(out / "golden"), "--backend",
                              "torch", "--out", str(project)], capture_output=True, text=True, timeout=600)
        assert gen.returncode == 0, gen.stderr
        run = subprocess.run([sys.executable, "test_model.py"], cwd=project, capture_output=True, text=True,
                             timeout=600)
        assert run.returncode == 0 and "PASSED" in run.stdout, run.stdout + run.stderr


class Unsupported(nn.Module):
    def forward(self, x):
        return torch.cumprod(x, 1) + torch.cumprod(x.flip(0), 1) + torch.sort(x, 1).values


def test_unsupported_ops_listed_at_once(tmp_path):
    with pytest.raises(UnsupportedOpsError) as info:
        export_torch(Unsupported(), [[2, 3]], out_dir=str(tmp_path / "out"), via="export")
    text = str(info.value)
    assert text.startswith("3 unsupported ATen op use(s)")
    assert text.count("aten.cumprod") == 2 and "aten.sort" in text and "aten.flip" not in text
    assert "cumprod: " in text and "cumprod_1: " in text  # node names
    assert not (tmp_path / "out").exists()


def test_bad_pt2_files(tmp_path):
    with pytest.raises(ExportError, match="no such file"):
        import_pt2(str(tmp_path / "missing.pt2"))
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(ExportError, match="bad.pt2: not a torch.export.save file"):
        import_pt2(str(bad))


def _generate(graph_dir, backend, out, *extra):
    """msc-codegen generate; with the golden data unless `extra` specializes to other shapes."""
    golden = [] if "--shape" in extra else ["--golden", str(graph_dir / "golden")]
    gen = subprocess.run([BINARY, "generate", "--graph", str(graph_dir / "graph.json"), "--weights",
                          str(graph_dir / "weights.safetensors"), *golden, "--backend", backend, "--out", str(out),
                          *extra], capture_output=True, text=True, timeout=600)
    assert gen.returncode == 0, gen.stderr
    return out


def _load_project(path, name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, str(path / "model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not os.path.isfile(BINARY), reason="needs the msc-codegen binary (MSC_CODEGEN)")
def test_dynamic_dims_become_prims(tmp_path):
    """torch.export.Dim batch and seq on a transformer encoder layer: the graph writes them as MSC
    prims (batch * seq for the flattened tokens, batch * heads for attention); the torch and numpy
    projects generated from the dynamic graph compute the model at sizes other than the golden
    data's, and a --shape-specialized project at the new size too."""
    from msc_export.export_importer import DynamicDim
    torch.manual_seed(0)
    model = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.0).eval()
    out = tmp_path / "graph"
    result = export_torch(model, [[2, 5, 32]], str(out), via="export",
                          dynamic={(0, 0): DynamicDim("batch"), (0, 1): DynamicDim("seq", 2, 64)})
    prims = {p["name"]: p for p in result.graph.prims}
    assert prims["batch"]["optype"] == "shape" and prims["batch"]["attrs"] == {"producer": "inp_0", "out_idx": "0",
                                                                               "dim": "0"}
    assert prims["seq"]["attrs"]["dim"] == "1"
    products = [p for p in result.graph.prims if p["optype"] == "Mul" and sorted(p["parents"]) == ["batch", "seq"]]
    assert len(products) == 1, result.graph.prims
    inp = result.graph.find_tensor("inp_0:0")
    assert inp.shape == [-1, -1, 32] and inp.prims == ["batch", "seq", "32"]
    out_t = result.graph.find_tensor(result.graph.outputs[0])
    assert out_t.shape == [-1, -1, 32] and out_t.prims == ["batch", "seq", "32"]
    assert any(t.prims and products[0]["name"] in t.prims for n in result.graph.nodes for t in n.outputs)
    _check(result)  # the interpreter at the golden (example) sizes
    x = torch.randn(3, 7, 32)
    with torch.no_grad():
        want = model(x).numpy()
    torch_project = _load_project(_generate(out, "torch", tmp_path / "torch"), "dyn_torch_model")
    net = torch_project.load_model()
    with torch.no_grad():
        np.testing.assert_allclose(net(x).numpy(), want, atol=1e-5, rtol=1e-4)
    numpy_project = _load_project(_generate(out, "numpy", tmp_path / "numpy"), "dyn_numpy_model")
    np.testing.assert_allclose(numpy_project.run(x.numpy())[0], want, atol=1e-5, rtol=1e-4)
    relax = _generate(out, "relax", tmp_path / "relax")  # one tir.Var per prim, built on the newest TVM
    run = subprocess.run([sys.executable, "test_model.py"], cwd=relax, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and "PASSED" in run.stdout, run.stdout + run.stderr
    static = _load_project(_generate(out, "torch", tmp_path / "static", "--shape", "inp_0=3,7,32"), "dyn_static")
    with torch.no_grad():
        np.testing.assert_allclose(static.load_model()(x).numpy(), want, atol=1e-5, rtol=1e-4)
    # .pt2 files keep the dims (named after their symbols: the Dim names are not saved)
    ep = torch.export.export(model, (torch.randn(2, 5, 32),), dynamic_shapes=({0: torch.export.Dim("b")},))
    torch.export.save(ep, str(tmp_path / "dyn.pt2"))
    loaded = import_pt2(str(tmp_path / "dyn.pt2"))
    assert loaded.graph.find_tensor("inp_0:0").shape == [-1, 5, 32] and loaded.graph.prims[0]["optype"] == "shape"
    _check(loaded)


def test_dynamic_dims_errors(tmp_path):
    from msc_export.export_importer import DynamicDim
    # a strided convolution over a dynamic spatial dim: floor((h - 3) / 2) + 1 is not a polynomial
    with pytest.raises(ExportError, match=r"dim 2 of tensor conv2d:0 .* at h=9/10/11: not an integer polynomial"):
        export_torch(nn.Conv2d(3, 4, 3, stride=2), [[1, 3, 9, 9]], via="export",
                     dynamic={(0, 2): DynamicDim("h", 5, 64)})
    with pytest.raises(ExportError, match="dynamic dims need --via export"):
        export_torch(nn.Linear(4, 2), [[3, 4]], dynamic={(0, 0): DynamicDim("batch")})
    with pytest.raises(ExportError, match="input 0 has no dim 5"):
        export_torch(nn.Linear(4, 2), [[3, 4]], via="export", dynamic={(0, 5): DynamicDim("batch")})
    with pytest.raises(ExportError, match="fewer than three sizes"):
        export_torch(nn.Linear(4, 2), [[3, 4]], via="export", dynamic={(0, 0): DynamicDim("batch", 2, 3)})
    for text in ("0:0", "a:0=b", "0:0=x:1", "0:0=not-a-name"):
        with pytest.raises(ExportError):
            DynamicDim.parse(text)
    assert DynamicDim.parse("1:2=seq:2:512")[0] == (1, 2)
    out = tmp_path / "cli"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    proc = subprocess.run([sys.executable, "-m", "msc_export", "export", "--model", "torch.nn:Linear", "--kwargs",
                           '{"in_features": 4, "out_features": 2}', "--input-shape", "3,4", "--via", "export",
                           "--dynamic", "0:0=batch", "--out", str(out)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    import json
    graph = json.loads((out / "graph.json").read_text())
    assert [p["name"] for p in graph["prims"]] == ["batch"]


class MaskedAttention(nn.Module):
    """scaled_dot_product_attention with a bool mask: True marks the positions that attend."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.ones(5, 5, dtype=torch.bool).tril())

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask)


@pytest.mark.parametrize("via", ["fx", "export"])
def test_sdpa_bool_mask_marks_positions_that_attend(via):
    """Regression: both paths once made the bool mask additive with True = masked out (the
    nn.MultiheadAttention meaning), which inverted it (and gave NaN rows)."""
    torch.manual_seed(0)
    r = export_torch(MaskedAttention().eval(), [[1, 2, 5, 4]] * 3, via=via)
    _check(r)
    assert _counts(r)["msc.attention"] == 1


class SharedKV(nn.Module):
    """Attention whose key / value have fewer heads than the query: one (multi-query, Falcon) that
    SDPA broadcasts, or N / 2 shared by pairs of query heads (enable_gqa, Mistral / LLaMA 2)."""

    def __init__(self, gqa):
        super().__init__()
        self.gqa = gqa

    def forward(self, q, k, v):
        if self.gqa:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


@pytest.mark.parametrize("via", ["fx", "export"])
@pytest.mark.parametrize("gqa", [False, True], ids=["multi_query", "grouped_query"])
def test_sdpa_shared_key_value_heads(via, gqa):
    """Regression: the key / value went into msc.attention with fewer heads than the query, which
    msc.attention (and relax's nn.attention) does not take: the Vulkan runtime refused Falcon's
    graph. They are repeated to the query's heads, in repeat_interleave's order for enable_gqa."""
    torch.manual_seed(0)
    kv_heads = 2 if gqa else 1
    r = export_torch(SharedKV(gqa).eval(), [[1, 4, 5, 8], [1, kv_heads, 5, 8], [1, kv_heads, 5, 8]], via=via)
    _check(r)
    att = [n for n in r.graph.nodes if n.optype == "msc.attention"]
    assert len(att) == 1 and _counts(r)["repeat"] == 2
    shapes = {t.name: t.shape for n in r.graph.nodes for t in n.outputs}
    assert [shapes[t][1] for t in att[0].inputs[:3]] == [4, 4, 4]


def test_sdpa_heads_that_do_not_broadcast_are_an_error():
    # torch.export refuses them itself; torch.fx traces without running the shapes
    with pytest.raises(ExportError, match="head count 3 does not broadcast to the query's 4"):
        export_torch(SharedKV(False).eval(), [[1, 4, 5, 8], [1, 3, 5, 8], [1, 3, 5, 8]], via="fx")


class Indexing(nn.Module):
    """x.T / x.mT, an index list (consecutive: a slice; not: a take), a cat with torch's legacy
    empty 1-d tensor and a dtype= computed at trace time (Falcon's forward has each); x.sum()
    (regression: the export path decomposes it to sum.dim_IntList(x, []), which reduces every
    dim, and converted it as a sum over none)."""

    def forward(self, x):
        a = x[..., [-2], :] + x[:, [2, 0, 2]][:, :1, :]
        b = torch.cat([torch.tensor([], dtype=x.dtype), x.T.reshape(-1)], 0)
        c = torch.ones(3, dtype=x.dtype)
        return a, b + b.sum(), c * x.sum(), x.mT * 2


@pytest.mark.parametrize("via", ["fx", "export"])
def test_index_lists_transposes_and_legacy_empty_cat(via):
    r = export_torch(Indexing().eval(), [[2, 3, 4]], via=via)
    _check(r)


class SmallBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.norm = nn.LayerNorm(16)
        self.fc = nn.Linear(16, 8)

    def forward(self, x):
        return self.fc(self.norm(self.conv(x).flatten(2)))


@pytest.mark.parametrize("via", ["fx", "export"])
def test_bfloat16_models_export(via, tmp_path):
    """A bfloat16 model (today's default for LLM checkpoints) exports with bfloat16 tensors: the
    convolution and linear keep their input's dtype (out_dtype, where TVM v0.20 wrote "float32"),
    the weights and golden data are BF16 bit for bit (ml_dtypes' bfloat16 in numpy).
    Regression: "unsupported torch dtype torch.bfloat16"."""
    import json
    import ml_dtypes
    torch.manual_seed(0)
    model = SmallBlock().eval().to(torch.bfloat16)
    x = torch.randn(1, 3, 4, 4).to(torch.bfloat16)
    r = export_torch(model, [[1, 3, 4, 4]], input_dtypes=["bfloat16"], inputs=[x.float().numpy().astype(ml_dtypes.bfloat16)],
                     out_dir=str(tmp_path / "out"), via=via)
    graph = json.loads((tmp_path / "out" / "graph.json").read_text())
    dtypes = {t["dtype"] for n in graph["nodes"] for t in n["outputs"]}
    assert dtypes == {"bfloat16"}, dtypes
    assert {n["attrs"].get("out_dtype") for n in graph["nodes"] if "out_dtype" in n["attrs"]} == {"bfloat16"}
    with torch.no_grad():
        want = model(x).view(torch.int16).numpy()
    (got,) = r.outputs.values()
    assert got.dtype.name == "bfloat16" and np.array_equal(got.view(np.int16), want)
    blob = (tmp_path / "out" / "weights.safetensors").read_bytes()
    header = json.loads(blob[8:8 + int.from_bytes(blob[:8], "little")])
    assert {v["dtype"] for k, v in header.items() if k != "__metadata__"} == {"BF16"}


class BlockOps(SmallBlock):
    """SmallBlock and elementwise ops that TVM does not take in bfloat16 (power)."""

    def forward(self, x):
        y = super().forward(x)
        return y + 0.1 * torch.pow(y, 3.0) - torch.exp(-y * y)


@pytest.mark.skipif(not os.path.isfile(BINARY), reason="needs the msc-codegen binary (MSC_CODEGEN)")
def test_bfloat16_model_on_every_backend(tmp_path):
    """A bfloat16 model's projects pass their golden tests (bfloat16 tolerance) on every backend
    that generates them; a backend that cannot hold bfloat16 tensors refuses at generation with
    an error naming the dtype. Backends whose projects build (merged in the suites) are checked at
    generation only."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
    import backends
    import ml_dtypes
    torch.manual_seed(0)
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(ml_dtypes.bfloat16)
    export_torch(BlockOps().eval().to(torch.bfloat16), [[1, 3, 4, 4]], input_dtypes=["bfloat16"], inputs=[x],
                 out_dir=str(tmp_path / "out"), via="export")
    sources = ["--graph", tmp_path / "out" / "graph.json", "--weights", tmp_path / "out" / "weights.safetensors",
               "--golden", tmp_path / "out" / "golden"]
    ran = []
    for backend in backends.discover(BINARY):
        project = tmp_path / backend.name
        gen = subprocess.run([BINARY, "generate", *map(str, sources), "--backend", backend.name, "--out",
                              str(project)], capture_output=True, text=True, timeout=600)
        if gen.returncode != 0:
            assert "bfloat16" in gen.stderr, gen.stderr
            continue
        if backend.merge:
            continue
        run = backends.run_project(backend, project, sys.executable, timeout=900)
        assert run.returncode == 0, (backend.name, run.stdout[-3000:] + run.stderr[-3000:])
        ran.append(backend.name)
    assert len(ran) >= 2, ran


class IntegerLog(nn.Module):
    """DeBERTa's relative-position buckets take the log of an integer tensor: torch computes it in
    float32; relax's log (a float-only op) refuses an integer input."""

    def forward(self, x):
        return torch.log(x) + torch.sqrt(x) * torch.exp(-x)


@pytest.mark.parametrize("via", ["fx", "export"])
def test_float_only_ops_of_integer_tensors_compute_in_float32(via):
    """Regression: the int64 input went straight into relax.log / sqrt / exp with an int64 output,
    which apache-tvm's BlockBuilder refuses (hf_deberta_v2's relax project did not build)."""
    x = np.arange(1, 11, dtype=np.int64).reshape(2, 5)
    r = export_torch(IntegerLog().eval(), [[2, 5]], input_dtypes=["int64"], inputs=[x], via=via)
    _check(r)
    casts = [n for n in r.graph.nodes if n.optype == "astype"]
    assert casts and all(n.outputs[0].dtype == "float32" for n in casts)


def test_relax_stand_in_checks_what_relax_checks():
    """The builder's shape inference (python/msc_export/relax_ir.py) refuses what relax's
    InferStructInfo refuses, so a bad conversion fails at export, not in a backend."""
    from msc_export import relax_ir as R
    a = R.Var("a", R.TensorSI((1, 5, 4, 8), "float32"))
    k1 = R.Var("k", R.TensorSI((1, 5, 1, 8), "float32"))
    with pytest.raises(ValueError, match="head count differs"):
        R.make_call("relax.nn.attention", [a, k1, k1])
    with pytest.raises(ValueError, match="does not join"):
        R.make_call("relax.concat", [R.Tuple([R.Var("e", R.TensorSI((0,), "float32")), a])], axis=0)
    assert R.make_call("relax.repeat", [k1], repeats=4, axis=2).sinfo.shape == (1, 5, 4, 8)
    with pytest.raises(ValueError, match="float dtype, not int64"):
        R.make_call("relax.log", [R.Var("i", R.TensorSI((3,), "int64"))])


def test_docs_name_every_core_aten_op_not_converted():
    """docs/torch-export.md gives the reason for every core ATen op the importer leaves out, and
    states the counts for this torch."""
    from msc_export.export_importer import core_aten_coverage
    covered, missing = core_aten_coverage()
    with open(os.path.join(ROOT, "docs", "torch-export.md"), encoding="utf-8") as f:
        doc = f.read()
    assert [op for op in missing if "`%s`" % op not in doc] == []
    assert "%d core ATen overloads, **%d converted**, %d not" % (len(covered) + len(missing), len(covered),
                                                                  len(missing)) in doc
