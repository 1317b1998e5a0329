"""ONNX frontend end to end: the `import` command's contract, and real models exported with
Debian's torch.onnx (python/msc_export/onnx_models.py, opsets 13 and 17) imported and run on every
backend the suite finds (tests/common/backends.py; relax on the TVM under test -- CI: the newest
apache-tvm -- or the fake TVM; a backend that builds, vulkan, with all models merged into one
project, under the validation layer) against torch's own outputs, and the relax projects' API
checked statically against TVM's op signatures.
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
import backends  # noqa: E402
from merged import run_merged  # noqa: E402
from msc_export.safetensors_np import load_file  # noqa: E402

BINARY = os.environ.get("MSC_CODEGEN", os.path.join(ROOT, "build", "msc-codegen"))
PY = sys.executable  # MSC_PYTHON: Debian's stack + safetensors (scripts/install_venv.sh debian)
DATA = "/usr/share/libonnx-testdata/data"
NODE = DATA + "/node"
REFERENCE = os.environ.get("MSC_SHARED_REFERENCE_DIR", os.path.join(ROOT, "..", "shared", "reference"))
MODELS = [(m, o) for m in ("resnet18", "mobilenet_v2", "efficientnet_b0", "text_transformer") for o in (13, 17)]
BACKENDS = backends.discover(BINARY)


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


def _save(tmp_path, nodes, inputs, outputs, opset=17, ir_version=8, inits=()):
    from onnx import helper
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def _class_token_chain(shape_node, y_shape=(1, 4, 4)):
    """torch.onnx's `cls.expand(n, -1, -1)` at a static n (vit_b_16): the Expand shape from
    Constant -> ConstantOfShape -> Mul -> Equal -> Where, then a Concat that needs its dims."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    c = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64)))  # noqa: E731
    nodes = [c("target", [1, -1, -1]), c("three", [3]),
             helper.make_node("ConstantOfShape", ["three"], ["ones"],
                              value=numpy_helper.from_array(np.array([1], np.int64))),
             c("minus1", -1), helper.make_node("Mul", ["ones", "minus1"], ["neg"]),
             helper.make_node("Equal", ["target", "neg"], ["eq"]),
             helper.make_node("Where", ["eq", "ones", "target"], ["shape"]),
             shape_node,
             helper.make_node("Concat", ["tok", "x"], ["y"], axis=1)]
    token = numpy_helper.from_array(np.ones((1, 1, 4), np.float32), "cls")
    return nodes, token, helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4]), \
        helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y_shape))


def test_import_folds_every_node_with_known_inputs(tmp_path):
    # ONNX's inference names the Expand's dims unk__N before the shape is folded; the importer
    # must not keep those stale symbols once the shape is known (vit_b_16 from torch.onnx)
    from onnx import helper
    nodes, token, x, y = _class_token_chain(helper.make_node("Expand", ["cls", "shape"], ["tok"]))
    p = cli("import", _save(tmp_path, nodes, [x], [y], inits=[token]), "--out", tmp_path / "out")
    assert p.returncode == 0, p.stderr
    graph = json.loads((tmp_path / "out" / "graph.json").read_text())
    assert graph["nodes"][-1]["outputs"][0]["shape"] == [1, 4, 4]


def test_symbolic_dim_error_names_the_node_and_input(tmp_path):
    from onnx import TensorProto, helper
    nodes, token, x, y = _class_token_chain(helper.make_node("Expand", ["cls", "n"], ["tok"]), (1, "s", 4))
    n = helper.make_tensor_value_info("n", TensorProto.INT64, [3])
    p = cli("import", _save(tmp_path, nodes, [x, n], [y], inits=[token]), "--out", tmp_path / "out")
    assert p.returncode == 1
    assert "node 'tok' (Expand): the target shape (input 1 ('n')) must be a constant" in p.stderr, p.stderr
    assert "--input-shape" not in p.stderr


def test_unknown_dim_error_names_where_it_comes_from(tmp_path):
    from onnx import TensorProto, helper
    # dim 1 of the graph input is neither a number nor a symbol: --input-shape sets it
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, None])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, None])
    p = cli("import", _save(tmp_path, [helper.make_node("Relu", ["x"], ["y"])], [x], [y]), "--out", tmp_path / "o")
    assert p.returncode == 1
    assert "dim 1 of 'x' is unknown after ONNX shape inference; pass --input-shape" in p.stderr, p.stderr


def _hostile(name):
    """Malformed models that crashed or hung ONNX 1.23.2's inference (audit of its sources;
    generator/frontend/onnx/inference_guard.cc) -> (nodes, inputs, outputs, initializers, opset)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    f = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)  # noqa: E731
    if name == "split18_num_outputs":  # sizes vector of 2 read for 3 outputs
        return ([helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=2)],
                [f("x", [6])], [f("a", None), f("b", None), f("c", None)], [], 18)
    if name == "einsum_digit":  # a non-letter in a term: an endless loop
        return ([helper.make_node("Einsum", ["x"], ["y"], equation="a1->a")], [f("x", [3])], [f("y", None)], [], 12)
    if name == "slice_step_2_32":  # propagation over a rank-1 float input with a 2^32 step
        ints = lambda n, v: numpy_helper.from_array(np.array(v, np.int64), n)  # noqa: E731
        return ([helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])], [f("x", [10])], [f("y", None)],
                [ints("s", [0]), ints("e", [10]), ints("a", [0]), ints("t", [1 << 32])], 13)
    if name == "size_of_2_40":  # propagation makes one dim per element of a [2^40] input
        return ([helper.make_node("Size", ["x"], ["y"])], [f("x", [1 << 40])],
                [helper.make_tensor_value_info("y", TensorProto.INT64, [])], [], 13)
    raise KeyError(name)


@pytest.mark.parametrize("name", ["split18_num_outputs", "einsum_digit", "slice_step_2_32", "size_of_2_40"])
def test_hostile_models_end_in_an_error(tmp_path, name):
    nodes, ins, outs, inits, opset = _hostile(name)
    path = _save(tmp_path, nodes, ins, outs, opset=opset, inits=inits)
    p = subprocess.run([BINARY, "import", str(path), "--out", str(tmp_path / "o")], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode in (0, 1) and "internal" not in p.stderr, (p.returncode, p.stderr)


def test_opset_and_ir_range_is_the_onnx_library_s(tmp_path):
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    node = helper.make_node("Relu", ["x"], ["y"])
    p = cli("import", _save(tmp_path, [node], [x], [y], opset=29, ir_version=10), "--out", tmp_path / "o")
    assert p.returncode == 1 and "default-domain opset 29 is not supported (supported: 1-28)" in p.stderr, p.stderr
    p = cli("import", _save(tmp_path, [node], [x], [y], opset=28, ir_version=15), "--out", tmp_path / "o")
    assert p.returncode == 1 and "ONNX IR version 15 is not supported (supported: 3-14)" in p.stderr, p.stderr
    p = cli("import", _save(tmp_path, [node], [x], [y], opset=28, ir_version=14), "--out", tmp_path / "o")
    assert p.returncode == 0, p.stderr


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


@pytest.mark.parametrize("backend", [b for b in BACKENDS if not b.merge], ids=lambda b: b.name)
@pytest.mark.parametrize("model,opset", MODELS)
def test_real_model(exported, model, opset, backend, tmp_path):
    """`generate --graph model.onnx` (the ONNX path of generate) and the project's golden test."""
    out, _ = exported[(model, opset)]
    assert backends.generate_and_run(BINARY, backend, ["--graph", out / "model.onnx", "--golden",
                                                       out / "test_data_set_0"], tmp_path / backend.name, PY,
                                     timeout=1200, args=["--atol", "1e-4", "--rtol", "1e-4"]) == ""


@pytest.mark.parametrize("model,opset", MODELS)
def test_real_model_relax_api(exported, model, opset, tmp_path):
    """The relax project of the imported graph uses TVM's relax API as v0.20 and the newest release
    define it, with struct info that matches the graph (relax_check; run by test_real_model)."""
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


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b.merge], ids=lambda b: b.name)
def test_real_models_merged(exported, backend, tmp_path):
    run_merged(BINARY, backend, [exported[key][1] for key in MODELS], tmp_path, "onnx_models", timeout=1800)
