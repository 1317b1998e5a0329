"""Per-op variant cases for the optypes beyond the first 32 (elementwise, reductions, indexing,
normalization, attention, ...): one small graph per op variant, several per op where attrs change
the semantics. Same conventions as cases.py (seeded inputs, PyTorch as the reference, attrs
stringified as MSC wrote them); cases.py merges CASES from here.

The reference of each node is written with torch/numpy independently of the generated code where
the op is more than one torch call (resize2d: per-pixel loops over TOPI's formulas; attention:
einsum in relax's [B, S, N, H] layout; gather_nd / scatter_nd: loops over the index tuples). The
semantics are TVM v0.20 relax's (python/tvm/relax/op, the TOPI legalizations); inputs are kept in
each op's domain and away from ties where torch and TOPI could round differently.
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

from cases_base import Builder

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
from msc_export import opdefs  # noqa: E402

CASES = {}


def _register(name, build):
    assert name not in CASES, name
    CASES[name] = build


def case(fn):
    """Registers case_<name> as <name>."""
    _register(fn.__name__[len("case_"):], fn)
    return fn


# ---- values ---------------------------------------------------------------------------------------

def _uniform(b, shape, lo, hi, dtype=torch.float32):
    return (torch.rand(*shape, generator=b.gen) * (hi - lo) + lo).to(dtype)


def _ints(b, shape, lo, hi, dtype=torch.int32):
    """Integers in [lo, hi)."""
    return torch.randint(lo, hi, tuple(shape), generator=b.gen).to(dtype)


def _bools(b, shape):
    return torch.rand(*shape, generator=b.gen) > 0.5


def _scalar(b, name, value, dtype=torch.float32):
    """A 0-d `constant` node as MSC writes a relax scalar constant (attr `scalar`, 0-d weight)."""
    w = b.weight([], value=torch.tensor(value, dtype=dtype))
    text = ("%f" % value) if dtype.is_floating_point else str(int(value))
    return b.node(name, "constant", [], lambda const: const, attrs={"scalar": text}, weights={"const": w})


def _const(b, name, value, alias=""):
    """A tensor `constant` node (e.g. a weight MSC passes as an input)."""
    w = b.weight(list(value.shape), alias=alias, value=value)
    return b.node(name, "constant", [], lambda const: const, weights={"const": w})


# ---- elementwise: unary ---------------------------------------------------------------------------

def _unary(optype, fn, value=None, shape=(2, 3, 4), dtype=torch.float32, attrs=None):
    """One node on one input; value(b, shape) makes the input (default standard normal)."""
    def build():
        b = Builder()
        x = b.input("x", list(shape), dtype=dtype, value=None if value is None else value(b, shape))
        out = b.node(optype.split(".")[-1], optype, [x], fn, attrs=attrs)
        return b.finish([out])
    return build


def _special_floats(b, shape):
    v = torch.randn(*shape, generator=b.gen)
    flat = v.view(-1)
    flat[1], flat[4], flat[7], flat[10] = float("inf"), float("-inf"), float("nan"), float("nan")
    return v


def _with_zeros(b, shape):
    v = torch.randn(*shape, generator=b.gen)
    return torch.where(v.abs() < 0.4, torch.zeros_like(v), v)


# Every unary_math op whose opdef names its PyTorch `reference` gets a case, its input drawn from
# the opdef's `domain` (opdefs/*.yaml); these ops need inputs a domain cannot say, or their
# reference takes an argument.
_UNARY_VALUES = {"sign": _with_zeros}
for _op in opdefs.with_trait("unary_math"):
    _ref = opdefs.reference(_op)
    if _ref:
        _fn, _dom = _ref
        _value = _UNARY_VALUES.get(_op) or (None if _dom is None else
                                            (lambda lo, hi: lambda b, s: _uniform(b, s, lo, hi))(*_dom))
        _register(_op.replace(".", "_"), _unary(_op, _fn, _value))
_UNARY = {
    "isfinite": (torch.isfinite, _special_floats),
    "isinf": (torch.isinf, _special_floats),
    "isnan": (torch.isnan, _special_floats),
    "nn.gelu_tanh": (lambda v: F.gelu(v, approximate="tanh"), None),
    "msc.gelu": (lambda v: F.gelu(v, approximate="tanh"), None),
}
for _op, (_fn, _value) in _UNARY.items():
    _register(_op.replace(".", "_"), _unary(_op, _fn, _value))

_register("abs_int32", _unary("abs", torch.abs, lambda b, s: _ints(b, s, -50, 50)))
_register("negative_int64", _unary("negative", torch.neg, lambda b, s: _ints(b, s, -50, 50, torch.int64)))
_register("logical_not", _unary("logical_not", torch.logical_not, _bools))
_register("bitwise_not", _unary("bitwise_not", torch.bitwise_not, lambda b, s: _ints(b, s, -1000, 1000)))
_register("nn_leakyrelu", _unary("nn.leakyrelu", lambda v: F.leaky_relu(v, 0.2), attrs={"alpha": "0.200000"}))
# beta * x crosses the threshold for part of the input: both branches are exercised
_register("nn_softplus", _unary("nn.softplus", lambda v: F.softplus(v, beta=2.0, threshold=1.0),
                                lambda b, s: _uniform(b, s, -2.0, 2.0), attrs={"beta": "2.000000", "threshold": "1.000000"}))
_register("nn_log_softmax", _unary("nn.log_softmax", lambda v: torch.log_softmax(v, 1), attrs={"axis": "1"}))
_register("nn_log_softmax_last", _unary("nn.log_softmax", lambda v: torch.log_softmax(v, -1), attrs={"axis": "-1"}))


# ---- elementwise: binary --------------------------------------------------------------------------

def _binary(optype, fn, x1=None, x2=None, shapes=((2, 3, 4), (3, 4)), dtype=torch.float32):
    """One node on two inputs broadcast numpy-style; x1/x2(b, shape) make the inputs."""
    def build():
        b = Builder()
        a = b.input("x1", list(shapes[0]), dtype=dtype, value=None if x1 is None else x1(b, shapes[0]))
        c = b.input("x2", list(shapes[1]), dtype=dtype, value=None if x2 is None else x2(b, shapes[1]))
        out = b.node(optype, optype, [a, c], fn)
        return b.finish([out])
    return build


def _halves(b, s):
    """Multiples of 0.5 in [-2, 2]: comparisons see equal elements."""
    return torch.round(_uniform(b, s, -2.0, 2.0) * 2) / 2


def _nonzero(b, s):
    v = _uniform(b, s, 0.5, 3.0)
    return torch.where(_bools(b, s), v, -v)


def _nonzero_ints(b, s):
    v = _ints(b, s, 1, 9)
    return torch.where(_bools(b, s), v, -v)


_register("power", _binary("power", torch.pow, lambda b, s: _uniform(b, s, 0.2, 3.0), lambda b, s: _uniform(b, s, -2.0, 2.0)))
_register("maximum", _binary("maximum", torch.maximum))
_register("minimum", _binary("minimum", torch.minimum))
_register("floor_divide", _binary("floor_divide", lambda p, q: torch.div(p, q, rounding_mode="floor"),
                                  lambda b, s: _uniform(b, s, -6.0, 6.0), _nonzero))
_register("floor_divide_int32", _binary("floor_divide", lambda p, q: torch.div(p, q, rounding_mode="floor"),
                                        lambda b, s: _ints(b, s, -40, 40), _nonzero_ints, dtype=torch.int32))
# integer divide truncates toward zero (relax: TIR Div; ONNX Div on ints); torch's `/` would give floats
_register("divide_int32", _binary("divide", lambda p, q: torch.div(p, q, rounding_mode="trunc"),
                                  lambda b, s: _ints(b, s, -40, 40), _nonzero_ints, dtype=torch.int32))
_register("floor_mod", _binary("floor_mod", torch.remainder, lambda b, s: _uniform(b, s, -6.0, 6.0), _nonzero))
_register("floor_mod_int32", _binary("floor_mod", torch.remainder, lambda b, s: _ints(b, s, -40, 40), _nonzero_ints,
                                     dtype=torch.int32))
for _op, _fn in {"equal": torch.eq, "not_equal": torch.ne, "greater": torch.gt, "greater_equal": torch.ge,
                 "less": torch.lt, "less_equal": torch.le}.items():
    _register(_op, _binary(_op, _fn, _halves, _halves))
# comparisons of bool tensors (the newest TVM's LLVM codegen emitted a float compare on i1 for them)
_register("equal_bool", _binary("equal", torch.eq, _bools, _bools, dtype=torch.bool))
_register("not_equal_bool", _binary("not_equal", torch.ne, _bools, _bools, dtype=torch.bool))
_register("greater_int32", _binary("greater", torch.gt, lambda b, s: _ints(b, s, -5, 5), lambda b, s: _ints(b, s, -5, 5),
                                   dtype=torch.int32))
for _op, _fn in {"logical_and": torch.logical_and, "logical_or": torch.logical_or,
                 "logical_xor": torch.logical_xor}.items():
    _register(_op, _binary(_op, _fn, _bools, _bools))
for _op, _fn in {"bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or,
                 "bitwise_xor": torch.bitwise_xor}.items():
    _register(_op, _binary(_op, _fn, lambda b, s: _ints(b, s, -1000, 1000), lambda b, s: _ints(b, s, -1000, 1000),
                           dtype=torch.int32))


@case
def case_where():
    """where with a bool condition input and one computed by a comparison; all three broadcast."""
    b = Builder()
    cond = b.input("cond", [3, 4], dtype=torch.bool, value=_bools(b, [3, 4]))
    x1 = b.input("x1", [2, 3, 4])
    x2 = b.input("x2", [4])
    w = b.node("where", "where", [cond, x1, x2], torch.where)
    gt = b.node("greater", "greater", [x1, w], torch.gt)
    out = b.node("where_1", "where", [gt, x1, w], torch.where)
    return b.finish([out])


@case
def case_masked_fill():
    """masked_fill by a bool mask input (broadcast) with a scalar `constant` value."""
    b = Builder()
    x = b.input("x", [2, 3, 4])
    mask = b.input("mask", [3, 4], dtype=torch.bool, value=_bools(b, [3, 4]))
    value = _scalar(b, "const", -1.5)
    out = b.node("masked_fill", "masked_fill", [x, mask, value], lambda v, m, s: v.masked_fill(m, s))
    return b.finish([out])


@case
def case_float16_elementwise():
    """float16 end to end: binary ops, a comparison (bool), where, unary math (exp, sigmoid,
    tanh, relu: float32 math rounded to half, as torch 1.13's CPU has no half kernels for them)."""
    b = Builder()
    x = b.input("x", [2, 3, 4], dtype=torch.float16)
    y = b.input("y", [3, 4], dtype=torch.float16)
    half = lambda fn: (lambda v: fn(v.float()).half())  # noqa: E731
    s = b.node("add", "add", [x, y], torch.add)
    m = b.node("multiply", "multiply", [s, y], torch.mul)
    d = b.node("subtract", "subtract", [m, x], torch.sub)
    mx = b.node("maximum", "maximum", [d, x], torch.maximum)
    lt = b.node("less", "less", [x, y], torch.lt)
    w = b.node("where", "where", [lt, mx, d], torch.where)
    e = b.node("exp", "exp", [w], half(torch.exp))
    sg = b.node("sigmoid", "sigmoid", [e], half(torch.sigmoid))
    t = b.node("tanh", "tanh", [d], half(torch.tanh))
    r = b.node("relu", "nn.relu", [t], half(F.relu))
    a = b.node("abs", "abs", [r], torch.abs)
    n = b.node("negative", "negative", [a], torch.neg)
    out = b.node("add_1", "add", [sg, n], torch.add)
    return b.finish([out, lt])


# ---- dtype conversion -----------------------------------------------------------------------------

def _astype(dtype, name, value=None, src=torch.float32, optype="astype"):
    def build():
        b = Builder()
        x = b.input("x", [2, 3, 4], dtype=src, value=None if value is None else value(b, [2, 3, 4]))
        out = b.node(optype, optype, [x], lambda v: v.to(getattr(torch, dtype)), attrs={"dtype": dtype})
        return b.finish([out])
    _register(name, build)


_astype("int32", "astype_int32", lambda b, s: _uniform(b, s, -20.0, 20.0))   # truncation toward zero
_astype("int64", "astype_int64", lambda b, s: _uniform(b, s, -20.0, 20.0))
_astype("float16", "astype_float16")
_astype("bool", "astype_bool", _with_zeros)
_astype("float32", "astype_from_int32", lambda b, s: _ints(b, s, -100, 100), src=torch.int32)
_astype("int32", "cast", lambda b, s: _uniform(b, s, -20.0, 20.0), optype="cast")


# ---- reductions, scans, sorting -------------------------------------------------------------------

def _reduce_case(optype, fn, variants, shape=(2, 3, 4, 5), value=None, dtype=torch.float32):
    """One node per (axis attr, keepdims attr, torch dims) variant, each a graph output."""
    def build():
        b = Builder()
        x = b.input("x", list(shape), dtype=dtype, value=None if value is None else value(b, shape))
        outs = []
        for i, (axis, keep, dims) in enumerate(variants):
            name = optype + ("" if i == 0 else "_%d" % i)
            outs.append(b.node(name, optype, [x], lambda v, d=dims, k=keep: fn(v, d, k == "1"),
                               attrs={"axis": axis, "keepdims": keep}))
        return b.finish(outs)
    return build


_ALL = [0, 1, 2, 3]
_register("sum", _reduce_case("sum", lambda v, d, k: torch.sum(v, d, keepdim=k),
                              [("1,", "0", [1]), ("-1,-2", "1", [-1, -2]), ("", "0", _ALL)]))
_register("sum_int32", _reduce_case("sum", lambda v, d, k: torch.sum(v, d, keepdim=k, dtype=torch.int32),
                                    [("1,", "0", [1])], value=lambda b, s: _ints(b, s, -50, 50), dtype=torch.int32))


def _prod(v, dims, keep):
    for d in sorted((d % v.dim() for d in dims), reverse=True):
        v = torch.prod(v, d, keepdim=keep)
    return v


_register("prod", _reduce_case("prod", _prod, [("0,2", "1", [0, 2]), ("", "0", _ALL)],
                               value=lambda b, s: _uniform(b, s, 0.8, 1.25)))
_register("max", _reduce_case("max", lambda v, d, k: torch.amax(v, d, keepdim=k),
                              [("-1,", "0", [-1]), ("", "1", _ALL)]))
_register("min", _reduce_case("min", lambda v, d, k: torch.amin(v, d, keepdim=k),
                              [("1,2", "0", [1, 2]), ("", "0", _ALL)]))
_register("std", _reduce_case("std", lambda v, d, k: torch.std(v, d, unbiased=False, keepdim=k),
                              [("1,2", "1", [1, 2]), ("", "0", _ALL)]))
_register("variance", _reduce_case("variance", lambda v, d, k: torch.var(v, d, unbiased=False, keepdim=k),
                                   [("-1,", "0", [-1]), ("", "1", _ALL)]))


def _arg_case(optype):
    fn = getattr(torch, optype)

    def build():
        b = Builder()
        x = b.input("x", [2, 3, 4])
        o1 = b.node(optype, optype, [x], lambda v: fn(v, 1), attrs={"axis": "1", "keepdims": "0"})
        o2 = b.node(optype + "_1", optype, [x], lambda v: fn(v, -1, keepdim=True), attrs={"axis": "-1", "keepdims": "1"})
        o3 = b.node(optype + "_2", optype, [x], lambda v: fn(v.reshape(-1)), attrs={"axis": "", "keepdims": "0"})
        o4 = b.node(optype + "_3", optype, [x], lambda v: fn(v.reshape(-1)).reshape(1, 1, 1),
                    attrs={"axis": "", "keepdims": "1"})
        return b.finish([o1, o2, o3, o4])
    return build


_register("argmax", _arg_case("argmax"))
_register("argmin", _arg_case("argmin"))


def _exclusive(y, dim):
    return torch.cat([torch.zeros_like(y.narrow(dim, 0, 1)), y.narrow(dim, 0, y.shape[dim] - 1)], dim)


@case
def case_cumsum():
    b = Builder()
    x = b.input("x", [2, 3, 4])
    o1 = b.node("cumsum", "cumsum", [x], lambda v: torch.cumsum(v, 1), attrs={"axis": "1", "dtype": "", "exclusive": "0"})
    o2 = b.node("cumsum_1", "cumsum", [x], lambda v: torch.cumsum(v.reshape(-1), 0),
                attrs={"axis": "", "dtype": "", "exclusive": "0"})
    return b.finish([o1, o2])


@case
def case_cumsum_exclusive():
    """exclusive: out[i] = sum(x[:i]) along the axis (0 first)."""
    b = Builder()
    x = b.input("x", [2, 3, 4])
    out = b.node("cumsum", "cumsum", [x], lambda v: _exclusive(torch.cumsum(v, -1), 2),
                 attrs={"axis": "-1", "dtype": "", "exclusive": "1"})
    return b.finish([out])


@case
def case_cumsum_int32():
    """int32 keeps int32 with dtype "" (torch would widen), or becomes the `dtype` attr."""
    b = Builder()
    x = b.input("x", [3, 5], dtype=torch.int32, value=_ints(b, [3, 5], -20, 20))
    o1 = b.node("cumsum", "cumsum", [x], lambda v: torch.cumsum(v, 0, dtype=torch.int32),
                attrs={"axis": "0", "dtype": "", "exclusive": "0"})
    o2 = b.node("cumsum_1", "cumsum", [x], lambda v: torch.cumsum(v, 1, dtype=torch.int64),
                attrs={"axis": "1", "dtype": "int64", "exclusive": "0"})
    return b.finish([o1, o2])


@case
def case_topk():
    """ret_type both: two outputs, values and int64 indices, k largest along the last axis."""
    b = Builder()
    x = b.input("x", [2, 3, 6])
    vals, idx = b.node("topk", "topk", [x], lambda v: (lambda r: (r.values, r.indices))(torch.topk(v, 3, -1)),
                       attrs={"k": "3", "axis": "-1", "ret_type": "both", "largest": "1", "dtype": "int64"})
    return b.finish([vals, idx])


@case
def case_topk_smallest():
    """largest 0 (ascending), axis 1, indices int32 (the default dtype)."""
    b = Builder()
    x = b.input("x", [2, 5, 3])
    vals, idx = b.node("topk", "topk", [x],
                       lambda v: (lambda r: (r.values, r.indices.int()))(torch.topk(v, 2, 1, largest=False)),
                       attrs={"k": "2", "axis": "1", "ret_type": "both", "largest": "0", "dtype": "int32"})
    return b.finish([vals, idx])


@case
def case_topk_single():
    """ret_type values / indices: one output each."""
    b = Builder()
    x = b.input("x", [4, 5])
    vals = b.node("topk", "topk", [x], lambda v: torch.topk(v, 2, 0).values,
                  attrs={"k": "2", "axis": "0", "ret_type": "values", "largest": "1", "dtype": "int32"})
    idx = b.node("topk_1", "topk", [x], lambda v: torch.topk(v, 3, -1).indices.int(),
                 attrs={"k": "3", "axis": "-1", "ret_type": "indices", "largest": "1", "dtype": "int32"})
    return b.finish([vals, idx])


# ---- einsum ---------------------------------------------------------------------------------------

def _einsum_case(subscripts, *shapes):
    def build():
        b = Builder()
        xs = [b.input("x%d" % i, list(s)) for i, s in enumerate(shapes)]
        out = b.node("einsum", "einsum", xs, lambda *v: torch.from_numpy(np.asarray(np.einsum(subscripts, *[t.numpy() for t in v]))),
                     attrs={"subscripts": subscripts})
        return b.finish([out])
    return build


_register("einsum_matmul", _einsum_case("ij,jk->ik", (3, 4), (4, 5)))
_register("einsum_batched", _einsum_case("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)))
_register("einsum_transpose", _einsum_case("ij->ji", (3, 4)))
_register("einsum_trace", _einsum_case("ii->", (4, 4)))
_register("einsum_diagonal", _einsum_case("ii->i", (4, 4)))
_register("einsum_sum", _einsum_case("ijk->j", (2, 3, 4)))
_register("einsum_implicit", _einsum_case("ij,jk", (3, 4), (4, 5)))
_register("einsum_ellipsis", _einsum_case("...ij,...jk->...ik", (2, 3, 4), (2, 4, 2)))


# ---- shape and indexing ---------------------------------------------------------------------------

@case
def case_concatenate():
    b = Builder()
    x = b.input("x", [2, 3, 4])
    y = b.input("y", [2, 1, 4])
    z = b.input("z", [2, 2, 4])
    c = b.node("concatenate", "concatenate", [x, y, z], lambda *v: torch.cat(v, 1), attrs={"axis": "1"})
    out = b.node("concatenate_1", "concatenate", [c, c], lambda *v: torch.cat(v, -1), attrs={"axis": "-1"})
    return b.finish([out])


@case
def case_stack():
    b = Builder()
    x = b.input("x", [2, 3])
    y = b.input("y", [2, 3])
    s0 = b.node("stack", "stack", [x, y], lambda *v: torch.stack(v, 0), attrs={"axis": "0"})
    s1 = b.node("stack_1", "stack", [x, y, x], lambda *v: torch.stack(v, -1), attrs={"axis": "-1"})
    return b.finish([s0, s1])


@case
def case_split_sections():
    """indices_or_sections "3" (no comma): three equal sections, consumed through get_item."""
    b = Builder()
    x = b.input("x", [2, 6, 4])
    parts = b.node("split", "split", [x], lambda v: torch.split(v, 2, 1), attrs={"indices_or_sections": "3", "axis": "1"})
    g0 = b.node("split.0", "get_item", parts, lambda *v: v[0], attrs={"index": "0"})
    g2 = b.node("split.2", "get_item", parts, lambda *v: v[2], attrs={"index": "2"})
    out = b.node("subtract", "subtract", [g0, g2], torch.sub)
    return b.finish([out, parts[1]])


@case
def case_split_indices():
    """indices_or_sections "2,5,": split before indices 2 and 5 of the last axis; every piece a
    graph output."""
    b = Builder()
    x = b.input("x", [2, 3, 7])
    parts = b.node("split", "split", [x], lambda v: torch.tensor_split(v, [2, 5], -1),
                   attrs={"indices_or_sections": "2,5,", "axis": "-1"})
    return b.finish(list(parts))


@case
def case_broadcast_to():
    b = Builder()
    x = b.input("x", [3, 1])
    out = b.node("broadcast_to", "broadcast_to", [x], lambda v: torch.broadcast_to(v, (2, 3, 4)), attrs={"shape": "2,3,4"})
    return b.finish([out])


@case
def case_tile():
    """numpy.tile: repeats as long as ndim, and shorter (left-padded with 1)."""
    b = Builder()
    x = b.input("x", [2, 3])
    t0 = b.node("tile", "tile", [x], lambda v: torch.from_numpy(np.tile(v.numpy(), (2, 1))), attrs={"repeats": "2,1"})
    t1 = b.node("tile_1", "tile", [x], lambda v: torch.from_numpy(np.tile(v.numpy(), (3,))), attrs={"repeats": "3,"})
    t2 = b.node("tile_2", "tile", [x], lambda v: torch.from_numpy(np.tile(v.numpy(), (2, 1, 2))), attrs={"repeats": "2,1,2"})
    return b.finish([t0, t1, t2])


@case
def case_repeat():
    """numpy.repeat along an axis, and of the flattened tensor (axis "")."""
    b = Builder()
    x = b.input("x", [2, 3])
    r0 = b.node("repeat", "repeat", [x], lambda v: torch.from_numpy(np.repeat(v.numpy(), 2, axis=1)),
                attrs={"repeats": "2", "axis": "1"})
    r1 = b.node("repeat_1", "repeat", [x], lambda v: torch.from_numpy(np.repeat(v.numpy(), 3)),
                attrs={"repeats": "3", "axis": ""})
    return b.finish([r0, r1])


@case
def case_flip():
    b = Builder()
    x = b.input("x", [2, 3, 4])
    f0 = b.node("flip", "flip", [x], lambda v: torch.flip(v, [1]), attrs={"axis": "1"})
    f1 = b.node("flip_1", "flip", [f0], lambda v: torch.flip(v, [-1]), attrs={"axis": "-1"})
    return b.finish([f1])


@case
def case_tril_triu():
    b = Builder()
    x = b.input("x", [2, 4, 5])
    outs = [b.node("tril", "tril", [x], lambda v: torch.tril(v), attrs={"k": "0"}),
            b.node("tril_1", "tril", [x], lambda v: torch.tril(v, -1), attrs={"k": "-1"}),
            b.node("triu", "triu", [x], lambda v: torch.triu(v, 1), attrs={"k": "1"}),
            b.node("triu_1", "triu", [x], lambda v: torch.triu(v, -2), attrs={"k": "-2"})]
    return b.finish(outs)


@case
def case_trilu():
    b = Builder()
    x = b.input("x", [4, 4])
    up = b.node("trilu", "trilu", [x], lambda v: torch.triu(v), attrs={"k": "0", "upper": "1"})
    lo = b.node("trilu_1", "trilu", [x], lambda v: torch.tril(v, 1), attrs={"k": "1", "upper": "0"})
    return b.finish([up, lo])


def _np_take(v, i, axis):
    return torch.from_numpy(np.take(v.numpy(), i.numpy(), axis=axis))


@case
def case_take():
    """take along axis 0 with 2-D int64 indices, along axis -1 with int32 indices, and of the
    flattened x (axis "")."""
    b = Builder()
    x = b.input("x", [5, 4])
    i2 = b.input("indices", [2, 3], dtype=torch.int64, value=_ints(b, [2, 3], 0, 5, torch.int64))
    i1 = b.input("indices_1", [6], dtype=torch.int32, value=_ints(b, [6], 0, 4))
    i0 = b.input("indices_2", [2, 2], dtype=torch.int64, value=_ints(b, [2, 2], 0, 20, torch.int64))
    t0 = b.node("take", "take", [x, i2], lambda v, i: _np_take(v, i, 0), attrs={"axis": "0"})
    t1 = b.node("take_1", "take", [x, i1], lambda v, i: _np_take(v, i, -1), attrs={"axis": "-1"})
    t2 = b.node("take_2", "take", [x, i0], lambda v, i: _np_take(v, i, None), attrs={"axis": ""})
    return b.finish([t0, t1, t2])


@case
def case_gather_elements():
    b = Builder()
    x = b.input("x", [3, 4])
    i1 = b.input("indices", [3, 2], dtype=torch.int64, value=_ints(b, [3, 2], 0, 4, torch.int64))
    i0 = b.input("indices_1", [2, 4], dtype=torch.int32, value=_ints(b, [2, 4], 0, 3))
    g1 = b.node("gather_elements", "gather_elements", [x, i1], lambda v, i: torch.gather(v, 1, i), attrs={"axis": "1"})
    g0 = b.node("gather_elements_1", "gather_elements", [x, i0], lambda v, i: torch.gather(v, 0, i.long()),
                attrs={"axis": "0"})
    return b.finish([g1, g0])


def _ref_gather_nd(data, indices, batch_dims):
    """ONNX GatherND by loops over the index tuples."""
    d, idx = data.numpy(), indices.numpy()
    m = idx.shape[-1]
    out_shape = idx.shape[:-1] + d.shape[batch_dims + m:]
    out = np.zeros(out_shape, d.dtype)
    for pos in np.ndindex(*idx.shape[:-1]):
        out[pos] = d[tuple(pos[:batch_dims]) + tuple(idx[pos])]
    return torch.from_numpy(out)


@case
def case_gather_nd():
    """batch_dims 0 (index pairs into [3, 4, 5]) and 1 (one index per batch row)."""
    b = Builder()
    x = b.input("x", [3, 4, 5])
    i0 = b.input("indices", [2, 2], dtype=torch.int64, value=torch.tensor([[2, 1], [0, 3]]))
    y = b.input("y", [2, 3, 4])
    i1 = b.input("indices_1", [2, 2, 1], dtype=torch.int32, value=torch.tensor([[[2], [0]], [[1], [1]]], dtype=torch.int32))
    g0 = b.node("gather_nd", "gather_nd", [x, i0], lambda v, i: _ref_gather_nd(v, i, 0), attrs={"batch_dims": "0"})
    g1 = b.node("gather_nd_1", "gather_nd", [y, i1], lambda v, i: _ref_gather_nd(v, i, 1), attrs={"batch_dims": "1"})
    return b.finish([g0, g1])


def _ref_scatter_elements(data, indices, updates, axis, reduction):
    """Loops in index order; mean is torch's (original value and every update, averaged)."""
    out, count = data.numpy().copy(), np.ones(data.shape)
    idx, upd = indices.numpy(), updates.numpy()
    for pos in np.ndindex(*idx.shape):
        dst = list(pos)
        dst[axis] = idx[pos]
        dst = tuple(dst)
        if reduction == "update":
            out[dst] = upd[pos]
        elif reduction in ("add", "mean"):
            out[dst] += upd[pos]
            count[dst] += 1
        elif reduction == "mul":
            out[dst] *= upd[pos]
        elif reduction == "max":
            out[dst] = max(out[dst], upd[pos])
        else:
            out[dst] = min(out[dst], upd[pos])
    if reduction == "mean":
        out = (out / count).astype(np.float32)
    return torch.from_numpy(out)


@case
def case_scatter_elements():
    """update along axis 0 (distinct targets per column) and add along axis 1 (with repeats)."""
    b = Builder()
    x = b.input("x", [4, 5])
    i0 = b.input("indices", [2, 5], dtype=torch.int64, value=torch.tensor([[3, 0, 1, 2, 0], [1, 2, 3, 0, 3]]))
    u0 = b.input("updates", [2, 5])
    i1 = b.input("indices_1", [4, 3], dtype=torch.int32, value=_ints(b, [4, 3], 0, 5))
    u1 = b.input("updates_1", [4, 3])
    s0 = b.node("scatter_elements", "scatter_elements", [x, i0, u0],
                lambda v, i, u: _ref_scatter_elements(v, i, u, 0, "update"), attrs={"axis": "0", "reduction": "update"})
    s1 = b.node("scatter_elements_1", "scatter_elements", [x, i1, u1],
                lambda v, i, u: _ref_scatter_elements(v, i, u, 1, "add"), attrs={"axis": "1", "reduction": "add"})
    return b.finish([s0, s1])


@case
def case_scatter_elements_reduce():
    """mul / mean / max / min along axis -1, distinct targets per row (TOPI's pairwise mean equals
    torch's mean only then)."""
    b = Builder()
    x = b.input("x", [3, 5])
    idx = b.input("indices", [3, 2], dtype=torch.int64, value=torch.tensor([[4, 1], [0, 2], [3, 4]]))
    upd = b.input("updates", [3, 2])
    outs = []
    for k, r in enumerate(["mul", "mean", "max", "min"]):
        outs.append(b.node("scatter_elements" + ("_%d" % k if k else ""), "scatter_elements", [x, idx, upd],
                           lambda v, i, u, r=r: _ref_scatter_elements(v, i, u, 1, r),
                           attrs={"axis": "-1", "reduction": r}))
    return b.finish(outs)


def _ref_scatter_nd(data, indices, updates, reduction):
    out = data.numpy().copy()
    idx, upd = indices.numpy(), updates.numpy()
    for pos in np.ndindex(*idx.shape[:-1]):
        dst = tuple(idx[pos])
        if reduction == "update":
            out[dst] = upd[pos]
        elif reduction == "add":
            out[dst] = out[dst] + upd[pos]
        elif reduction == "mul":
            out[dst] = out[dst] * upd[pos]
        elif reduction == "max":
            out[dst] = np.maximum(out[dst], upd[pos])
        else:
            out[dst] = np.minimum(out[dst], upd[pos])
    return torch.from_numpy(out)


@case
def case_scatter_nd():
    """Rows of [4, 3] replaced (update, distinct targets), elements accumulated (add, repeated
    target), and mul / max / min on element pairs."""
    b = Builder()
    x = b.input("x", [4, 3])
    rows = b.input("indices", [2, 1], dtype=torch.int64, value=torch.tensor([[3], [1]]))
    rows_upd = b.input("updates", [2, 3])
    elems = b.input("indices_1", [2, 2, 2], dtype=torch.int32,
                    value=torch.tensor([[[0, 1], [2, 2]], [[0, 1], [3, 0]]], dtype=torch.int32))
    elems_upd = b.input("updates_1", [2, 2])
    outs = [b.node("scatter_nd", "scatter_nd", [x, rows, rows_upd], lambda v, i, u: _ref_scatter_nd(v, i, u, "update"),
                   attrs={"reduction": "update"})]
    for k, r in enumerate(["add", "mul", "max", "min"]):
        outs.append(b.node("scatter_nd_%d" % (k + 1), "scatter_nd", [x, elems, elems_upd],
                           lambda v, i, u, r=r: _ref_scatter_nd(v, i, u, r), attrs={"reduction": r}))
    return b.finish(outs)


# ---- creation -------------------------------------------------------------------------------------

@case
def case_one_hot():
    """int64 indices, depth 4 on the last axis (1/0) and int32 indices on axis 0 (2.5/-1)."""
    b = Builder()
    i = b.input("indices", [2, 3], dtype=torch.int64, value=_ints(b, [2, 3], 0, 4, torch.int64))
    j = b.input("indices_1", [3], dtype=torch.int32, value=torch.tensor([2, 0, 4], dtype=torch.int32))
    o0 = b.node("one_hot", "one_hot", [i], lambda v: F.one_hot(v, 4).float(),
                attrs={"depth": "4", "axis": "-1", "on_value": "1.000000", "off_value": "0.000000"})
    o1 = b.node("one_hot_1", "one_hot", [j],
                lambda v: torch.where(F.one_hot(v.long(), 5).T.bool(), torch.tensor(2.5), torch.tensor(-1.0)),
                attrs={"depth": "5", "axis": "0", "on_value": "2.500000", "off_value": "-1.000000"})
    return b.finish([o0, o1])


@case
def case_arange():
    """int64 arange (MSC writes the bounds as floats) and a float32 one with a fractional step."""
    b = Builder()
    x = b.input("x", [4])
    r0 = b.node("arange", "arange", [], lambda: torch.arange(0, 5, 1, dtype=torch.int64),
                attrs={"start": "0.000000", "end": "5.000000", "step": "1.000000", "dtype": "int64"})
    r1 = b.node("arange_1", "arange", [], lambda: torch.arange(1.0, 3.0, 0.5, dtype=torch.float32),
                attrs={"start": "1.000000", "end": "3.000000", "step": "0.500000", "dtype": "float32"})
    r2 = b.node("arange_2", "arange", [], lambda: torch.arange(10, 1, -3, dtype=torch.int32),
                attrs={"start": "10.000000", "end": "1.000000", "step": "-3.000000", "dtype": "int32"})
    out = b.node("add", "add", [x, r1], torch.add)
    return b.finish([r0, out, r2])


@case
def case_full():
    """fill_value from a 0-d scalar `constant`: dtype "" (the fill's) and int32."""
    b = Builder()
    x = b.input("x", [2, 3])
    fill = _scalar(b, "const", 2.5)
    f0 = b.node("full", "full", [fill], lambda v: torch.full((2, 3), float(v)), attrs={"shape": "2,3", "dtype": ""})
    f1 = b.node("full_1", "full", [fill], lambda v: torch.full((4,), 2, dtype=torch.int32),
                attrs={"shape": "4,", "dtype": "int32"})
    out = b.node("multiply", "multiply", [x, f0], torch.mul)
    return b.finish([out, f1])


@case
def case_ones_zeros():
    """ones / zeros (no inputs) and ones_like / zeros_like, float32 and int dtypes."""
    b = Builder()
    x = b.input("x", [2, 3])
    o = b.node("ones", "ones", [], lambda: torch.ones(2, 3), attrs={"shape": "2,3", "dtype": "float32"})
    z = b.node("zeros", "zeros", [], lambda: torch.zeros(4, dtype=torch.int32), attrs={"shape": "4,", "dtype": "int32"})
    ol = b.node("ones_like", "ones_like", [x], lambda v: torch.ones_like(v, dtype=torch.int64), attrs={"dtype": "int64"})
    zl = b.node("zeros_like", "zeros_like", [x], torch.zeros_like, attrs={"dtype": ""})
    s = b.node("add", "add", [x, o], torch.add)
    out = b.node("add_1", "add", [s, zl], torch.add)
    return b.finish([out, z, ol])


@case
def case_shape():
    b = Builder()
    x = b.input("x", [2, 3])
    s = b.node("shape", "shape", [], lambda: torch.tensor([2, 3, 4], dtype=torch.int64), attrs={"shape": "2,3,4"})
    out = b.node("relu", "nn.relu", [x], F.relu)
    return b.finish([out, s])


# ---- convolution ----------------------------------------------------------------------------------

_CONV1D_ATTRS = {"data_layout": "NCW", "kernel_layout": "OIW", "out_layout": "NCW", "out_dtype": "float32"}


@case
def case_nn_conv1d():
    """Grouped, strided, dilated, asymmetric padding [left, right]."""
    b = Builder()
    x = b.input("x", [2, 4, 11], "NCW")
    w = b.weight([6, 2, 3], "OIW", "conv.weight")
    out = b.node("conv1d", "nn.conv1d", [x],
                 lambda v, weight: F.conv1d(F.pad(v, (1, 2)), weight, stride=2, dilation=2, groups=2),
                 weights={"weight": w}, layout="NCW",
                 attrs=dict(_CONV1D_ATTRS, strides="2,", padding="1,2", dilation="2,", groups="2"))
    return b.finish([out])


@case
def case_nn_conv1d_input_weight():
    """The weight as a `constant` node's output (second input); symmetric padding."""
    b = Builder()
    x = b.input("x", [1, 3, 8], "NCW")
    w = _const(b, "const", torch.randn(5, 3, 3, generator=b.gen), "conv.weight")
    out = b.node("conv1d", "nn.conv1d", [x, w], lambda v, weight: F.conv1d(v, weight, padding=1), layout="NCW",
                 attrs=dict(_CONV1D_ATTRS, strides="1,", padding="1,1", dilation="1,", groups="1"))
    return b.finish([out])


@case
def case_msc_conv1d_bias():
    b = Builder()
    x = b.input("x", [1, 3, 9], "NCW")
    w = b.weight([4, 3, 3], "OIW", "conv.weight")
    bias = b.weight([4], "O", "conv.bias")
    out = b.node("conv1d", "msc.conv1d_bias", [x], lambda v, weight, bias: F.conv1d(v, weight, bias, stride=2),
                 weights={"weight": w, "bias": bias}, layout="NCW",
                 attrs=dict(_CONV1D_ATTRS, strides="2,", padding="0,0", dilation="1,", groups="1"))
    return b.finish([out])


@case
def case_nn_conv1d_transpose():
    """Stride 2, symmetric padding 1, output_padding 1; weight IOW."""
    b = Builder()
    x = b.input("x", [1, 4, 5], "NCW")
    w = b.weight([4, 3, 3], "IOW", "deconv.weight")
    out = b.node("conv1d_transpose", "nn.conv1d_transpose", [x],
                 lambda v, weight: F.conv_transpose1d(v, weight, stride=2, padding=1, output_padding=1),
                 weights={"weight": w}, layout="NCW",
                 attrs={"strides": "2,", "padding": "1,1", "output_padding": "1,", "dilation": "1,", "groups": "1",
                        "data_layout": "NCW", "kernel_layout": "IOW", "out_layout": "NCW", "out_dtype": "float32"})
    return b.finish([out])


@case
def case_nn_conv1d_transpose_groups():
    """groups 2, stride 3, dilation 2, asymmetric padding [left 2, right 0], output_padding 2; the
    weight [C, O/groups, kW] a `constant` node's output."""
    b = Builder()
    x = b.input("x", [2, 4, 4], "NCW")
    w = _const(b, "const", torch.randn(4, 3, 2, generator=b.gen), "deconv.weight")

    def ref(v, weight):
        full = F.conv_transpose1d(v, weight, stride=3, output_padding=2, groups=2, dilation=2)
        return full[:, :, 2:]
    out = b.node("conv1d_transpose", "nn.conv1d_transpose", [x, w], ref, layout="NCW",
                 attrs={"strides": "3,", "padding": "2,0", "output_padding": "2,", "dilation": "2,", "groups": "2",
                        "data_layout": "NCW", "kernel_layout": "IOW", "out_layout": "NCW", "out_dtype": "float32"})
    return b.finish([out])


_CONVT2D_ATTRS = {"data_layout": "NCHW", "kernel_layout": "IOHW", "out_layout": "NCHW", "out_dtype": "float32"}


@case
def case_nn_conv2d_transpose():
    """Strides 2, padding 1, output_padding (1, 0), weight IOHW held as a weight."""
    b = Builder()
    x = b.input("x", [1, 3, 4, 5], "NCHW")
    w = b.weight([3, 2, 3, 3], "IOHW", "deconv.weight")
    out = b.node("conv2d_transpose", "nn.conv2d_transpose", [x],
                 lambda v, weight: F.conv_transpose2d(v, weight, stride=2, padding=1, output_padding=(1, 0)),
                 weights={"weight": w}, layout="NCHW",
                 attrs=dict(_CONVT2D_ATTRS, strides="2,2", padding="1,1,1,1", output_padding="1,0", dilation="1,1",
                            groups="1"))
    return b.finish([out])


@case
def case_nn_conv2d_transpose_depthwise():
    """Depthwise with multiplier 2 (groups 4, weight [4, 2, 3, 3] -> 8 channels), dilation (2, 1),
    asymmetric padding [top 0, left 1, bottom 1, right 0]; the weight a `constant` node's output."""
    b = Builder()
    x = b.input("x", [1, 4, 5, 5], "NCHW")
    w = _const(b, "const", torch.randn(4, 2, 3, 3, generator=b.gen), "deconv.weight")

    def ref(v, weight):
        full = F.conv_transpose2d(v, weight, stride=(1, 2), groups=4, dilation=(2, 1))
        return full[:, :, 0:full.shape[2] - 1, 1:]
    out = b.node("conv2d_transpose", "nn.conv2d_transpose", [x, w], ref, layout="NCHW",
                 attrs=dict(_CONVT2D_ATTRS, strides="1,2", padding="0,1,1,0", output_padding="0,0", dilation="2,1",
                            groups="4"))
    return b.finish([out])


# ---- pooling --------------------------------------------------------------------------------------

def _pool1d_attrs(pool, strides, padding, dilation="1,", ceil="0", include="0"):
    return {"pool_size": pool, "strides": strides, "padding": padding, "dilation": dilation, "ceil_mode": ceil,
            "count_include_pad": include, "layout": "NCW", "out_layout": "NCW"}


@case
def case_nn_max_pool1d():
    b = Builder()
    x = b.input("x", [2, 3, 9], "NCW")
    m0 = b.node("max_pool1d", "nn.max_pool1d", [x], lambda v: F.max_pool1d(v, 3, 2, 1), layout="NCW",
                attrs=_pool1d_attrs("3,", "2,", "1,1"))
    m1 = b.node("max_pool1d_1", "nn.max_pool1d", [x], lambda v: F.max_pool1d(v, 2, 2, 0, dilation=2, ceil_mode=True),
                layout="NCW", attrs=_pool1d_attrs("2,", "2,", "0,0", "2,", ceil="1"))
    return b.finish([m0, m1])


@case
def case_nn_avg_pool1d():
    """count_include_pad 1 and 0 with padding, and ceil_mode (the last window partly in the
    padding: torch and TOPI both divide by the part inside input + padding)."""
    b = Builder()
    x = b.input("x", [2, 3, 8], "NCW")
    a0 = b.node("avg_pool1d", "nn.avg_pool1d", [x], lambda v: F.avg_pool1d(v, 3, 2, 1, count_include_pad=True),
                layout="NCW", attrs=_pool1d_attrs("3,", "2,", "1,1", include="1"))
    a1 = b.node("avg_pool1d_1", "nn.avg_pool1d", [x], lambda v: F.avg_pool1d(v, 3, 2, 1, count_include_pad=False),
                layout="NCW", attrs=_pool1d_attrs("3,", "2,", "1,1", include="0"))
    a2 = b.node("avg_pool1d_2", "nn.avg_pool1d", [x],
                lambda v: F.avg_pool1d(v, 3, 2, 1, ceil_mode=True, count_include_pad=True),
                layout="NCW", attrs=_pool1d_attrs("3,", "2,", "1,1", ceil="1", include="1"))
    a3 = b.node("avg_pool1d_3", "nn.avg_pool1d", [x],
                lambda v: F.avg_pool1d(v, 2, 3, 0, ceil_mode=True, count_include_pad=False),
                layout="NCW", attrs=_pool1d_attrs("2,", "3,", "0,0", ceil="1", include="0"))
    return b.finish([a0, a1, a2, a3])


@case
def case_nn_adaptive_avg_pool1d():
    b = Builder()
    x = b.input("x", [2, 3, 7], "NCW")
    a0 = b.node("adaptive_avg_pool1d", "nn.adaptive_avg_pool1d", [x], lambda v: F.adaptive_avg_pool1d(v, 3),
                layout="NCW", attrs={"output_size": "3,", "layout": "NCW", "out_layout": "NCW"})
    a1 = b.node("adaptive_avg_pool1d_1", "nn.adaptive_avg_pool1d", [x], lambda v: F.adaptive_avg_pool1d(v, 7),
                layout="NCW", attrs={"output_size": "", "layout": "NCW", "out_layout": "NCW"})
    return b.finish([a0, a1])


# ---- normalization --------------------------------------------------------------------------------

def _ref_layer_norm(v, axes, gamma=None, beta=None, eps=1e-5):
    mean = v.mean(dim=axes, keepdim=True)
    var = ((v - mean) ** 2).mean(dim=axes, keepdim=True)
    out = (v - mean) / torch.sqrt(var + eps)
    shape = [v.shape[d] if d in axes else 1 for d in range(v.dim())]
    if gamma is not None:
        out = out * gamma.reshape(shape)
    if beta is not None:
        out = out + beta.reshape(shape)
    return out


@case
def case_nn_layer_norm():
    """Last axis with gamma/beta (the transformer case), epsilon 1e-5 as MSC writes it."""
    b = Builder()
    x = b.input("x", [2, 3, 8])
    g = b.weight([8], "", "ln.weight", value=_uniform(b, [8], 0.5, 1.5))
    beta = b.weight([8], "", "ln.bias")
    out = b.node("layer_norm", "nn.layer_norm", [x], lambda v, gamma, beta: F.layer_norm(v, [8], gamma, beta, 1e-5),
                 weights={"gamma": g, "beta": beta},
                 attrs={"axes": "-1,", "epsilon": "0.000010", "center": "1", "scale": "1"})
    return b.finish([out])


@case
def case_nn_layer_norm_axes():
    """Two trailing axes with eps 1e-3, a middle axis (written out), and no affine weights."""
    b = Builder()
    x = b.input("x", [2, 4, 3])
    g = b.weight([4, 3], "", "ln.weight", value=_uniform(b, [4, 3], 0.5, 1.5))
    beta = b.weight([4, 3], "", "ln.bias")
    g1 = b.weight([4], "", "ln_1.weight", value=_uniform(b, [4], 0.5, 1.5))
    beta1 = b.weight([4], "", "ln_1.bias")
    l0 = b.node("layer_norm", "nn.layer_norm", [x], lambda v, gamma, beta: _ref_layer_norm(v, [1, 2], gamma, beta, 1e-3),
                weights={"gamma": g, "beta": beta}, attrs={"axes": "1,2", "epsilon": "0.001000", "center": "1", "scale": "1"})
    l1 = b.node("layer_norm_1", "nn.layer_norm", [x], lambda v, gamma, beta: _ref_layer_norm(v, [1], gamma, beta),
                weights={"gamma": g1, "beta": beta1}, attrs={"axes": "1,", "epsilon": "0.000010", "center": "1", "scale": "1"})
    l2 = b.node("layer_norm_2", "nn.layer_norm", [x], lambda v: _ref_layer_norm(v, [2]),
                attrs={"axes": "-1,", "epsilon": "0.000010", "center": "0", "scale": "0"})
    return b.finish([l0, l1, l2])


@case
def case_nn_group_norm():
    b = Builder()
    x = b.input("x", [2, 6, 3, 3], "NCHW")
    g = b.weight([6], "", "gn.weight", value=_uniform(b, [6], 0.5, 1.5))
    beta = b.weight([6], "", "gn.bias")
    out = b.node("group_norm", "nn.group_norm", [x], lambda v, gamma, beta: F.group_norm(v, 3, gamma, beta, 1e-5),
                 weights={"gamma": g, "beta": beta}, layout="NCHW",
                 attrs={"num_groups": "3", "channel_axis": "1", "axes": "2,3", "epsilon": "0.000010", "center": "1",
                        "scale": "1"})
    return b.finish([out])


def _ref_rms_norm(v, weight, axes, eps):
    shape = [v.shape[d] if d in axes else 1 for d in range(v.dim())]
    return v / torch.sqrt((v * v).mean(dim=axes, keepdim=True) + eps) * weight.reshape(shape)


@case
def case_nn_rms_norm():
    """The weight as a weight (last axis) and as a `constant` node's output (middle axis)."""
    b = Builder()
    x = b.input("x", [2, 4, 6])
    w = b.weight([6], "", "norm.weight", value=_uniform(b, [6], 0.5, 1.5))
    r0 = b.node("rms_norm", "nn.rms_norm", [x], lambda v, weight: _ref_rms_norm(v, weight, [2], 1e-5),
                weights={"weight": w}, attrs={"axes": "-1,", "epsilon": "0.000010"})
    c = _const(b, "const", _uniform(b, [4], 0.5, 1.5), "norm_1.weight")
    r1 = b.node("rms_norm_1", "nn.rms_norm", [x, c], lambda v, weight: _ref_rms_norm(v, weight, [1], 1e-6),
                attrs={"axes": "1,", "epsilon": "0.000001"})
    return b.finish([r0, r1])


# ---- pad, matmul, bias, embedding ----------------------------------------------------------------

def _np_pad(v, pad_width, mode, value=0.0):
    pairs = [(pad_width[2 * i], pad_width[2 * i + 1]) for i in range(v.dim())]
    if mode == "constant":
        return torch.from_numpy(np.pad(v.numpy(), pairs, mode="constant", constant_values=value))
    return torch.from_numpy(np.pad(v.numpy(), pairs, mode=mode))


@case
def case_nn_pad():
    """constant with a value, edge (incl. the batch dim) and reflect (numpy's modes)."""
    b = Builder()
    x = b.input("x", [2, 3, 4])
    p0 = b.node("pad", "nn.pad", [x], lambda v: _np_pad(v, [0, 0, 1, 2, 0, 1], "constant", 1.5),
                attrs={"pad_width": "0,0,1,2,0,1", "pad_mode": "constant", "pad_value": "1.500000"})
    p1 = b.node("pad_1", "nn.pad", [x], lambda v: _np_pad(v, [1, 0, 0, 2, 2, 1], "edge"),
                attrs={"pad_width": "1,0,0,2,2,1", "pad_mode": "edge", "pad_value": "0.000000"})
    p2 = b.node("pad_2", "nn.pad", [x], lambda v: _np_pad(v, [0, 0, 2, 1, 3, 3], "reflect"),
                attrs={"pad_width": "0,0,2,1,3,3", "pad_mode": "reflect", "pad_value": "0.000000"})
    return b.finish([p0, p1, p2])


@case
def case_nn_batch_matmul():
    b = Builder()
    x = b.input("x", [2, 3, 4])
    y = b.input("y", [2, 5, 4])
    z = b.input("z", [2, 3, 5])
    m0 = b.node("batch_matmul", "nn.batch_matmul", [x, y], lambda p, q: torch.bmm(p, q.transpose(1, 2)),
                attrs={"transpose_a": "0", "transpose_b": "1", "out_dtype": ""})
    m1 = b.node("batch_matmul_1", "nn.batch_matmul", [z, m0], lambda p, q: torch.bmm(p.transpose(1, 2), q),
                attrs={"transpose_a": "1", "transpose_b": "0", "out_dtype": "float32"})
    return b.finish([m1])


@case
def case_msc_matmul():
    b = Builder()
    x = b.input("x", [2, 3, 4])
    y = b.input("y", [4, 5])
    out = b.node("matmul", "msc.matmul", [x, y], torch.matmul, attrs={"out_dtype": ""})
    return b.finish([out])


@case
def case_nn_bias_add():
    """bias as a weight on axis 1, and as a `constant` node's output on the last axis."""
    b = Builder()
    x = b.input("x", [2, 3, 4])
    w = b.weight([3], "O", "bias")
    a0 = b.node("bias_add", "nn.bias_add", [x], lambda v, bias: v + bias.reshape(3, 1), weights={"bias": w},
                attrs={"axis": "1"})
    c = _const(b, "const", torch.randn(4, generator=b.gen), "bias_1")
    a1 = b.node("bias_add_1", "nn.bias_add", [a0, c], lambda v, bias: v + bias, attrs={"axis": "-1"})
    return b.finish([a1])


@case
def case_msc_embedding():
    """2-D int64 ids (a transformer's [batch, seq]) and 1-D int32 ids."""
    b = Builder()
    ids = b.input("input_ids", [2, 3], dtype=torch.int64, value=_ints(b, [2, 3], 0, 10, torch.int64))
    ids32 = b.input("ids", [5], dtype=torch.int32, value=_ints(b, [5], 0, 10))
    w = b.weight([10, 4], "", "embed_tokens.weight")
    e0 = b.node("embedding", "msc.embedding", [ids], lambda v, weight: F.embedding(v, weight), weights={"weight": w},
                attrs={"axis": "0"})
    w1 = b.weight([10, 3], "", "embed_positions.weight")
    e1 = b.node("embedding_1", "msc.embedding", [ids32], lambda v, weight: F.embedding(v.long(), weight),
                weights={"weight": w1}, attrs={"axis": "0"})
    return b.finish([e0, e1])


# ---- attention ------------------------------------------------------------------------------------

def _ref_attention(q, k, v, mask=None, scale=None, causal="", axes=((0, 2, 1, 3),) * 4):
    """relax.op.nn.attention on inputs permuted to [B, S, N, H] (einsum; the causal mask by loops)."""
    qr, kr, vr = q.permute(*axes[0]), k.permute(*axes[1]), v.permute(*axes[2])
    scores = torch.einsum("bqnh,bknh->bnqk", qr, kr)
    scores = scores * scale if scale is not None else scores / math.sqrt(qr.shape[-1])
    if mask is not None:
        scores = scores + mask
    if causal:
        s_q, s_kv = scores.shape[-2], scores.shape[-1]
        offset = 0 if causal == "TopLeft" else abs(s_kv - s_q)
        keep = torch.tensor([[j <= i + offset for j in range(s_kv)] for i in range(s_q)])
        scores = torch.where(keep, scores, torch.tensor(float("-inf")))
    out = torch.einsum("bnqk,bknh->bqnh", torch.softmax(scores, -1), vr)
    return out.permute(*axes[3])


_ATTN_DEFAULT = {"axes": "0,2,1,3", "axes_1": "0,2,1,3", "axes_2": "0,2,1,3", "axes_3": "0,2,1,3", "scale": "",
                 "causal_mask": "", "window_size": ""}


@case
def case_msc_attention():
    """The defaults: q, k, v [B, N, S, H], axes "0,2,1,3" everywhere, no mask, scale 1/sqrt(H)."""
    b = Builder()
    q = b.input("q", [2, 2, 4, 8])
    k = b.input("k", [2, 2, 4, 8])
    v = b.input("v", [2, 2, 4, 8])
    out = b.node("attention", "msc.attention", [q, k, v], _ref_attention, attrs=_ATTN_DEFAULT)
    return b.finish([out])


@case
def case_msc_attention_mask():
    """S_q 3 != S_kv 5, an additive float mask [B, 1, S_q, S_kv] as 4th input, scale 0.3, and a
    value head dim (6) different from the query's (4)."""
    b = Builder()
    q = b.input("q", [1, 2, 3, 4])
    k = b.input("k", [1, 2, 5, 4])
    v = b.input("v", [1, 2, 5, 6])
    mask = b.input("mask", [1, 1, 3, 5], value=torch.where(_bools(b, [1, 1, 3, 5]), torch.tensor(0.0), torch.tensor(-2.0)))
    out = b.node("attention", "msc.attention", [q, k, v, mask],
                 lambda *a: _ref_attention(*a[:3], mask=a[3], scale=0.3), attrs=dict(_ATTN_DEFAULT, scale="0.300000"))
    return b.finish([out])


@case
def case_msc_attention_causal():
    """causal_mask TopLeft (key j <= query i) with S_q 4 != S_kv 6, and BottomRight (TOPI's offset
    |S_kv - S_q|) with S_q 3, S_kv 5."""
    b = Builder()
    q = b.input("q", [1, 2, 4, 8])
    k = b.input("k", [1, 2, 6, 8])
    v = b.input("v", [1, 2, 6, 8])
    q1 = b.input("q_1", [1, 1, 3, 4])
    k1 = b.input("k_1", [1, 1, 5, 4])
    v1 = b.input("v_1", [1, 1, 5, 4])
    a0 = b.node("attention", "msc.attention", [q, k, v], lambda *a: _ref_attention(*a, causal="TopLeft"),
                attrs=dict(_ATTN_DEFAULT, causal_mask="TopLeft"))
    a1 = b.node("attention_1", "msc.attention", [q1, k1, v1], lambda *a: _ref_attention(*a, causal="BottomRight"),
                attrs=dict(_ATTN_DEFAULT, causal_mask="BottomRight"))
    return b.finish([a0, a1])


@case
def case_msc_attention_bsnh():
    """Inputs already in relax's [B, S, N, H] (identity axes), output [B, N, S, H] (axes_3
    "0,2,1,3"), explicit scale."""
    b = Builder()
    q = b.input("q", [1, 4, 2, 8])
    k = b.input("k", [1, 5, 2, 8])
    v = b.input("v", [1, 5, 2, 8])
    axes = ((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3), (0, 2, 1, 3))
    out = b.node("attention", "msc.attention", [q, k, v], lambda *a: _ref_attention(*a, scale=0.25, axes=axes),
                 attrs=dict(_ATTN_DEFAULT, axes="0,1,2,3", axes_1="0,1,2,3", axes_2="0,1,2,3", scale="0.250000"))
    return b.finish([out])


@case
def case_attention_unfused():
    """Attention written out op by op, which the vulkan backend's fuse_attention pass makes one
    msc.attention each (generator/passes/fuse_attention.cc); the other backends run it as it is.
    (1) GPT-2's: q @ permute_dims(k) * 0.35, where(causal condition, -inf, .), softmax, @ v, the
    result permuted to [B, S, N, H] (a causal_mask TopLeft); (2) scores / 2.0, where(c, ., lowest)
    with a random condition that keeps key 0 in every row (an additive mask constant), S_q 3 !=
    S_kv 5, a value head dim 6; (3) an additive mask input, no scale."""
    b = Builder()
    q = b.input("q", [1, 2, 4, 8])
    k = b.input("k", [1, 2, 4, 8])
    v = b.input("v", [1, 2, 4, 8])
    kt = b.node("k_t", "permute_dims", [k], lambda x: x.permute(0, 1, 3, 2), attrs={"axes": "0,1,3,2"})
    s = b.node("scores", "matmul", [q, kt], torch.matmul, attrs={"out_dtype": "float32"})
    scaled = b.node("scaled", "multiply", [s, _scalar(b, "scale", 0.35)], torch.mul)
    upper = _const(b, "upper", torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1))
    masked = b.node("masked", "where", [upper, _scalar(b, "ninf", float("-inf")), scaled], torch.where)
    p = b.node("probs", "nn.softmax", [masked], lambda x: torch.softmax(x, -1), attrs={"axis": "-1"})
    pv = b.node("pv", "matmul", [p, v], torch.matmul, attrs={"out_dtype": "float32"})
    out1 = b.node("merged", "permute_dims", [pv], lambda x: x.permute(0, 2, 1, 3), attrs={"axes": "0,2,1,3"})

    q2 = b.input("q_2", [1, 2, 3, 4])
    kt2 = b.input("kt_2", [1, 2, 4, 5])
    v2 = b.input("v_2", [1, 2, 5, 6])
    s2 = b.node("scores_2", "matmul", [q2, kt2], torch.matmul, attrs={"out_dtype": "float32"})
    div = b.node("scaled_2", "divide", [s2, _scalar(b, "two", 2.0)], torch.div)
    keep = _bools(b, [1, 1, 3, 5])
    keep[..., 0] = True
    lowest = torch.finfo(torch.float32).min
    m2 = b.node("masked_2", "where", [_const(b, "keep", keep), div, _scalar(b, "lowest", lowest)], torch.where)
    p2 = b.node("probs_2", "nn.softmax", [m2], lambda x: torch.softmax(x, -1), attrs={"axis": "3"})
    out2 = b.node("pv_2", "matmul", [p2, v2], torch.matmul, attrs={"out_dtype": "float32"})

    q3 = b.input("q_3", [2, 1, 3, 4])
    kt3 = b.input("kt_3", [2, 1, 4, 3])
    v3 = b.input("v_3", [2, 1, 3, 4])
    bias = b.input("bias_3", [2, 1, 1, 3])
    s3 = b.node("scores_3", "matmul", [q3, kt3], torch.matmul, attrs={"out_dtype": "float32"})
    m3 = b.node("masked_3", "add", [s3, bias], torch.add)
    p3 = b.node("probs_3", "nn.softmax", [m3], lambda x: torch.softmax(x, -1), attrs={"axis": "-1"})
    out3 = b.node("pv_3", "matmul", [p3, v3], torch.matmul, attrs={"out_dtype": "float32"})
    return b.finish([out1, out2, out3])


# ---- image.resize2d -------------------------------------------------------------------------------

def _ref_resize2d(data, size, method, mode, rounding="", alpha=-0.5, exclude=0):
    """TOPI resize2d (python/tvm/topi/image/resize.py, NCHW) by loops over output pixels, the
    source coordinates in float32 like TOPI."""
    d = data.numpy()
    n, c, ih, iw = d.shape
    oh, ow = size
    f32 = np.float32

    def source(x, in_size, out_size):
        scale = f32(in_size) / f32(out_size)
        if mode == "half_pixel":
            return (f32(x) + f32(0.5)) * scale - f32(0.5)
        if mode == "align_corners":
            return f32(in_size - 1) / f32(out_size - 1) * f32(x)
        if mode == "asymmetric":
            return scale * f32(x)
        if mode == "pytorch_half_pixel":
            return (f32(x) + f32(0.5)) * scale - f32(0.5) if out_size > 1 else f32(0.0)
        return (f32(x) + f32(0.5)) * scale  # tf_half_pixel_for_nn

    def nearest(src, in_size, out_size, x):
        if mode == "asymmetric" and out_size % in_size == 0:
            return x // (out_size // in_size)
        r = rounding or ("round" if mode == "align_corners" else "floor")
        if r == "round":
            return int(math.floor(src + 0.5)) if src >= 0 else -int(math.floor(-src + 0.5))
        if r == "round_prefer_floor":
            return int(math.ceil(src - 0.5))
        if r == "round_prefer_ceil":
            return int(math.floor(src + 0.5))
        if r == "floor":
            return int(math.floor(f32(src) + f32(1e-5)))
        return int(math.ceil(f32(src) - f32(1e-5)))

    def pix(y, x):
        return d[:, :, min(max(y, 0), ih - 1), min(max(x, 0), iw - 1)].astype(np.float32)

    def cubic_w(t, xint, in_size):
        t2, t3 = t * t, t * t * t
        w = [alpha * (t3 - 2 * t2 + t), (alpha + 2) * t3 - (3 + alpha) * t2 + 1,
             -(alpha + 2) * t3 + (3 + 2 * alpha) * t2 - alpha * t, -alpha * t3 + alpha * t2]
        if exclude:
            w = [0.0 if (xint - 1 + i < 0 or xint + i > in_size) else w[i] for i in range(4)]
            total = sum(w)
            w = [v / total for v in w]
        return w

    out = np.zeros((n, c, oh, ow), np.float32)
    for y in range(oh):
        sy = source(y, ih, oh)
        for x in range(ow):
            sx = source(x, iw, ow)
            if method == "nearest_neighbor":
                out[:, :, y, x] = pix(nearest(sy, ih, oh, y), nearest(sx, iw, ow, x))
            elif method == "linear":
                y0, x0 = int(math.floor(sy)), int(math.floor(sx))
                ty, tx = sy - y0, sx - x0
                top = pix(y0, x0) * (1 - tx) + pix(y0, x0 + 1) * tx
                bottom = pix(y0 + 1, x0) * (1 - tx) + pix(y0 + 1, x0 + 1) * tx
                out[:, :, y, x] = top * (1 - ty) + bottom * ty
            else:
                y0, x0 = int(math.floor(sy)), int(math.floor(sx))
                wy, wx = cubic_w(sy - y0, y0, ih), cubic_w(sx - x0, x0, iw)
                out[:, :, y, x] = sum(wy[j] * sum(wx[i] * pix(y0 - 1 + j, x0 - 1 + i) for i in range(4))
                                      for j in range(4))
    return torch.from_numpy(out)


def _resize_attrs(size, method, mode, rounding="round", alpha="-0.500000", exclude="0"):
    return {"size": size, "roi": "0.000000,0.000000,0.000000,0.000000", "layout": "NCHW", "method": method,
            "coordinate_transformation_mode": mode, "rounding_method": rounding, "cubic_alpha": alpha,
            "cubic_exclude": exclude, "extrapolation_value": "0.000000", "out_dtype": ""}


def _resize_case(variants, shape=(1, 2, 4, 5)):
    """variants: [(size, method, mode, rounding, alpha, exclude)], one node and output each."""
    def build():
        b = Builder()
        x = b.input("x", list(shape), "NCHW")
        outs = []
        for i, (size, method, mode, rounding, alpha, exclude) in enumerate(variants):
            outs.append(b.node("resize2d" + ("_%d" % i if i else ""), "image.resize2d", [x],
                               lambda v, s=size, me=method, mo=mode, r=rounding, a=alpha, e=exclude:
                               _ref_resize2d(v, s, me, mo, r, a, e), layout="NCHW",
                               attrs=_resize_attrs("%d,%d" % size, method, mode, rounding, "%f" % alpha, str(exclude))))
        return b.finish(outs)
    return build


_register("image_resize2d_nearest", _resize_case([
    ((8, 10), "nearest_neighbor", "asymmetric", "floor", -0.5, 0),          # integer ratio: TOPI's int division
    ((6, 7), "nearest_neighbor", "asymmetric", "floor", -0.5, 0),           # torch's "nearest"
    ((6, 7), "nearest_neighbor", "half_pixel", "round_prefer_ceil", -0.5, 0),  # torch's "nearest-exact"
    ((7, 9), "nearest_neighbor", "align_corners", "round", -0.5, 0),        # exact .5 ties: away from zero
    ((3, 3), "nearest_neighbor", "half_pixel", "round_prefer_floor", -0.5, 0),
    ((6, 8), "nearest_neighbor", "tf_half_pixel_for_nn", "ceil", -0.5, 0),
    ((5, 6), "nearest_neighbor", "asymmetric", "", -0.5, 0),                # "" = floor except align_corners
]))
_register("image_resize2d_linear", _resize_case([
    ((7, 9), "linear", "half_pixel", "", -0.5, 0),
    ((7, 9), "linear", "align_corners", "", -0.5, 0),
    ((3, 8), "linear", "asymmetric", "", -0.5, 0),
    ((1, 6), "linear", "pytorch_half_pixel", "", -0.5, 0),
]))
_register("image_resize2d_cubic", _resize_case([
    ((7, 8), "cubic", "half_pixel", "", -0.75, 0),
    ((6, 3), "cubic", "align_corners", "", -0.5, 1),
]))


# ---- found by the random-graph differential test ----------------------------------------------------
# Each case reproduces a disagreement of tests/difftest/difftest.py (the seed that found it is in the
# docstring, "difftest gN [backend]"); the reference is written independently of the backends.

def _ref_avg_pool(x, k, s, d, pads, ceil, include):
    """TOPI pool_impl_nd average pooling (include/tvm/topi/nn/pooling.h) by loops, over the last
    len(k) dims; pads = [(before, after)] per dim."""
    v = x.numpy()
    dims = len(k)
    spatial = v.shape[-dims:]
    outs = []
    for i in range(dims):
        n, (p0, p1) = spatial[i], pads[i]
        outs.append((n + p0 + p1 - d[i] * (k[i] - 1) - 1 + (s[i] - 1 if ceil else 0)) // s[i] + 1)
    out = np.zeros(v.shape[:-dims] + tuple(outs), np.float64)
    for o in np.ndindex(*outs):
        total = np.zeros(v.shape[:-dims])
        count = 0
        for j in np.ndindex(*k):
            pos = [o[i] * s[i] - pads[i][0] + j[i] * d[i] for i in range(dims)]
            inside = all(0 <= pos[i] < spatial[i] for i in range(dims))
            if inside:
                total += v[(Ellipsis,) + tuple(pos)]
            if inside or (include and all(pos[i] < spatial[i] + pads[i][1] for i in range(dims))):
                count += 1
        out[(Ellipsis,) + o] = total / max(count, 1)
    return torch.from_numpy(out.astype(np.float32))


@case
def case_prod_float16():
    """difftest g12 [torch]: float16 prod failed ("prod_cpu" not implemented for 'Half'); over two
    axes and over all axes (a 0-d result). Reference: float32 math rounded to half."""
    b = Builder()
    x = b.input("x", [2, 3, 4], dtype=torch.float16, value=_uniform(b, [2, 3, 4], 0.8, 1.25, torch.float16))
    p0 = b.node("prod", "prod", [x], lambda v: v.float().prod(2).prod(1).half(), attrs={"axis": "1,2", "keepdims": "0"})
    p1 = b.node("prod_1", "prod", [x], lambda v: v.float().prod().half(), attrs={"axis": "", "keepdims": "0"})
    return b.finish([p0, p1])


@case
def case_cumsum_float16():
    """difftest g92 [torch]: float16 cumsum failed ("cumsum_out_cpu" not implemented for 'Half');
    g574 [numpy]: a float16 cumsum of 80 elements accumulated in half (every partial sum rounded)
    was off by several half ULPs. Reference: float32 running sums rounded once to half."""
    b = Builder()
    x = b.input("x", [2, 40], dtype=torch.float16, value=_uniform(b, [2, 40], -2.0, 2.0, torch.float16))
    c0 = b.node("cumsum", "cumsum", [x], lambda v: torch.cumsum(v.float(), 1).half(),
                attrs={"axis": "1", "dtype": "", "exclusive": "0"})
    c1 = b.node("cumsum_1", "cumsum", [x], lambda v: torch.cumsum(v.float().reshape(-1), 0).half(),
                attrs={"axis": "", "dtype": "", "exclusive": "0"})
    return b.finish([c0, c1])


@case
def case_cumsum_exclusive_cancel():
    """difftest g2545 [numpy]: an exclusive cumsum computed as inclusive - x lost the small sums
    next to a large term ((0.001 + 3000) - 3000 = 0.00098 in float32); TOPI's scan adds only the
    earlier terms (every partial sum here is exact in float32 or rounds the same either way)."""
    b = Builder()
    x = b.input("x", [2, 4], value=torch.tensor([[0.001, 3000.0, 0.25, 1.5], [2.5, -0.004, 1000.0, 0.25]]))
    out = b.node("cumsum", "cumsum", [x], lambda v: torch.from_numpy(np.concatenate(
        [np.zeros((2, 1)), np.cumsum(v.double().numpy(), 1)[:, :-1]], 1).astype(np.float32)),
        attrs={"axis": "-1", "dtype": "", "exclusive": "1"})
    return b.finish([out])


@case
def case_clip_float16_int32():
    """difftest g90 [torch]: float16 clip failed ("clamp_scalar_cpu" not implemented for 'Half');
    g106 [torch]: clip of an int32 tensor returned float32 (the float bounds promoted it)."""
    b = Builder()
    x = b.input("x", [3, 5], dtype=torch.float16, value=_uniform(b, [3, 5], -2.0, 2.0, torch.float16))
    y = b.input("y", [4, 3], dtype=torch.int32, value=_ints(b, [4, 3], -9, 9))
    c0 = b.node("clip", "clip", [x], lambda v: torch.clamp(v.float(), -0.5, 1.0).half(),
                attrs={"min": "-0.500000", "max": "1.000000"})
    c1 = b.node("clip_1", "clip", [y], lambda v: torch.clamp(v, -3, 5), attrs={"min": "-3.000000", "max": "5.000000"})
    c2 = b.node("clip_2", "clip", [y], lambda v: torch.clamp(v, max=2), attrs={"min": "-inf", "max": "2.000000"})
    return b.finish([c0, c1, c2])


def _stable_topk(v, k, dim, largest):
    order = torch.sort(v, dim=dim, descending=largest, stable=True).indices.narrow(dim, 0, k)
    return v.gather(dim, order), order


@case
def case_topk_float16_ties():
    """difftest g51 [torch]: float16 topk failed ("topk_cpu" not implemented for 'Half'); g254
    [torch]: int32 topk with equal values gave the tied indices in another order than TOPI's
    stable sort (lower index first)."""
    b = Builder()
    x = b.input("x", [3, 6], dtype=torch.float16, value=_uniform(b, [3, 6], -2.0, 2.0, torch.float16))
    y = b.input("y", [2, 7], dtype=torch.int32, value=torch.tensor([[3, 1, 3, 0, 3, 1, 2], [5, 5, 5, -1, 5, 0, 5]],
                                                                    dtype=torch.int32))
    v0, i0 = b.node("topk", "topk", [x], lambda v: (lambda r: (r[0].half(), r[1]))(_stable_topk(v.float(), 3, 1, True)),
                    attrs={"k": "3", "axis": "-1", "ret_type": "both", "largest": "1", "dtype": "int64"})
    v1, i1 = b.node("topk_1", "topk", [y], lambda v: (lambda r: (r[0], r[1].int()))(_stable_topk(v, 4, 1, True)),
                    attrs={"k": "4", "axis": "1", "ret_type": "both", "largest": "1", "dtype": "int32"})
    i2 = b.node("topk_2", "topk", [y], lambda v: _stable_topk(v, 3, 1, False)[1].int(),
                attrs={"k": "3", "axis": "1", "ret_type": "indices", "largest": "0", "dtype": "int32"})
    return b.finish([v0, i0, v1, i1, i2])


@case
def case_strided_slice_negative():
    """difftest g16 [torch]: negative strides were rejected by the torch backend. Steps -2 and -1
    with begin/end clamped as numpy does (end INT64_MIN = past the first element), next to a
    positive step."""
    b = Builder()
    x = b.input("x", [4, 6, 5])
    out = b.node("strided_slice", "strided_slice", [x], lambda v: torch.from_numpy(v.numpy()[3::-2, 1:6:2, -1:0:-1].copy()),
                 attrs={"axes": "0,1,2", "begin": "3,1,-1", "end": "-9223372036854775808,6,0", "strides": "-2,2,-1"})
    out1 = b.node("strided_slice_1", "strided_slice", [x], lambda v: torch.from_numpy(v.numpy()[:, 9:-9:-3].copy()),
                  attrs={"axes": "1,", "begin": "9,", "end": "-9,", "strides": "-3,"})
    return b.finish([out, out1])


@case
def case_nn_batch_norm_axis():
    """difftest g46 [torch]: nn.batch_norm over an axis other than 1 was rejected by the torch
    backend; axis 2 of a [2, 3, 4] tensor and axis -1 of a 4-D one."""
    b = Builder()
    x = b.input("x", [2, 3, 4])
    y = b.input("y", [2, 2, 3, 5])
    outs = []
    for name, v, axis, c in (("batch_norm", x, "2", 4), ("batch_norm_1", y, "-1", 5)):
        g = b.weight([c], "O", name + ".weight", value=_uniform(b, [c], 0.5, 1.5))
        beta = b.weight([c], "O", name + ".bias")
        mean = b.weight([c], "O", name + ".running_mean")
        var = b.weight([c], "O", name + ".running_var", value=_uniform(b, [c], 0.5, 1.5))
        ax = int(axis)
        bn = b.node(name, "nn.batch_norm", [v],
                    lambda t, gamma, beta, mean, var, ax=ax: F.batch_norm(t.movedim(ax, 1), mean, var, gamma, beta, False,
                                                                          0.1, 1e-5).movedim(1, ax),
                    weights={"gamma": g, "beta": beta, "mean": mean, "var": var},
                    attrs={"axis": axis, "epsilon": "0.000010", "center": "1", "scale": "1", "momentum": "0.100000",
                           "training": "1"})
        outs.append(b.node(name + ".0", "get_item", [bn], lambda t: t, attrs={"index": "0"}))
    return b.finish(outs)


@case
def case_nn_avg_pool_dilation():
    """difftest g43 [torch]: avg_pool2d with dilation, and avg_pool1d with dilation or with
    asymmetric padding and count_include_pad 0, were rejected by the torch backend (F.avg_pool*
    cannot express them). Reference: TOPI's pool_impl_nd by loops."""
    b = Builder()
    x = b.input("x", [1, 3, 7, 8], "NCHW")
    y = b.input("y", [2, 3, 9], "NCW")
    a0 = b.node("avg_pool2d", "nn.avg_pool2d", [x],
                lambda v: _ref_avg_pool(v, (2, 3), (2, 1), (2, 2), [(1, 0), (0, 1)], False, False), layout="NCHW",
                attrs={"pool_size": "2,3", "strides": "2,1", "dilation": "2,2", "padding": "1,0,0,1", "ceil_mode": "0",
                       "count_include_pad": "0", "layout": "NCHW", "out_layout": "NCHW"})
    a1 = b.node("avg_pool2d_1", "nn.avg_pool2d", [x],
                lambda v: _ref_avg_pool(v, (3, 3), (2, 2), (1, 2), [(1, 1), (1, 1)], True, True), layout="NCHW",
                attrs={"pool_size": "3,", "strides": "2,", "dilation": "1,2", "padding": "1,", "ceil_mode": "1",
                       "count_include_pad": "1", "layout": "NCHW", "out_layout": "NCHW"})
    a2 = b.node("avg_pool1d", "nn.avg_pool1d", [y],
                lambda v: _ref_avg_pool(v, (3,), (2,), (2,), [(1, 1)], True, False), layout="NCW",
                attrs=_pool1d_attrs("3,", "2,", "1,1", "2,", ceil="1", include="0"))
    a3 = b.node("avg_pool1d_1", "nn.avg_pool1d", [y],
                lambda v: _ref_avg_pool(v, (2,), (1,), (1,), [(1, 0)], False, False), layout="NCW",
                attrs=_pool1d_attrs("2,", "1,", "1,0", include="0"))
    return b.finish([a0, a1, a2, a3])


@case
def case_gather_elements_partial():
    """difftest g38 [numpy]: indices smaller than data along the other axes (torch.gather's
    rule) were broadcast by np.take_along_axis (wrong shape, or an IndexError)."""
    b = Builder()
    x = b.input("x", [4, 5, 3])
    i = b.input("indices", [2, 3, 2], dtype=torch.int64, value=_ints(b, [2, 3, 2], 0, 5, torch.int64))
    j = b.input("indices_1", [3, 2, 1], dtype=torch.int32, value=_ints(b, [3, 2, 1], 0, 4))
    g0 = b.node("gather_elements", "gather_elements", [x, i], lambda v, t: torch.gather(v, 1, t), attrs={"axis": "1"})
    g1 = b.node("gather_elements_1", "gather_elements", [x, j], lambda v, t: torch.gather(v, 0, t.long()),
                attrs={"axis": "0"})
    return b.finish([g0, g1])


@case
def case_msc_attention_bottom_right_long_query():
    """difftest g36 [numpy]: causal_mask BottomRight with more queries than keys (S_q 5 > S_kv 3)
    used the offset S_kv - S_q < 0, masking every key of the first rows (NaN); TOPI's offset is
    |S_q - S_kv|."""
    b = Builder()
    q = b.input("q", [1, 2, 5, 4])
    k = b.input("k", [1, 2, 3, 4])
    v = b.input("v", [1, 2, 3, 4])
    out = b.node("attention", "msc.attention", [q, k, v], lambda *a: _ref_attention(*a, causal="BottomRight"),
                 attrs=dict(_ATTN_DEFAULT, causal_mask="BottomRight"))
    return b.finish([out])


_register("image_resize2d_nearest_intdiv", _resize_case([
    # difftest g1481 [numpy]: asymmetric upscaling by an integer factor is TOPI's integer division
    # whatever the rounding; "" rounds half away from zero for align_corners; floor/ceil nudge by 1e-5
    ((8, 6), "nearest_neighbor", "asymmetric", "ceil", -0.5, 0),
    ((8, 6), "nearest_neighbor", "asymmetric", "round", -0.5, 0),
    ((3, 6), "nearest_neighbor", "asymmetric", "ceil", -0.5, 0),
    ((7, 5), "nearest_neighbor", "align_corners", "", -0.5, 0),
    ((6, 9), "nearest_neighbor", "tf_half_pixel_for_nn", "floor", -0.5, 0),
], shape=(1, 2, 4, 3)))


@case
def case_conv_depthwise_k4():
    """difftest g185 [vulkan]: a depthwise convolution whose KH*KW is a multiple of 4 (a 1-D
    kernel of 4, a 2x2 kernel) read its weights through a vec4 view, so channel g got weights
    4g.. (zeros past the end): wrong values in every channel."""
    b = Builder()
    x = b.input("x", [2, 4, 7], "NCW")
    y = b.input("y", [1, 3, 5, 5], "NCHW")
    w1 = b.weight([4, 1, 4], "OIW", "conv1.weight")
    b1 = b.weight([4], "O", "conv1.bias")
    w2 = b.weight([3, 1, 2, 2], "OIHW", "conv2.weight")
    c1 = b.node("conv1d", "msc.conv1d_bias", [x],
                lambda v, weight, bias: F.conv1d(F.pad(v, (3, 1)), weight, bias, stride=2, dilation=2, groups=4),
                weights={"weight": w1, "bias": b1}, layout="NCW",
                attrs=dict(_CONV1D_ATTRS, strides="2,", padding="3,1", dilation="2,", groups="4"))
    c2 = b.node("conv2d", "nn.conv2d", [y], lambda v, weight: F.conv2d(v, weight, groups=3), weights={"weight": w2},
                layout="NCHW", attrs={"strides": "1,1", "padding": "0,0,0,0", "dilation": "1,1", "groups": "3",
                                      "data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW",
                                      "out_dtype": "float32"})
    return b.finish([c1, c2])


@case
def case_topk_nan():
    """difftest g1253 [numpy]: topk of values holding nan put nan last (np.argsort of -x); nan is
    the largest value (torch.sort, the Vulkan runtime), and equal values (inf, inf) keep their index
    order."""
    b = Builder()
    x = b.input("x", [2, 6], value=torch.tensor([[0.5, float("nan"), float("inf"), -1.0, float("inf"), 2.0],
                                                 [float("nan"), -float("inf"), 1.5, float("nan"), 0.25, -3.0]]))
    v0, i0 = b.node("topk", "topk", [x], lambda v: _stable_topk(v, 3, 1, True),
                    attrs={"k": "3", "axis": "-1", "ret_type": "both", "largest": "1", "dtype": "int64"})
    i1 = b.node("topk_1", "topk", [x], lambda v: _stable_topk(v, 4, 1, False)[1].int(),
                attrs={"k": "4", "axis": "1", "ret_type": "indices", "largest": "0", "dtype": "int32"})
    return b.finish([v0, i0, i1])


@case
def case_nn_group_norm_single():
    """difftest g1945 [torch]: groups of one element (num_groups = C, no spatial extent) normalize
    to 0, so the result is beta; F.group_norm refused them ("Expected more than 1 value per
    channel when training")."""
    b = Builder()
    x = b.input("x", [1, 5, 1], "NCW")
    g = b.weight([5], "", "gn.weight", value=_uniform(b, [5], 0.5, 1.5))
    beta = b.weight([5], "", "gn.bias")
    out = b.node("group_norm", "nn.group_norm", [x], lambda v, gamma, beta: beta.reshape(1, 5, 1).expand(1, 5, 1).clone(),
                 weights={"gamma": g, "beta": beta}, layout="NCW",
                 attrs={"num_groups": "5", "channel_axis": "1", "axes": "2,", "epsilon": "0.000010", "center": "1",
                        "scale": "1"})
    return b.finish([out])


@case
def case_sum_mean_float16():
    """difftest g117 [torch]: a float16 sum over two axes reduced in half (partial sums rounded to
    half in each pass) was several half ULPs off; float16 reductions accumulate in float32 and
    round once, as every backend's documented float16 rule."""
    b = Builder()
    x = b.input("x", [2, 7, 8, 2], dtype=torch.float16, value=_uniform(b, [2, 7, 8, 2], -2.0, 2.0, torch.float16))
    s = b.node("sum", "sum", [x], lambda v: v.float().sum(dim=[1, 3]).half(), attrs={"axis": "-3,3", "keepdims": "0"})
    m = b.node("mean", "mean", [x], lambda v: v.float().mean(dim=[0, 2], keepdim=True).half(),
               attrs={"axis": "0,2", "keepdims": "1"})
    return b.finish([s, m])


@case
def case_fold_constant():
    """Nodes computed from constants only, which the backends' fold_constant pass evaluates at
    generation time (generator/passes/fold_constant.cc): a weight transposed for a matmul
    (constant -> permute_dims), an int32 scale cast to float32, and a causal mask built from
    arange / expand_dims / less_equal, used as a bool condition and, through where, as an additive
    bias that is also a graph output (an output produced by a constant)."""
    b = Builder()
    x = b.input("x", [2, 4, 3])
    w = _const(b, "w", torch.randn(5, 3, generator=b.gen), alias="proj.weight")
    wt = b.node("w_t", "permute_dims", [w], lambda v: v.permute(1, 0), attrs={"axes": "1,0"})
    mm = b.node("matmul", "matmul", [x, wt], torch.matmul, attrs={"out_dtype": "float32"})
    rows = b.node("rows", "arange", [], lambda: torch.arange(0, 4, 1, dtype=torch.int64),
                  attrs={"start": "0.000000", "end": "4.000000", "step": "1.000000", "dtype": "int64"})
    rows2 = b.node("rows_2d", "expand_dims", [rows], lambda v: v.unsqueeze(1), attrs={"axis": "1,"})
    cols = b.node("cols", "arange", [], lambda: torch.arange(0, 5, 1, dtype=torch.int64),
                  attrs={"start": "0.000000", "end": "5.000000", "step": "1.000000", "dtype": "int64"})
    keep = b.node("keep", "less_equal", [cols, rows2], torch.le)
    zero = _scalar(b, "zero", 0.0)
    low = _scalar(b, "low", -1000.0)
    bias = b.node("bias", "where", [keep, zero, low], torch.where)
    scale_i = _const(b, "scale_i", torch.tensor([1, 2, 3, 4, 5], dtype=torch.int32))
    scale = b.node("scale", "astype", [scale_i], lambda v: v.float(), attrs={"dtype": "float32"})
    biased = b.node("biased", "add", [mm, bias], torch.add)
    out = b.node("scaled", "multiply", [biased, scale], torch.mul)
    masked = b.node("masked", "where", [keep, mm, zero], torch.where)
    return b.finish([out, masked, bias])
