"""ONNX frontend end to end: the `import` command's contract, and real models exported with
Debian's torch.onnx (python/msc_export/onnx_models.py, opsets 13 and 17) imported and run on
torch, relax (static checks; real TVM when MSC_TVM_PYTHON or MSC_TVM_HOME is set: CI runs them on
the newest apache-tvm) and vulkan (all models merged
into one build, under the validation layer) against torch's own outputs.
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "relax"))
sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
from tvm_under_test import tvm_under_test  # noqa: E402
from msc_export.graph_merge import merge_graphs  # noqa: E402
from msc_export.safetensors_np import load_file, save_file  # noqa: E402

BINARY = os.environ.get("MSC_CODEGEN", os.path.join(ROOT, "build", "msc-codegen"))
PY = sys.executable  # MSC_PYTHON: Debian's stack + safetensors (scripts/install_venv.sh debian)
DATA = "/usr/share/libonnx-testdata/data"
NODE = DATA + "/node"
REFERENCE = os.environ.get("MSC_SHARED_REFERENCE_DIR", os.path.join(ROOT, "..", "shared", "reference"))
MODELS = [(m, o) for m in ("resnet18", "mobilenet_v2", "efficientnet_b0", "text_transformer") for o in (13, 17)]


def cli(*args):
    return subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True, timeout=600)


# --- the import command


def test_import_writes_graph_weights_and_golden(tmp_path):
    # torch.onnx's Conv2d export: weight and bias are initializers '1' and '2', the input is '0'
    src = os.path.join(DATA, "pytorch-converted", "test_Conv2d")
    out = tmp_path / "imp"
    p = cli("import", os.path.join(src, "model.onnx"), "--out", out, "--golden-from",
            os.path.join(src, "test_data_set_0"))
    assert p.returncode == 0, p.stderr
    g = json.loads((out / "graph.json").read_text())
    assert g["inputs"] == ["0:0"] and g["outputs"] == ["conv2d:0"]
    conv = g["nodes"][1]
    assert (conv["name"], conv["optype"]) == ("conv2d", "msc.conv2d_bias")
    assert conv["attrs"]["strides"] == "1,1" and conv["attrs"]["padding"] == "0,0,0,0"
    w, b = conv["weights"]["weight"], conv["weights"]["bias"]
    assert (w["name"], w["alias"], w["layout"], w["shape"]) == ("const", "1", "OIHW", [4, 3, 3, 2])
    assert (b["name"], b["alias"], b["layout"], b["shape"]) == ("const_1", "2", "O", [4])
    assert conv["outputs"][0]["alias"] == "3"
    assert set(load_file(str(out / "weights.safetensors"))) == {"const", "const_1"}
    golden_in = load_file(str(out / "golden" / "inputs.safetensors"))
    assert list(golden_in) == ["0:0"] and golden_in["0:0"].shape == (2, 3, 7, 5)
    # what import wrote, generate accepts, and the numbers match ONNX's expected output
    p = cli("generate", "--graph", out / "graph.json", "--weights", out / "weights.safetensors", "--golden",
            out / "golden", "--backend", "torch", "--out", tmp_path / "torch")
    assert p.returncode == 0, p.stderr
    run = subprocess.run([PY, "test_model.py"], cwd=tmp_path / "torch", capture_output=True, text=True)
    assert "PASSED" in run.stdout, run.stdout + run.stderr


def test_generate_accepts_onnx_directly_and_rejects_weights(tmp_path):
    src = os.path.join(NODE, "test_relu")
    p = cli("generate", "--graph", os.path.join(src, "model.onnx"), "--golden", os.path.join(src, "test_data_set_0"),
            "--backend", "torch", "--out", tmp_path / "t")
    assert p.returncode == 0, p.stderr
    run = subprocess.run([PY, "test_model.py"], cwd=tmp_path / "t", capture_output=True, text=True)
    assert "PASSED" in run.stdout, run.stdout + run.stderr
    p = cli("generate", "--graph", os.path.join(src, "model.onnx"), "--weights", "w.safetensors",
            "--backend", "torch", "--out", tmp_path / "t2")
    assert p.returncode == 1
    assert "an ONNX model carries its weights (initializers); drop --weights" in p.stderr
    assert not (tmp_path / "t2").exists()


def test_generate_golden_from_onnx_test_folder_without_inputs(tmp_path):
    # test_constant has no graph input: its test-data folder holds output_0.pb alone
    src = os.path.join(NODE, "test_constant")
    p = cli("generate", "--graph", os.path.join(src, "model.onnx"), "--golden", os.path.join(src, "test_data_set_0"),
            "--backend", "torch", "--out", tmp_path / "t")
    assert p.returncode == 0, p.stderr
    run = subprocess.run([PY, "test_model.py"], cwd=tmp_path / "t", capture_output=True, text=True)
    assert "PASSED" in run.stdout, run.stdout + run.stderr


def test_unsupported_ops_listed_together_and_nothing_written(tmp_path):
    # a Loop (control flow) has no MSC optype
    src = os.path.join(NODE, "test_range_float_type_positive_delta_expanded")
    p = cli("import", os.path.join(src, "model.onnx"), "--out", tmp_path / "x")
    assert p.returncode == 1
    assert "unsupported ONNX op type" in p.stderr and "Loop: node" in p.stderr and "(opset 11)" in p.stderr
    assert not (tmp_path / "x").exists()


def test_import_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage\xff\xff")
    p = cli("import", bad, "--out", tmp_path / "x")
    assert p.returncode == 1 and p.stderr.startswith("error: %s: not an ONNX model" % bad)
    src = os.path.join(NODE, "test_relu")
    p = cli("import", os.path.join(src, "model.onnx"), "--out", tmp_path / "x", "--input-shape", "nope=1,2")
    assert p.returncode == 1 and "--input-shape names 'nope', which is not a graph input" in p.stderr
    p = cli("import", os.path.join(src, "model.onnx"), "--out", tmp_path / "x", "--golden-from",
            os.path.join(NODE, "test_abs", "test_data_set_0"))
    assert p.returncode == 0  # same shapes: accepted
    p = cli("import", os.path.join(src, "model.onnx"), "--out", tmp_path / "y", "--golden-from",
            os.path.join(NODE, "test_add", "test_data_set_0"))
    assert p.returncode == 1 and "input_N.pb files, the graph has 1 inputs" in p.stderr
    assert not (tmp_path / "y").exists()


# --- real models


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("onnx_models")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    dirs = {}
    for model, opset in MODELS:
        out = root / ("%s_%d" % (model, opset))
        subprocess.run([PY, "-m", "msc_export.onnx_models", model, "--opset", str(opset), "--out", str(out)],
                       check=True, env=env, cwd="/", capture_output=True)
        imp = root / ("%s_%d_import" % (model, opset))
        p = cli("import", out / "model.onnx", "--out", imp, "--golden-from", out / "test_data_set_0")
        assert p.returncode == 0, p.stderr
        dirs[(model, opset)] = (out, imp)
    return dirs


@pytest.mark.parametrize("model,opset", MODELS)
def test_real_model_torch(exported, model, opset, tmp_path):
    out, _ = exported[(model, opset)]
    p = cli("generate", "--graph", out / "model.onnx", "--golden", out / "test_data_set_0", "--backend", "torch",
            "--out", tmp_path / "torch")
    assert p.returncode == 0, p.stderr
    run = subprocess.run([PY, "test_model.py", "--atol", "1e-4", "--rtol", "1e-4"], cwd=tmp_path / "torch",
                         capture_output=True, text=True, timeout=600)
    assert "PASSED" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize("model,opset", MODELS)
def test_real_model_relax(exported, model, opset, tmp_path):
    import relax_check
    _, imp = exported[(model, opset)]
    p = cli("generate", "--graph", imp / "graph.json", "--weights", imp / "weights.safetensors", "--golden",
            imp / "golden", "--backend", "relax", "--out", tmp_path / "relax")
    assert p.returncode == 0, p.stderr
    sigs, removed = relax_check.load_signatures(os.path.join(REFERENCE, "relax_ops.json"),
                                                os.path.join(ROOT, "tests", "relax", "relax_api_extra.json"),
                                                os.path.join(REFERENCE, "relax_ops_v020_all.json"))
    source = (tmp_path / "relax" / "model.py").read_text()
    # the graph after the relax backend's passes (fold_constant), which model.py is for
    ctx = cli("context", imp / "graph.json", "--backend", "relax", "--project", "--weights", imp / "weights.safetensors")
    assert ctx.returncode == 0, ctx.stderr
    graph = relax_check.graph_from_context(json.loads(ctx.stdout), json.loads((imp / "graph.json").read_text()))
    assert relax_check.api_problems(source, sigs, removed, "model.py") == []
    newest = relax_check.load_newest_signatures(sigs, os.path.join(ROOT, "tests", "relax", "relax_ops_newest.json"))
    assert relax_check.api_problems(source, newest, {}, "model.py") == []
    assert relax_check.omitted_changed_defaults(source, newest, relax_check.changed_defaults(sigs, newest)) == []
    assert relax_check.struct_info_problems(source, graph) == []
    found = tvm_under_test(PY)
    if found:  # the real thing: CI's newest apache-tvm (MSC_TVM_PYTHON), or a TVM build (MSC_TVM_HOME)
        python, env = found
        run = subprocess.run([python, "test_model.py", "--atol", "1e-4", "--rtol", "1e-4"], cwd=tmp_path / "relax",
                             capture_output=True, text=True, env=env, timeout=1200)
        assert "PASSED" in run.stdout, run.stdout + run.stderr


def test_real_models_vulkan(exported, tmp_path):
    parts, weights, inputs, outputs = [], {}, {}, {}
    for i, key in enumerate(MODELS):
        _, imp = exported[key]
        prefix = "m%d_" % i
        parts.append((prefix, json.loads((imp / "graph.json").read_text())))
        for src, dst in ((imp / "weights.safetensors", weights), (imp / "golden" / "inputs.safetensors", inputs),
                         (imp / "golden" / "outputs.safetensors", outputs)):
            dst.update({prefix + k: v for k, v in load_file(str(src)).items()})
    (tmp_path / "golden").mkdir()
    (tmp_path / "graph.json").write_text(json.dumps(merge_graphs(parts, "onnx_models")))
    save_file(weights, str(tmp_path / "weights.safetensors"))
    save_file(inputs, str(tmp_path / "golden" / "inputs.safetensors"))
    save_file(outputs, str(tmp_path / "golden" / "outputs.safetensors"))
    p = cli("generate", "--graph", tmp_path / "graph.json", "--weights", tmp_path / "weights.safetensors",
            "--golden", tmp_path / "golden", "--backend", "vulkan", "--out", tmp_path / "vulkan")
    assert p.returncode == 0, p.stderr
    run = subprocess.run(["bash", "run_test.sh"], cwd=tmp_path / "vulkan", capture_output=True, text=True,
                         timeout=1800, env=dict(os.environ, MSC_VK_VALIDATION="1"))
    print(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "golden check: PASS" in run.stdout
    assert run.stdout.count(" PASS") == len(MODELS) + 1
