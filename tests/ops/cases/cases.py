#!/usr/bin/env python3
"""Synthetic MSCGraphs for the relax backend: one small graph per optype the backend supports,
plus dynamic-shape, multi-output and hostile-name graphs.

Each case is built eagerly with PyTorch (seeded): every node's output shape/dtype in the JSON is
what the torch reference computed, and the graph outputs on the seeded inputs are the golden data.
Attrs are written the way MSC's graph builder stringified them ("1,1", "1,", "", "0.000010",
"1"/"0", "inf"), weights keyed by MSC-style constant names.

    python3 cases.py --write     rewrite <case>.json beside it (the files are committed and reviewed)
    python3 cases.py --check     exit 1 when a committed JSON differs from what the cases build

Library use (tests): build_case(name) -> Case(graph, weights, inputs, outputs).
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cases_ops  # noqa: E402
from cases_base import Builder  # noqa: E402


# ---- the cases ------------------------------------------------------------------------------------

def _binary(optype, fn):
    def case():
        b = Builder()
        x = b.input("x", [2, 3, 4])
        y = b.input("y", [3, 4])
        if optype == "divide":  # keep the divisor away from zero
            b.values[y] = b.values[y].abs() + 0.5
        out = b.node(optype, optype, [x, y], fn)
        return b.finish([out])
    return case


def case_clip():
    b = Builder()
    x = b.input("x", [2, 8])
    lo = b.node("clip", "clip", [x], lambda v: torch.clamp(v, max=0.5), attrs={"min": "-inf", "max": "0.500000"})
    hi = b.node("clip_1", "clip", [lo], lambda v: torch.clamp(v, -0.25, float("inf")), attrs={"min": "-0.250000", "max": "inf"})
    # both bounds infinite (an ONNX Clip without min/max): the identity; torch.clamp rejects it
    both = b.node("clip_2", "clip", [hi], lambda v: v.clone(), attrs={"min": "-inf", "max": "inf"})
    return b.finish([both])


def case_concat():
    b = Builder()
    x = b.input("x", [2, 3, 4], "NCW")
    y = b.input("y", [2, 5, 4], "NCW")
    out = b.node("concat", "concat", [x, y], lambda p, q: torch.cat([p, q], 1), attrs={"axis": "1"}, layout="NCW")
    return b.finish([out])


def case_constant():
    """A tensor constant and a 0-d scalar constant (MSC: `scalar` attr, shape [] weight)."""
    b = Builder()
    x = b.input("x", [3, 4])
    c = b.weight([4], "", "bias_table")
    s = b.weight([], "", "", value=torch.tensor(2.5))
    cn = b.node("const", "constant", [], lambda const: const, weights={"const": c})
    sn = b.node("const_1", "constant", [], lambda const: const, attrs={"scalar": "2.500000"}, weights={"const": s})
    add = b.node("add", "add", [x, cn], torch.add)
    out = b.node("multiply", "multiply", [add, sn], torch.mul)
    return b.finish([out])


def case_expand_dims():
    b = Builder()
    x = b.input("x", [2, 3])
    out = b.node("expand_dims", "expand_dims", [x], lambda v: v.unsqueeze(1).unsqueeze(3), attrs={"axis": "1,3"})
    return b.finish([out])


def case_squeeze():
    b = Builder()
    x = b.input("x", [2, 1, 3, 1])
    one = b.node("squeeze", "squeeze", [x], lambda v: v.squeeze(1), attrs={"axis": "1,"})
    out = b.node("squeeze_1", "squeeze", [one], lambda v: v.squeeze(), attrs={"axis": ""})
    return b.finish([out])


def case_tuple_get_item():
    """tuple of two values, get_item on it (inputs = all fields of the tuple producer)."""
    b = Builder()
    x = b.input("x", [2, 3])
    r = b.node("relu", "nn.relu", [x], F.relu)
    s = b.node("sigmoid", "sigmoid", [x], torch.sigmoid)
    t0, t1 = b.node("tuple", "tuple", [r, s], lambda p, q: (p, q))
    g = b.node("tuple.1", "get_item", [t0, t1], lambda p, q: q, attrs={"index": "1"})
    out = b.node("add", "add", [g, t0], torch.add)
    return b.finish([out])


def case_matmul():
    b = Builder()
    x = b.input("x", [2, 3, 4])
    y = b.input("y", [4, 5])
    out = b.node("matmul", "matmul", [x, y], torch.matmul, attrs={"out_dtype": "float32"})
    return b.finish([out])


def case_mean():
    b = Builder()
    x = b.input("x", [2, 3, 4, 5], "NCHW")
    m = b.node("mean", "mean", [x], lambda v: v.mean(dim=[2, 3], keepdim=True), attrs={"axis": "2,3", "keepdims": "1"}, layout="NCHW")
    out = b.node("mean_1", "mean", [m], lambda v: v.mean(dim=[-1]), attrs={"axis": "-1,", "keepdims": "0"})
    return b.finish([out])


def case_conv2d():
    """Grouped, dilated, strided convolution with asymmetric padding (top, left, bottom, right)."""
    b = Builder()
    x = b.input("x", [1, 4, 9, 9], "NCHW")
    w = b.weight([6, 2, 3, 3], "OIHW", "conv.weight")
    fn = lambda v, weight: F.conv2d(F.pad(v, (1, 0, 0, 2)), weight, stride=(2, 1), dilation=(1, 2), groups=2)  # noqa: E731
    out = b.node("conv2d", "nn.conv2d", [x], fn, layout="NCHW", weights={"weight": w},
                 attrs={"strides": "2,1", "padding": "0,1,2,0", "dilation": "1,2", "groups": "2", "data_layout": "NCHW",
                        "kernel_layout": "OIHW", "out_layout": "NCHW", "out_dtype": "float32"})
    return b.finish([out])


def case_conv2d_bias():
    b = Builder()
    x = b.input("x", [1, 3, 8, 8], "NCHW")
    w = b.weight([4, 3, 3, 3], "OIHW", "conv.weight")
    bias = b.weight([4], "O", "conv.bias")
    out = b.node("conv2d", "msc.conv2d_bias", [x], lambda v, weight, bias: F.conv2d(v, weight, bias, 2, 1), layout="NCHW",
                 weights={"weight": w, "bias": bias},
                 attrs={"strides": "2,2", "padding": "1,1,1,1", "dilation": "1,1", "groups": "1", "data_layout": "NCHW",
                        "kernel_layout": "OIHW", "out_layout": "NCHW", "out_dtype": "float32"})
    return b.finish([out])


def case_linear():
    b = Builder()
    x = b.input("x", [2, 3, 8], "NCW")
    w = b.weight([5, 8], "OI", "fc.weight")
    out = b.node("matmul", "msc.linear", [x], lambda v, weight: F.linear(v, weight), weights={"weight": w},
                 attrs={"out_dtype": "float32"}, layout="NCW")
    return b.finish([out])


def case_linear_bias():
    b = Builder()
    x = b.input("x", [2, 8], "NC")
    w = b.weight([5, 8], "OI", "fc.weight")
    bias = b.weight([5], "O", "fc.bias")
    out = b.node("matmul", "msc.linear_bias", [x], F.linear, weights={"weight": w, "bias": bias},
                 attrs={"out_dtype": "float32"}, layout="NC")
    return b.finish([out])


def case_dense():
    b = Builder()
    x = b.input("x", [2, 8], "NC")
    w = b.weight([5, 8], "OI", "dense.weight")
    out = b.node("dense", "nn.dense", [x], lambda v, weight: F.linear(v, weight), weights={"weight": w},
                 attrs={"units": "5", "out_dtype": ""}, layout="NC")
    return b.finish([out])


def case_adaptive_avg_pool2d():
    b = Builder()
    x = b.input("x", [1, 3, 6, 6], "NCHW")
    a = b.node("adaptive_avg_pool2d", "nn.adaptive_avg_pool2d", [x], lambda v: F.adaptive_avg_pool2d(v, (2, 3)),
               attrs={"output_size": "2,3", "layout": "NCHW", "out_layout": "NCHW"}, layout="NCHW")
    out = b.node("adaptive_avg_pool2d_1", "nn.adaptive_avg_pool2d", [a], lambda v: F.adaptive_avg_pool2d(v, 1),
                 attrs={"output_size": "1,", "layout": "NCHW", "out_layout": "NCHW"}, layout="NCHW")
    return b.finish([out])


def case_avg_pool2d():
    """count_include_pad=0 with padding: the attr MSC's codegens dropped."""
    b = Builder()
    x = b.input("x", [1, 2, 7, 7], "NCHW")
    out = b.node("avg_pool2d", "nn.avg_pool2d", [x],
                 lambda v: F.avg_pool2d(v, 3, 2, 1, ceil_mode=False, count_include_pad=False),
                 attrs={"pool_size": "3,3", "strides": "2,2", "dilation": "1,1", "padding": "1,1,1,1", "ceil_mode": "0",
                        "count_include_pad": "0", "layout": "NCHW", "out_layout": "NCHW"}, layout="NCHW")
    return b.finish([out])


def case_max_pool2d():
    b = Builder()
    x = b.input("x", [1, 2, 7, 7], "NCHW")
    out = b.node("max_pool2d", "nn.max_pool2d", [x], lambda v: F.max_pool2d(v, 2, 2, 0, ceil_mode=True),
                 attrs={"pool_size": "2,2", "strides": "2,2", "dilation": "1,1", "padding": "0,0,0,0", "ceil_mode": "1",
                        "count_include_pad": "0", "layout": "NCHW", "out_layout": "NCHW"}, layout="NCHW")
    return b.finish([out])


def case_batch_norm():
    """As MSC's graphs have it: batch_norm keeps field 0 only, a get_item(0) follows, and
    training="1" although the model is in eval mode (running statistics are the meaning)."""
    b = Builder()
    x = b.input("x", [2, 3, 4, 4], "NCHW")
    g = b.weight([3], "O", "bn.weight")
    beta = b.weight([3], "O", "bn.bias")
    mean = b.weight([3], "O", "bn.running_mean")
    var = b.weight([3], "O", "bn.running_var", value=torch.rand(3, generator=b.gen) + 0.5)
    bn = b.node("batch_norm", "nn.batch_norm", [x],
                lambda v, gamma, beta, mean, var: F.batch_norm(v, mean, var, gamma, beta, False, 0.1, 1e-5),
                weights={"gamma": g, "beta": beta, "mean": mean, "var": var}, layout="NCHW",
                attrs={"axis": "1", "epsilon": "0.000010", "center": "1", "scale": "1", "momentum": "0.100000",
                       "training": "1"})
    item = b.node("batch_norm.0", "get_item", [bn], lambda v: v, attrs={"index": "0"}, layout="NCHW")
    out = b.node("relu", "nn.relu", [item], F.relu, layout="NCHW")
    return b.finish([out])


def case_softmax():
    b = Builder()
    x = b.input("x", [2, 5, 3])
    out = b.node("softmax", "nn.softmax", [x], lambda v: torch.softmax(v, 1), attrs={"axis": "1"})
    return b.finish([out])


def case_permute_dims():
    b = Builder()
    x = b.input("x", [2, 3, 4])
    out = b.node("permute_dims", "permute_dims", [x], lambda v: v.permute(0, 2, 1), attrs={"axes": "0,2,1"})
    return b.finish([out])


def case_transpose():
    b = Builder()
    x = b.input("x", [2, 3, 4])
    out = b.node("transpose", "transpose", [x], lambda v: v.permute(2, 1, 0), attrs={"axes": ""})
    return b.finish([out])


def case_reshape():
    b = Builder()
    x = b.input("x", [2, 3, 4])
    out = b.node("reshape", "reshape", [x], lambda v: v.reshape(2, 12), attrs={"shape": "2,-1"})
    return b.finish([out])


def case_strided_slice():
    b = Builder()
    x = b.input("x", [2, 6, 5])
    out = b.node("strided_slice", "strided_slice", [x], lambda v: v[:, 1:5:2, -3:],
                 attrs={"axes": "1,2", "begin": "1,-3", "end": "5,9223372036854775807", "strides": "2,1"})
    return b.finish([out])


def case_dynamic():
    """Dynamic batch: -1 dims with prim "bz" (a `shape` prim of the input), a derived prim
    (MUL_1 = bz * 3) used by a reshape, and the batch dim shared by every tensor."""
    b = Builder()
    b.prim("bz", "shape", producer="inp_0", out_idx=0, dim=0)
    b.prim("Int_3", "Int", value=3)
    b.prim("MUL_1", "Mul", ["bz", "Int_3"])
    x = b.input("inp_0", [2, 3, 4, 4], "NCHW", dyn={0: "bz"})
    w = b.weight([3, 3, 1, 1], "OIHW", "conv.weight")
    conv = b.node("conv2d", "nn.conv2d", [x], lambda v, weight: F.conv2d(v, weight), layout="NCHW", dyn={0: "bz"},
                  weights={"weight": w},
                  attrs={"strides": "1,1", "padding": "0,0,0,0", "dilation": "1,1", "groups": "1", "data_layout": "NCHW",
                         "kernel_layout": "OIHW", "out_layout": "NCHW", "out_dtype": "float32"})
    relu = b.node("relu", "nn.relu", [conv], F.relu, layout="NCHW", dyn={0: "bz"})
    flat = b.node("reshape", "reshape", [relu], lambda v: v.reshape(-1, 4, 4), attrs={"shape": "-1,4,4"},
                  dyn={0: "MUL_1"})
    return b.finish([flat])


def case_multi_output():
    """Two graph outputs, one of them also consumed inside the graph."""
    b = Builder()
    x = b.input("x", [2, 3])
    y = b.input("y", [2, 3])
    s = b.node("add", "add", [x, y], torch.add)
    t = b.node("tanh", "tanh", [s], torch.tanh)
    return b.finish([t, s])


def case_hostile():
    """Names that must only reach the generated code as escaped literals: quotes, backslashes,
    newlines, non-ASCII, '../', Python keywords, and names of model.py's own helpers and locals."""
    b = Builder(name='graph "x"\n../main')
    x = b.input("in\"put\\0", [2, 3])
    w = b.weight([2, 3], "", "weird \"alias\"\nname", name="const\t'w'")
    c = b.node("block_builder", "constant", [], lambda const: const, weights={"const": w})
    a = b.node("卷积\n\"add\"", "add", [x, c], torch.add)
    r = b.node("_expect", "nn.relu", [a], F.relu)
    s = b.node("prims", "sigmoid", [r], torch.sigmoid)
    f = b.node("float", "tanh", [s], torch.tanh)
    t = b.node("relax", "multiply", [f, r], torch.mul)
    u = b.node("class", "subtract", [t, x], torch.sub)
    v = b.node("tuple_values", "divide", [u, b.input("inputs", [2, 3], value=torch.rand(2, 3, generator=b.gen) + 0.5)], torch.div)
    return b.finish([v], aliases={v: "out \"1\""})


CASES = {
    "add": _binary("add", torch.add),
    "subtract": _binary("subtract", torch.sub),
    "multiply": _binary("multiply", torch.mul),
    "divide": _binary("divide", torch.div),
    "clip": case_clip,
    "concat": case_concat,
    "constant": case_constant,
    "expand_dims": case_expand_dims,
    "squeeze": case_squeeze,
    "tuple_get_item": case_tuple_get_item,
    "matmul": case_matmul,
    "mean": case_mean,
    "nn_conv2d": case_conv2d,
    "msc_conv2d_bias": case_conv2d_bias,
    "msc_linear": case_linear,
    "msc_linear_bias": case_linear_bias,
    "nn_dense": case_dense,
    "nn_adaptive_avg_pool2d": case_adaptive_avg_pool2d,
    "nn_avg_pool2d": case_avg_pool2d,
    "nn_max_pool2d": case_max_pool2d,
    "nn_batch_norm": case_batch_norm,
    "nn_softmax": case_softmax,
    "permute_dims": case_permute_dims,
    "transpose": case_transpose,
    "reshape": case_reshape,
    "strided_slice": case_strided_slice,
    "dynamic": case_dynamic,
    "multi_output": case_multi_output,
    "hostile": case_hostile,
}
CASES.update(cases_ops.CASES)


def build_case(name):
    return CASES[name]()


def graph_text(graph):
    return json.dumps(graph, indent=1, ensure_ascii=False) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true")
    group.add_argument("--check", action="store_true")
    args = parser.parse_args()
    stale = []
    for name in CASES:
        path = os.path.join(HERE, name + ".json")
        text = graph_text(build_case(name).graph)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:
            stale.append(name)
            if args.write:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    print(("rewrote: " if args.write else "stale: ") + (", ".join(stale) or "none"))
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
