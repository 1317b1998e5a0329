"""Executing generated model.py files on the fake TVM (fake_tvm/): the recorded BlockBuilder calls
have the structure MSC's relax codegen produced, and the fake itself rejects what TVM rejects
(so passing through it means something). It checks call structure, not TVM's numerics."""
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
