"""Executing generated model.py files on the fake TVM (fake_tvm/): the recorded BlockBuilder calls
have the structure MSC's relax codegen produced, and the fake itself rejects what TVM rejects
(so passing through it means something). It checks call structure, not TVM's numerics."""
import ast
import json
import os

import pytest

from conftest import FAKE_TVM, REFERENCE, case_project, generate, run_in_project

DUMP = '''
import json, model
mod = model.{fn}(*model.input_vars())
f = mod[model.FUNC_NAME]
def arg(v):
    if isinstance(v, (list, tuple)):
        return [arg(x) for x in v]
    if hasattr(v, "name_hint"):
        return "%" + v.name_hint
    if hasattr(v, "op"):
        return v.op
    return v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)
rows = []
for b in f.bindings:
    v = b.value
    row = [b.var.name_hint, b.block, type(v).__name__]
    if type(v).__name__ == "Call":
        row += [v.op, {{k: arg(x) for k, x in v.args.items()}}]
    elif type(v).__name__ == "TupleGetItem":
        row += [arg(v.tuple_value), v.index]
    elif type(v).__name__ == "Tuple":
        row += [arg(v.fields)]
    else:
        row += [arg(v)]
    rows.append(row)
bound = model.load_model()
print(json.dumps({{"bindings": rows, "params": [p.name_hint for p in f.params],
                  "bound_params": [p.name_hint for p in bound[model.FUNC_NAME].params],
                  "output": arg(f.output.fields if hasattr(f.output, "fields") else f.output)}}))
'''


def dump(project, fn="main"):
    return json.loads(run_in_project(project.dir, DUMP.format(fn=fn)).strip().splitlines()[-1])


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    root = tmp_path_factory.mktemp("real")
    out = {}
    for model in ("conv_relu", "mlp"):
        src = os.path.join(REFERENCE, "msc-real", model)
        out[model] = generate(model, os.path.join(src, "graph.json"), root, os.path.join(src, "weights.safetensors"))
    return out


def test_conv_relu_structure(real):
    d = dump(real["conv_relu"])
    assert d["params"] == ["inp_0", "const"] and d["bound_params"] == ["inp_0"]
    assert d["bindings"] == [
        ["conv2d", "dataflow", "Call", "relax.op.nn.conv2d",
         {"data": "%inp_0", "weight": "%const", "strides": [1, 1], "padding": [0, 0, 0, 0], "dilation": [1, 1],
          "groups": 1, "data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW", "out_dtype": "float32"}],
        ["relu", "dataflow", "Call", "relax.op.nn.relu", {"data": "%conv2d"}],
        ["", "dataflow", "RelaxVar", "%relu"],  # emit_output
    ]


def test_mlp_structure(real):
    d = dump(real["mlp"])
    # weights in first-use order, roles in the graph's order (msc-real/mlp lists bias before weight)
    assert d["params"] == ["inp_0", "const_1", "const", "const_3", "const_2"]
    assert [b[0] for b in d["bindings"]] == ["matmul", "relu", "matmul_1", ""]
    assert d["bindings"][0][3:] == ["relax.op.linear_algebra.linear",
                                    {"data": "%inp_0", "weight": "%const", "bias": "%const_1", "out_dtype": "float32"}]


def test_conv2d_bias_expands_like_msc(tmp_path):
    d = dump(case_project("msc_conv2d_bias", tmp_path))
    rows = [b[:4] for b in d["bindings"]]
    assert rows == [["", "dataflow", "Call", "relax.op.nn.conv2d"],
                    ["", "dataflow", "Call", "relax.op.reshape"],
                    ["conv2d", "dataflow", "Call", "relax.op.add"],
                    ["", "dataflow", "RelaxVar", "%conv2d"]]
    assert d["bindings"][1][4] == {"x": "%const_1", "shape": [1, 4, 1, 1]}


def test_batch_norm_tuple_and_get_item(tmp_path):
    d = dump(case_project("nn_batch_norm", tmp_path))
    rows = d["bindings"]
    assert rows[0][:4] == ["batch_norm", "dataflow", "Call", "relax.op.nn.batch_norm"]
    assert rows[0][4]["training"] is False and rows[0][4]["axis"] == 1 and rows[0][4]["epsilon"] == 1e-05
    assert rows[1] == ["batch_norm", "dataflow", "TupleGetItem", "%batch_norm", 0]
    assert rows[2] == ["batch_norm.0", "dataflow", "TupleGetItem", "%batch_norm", 0]
    assert rows[3][:4] == ["relu", "dataflow", "Call", "relax.op.nn.relu"]


def test_tuple_and_get_item(tmp_path):
    d = dump(case_project("tuple_get_item", tmp_path))
    names = [(b[0], b[2]) for b in d["bindings"]]
    assert names == [("relu", "Call"), ("sigmoid", "Call"), ("tuple", "Tuple"), ("tuple.1", "TupleGetItem"),
                     ("add", "Call"), ("", "RelaxVar")]
    assert d["bindings"][2][3] == ["%relu", "%sigmoid"]
    assert d["bindings"][3][3:] == ["%tuple", 1]


def test_multi_output_is_a_tuple_of_output_vars(tmp_path):
    d = dump(case_project("multi_output", tmp_path))
    assert d["output"] == ["%", "%"]  # two emit_output Vars (unnamed), returned as a tuple
    assert [b[2] for b in d["bindings"][-2:]] == ["RelaxVar", "RelaxVar"]


def test_dynamic_dims_are_shared_tir_vars(tmp_path):
    p = case_project("dynamic", tmp_path)
    out = run_in_project(p.dir, '''
import numpy as np, model, tvm
x, = model.input_vars()
print(type(x.struct_info.shape[0]).__name__, x.struct_info.shape[0].name)
vm = __import__("test_model").build_vm()
for batch in (1, 5):
    y = vm[model.FUNC_NAME](model.to_tensor(np.zeros([batch, 3, 4, 4], "float32")))
    print(y.shape)
''')
    assert out.split() == ["Var", "bz", "(3,", "4,", "4)", "(15,", "4,", "4)"]


FAKE_REJECTS = [
    ("relax.op.nn.conv2d(x, w, pading=[1, 1])", "TypeError", "pading"),
    ("relax.op.take(x, x, axis=0, mode='fast')", "TypeError", "mode"),
    ("relax.op.add(x)", "TypeError", "x2"),
    ("bb.emit(relax.op.nn.relu(relax.Var('stray', relax.TensorStructInfo([2], 'float32'))))", "ValueError",
     "neither a parameter"),
    ("bb.emit(relax.op.add(x, relax.Var('w', relax.TensorStructInfo([2], 'float16'))))", "ValueError", "neither"),
    ("bb.emit(relax.TupleGetItem(x, 0))", "TypeError", "non-tuple"),
    # TVM v0.20's own restrictions, met at emit time
    ("relax.op.reshape(relax.op.add(x, x), shape=[-1])", "RuntimeError", "struct_info is not populated"),
    ("bb.emit(relax.op.gather_nd(x, relax.const([0], 'int32')))", "TypeError", "int64"),
    ("bb.emit(relax.op.nn.max_pool1d(relax.op.reshape(x, [1, 1, 2]), pool_size=[1], ceil_mode=True))", "IndexError", "ceil_mode"),
    ("bb.emit(relax.op.exp(relax.const([1, 2], 'int32')))", "TypeError", "float dtype"),
    ("bb.emit(relax.op.logical_and(x, x))", "TypeError", "bool"),
]


@pytest.mark.parametrize("stmt,error,text", FAKE_REJECTS)
def test_fake_tvm_rejects_what_tvm_rejects(tmp_path, stmt, error, text):
    code = '''
from tvm import relax
x = relax.Var("x", relax.TensorStructInfo([2], "float32"))
w = relax.Var("w", relax.TensorStructInfo([2], "float32"))
bb = relax.BlockBuilder()
try:
    with bb.function(name="main", params=[x]):
        with bb.dataflow():
            %s
            y = bb.emit_output(x)
        bb.emit_func_output(y)
    print("accepted")
except Exception as e:
    print(type(e).__name__, e)
''' % stmt
    out = run_in_project(tmp_path, code).strip()
    assert out.startswith(error) and text in out, out


def test_fake_tvm_rejects_bad_bindings_and_scopes(tmp_path):
    out = run_in_project(tmp_path, '''
import numpy as np, tvm
from tvm import relax
def attempt(fn):
    try:
        fn(); return "accepted"
    except Exception as e:
        return type(e).__name__
x = relax.Var("x", relax.TensorStructInfo([2], "float32"))
w = relax.Var("w", relax.TensorStructInfo([2], "float32"))
def leak():
    bb = relax.BlockBuilder()
    with bb.function(name="main", params=[x]):
        with bb.dataflow():
            y = bb.emit(relax.op.nn.relu(x))
        bb.emit_func_output(y)
def outside():
    bb = relax.BlockBuilder()
    with bb.function(name="main", params=[x]):
        y = bb.emit_output(x)
        bb.emit_func_output(y)
def build():
    bb = relax.BlockBuilder()
    with bb.function(name="main", params=[x, w]):
        with bb.dataflow():
            y = bb.emit_output(relax.op.add(x, w))
        bb.emit_func_output(y)
    return bb.finalize()
mod = build()
print(attempt(leak), attempt(outside))
print(attempt(lambda: relax.transform.BindParams("main", {w: tvm.nd.array(np.zeros([3], "float32"))})(mod)))
print(attempt(lambda: relax.transform.BindParams("main", {w: tvm.nd.array(np.zeros([2], "float64"))})(mod)))
vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu(0))
print(attempt(lambda: vm["main"](tvm.nd.array(np.zeros([3], "float32")), tvm.nd.array(np.zeros([3], "float32")))))
print(vm["main"](tvm.nd.array(np.ones([2], "float32")), tvm.nd.array(np.ones([2], "float32"))).numpy().tolist())
''')
    assert out.split() == ["ValueError", "RuntimeError", "ValueError", "ValueError", "ValueError", "[2.0,", "2.0]"]


def test_fake_tvm_is_not_mistaken_for_tvm():
    with open(os.path.join(FAKE_TVM, "tvm", "__init__.py"), encoding="utf-8") as f:
        assert "FAKE" in f.read().splitlines()[0]


# ---- the lowering pipeline (model.lower_module) -----------------------------------------------------

def _calls_in_order(func):
    calls = [c for c in ast.walk(func) if isinstance(c, ast.Call)]
    return [ast.unparse(c.func) for c in sorted(calls, key=lambda c: (c.lineno, c.col_offset))]


def test_decompose_ops_for_inference_runs_before_legalize_ops(tmp_path):
    """Static: model.lower_module runs DecomposeOpsForInference, then DispatchSortScan, then
    LegalizeOps, under a tvm.target.Target scope; compile_module lowers before relax.build /
    tvm.compile; test_model.py builds only through compile_module (no LegalizeOps or relax.build of
    its own that could skip the decomposition)."""
    p = case_project("nn_batch_norm", tmp_path)
    funcs = {f.name: f for f in ast.parse(p.read("model.py")).body if isinstance(f, ast.FunctionDef)}
    passes = [c for c in _calls_in_order(funcs["lower_module"])
              if c.endswith(("DecomposeOpsForInference", "DispatchSortScan", "LegalizeOps"))]
    assert passes == ["relax.transform.DecomposeOpsForInference", "relax.backend.DispatchSortScan",
                      "relax.transform.LegalizeOps"]
    with_items = [ast.unparse(i.context_expr) for w in ast.walk(funcs["lower_module"]) if isinstance(w, ast.With)
                  for i in w.items]
    assert with_items == ["tvm.target.Target(target)"]
    compile_calls = _calls_in_order(funcs["compile_module"])
    assert compile_calls[0] == "lower_module" and "build" in compile_calls and "tvm.compile" in compile_calls
    harness = p.read("test_model.py")
    harness_calls = [ast.unparse(c.func) for c in ast.walk(ast.parse(harness)) if isinstance(c, ast.Call)]
    assert "compile_module" in harness_calls
    assert not [c for c in harness_calls if c.endswith(("LegalizeOps", "relax.build", "tvm.compile"))]


LEGALIZE_ONLY = '''
import numpy as np, tvm
from tvm import relax
import model, test_model
def build(mod):
    return relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu(0))
inputs = model.load_safetensors("golden/inputs.safetensors")
expected = model.load_safetensors("golden/outputs.safetensors")
for name, vm in (("legalize_only", lambda: build(relax.transform.LegalizeOps()(model.load_model()))),
                 ("compile_module", lambda: relax.VirtualMachine(model.compile_module(model.load_model()), tvm.cpu(0)))):
    try:
        got = test_model.run_model(vm(), [inputs[n] for n, _ in model.INPUTS])
        print(name, max(float(np.max(np.abs(g - expected[n]))) for (n, _), g in zip(model.OUTPUTS, got)))
    except Exception as e:
        print(name, type(e).__name__)
'''


def test_fake_v020_batch_norm_is_wrong_without_decomposition(tmp_path):
    """The fake models TVM v0.20's reversed batch_norm lowering: LegalizeOps alone gives the
    batch-statistics result (far from golden); model.compile_module (DecomposeOpsForInference
    first) matches golden."""
    p = case_project("nn_batch_norm", tmp_path)
    out = dict(line.split() for line in run_in_project(p.dir, LEGALIZE_ONLY).strip().splitlines())
    assert float(out["legalize_only"]) > 1e-2, out
    assert float(out["compile_module"]) < 1e-5, out


def test_fake_v020_topk_needs_dispatch_sort_scan(tmp_path):
    """TVM v0.20's LegalizeOps cannot lower topk: without DispatchSortScan the build fails."""
    p = case_project("topk", tmp_path)
    out = dict(line.split() for line in run_in_project(p.dir, LEGALIZE_ONLY).strip().splitlines())
    assert out["legalize_only"] == "RuntimeError", out
    assert float(out["compile_module"]) == 0.0, out


BUILD_REJECTS = [
    ("relax.op.isnan(x)", "LegalizeOps has no lowering for relax.op.isnan"),
    ("relax.op.topk(x, k=1)", "DispatchSortScan must run first"),
    ("relax.op.nn.adaptive_avg_pool1d(relax.op.reshape(x, [1, 1, 2]), output_size=[1])", "adaptive_avg_pool1d"),
    ("relax.op.nn.rms_norm(relax.op.reshape(x, [2, 1]), relax.const([1.0, 1.0], 'float32'), axes=[0])", "rms_norm"),
    ("relax.op.strided_slice(d, axes=[0], begin=[-1], end=[9])", "negative begin"),
    ("relax.op.nn.conv2d_transpose(relax.op.reshape(x, [1, 1, 1, 2]), relax.const(np.ones([1, 1, 1, 2], 'float32')), dilation=[1, 2])",
     "dilation 1"),
]


@pytest.mark.parametrize("expr,text", BUILD_REJECTS)
def test_fake_v020_build_rejects_what_v020_cannot_build(tmp_path, expr, text):
    """What TVM v0.20 emits but cannot build (or builds wrong) fails relax.build on the fake too;
    the new API flavor builds it."""
    code = '''
import numpy as np, tvm
from tvm import relax
try:
    from tvm import tir
except ImportError:
    from tvm import tirx as tir
x = relax.Var("x", relax.TensorStructInfo([2], "float32"))
d = relax.Var("d", relax.TensorStructInfo([tir.Var("n", "int64")], "float32"))
bb = relax.BlockBuilder()
with bb.function(name="main", params=[x, d]):
    with bb.dataflow():
        y = bb.emit_output(%s)
    bb.emit_func_output(y)
mod = relax.transform.LegalizeOps()(bb.finalize())
build = getattr(relax, "build", None) or tvm.compile
try:
    build(mod, target="llvm")
    print("built")
except Exception as e:
    print(type(e).__name__, e)
''' % expr
    out = run_in_project(tmp_path, code).strip()
    assert out.startswith("RuntimeError") and text in out, out
    assert run_in_project(tmp_path, code, flavor="new").strip() == "built"


def test_fake_folds_self_comparisons_like_tvm(tmp_path):
    """TVM's simplifier folds x != x to false (and x == x to true), NaN or not: the fake does too,
    which is why isnan is not written as x != x."""
    out = run_in_project(tmp_path, '''
import numpy as np, tvm
from tvm import relax
x = relax.Var("x", relax.TensorStructInfo([2], "float32"))
bb = relax.BlockBuilder()
with bb.function(name="main", params=[x]):
    with bb.dataflow():
        y = bb.emit_output(relax.Tuple([relax.op.not_equal(x, x), relax.op.equal(x, x)]))
    bb.emit_func_output(y)
vm = relax.VirtualMachine(relax.build(bb.finalize(), target="llvm"), tvm.cpu(0))
print([v.numpy().tolist() for v in vm["main"](tvm.nd.array(np.array([np.nan, 1.0], "float32")))])
''')
    assert out.strip() == "[[False, False], [True, True]]", out
