"""The static checker (relax_check.py) itself: it must pass good code and fail bad code."""
import json
import os

import numpy as np
import pytest

import relax_check
from conftest import GRAPHS, REFERENCE, SNAPSHOTS, generate, write_safetensors

GOOD = '''
import tvm
from tvm import relax
try:
    from tvm import tir
except ImportError:
    from tvm import tirx as tir

def build(x):
    bb = relax.BlockBuilder()
    n = tir.Var("n", "int64")
    w = relax.Var("w", relax.TensorStructInfo([n, 3], "float32"))
    with bb.function(name="main", params=[x, w]):
        with bb.dataflow():
            y = relax.op.nn.conv2d(x, w, strides=[1, 1], padding=[0, 0, 0, 0], out_dtype=None)
            y = bb.emit(y, name_hint="conv")
            z = bb.emit(relax.op.take(y, y, axis=0))
            out = bb.emit_output(relax.TupleGetItem(relax.Tuple([z]), 0))
        bb.emit_func_output(out)
    nd = getattr(tvm, "nd", None)
    nd.array(x, tvm.cpu(0))
    return relax.transform.BindParams("main", {w: x})(bb.finalize())
'''


def problems(src, signatures):
    sigs, removed = signatures
    return relax_check.api_problems(src, sigs, removed)


def test_good_code_passes(signatures):
    assert problems(GOOD, signatures) == []


@pytest.mark.parametrize("bad,expected", [
    ("relax.op.nn.conv4d(x, w)", "relax.op.nn.conv4d: unknown relax op"),
    # ops only relax_ops_v020_all.json lists are checked too
    ("relax.op.topk(x, k=1, descending=True)", "relax.op.topk: unknown keyword 'descending'"),
    ("relax.op.one_hot(x, 1, 0)", "relax.op.one_hot: missing required argument 'depth'"),
    ("relax.op.nn.attention(x, x, x, mask=y)", "relax.op.nn.attention: unknown keyword 'mask'"),
    ("relax.op.cumsum(x, 0, None, False, True)", "relax.op.cumsum: 5 positional arguments, at most 4"),
    ("relax.op.stack([x, w], axis=0)", "relax.op.stack: unknown relax op"),  # added to relax after v0.20
    ("relax.op.nn.conv2d(x, w, pading=[1, 1])", "unknown keyword 'pading'"),
    ("relax.op.add(x)", "missing required argument 'x2'"),
    ("relax.op.add(x, y, z)", "3 positional arguments, at most 2"),
    ("relax.op.add(x, x1=y)", "'x1' given twice"),
    ("relax.op.take(x, i, axis=0, mode='fast')", "parameter 'mode' does not exist in TVM v0.20"),
    ("relax.op.take(x, i, 0, 'fast')", "4 positional arguments, at most 3"),
    ("relax.op.nn.relu(*args)", "*args/**kwargs cannot be checked"),
    ("bb.emit(y, name=\"conv\")", "relax.BlockBuilder.emit: unknown keyword 'name'"),
    ("bb.emit_te(f, y)", "relax.BlockBuilder.emit_te: unknown TVM API"),
    ("relax.Var(\"w\", relax.TensorStructInfo([1], \"float32\", None, 1, None, 2))", "relax.TensorStructInfo: 6 positional arguments"),
    ("relax.Var(\"w\", relax.TensorStructInfo([1], \"float32\"), None, 3)", "relax.Var: 4 positional arguments"),
    ("tir.Var(\"n\")", "tir.Var: missing required argument 'dtype'"),
    ("tvm.relax.op.nn.softmax(x, dim=1)", "relax.op.nn.softmax: unknown keyword 'dim'"),
    ("relax.build(mod, target='llvm', opt_level=3)", "relax.build: unknown keyword 'opt_level'"),
    ("relax.transform.FoldConstant()(mod)", "relax.transform.FoldConstant: unknown TVM API"),
    ("nd.array(x, tvm.cpu(0), None, 1)", "tvm.nd.array: 4 positional arguments"),
    ("rx.op.nn.relu(x, y)", "relax.op.nn.relu: 2 positional arguments, at most 1"),
])
def test_bad_snippets_fail(signatures, bad, expected):
    src = ("import tvm\nfrom tvm import relax\nfrom tvm import relax as rx\nfrom tvm import tir\n"
           "bb = relax.BlockBuilder()\nnd = getattr(tvm, 'nd', None)\n" + bad + "\n")
    found = problems(src, signatures)
    assert any(expected in p for p in found), found


def test_non_tvm_calls_are_ignored(signatures):
    assert problems("import numpy as np\nnp.zeros(3, 4, 5, 6, bad=1)\nprint(1, x=2)\n", signatures) == []


# ---- struct info checks ---------------------------------------------------------------------------

def _conv_relu():
    with open(os.path.join(SNAPSHOTS, "conv_relu", "model.py"), encoding="utf-8") as f:
        src = f.read()
    with open(os.path.join(REFERENCE, "msc-real", "conv_relu", "graph.json"), encoding="utf-8") as f:
        graph = json.load(f)
    return src, graph


def test_snapshot_model_is_clean():
    src, graph = _conv_relu()
    assert relax_check.struct_info_problems(src, graph) == []


@pytest.mark.parametrize("old,new,expected", [
    ('_expect(relu, "relu:0", [1, 6, 4, 4], "float32")', '_expect(relu, "relu:0", [1, 6, 4, 5], "float32")',
     "_expect(relu:0) says float32 [1, 6, 4, 5], the graph says float32 [1, 6, 4, 4]"),
    ('_expect(relu, "relu:0", [1, 6, 4, 4], "float32")', '_expect(relu, "relu:0", [1, 6, 4, 4], "float16")',
     "the graph says float32"),
    ('            _expect(relu, "relu:0", [1, 6, 4, 4], "float32")\n', '', "no _expect for 'relu:0'"),
    ('name_hint="relu"', 'name_hint="relu_1"', "is not bound by block_builder.emit(..., name_hint='relu')"),
    ('_expect(relu, "relu:0"', '_expect(conv2d, "relu:0"', "is not bound by block_builder.emit"),
    ('block_builder.emit_output(relu)', 'block_builder.emit_output(conv2d)', "emit_output of ['conv2d']"),
    ('relax.Var("const", TensorInfo([6, 3, 1, 1]', 'relax.Var("const", TensorInfo([6, 3, 1, 2]',
     "weight 'const': relax.Var says float32 [6, 3, 1, 2]"),
    ('relax.Var("inp_0", TensorInfo([1, 3, 4, 4]', 'relax.Var("inp_0", TensorInfo([1, 3, 4, 5]',
     "input_vars(): relax.Vars"),
    ('    inputs.append(conv2d_weight)\n', '', "weights are not appended"),
    ('("const", [6, 3, 1, 1], "float32")', '("const", [6, 3, 1, 1], "float16")', "WEIGHTS is not the graph's weights"),
])
def test_struct_info_mutations_fail(old, new, expected):
    src, graph = _conv_relu()
    assert old in src
    found = relax_check.struct_info_problems(src.replace(old, new, 1), graph)
    assert any(expected in p for p in found), found


def test_dynamic_dims_must_name_their_prims(tmp_path):
    with open(os.path.join(GRAPHS, "dynamic.json"), encoding="utf-8") as f:
        graph = json.load(f)
    weights = tmp_path / "w.safetensors"
    write_safetensors(weights, {"const": np.zeros([3, 3, 1, 1], np.float32)})
    p = generate("dynamic", os.path.join(GRAPHS, "dynamic.json"), tmp_path, str(weights))
    src = p.read("model.py")
    assert relax_check.struct_info_problems(src, graph) == []
    old = '_expect(reshape, "reshape:0", [prims["MUL_1"], 4, 4], "float32")'
    assert old in src
    for new in ('_expect(reshape, "reshape:0", [prims["bz"], 4, 4], "float32")',
                '_expect(reshape, "reshape:0", [6, 4, 4], "float32")'):
        found = relax_check.struct_info_problems(src.replace(old, new), graph)
        assert any("reshape:0" in x and "MUL_1" in x for x in found), found
