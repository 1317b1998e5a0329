"""Random valid MSCGraphs for differential testing of the backends (in the spirit of NNSmith,
Liu et al., "NNSmith: Generating Diverse and Valid Test Cases for Deep Learning Compilers",
ASPLOS 2023): seeded random op DAGs over the optypes of opdefs/*.yaml, with valid attrs, shapes,
dtypes, weights and input values, plus the exact expected outputs and a per-element tolerance.

    case = generate(seed)               -> RandomGraph(graph, weights, inputs, expected, tolerance)
    case = evaluate(graph, weights, inputs)   re-derives expected/tolerance of a given graph
                                              (used when a failing graph is minimized)

Generation (NNSmith's loop): pick an optype, pick type-compatible live tensors (or make new graph
inputs / constants), choose attrs satisfying the op's constraints, infer the output shapes and
dtypes, then run the node on the concrete values with the reference interpreter
(python/msc_export/interp.py) and keep it only when the result is numerically well defined:

* values: float tensors are computed EXACTLY (float64), each with an error RADIUS per element: a
  bound of how far a backend's value may be from the exact one. A node's radius is its own error
  bound amp plus the propagation of its inputs' radii, estimated by sampling (in the spirit of
  Monte Carlo Arithmetic, Parker 1997): the node is run COPIES more times with every float input
  moved by +-its radius (random signs per element) and the largest deviation of the outputs,
  times SAFETY, is taken (exact for one-input elementwise ops, a sample of the worst case where
  several inputs meet). amp is the error the node may commit in a backend -- the
  rounding of the output dtype (unit roundoff u: 2^-24 float32, 2^-11 float16; plus the smallest
  normal, as denormals may be flushed) plus the op's own error budget, taken from the Vulkan
  spec's precision table ("Precision and Operation of SPIR-V Instructions": add/sub/mul correctly
  rounded, division 2.5 ULP, inversesqrt 2 ULP, exp 3 + 2|x| ULP, log 3 ULP or 2^-21 absolute in
  [0.5, 2], sin/cos 2^-11 absolute in [-pi, pi], atan 4096 ULP, the rest inherited from their
  formulas) and, for sums of n terms (reductions, GEMM, conv, einsum, cumsum, pooling),
  Higham's bound (n + 2) u_32 sum|terms| ("Accuracy and Stability of Numerical Algorithms", 2002,
  ch. 4). Own and propagated errors are added, never sampled against each other, so that they
  cannot cancel.
* guards: a node is rejected when a float result is not finite or exceeds MAX_MAG, when an input
  is within its radius of a domain edge (log, sqrt, acos ...) or of a discontinuity of the op
  (floor/ceil/round/sign/astype-to-int at integers, comparisons at equality, argmax/topk at ties,
  floor_divide at integer quotients, softplus at its threshold) -- exact ties of exactly computed
  values are allowed, every backend must resolve them the same way -- or when the radius grows
  past COND times the output's largest magnitude (an ill-conditioned chain). Integer results
  stay below MAX_INT, also in float64 arithmetic (no op relies on wrap-around). Inputs are drawn
  in each op's domain (uniform ranges, small ints, int64 beyond 2^32, bools; inf/nan only for
  isnan/isinf/isfinite).
* tolerance: a backend's float output passes when every element satisfies
  |got - expected| <= radius + 2 u_dtype |expected| + smallest normal; integer and bool outputs
  must be equal.

Dtypes per op follow what every backend implements (runtime/vulkan/README.md "dtypes"): the
elementwise, data-movement, indexing and sum/prod/max/min/argmax/cumsum/topk ops take float32,
float16, int32, int64 (and bool where meaningful); mean/std/variance float32 and float16; conv,
GEMM, pooling, normalization, softmax, attention, einsum, pad and resize float32.
Not generated: nn.nll_loss and plugin (no inference meaning), and shapes with zero-size dims.
"""

from __future__ import annotations

import collections
import math
import random
from collections import OrderedDict
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from .interp import run_node
from .mscfmt import attr_str
from .mscgraph import MSCJoint, MSCTensor

__all__ = ["RandomGraph", "generate", "evaluate", "OPTYPES", "SKIPPED", "GenerationError"]

F64 = torch.float64
UNIT = {"float32": 2.0 ** -24, "float16": 2.0 ** -11}       # unit roundoff of the output dtype
MIN_NORMAL = {"float32": 2.0 ** -126, "float16": 2.0 ** -14}
ULP = 2.0 ** -23                                             # float32 ULP relative to |x|
LOG_ABS = 2.0 ** -21                                         # Vulkan log(): absolute in [0.5, 2]
TRIG_ABS = 2.0 ** -11                                        # Vulkan sin/cos: absolute in [-pi, pi]
COPIES = 6
SAFETY = 2.0
MAX_MAG = {"float32": 1e4, "float16": 1e3}
MAX_INT = {"int32": 2 ** 30, "int64": 2 ** 60}
BIG_INT64 = 2 ** 40  # one int64 input in four is drawn from +-BIG_INT64 (64-bit paths)
COND = {"float32": 1e-2, "float16": 5e-2}
FLOATS = ("float32", "float16")
INTS = ("int32", "int64")
NUMERIC = FLOATS + INTS
NP_DTYPES = {"float32": np.float32, "float16": np.float16, "int32": np.int32, "int64": np.int64, "bool": np.bool_}
TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "int32": torch.int32, "int64": torch.int64,
                "bool": torch.bool}

SKIPPED = {"nn.nll_loss": "a training loss (not_for_inference)",
           "plugin": "an extern op without an implementation (not_for_inference)",
           "input": "every graph has inputs; not an op to pick"}


class GenerationError(RuntimeError):
    """The generator or the reference disagree with themselves: a bug in randgraph or interp."""


class Reject(Exception):
    """A proposed node is not numerically well defined on the current values."""


RandomGraph = collections.namedtuple("RandomGraph", "seed graph weights inputs expected tolerance optypes")
RandomGraph.__doc__ = """graph: MSCGraph dict; weights/inputs: {name: np.ndarray}; expected: {tensor
name: np.ndarray} for EVERY node output (float64 for float tensors); tolerance: {tensor name:
float64 array} for every float tensor (see the module docstring); optypes: the ops used."""


# ---- error budgets ------------------------------------------------------------------------------

def _a(t):
    return t.abs() if isinstance(t, torch.Tensor) else abs(t)


def _amp_rel(k: float):
    return lambda nd, x, w, y: [k * ULP * _a(y[0])]


def _amp_zero(nd, x, w, y):
    return [torch.zeros_like(t) for t in y]


def _abs_run(nd: MSCJoint, x, w):
    """The node on |inputs|, |weights| (float ones): the sum of |terms| of a multilinear op."""
    xa = [_a(t) if t.is_floating_point() else t for t in x]
    wa = {k: _a(v) for k, v in w.items()}
    return run_node(nd, xa, wa, F64)


def _ones_run(nd: MSCJoint, x, w):
    """The node on all-ones float inputs and weights: the number of terms of each output."""
    xo = [torch.ones_like(t) if t.is_floating_point() else t for t in x]
    wo = {k: torch.ones_like(v) for k, v in w.items()}
    return run_node(nd, xo, wo, F64)


def _amp_sum_terms(nd, x, w, y):
    """Higham: |fl(sum) - sum| <= (n - 1) u sum|terms|; n from the node on ones, +3 for slack."""
    n = _ones_run(nd, x, w)[0]
    return [(n + 3) * ULP * _abs_run(nd, x, w)[0]]


def _amp_average(count_fn):
    def amp(nd, x, w, y):
        return [(count_fn(nd, x, y[0]) + 4) * ULP * _abs_run(nd, x, w)[0]]
    return amp


def _reduced_count(nd, x, y):
    return max(1, x[0].numel() // max(1, y.numel()))


def _pool_count(nd, x, y):
    k = [int(v) for v in nd.attrs.get("pool_size", "1").split(",") if v]
    return int(np.prod(k)) * (1 if len(k) > 1 or nd.optype.endswith("1d") else k[0])


def _adaptive_count(nd, x, y):
    n = 1
    for i in range(2, x[0].dim()):
        n *= -(-x[0].shape[i] // y.shape[i]) + 1
    return n


def _amp_unary(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]):
    return lambda nd, x, w, y: [fn(x[0], y[0])]


def _cosh(x):
    return torch.cosh(x.clamp(-80, 80))


def _gelu_tanh_amp(x, y):
    z = 0.7978845608 * (x + 0.044715 * x ** 3)
    return 0.5 * _a(x) * ((6 + 8 * _a(z)) * ULP + 4 * ULP * 0.7978845608 * (_a(x) + 0.044715 * _a(x) ** 3)) + 2 * ULP * _a(y)


def _selu_amp(x, y):
    neg = 1.0507 * 1.6733 * ((3 + 2 * _a(x)) * ULP * torch.exp(x.clamp(max=0)) + ULP)
    return torch.where(x > 0, ULP * _a(y), neg)


def _softplus_amp(nd, x, w, y):
    beta = float(nd.attrs.get("beta", "1") or 1)
    threshold = float(nd.attrs.get("threshold", "20") or 20)
    bx = beta * x[0]
    amp = (LOG_ABS + (4 + 2 * _a(bx)) * ULP + 3 * ULP * _a(beta * y[0])) / abs(beta)
    return [torch.where(bx > threshold, torch.zeros_like(amp), amp)]


def _power_amp(nd, x, w, y):
    a, b = torch.broadcast_tensors(x[0], x[1])
    lg = torch.log2(a)
    lg_err = torch.where((a >= 0.5) & (a <= 2), torch.full_like(lg, LOG_ABS), 3 * ULP * _a(lg))
    return [_a(y[0]) * ((3 + 2 * _a(b * lg)) * ULP + _a(b) * math.log(2) * lg_err)]


def _floor_mod_amp(nd, x, w, y):
    a, b = torch.broadcast_tensors(x[0], x[1])
    return [4 * ULP * (_a(a) + _a(b))]


def _arange_amp(nd, x, w, y):
    start = abs(float(nd.attrs.get("start", "0") or 0))
    return [4 * ULP * (start + _a(y[0]))]


def _var_amp(nd, x, w, y):
    axes = _axes(nd.attrs.get("axis", ""), x[0].dim())
    m2 = (x[0] ** 2).mean(dim=axes, keepdim=True)
    n = max(1, x[0].numel() // max(1, y[0].numel()))
    amp = (2 * n + 8) * ULP * m2
    if not _flag(nd.attrs, "keepdims"):
        amp = amp.reshape(y[0].shape)
    if nd.optype == "variance":
        return [amp.reshape(y[0].shape)]
    std = y[0].clamp(min=1e-30)
    return [amp.reshape(y[0].shape) / (2 * std) + 4 * ULP * std]


def _batch_norm_amp(nd, x, w, y):
    axis = int(nd.attrs.get("axis", "1") or 1) % x[0].dim()
    shape = [x[0].shape[i] if i == axis else 1 for i in range(x[0].dim())]
    s = (w["gamma"] / torch.sqrt(w["var"] + float(nd.attrs.get("epsilon", "1e-5")))).reshape(shape)
    return [8 * ULP * (_a(x[0] * s) + _a(w["mean"].reshape(shape) * s) + _a(w["beta"].reshape(shape)))]


def _norm_amp(nd, x, w, y):
    """layer/group/rms norm: mean and variance errors over n terms, amplified by 1/sigma."""
    a, op, v = nd.attrs, nd.optype, x[0]
    eps = float(a.get("epsilon", "1e-5") or 1e-5)
    if op == "nn.group_norm":
        groups = int(a["num_groups"])
        c = int(a.get("channel_axis", "1")) % v.dim()
        axes = [ax % v.dim() for ax in _ints(a["axes"])]
        vs = v.unflatten(c, (groups, v.shape[c] // groups))
        dims = [c + 1] + [ax + 1 if ax > c else ax for ax in axes]
        gshape = [v.shape[i] if i == c else 1 for i in range(v.dim())]
        gamma = w.get("gamma", torch.ones(1, dtype=F64)).reshape(gshape) if "gamma" in w else 1.0
        beta = w["beta"].reshape(gshape) if "beta" in w else 0.0

        def expand(t):
            return t.expand(vs.shape).flatten(c, c + 1)
    else:
        vs = v
        axes = _ints(a.get("axes", "")) or [-1]
        dims = sorted(ax % v.dim() for ax in axes)
        nshape = [v.shape[i] if i in dims else 1 for i in range(v.dim())]
        weight = x[1] if len(x) > 1 else w.get("weight", w.get("gamma"))
        gamma = weight.reshape(nshape) if weight is not None else 1.0
        beta = w["beta"].reshape(nshape) if "beta" in w else 0.0

        def expand(t):
            return t.expand(v.shape)
    n = int(np.prod([vs.shape[d] for d in dims]))
    if op == "nn.rms_norm":
        mean = torch.zeros_like(vs.mean(dim=dims, keepdim=True))
    else:
        mean = vs.mean(dim=dims, keepdim=True)
    m2 = (vs ** 2).mean(dim=dims, keepdim=True)
    var = ((vs - mean) ** 2).mean(dim=dims, keepdim=True)
    sigma = torch.sqrt((m2 if op == "nn.rms_norm" else var) + eps)
    d_mean = (n + 3) * ULP * _a(vs).mean(dim=dims, keepdim=True)
    d_sigma = (2 * n + 8) * ULP * m2 / (2 * sigma)
    xhat = (vs - mean) / sigma
    err = expand(d_mean / sigma + _a(xhat) * (d_sigma / sigma + 4 * ULP))
    xhat = expand(xhat)
    return [_a(gamma) * err + 2 * ULP * (_a(gamma * xhat) + _a(beta))]


def _softmax_amp(nd, x, w, y):
    axis = int(nd.attrs.get("axis", "-1") or -1)
    v = x[0]
    d = v - v.amax(dim=axis, keepdim=True)
    n = v.shape[axis]
    if nd.optype == "nn.softmax":
        return [(n + 8 + 2 * _a(d)) * ULP * _a(y[0])]
    return [(n + 8 + 3 * _a(d)) * ULP + ULP * _a(y[0])]


def _attention_amp(nd, x, w, y):
    q, k, v = x[:3]
    absv = run_node(nd, [q, k, _a(v)] + list(x[3:]), w, F64)[0]
    head = q.shape[-1] if q.dim() == 4 else 1
    skv = max(k.shape)
    s_abs = float((_a(q).amax() * _a(k).amax() * head)) * _attn_scale(nd, x)
    vmax = float(_a(v).amax())
    return [ULP * ((skv + 10 + 4 * s_abs) * absv + 2 * (head + 4) * s_abs * vmax)]


def _attn_scale(nd, x) -> float:
    s = nd.attrs.get("scale", "")
    if s:
        return abs(float(s))
    axes = [int(v) for v in (nd.attrs.get("axes", "") or "0,2,1,3").split(",") if v]
    return 1.0 / math.sqrt(x[0].shape[axes[3]])


def _resize_amp(nd, x, w, y):
    if (nd.attrs.get("method", "linear") or "linear") == "nearest_neighbor":
        return [torch.zeros_like(y[0])]
    size = max(x[0].shape[2], x[0].shape[3], y[0].shape[2], y[0].shape[3])
    return [torch.full_like(y[0], (16 + 8 * size) * ULP * 1.5 * float(_a(x[0]).amax()))]


def _scatter_amp(nd, x, w, y):
    """Duplicates are applied one after the other in place (TOPI's scatter: each partial result
    is stored in the output's dtype), so every application may round to the output dtype."""
    red = nd.attrs.get("reduction", "update") or "update"
    c = x[1].numel() // max(1, x[1].shape[-1]) if nd.optype == "scatter_nd" else x[1].numel()
    u = 2 * UNIT[nd.outputs[0].dtype] if nd.outputs[0].dtype in UNIT else ULP
    if red in ("add", "mean"):
        return [(c + 3) * u * _abs_run(nd, x, w)[0]]
    if red == "mul":
        return [(c + 3) * u * _a(y[0])]
    return [torch.zeros_like(y[0])]


def _cumsum_amp(nd, x, w, y):
    n = x[0].numel() if (nd.attrs.get("axis", "") == "") else x[0].shape[int(nd.attrs["axis"])]
    return [(n + 3) * ULP * _abs_run(nd, x, w)[0]]


def _prod_amp(nd, x, w, y):
    return [(_reduced_count(nd, x, y[0]) + 3) * ULP * _a(y[0])]


AMP: Dict[str, Callable] = {
    "divide": _amp_rel(3), "sqrt": _amp_rel(5), "rsqrt": _amp_rel(3),
    "exp": _amp_unary(lambda x, y: (3 + 2 * _a(x)) * ULP * _a(y)),
    "log": _amp_unary(lambda x, y: 3 * ULP * _a(y) + LOG_ABS),
    "sin": _amp_unary(lambda x, y: TRIG_ABS + ULP * _a(y)), "cos": _amp_unary(lambda x, y: TRIG_ABS + ULP * _a(y)),
    "tan": _amp_unary(lambda x, y: 2 * TRIG_ABS * (1 + y * y) + 3 * ULP * _a(y)),
    "atan": _amp_unary(lambda x, y: 4096 * ULP * _a(y)),
    "asin": _amp_unary(lambda x, y: 4096 * ULP * _a(y) + 8 * ULP),
    "acos": _amp_unary(lambda x, y: 4096 * ULP * _a(y) + 8 * ULP),
    "sinh": _amp_unary(lambda x, y: (4 + 2 * _a(x)) * ULP * _cosh(x)),
    "cosh": _amp_unary(lambda x, y: (4 + 2 * _a(x)) * ULP * _cosh(x)),
    "tanh": _amp_unary(lambda x, y: (6 + 8 * _a(x)) * ULP),
    "asinh": _amp_unary(lambda x, y: LOG_ABS + 4 * ULP * (_a(y) + 1)),
    "acosh": _amp_unary(lambda x, y: LOG_ABS + 4 * ULP * _a(y)
                        + x * x * ULP / (torch.sqrt(x * x - 1) * (x + torch.sqrt(x * x - 1)))),
    "atanh": _amp_unary(lambda x, y: 0.5 * (LOG_ABS + 6 * ULP * _a(y) + ULP * (4 + 1 / (1 - _a(x))))),
    "erf": _amp_unary(lambda x, y: 2e-7 + 4 * ULP * torch.ones_like(y)),
    "sigmoid": _amp_unary(lambda x, y: (6 + 2 * _a(x)) * ULP * _a(y)),
    "nn.silu": _amp_unary(lambda x, y: (7 + 2 * _a(x)) * ULP * _a(y)),
    "nn.gelu": _amp_unary(lambda x, y: 0.5 * _a(x) * (2e-7 + 4 * ULP) + 2 * ULP * _a(y)),
    "nn.gelu_tanh": _amp_unary(_gelu_tanh_amp), "msc.gelu": _amp_unary(_gelu_tanh_amp),
    "nn.selu": _amp_unary(_selu_amp), "nn.leakyrelu": _amp_rel(1), "nn.softplus": _softplus_amp,
    "power": _power_amp, "floor_mod": _floor_mod_amp, "arange": _arange_amp,
    "sum": _amp_sum_terms, "cumsum": _cumsum_amp, "prod": _prod_amp,
    "mean": _amp_average(_reduced_count), "variance": _var_amp, "std": _var_amp,
    "nn.avg_pool2d": _amp_average(_pool_count), "nn.avg_pool1d": _amp_average(_pool_count),
    "nn.adaptive_avg_pool2d": _amp_average(_adaptive_count), "nn.adaptive_avg_pool1d": _amp_average(_adaptive_count),
    "nn.batch_norm": _batch_norm_amp, "nn.layer_norm": _norm_amp, "nn.group_norm": _norm_amp,
    "nn.rms_norm": _norm_amp, "nn.softmax": _softmax_amp, "nn.log_softmax": _softmax_amp,
    "msc.attention": _attention_amp, "image.resize2d": _resize_amp,
    "scatter_elements": _scatter_amp, "scatter_nd": _scatter_amp,
}
for _op in ("matmul", "msc.matmul", "nn.batch_matmul", "nn.dense", "msc.linear", "msc.linear_bias", "einsum",
            "nn.conv2d", "msc.conv2d_bias", "nn.conv1d", "msc.conv1d_bias", "nn.conv2d_transpose",
            "nn.conv1d_transpose", "nn.bias_add"):
    AMP[_op] = _amp_sum_terms


# ---- error propagation classes (Evaluator.propagate) ---------------------------------------------

# Products (multilinear in the inputs, with weights): the first-order error from input j is the
# op on its radius with every other float input and weight replaced by its absolute value (a bias
# by 0) -- the exact bound sum_j |d out / d x_j| r_j.
PRODUCT_OPS = {"multiply", "matmul", "msc.matmul", "nn.batch_matmul", "einsum", "nn.dense", "msc.linear",
               "msc.linear_bias", "nn.conv1d", "nn.conv2d", "msc.conv1d_bias", "msc.conv2d_bias",
               "nn.conv1d_transpose", "nn.conv2d_transpose"}
# Sums with non-negative coefficients: the op on input j's radius, the others (and weights) 0.
SUM_OPS = {"add", "subtract", "nn.bias_add", "sum", "mean", "cumsum", "nn.avg_pool1d", "nn.avg_pool2d",
           "nn.adaptive_avg_pool1d", "nn.adaptive_avg_pool2d"}
# Elementwise ops (one output element from one position of the broadcast inputs), copies of
# input elements, and ops monotone in every input (max/min reductions, max pooling, topk values):
# the uniform sign corners are the exact first-order bound. The other ops (softmax, norms,
# attention, std/variance, prod, resize, scatters) are sampled and scaled by SAFETY.
ELEMENTWISE_OPS = {
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "erf", "exp", "floor",
    "log", "negative", "round", "rsqrt", "sign", "sin", "sinh", "sqrt", "square", "tan", "sigmoid", "tanh",
    "nn.relu", "nn.gelu", "nn.gelu_tanh", "msc.gelu", "nn.silu", "nn.selu", "nn.leakyrelu", "nn.softplus",
    "clip", "astype", "cast", "divide", "power", "maximum", "minimum", "floor_divide", "floor_mod", "where",
    "masked_fill", "nn.batch_norm", "reshape", "permute_dims", "transpose", "concat", "concatenate",
    "stack", "squeeze", "expand_dims", "strided_slice", "split", "tuple", "get_item", "broadcast_to",
    "tile", "repeat", "flip", "tril", "triu", "trilu", "nn.pad", "take", "gather_elements", "gather_nd",
    "msc.embedding", "full", "ones_like", "zeros_like", "max", "min", "nn.max_pool1d", "nn.max_pool2d",
    "topk", "argmax", "argmin"}


# Ops that take inf / nan inputs (SPECIAL values), with the semantics the contracts state: IEEE
# comparisons, abs/negative; maximum/minimum propagate nan (opdefs/elementwise.yaml); astype keeps
# inf/nan between floats and makes nan true (opdefs astype, runtime/vulkan/README.md "dtypes");
# argmax/argmin pick the first nan, topk sorts nan as the largest (runtime/vulkan/README.md ops
# table); where and data movement copy them; isnan/isinf/isfinite test them.
SPECIAL_OPS = {"maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
               "abs", "negative", "astype", "cast", "argmax", "argmin", "topk", "where", "isnan", "isinf",
               "isfinite", "reshape", "permute_dims", "transpose", "flip", "broadcast_to"}


# ---- guards: domains and discontinuities --------------------------------------------------------

def _dist_int(x: torch.Tensor) -> torch.Tensor:
    return _a(x - torch.round(x))


def _ok_margin(d, m, exact):
    """Every element is farther than its margin from the discontinuity, or exactly on it with
    exactly computed inputs."""
    return bool(torch.all((d > m) | ((d == 0) & exact)))


def _guard_floorlike(nd, x, r):
    v, rv = x[0], r[0]
    if not v.is_floating_point():
        return None
    if nd.optype == "round":
        d = _a(v - (torch.floor(v) + 0.5))
    elif nd.optype == "sign":
        d = _a(v)
    else:
        d = _dist_int(v)
    return None if _ok_margin(d, rv + 4 * ULP * _a(v), rv == 0) else "within its error of a discontinuity"


def _guard_astype(nd, x, r):
    v, rv = x[0], r[0]
    to = nd.attrs["dtype"]
    if to == "int32" and v.numel() and float(_a(v.to(F64)).max()) >= 2 ** 31:
        return "out of int32 range"  # narrowing would wrap (or be undefined for floats)
    if not v.is_floating_point() or to in FLOATS:
        return None
    d = _a(v) if to == "bool" else _dist_int(v)
    return None if _ok_margin(d, rv + 4 * ULP * _a(v), rv == 0) else "float -> %s near a boundary" % to


def _guard_compare(nd, x, r):
    if not x[0].is_floating_point():
        return None
    a, b, ra, rb = torch.broadcast_tensors(x[0], x[1], r[0], r[1])
    decided = ~(torch.isfinite(a) & torch.isfinite(b))  # IEEE: nan / inf compare exactly
    d = torch.where(decided, torch.ones_like(a), _a(a - b))
    m = torch.where(decided, torch.zeros_like(a), ra + rb + 4 * ULP * (_a(a) + _a(b)))
    return None if _ok_margin(d, m, (ra == 0) & (rb == 0)) else "near equality"


def _guard_divide(nd, x, r):
    if not x[0].is_floating_point():
        return None if bool(torch.all(x[1] != 0)) else "integer division by zero"
    a, b, ra, rb = torch.broadcast_tensors(x[0], x[1], r[0], r[1])
    if not bool(torch.all(_a(b) > torch.clamp(8 * rb, min=0.05))):
        return "divisor near zero"
    if nd.optype in ("floor_divide", "floor_mod"):
        q = a / b
        m = (ra + _a(q) * rb) / _a(b) + 8 * ULP * _a(q)
        if not _ok_margin(_dist_int(q), m, (ra == 0) & (rb == 0)):
            return "quotient near an integer"
    return None


def _domain(lo: float, hi: float, lo_open: bool = False):
    def guard(nd, x, r):
        v, rv = x[0], r[0]
        low_ok = (v - rv > lo) if lo_open else (v - rv >= lo)
        if bool(torch.all(low_ok & (v + rv <= hi))):
            return None
        return "input outside [%g, %g]" % (lo, hi)
    return guard


def _guard_power(nd, x, r):
    return None if bool(torch.all(x[0] - r[0] > 0.05)) else "base not positive"


def _guard_softplus(nd, x, r):
    beta = float(nd.attrs.get("beta", "1") or 1)
    threshold = float(nd.attrs.get("threshold", "20") or 20)
    d = _a(beta * x[0] - threshold)
    return None if bool(torch.all(d > abs(beta) * r[0] + 8 * ULP * _a(beta * x[0]) + 1e-6)) else "near threshold"


def _gap(a, b):
    """|a - b|, with equal values (inf = inf, nan = nan) 0 and any other pair holding a nan or an
    inf decided exactly (gap inf)."""
    both_nan = torch.isnan(a) & torch.isnan(b)
    g = torch.where(a == b, torch.zeros_like(a), _a(a - b))
    return torch.where(both_nan, torch.zeros_like(a), torch.nan_to_num(g, nan=float("inf")))


def _fa(t):
    return torch.nan_to_num(_a(t), nan=0.0, posinf=0.0, neginf=0.0)


def _guard_argreduce(nd, x, r):
    """argmax/argmin (and topk indices): the winners must be separated from the others."""
    v, rv = x[0], r[0]
    if not v.is_floating_point() or bool(torch.all(rv == 0)):
        return None
    axis = nd.attrs.get("axis", "")
    if nd.optype == "topk":
        axis = axis or "-1"
    if axis == "":
        v, rv = v.reshape(1, -1), rv.reshape(1, -1)
    else:
        ax = int(axis) % v.dim()
        v, rv = v.movedim(ax, -1).reshape(-1, v.shape[ax]), rv.movedim(ax, -1).reshape(-1, v.shape[ax])
    largest = nd.optype == "argmax" or (nd.optype == "topk" and _flag(nd.attrs, "largest", True))
    order = torch.sort(v, dim=1, descending=largest, stable=True).indices
    s, rs = v.gather(1, order), rv.gather(1, order)
    if nd.optype == "topk":
        if (nd.attrs.get("ret_type", "both") or "both") == "values":
            return None
        k = min(int(nd.attrs.get("k", "1") or 1), s.shape[1] - 1)
        pairs = range(k)
    else:
        pairs = range(1)
    for i in pairs:
        if i + 1 >= s.shape[1]:
            break
        d = _gap(s[:, i], s[:, i + 1])
        m = rs[:, i] + rs[:, i + 1] + 4 * ULP * (_fa(s[:, i]) + _fa(s[:, i + 1]))
        if not _ok_margin(d, m, (rs[:, i] == 0) & (rs[:, i + 1] == 0)):
            return "near a tie"
        if nd.optype != "topk":  # every later element must lose to the winner as well
            rest = _gap(s[:, :1], s[:, 1:])
            mm = rs[:, :1] + rs[:, 1:] + 4 * ULP * (_fa(s[:, :1]) + _fa(s[:, 1:]))
            if not _ok_margin(rest, mm, (rs[:, :1] == 0) & (rs[:, 1:] == 0)):
                return "near a tie"
    return None


def _guard_nonzero_int(nd, x, r):
    return None if bool(torch.all(x[1] != 0)) else "integer division by zero"


# integer ops that could wrap around: checked in float64 when an input exceeds 2^15
_INT_OVERFLOW_OPS = {"add", "subtract", "multiply", "square", "negative", "abs", "sum", "prod", "cumsum",
                     "nn.bias_add"}


GUARDS: Dict[str, Callable] = {
    "floor": _guard_floorlike, "ceil": _guard_floorlike, "round": _guard_floorlike, "sign": _guard_floorlike,
    "astype": _guard_astype, "cast": _guard_astype,
    "divide": _guard_divide, "floor_divide": _guard_divide, "floor_mod": _guard_divide,
    "power": _guard_power, "nn.softplus": _guard_softplus,
    "argmax": _guard_argreduce, "argmin": _guard_argreduce, "topk": _guard_argreduce,
    "log": _domain(0.05, 1e30), "sqrt": _domain(0.0, 1e30), "rsqrt": _domain(0.05, 1e30),
    "acos": _domain(-0.97, 0.97), "asin": _domain(-0.97, 0.97), "atanh": _domain(-0.95, 0.95),
    "acosh": _domain(1.05, 1e30), "sin": _domain(-3.1, 3.1), "cos": _domain(-3.1, 3.1), "tan": _domain(-1.3, 1.3),
    "exp": _domain(-30, 10), "sinh": _domain(-8, 8), "cosh": _domain(-8, 8),
}
for _op in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    GUARDS[_op] = _guard_compare


# ---- small helpers ------------------------------------------------------------------------------

def _ints(s: str) -> List[int]:
    return [int(v) for v in s.split(",") if v != ""]


def _axes(s: str, ndim: int) -> List[int]:
    axes = _ints(s)
    return sorted({a % ndim for a in axes}) if axes else list(range(ndim))


def _flag(attrs, key, default=False) -> bool:
    v = attrs.get(key, "")
    return default if v == "" else bool(int(v))


def _kind(dtype: str) -> str:
    return "float" if dtype in FLOATS else "bool" if dtype == "bool" else "int"


def _torch_kind(t: torch.Tensor) -> str:
    return "float" if t.is_floating_point() else "bool" if t.dtype == torch.bool else "int"


# ---- values and the evaluator -------------------------------------------------------------------

class Value:
    """A live tensor: exact value (float64 for floats) and error radius (0 for int/bool)."""

    __slots__ = ("name", "dtype", "shape", "ref", "radius", "special", "uses")

    def __init__(self, name, dtype, shape, ref, radius, special=False):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)
        self.ref, self.radius, self.special = ref, radius, special
        self.uses = 0

    @property
    def rank(self):
        return len(self.shape)

    @property
    def numel(self):
        return int(np.prod(self.shape)) if self.shape else 1

    def __repr__(self):
        return "Value(%s, %s, %s)" % (self.name, self.dtype, list(self.shape))


class Evaluator:
    """Runs nodes on exact values, propagates the error radii, applies the guards."""

    def __init__(self, seed: int):
        self.gen = torch.Generator().manual_seed(seed)
        self.values: Dict[str, Value] = {}

    def add_input(self, name: str, dtype: str, array: np.ndarray, special: bool = False) -> Value:
        t = torch.from_numpy(np.array(array))
        ref = t.to(F64) if t.is_floating_point() else t
        v = Value(name, dtype, array.shape, ref, torch.zeros(array.shape, dtype=F64), special)
        self.values[name] = v
        return v

    @staticmethod
    def weight(array: np.ndarray) -> torch.Tensor:
        t = torch.from_numpy(np.array(array))
        return t.to(F64) if t.is_floating_point() else t

    def run(self, node: MSCJoint, weights: Dict[str, np.ndarray]) -> List[Value]:
        """Evaluates `node` (inputs already evaluated); raises Reject or GenerationError."""
        ins = [self.values[t] for t in node.inputs]
        x = [v.ref for v in ins]
        w = {role: self.weight(weights[t.name]) for role, t in node.weights.items()}
        with torch.no_grad():
            try:
                ys = run_node(node, x, w, F64)
            except Reject:
                raise
            except Exception as e:  # noqa: BLE001  the reference cannot run what the generator built
                raise GenerationError("interp failed on node %r (%s): %s: %s" % (
                    node.name, node.optype, type(e).__name__, e)) from e
            if len(ys) != len(node.outputs):
                raise GenerationError("node %r: interp made %d outputs, the graph declares %d"
                                      % (node.name, len(ys), len(node.outputs)))
            for t, y in zip(node.outputs, ys):
                if list(y.shape) != list(t.shape) or _torch_kind(y) != _kind(t.dtype):
                    raise GenerationError("node %r (%s): interp computed %s %s, the generator inferred %s %s"
                                          % (node.name, node.optype, list(y.shape), y.dtype, t.shape, t.dtype))
            guard = GUARDS.get(node.optype)
            if guard is not None:
                reason = guard(node, x, [v.radius for v in ins])
                if reason:
                    raise Reject(reason)
            special_in = any(v.special for v in ins)
            for t, y in zip(node.outputs, ys):
                if t.dtype in FLOATS:
                    finite = torch.isfinite(y)
                    if not bool(torch.all(finite)) and not (special_in and node.optype in SPECIAL_OPS):
                        raise Reject("non-finite result")
                    if bool(finite.any()) and float(_a(y[finite]).max()) > MAX_MAG[t.dtype]:
                        raise Reject("magnitude %.3g" % float(_a(y[finite]).max()))
                elif t.dtype != "bool" and y.numel() and int(y.abs().max()) > MAX_INT[t.dtype]:
                    raise Reject("integer magnitude")
            if any(t.dtype in INTS for t in node.outputs) and node.optype in _INT_OVERFLOW_OPS and \
                    any(v.dtype in INTS and v.ref.numel() and int(v.ref.abs().max()) > 2 ** 15 for v in ins):
                yf = run_node(node, [v.ref.to(F64) if v.dtype in INTS else v.ref for v in ins], w, F64)
                for t, y in zip(node.outputs, yf):
                    if t.dtype in INTS and y.numel() and float(_a(y).max()) > MAX_INT[t.dtype]:
                        raise Reject("integer overflow")
            floats = [i for i, t in enumerate(node.outputs) if t.dtype in FLOATS]
            amps = {}
            if floats:
                in_mag = max([float(_a(t[torch.isfinite(t)]).max()) for t in x + list(w.values())
                              if t.is_floating_point() and bool(torch.isfinite(t).any())] + [0.0])
                own = AMP.get(node.optype, _amp_zero)(node, x, w, ys)
                for i in floats:
                    dt = node.outputs[i].dtype
                    o = own[i] if i < len(own) else torch.zeros_like(ys[i])
                    # + an intermediate below the smallest normal may be flushed to zero
                    amps[i] = o + UNIT[dt] * _a(ys[i]) + MIN_NORMAL[dt] * (1 + in_mag)
            prop = self.propagate(node, ins, w, ys, list(amps)) if amps else {}
            out = []
            for i, (t, y) in enumerate(zip(node.outputs, ys)):
                if i in amps:
                    # inf / nan results (from inf / nan inputs) are exact by IEEE's rules
                    radius = torch.where(torch.isfinite(y), prop[i] + amps[i], torch.zeros_like(y))
                    if not bool(torch.all(torch.isfinite(radius))):
                        raise Reject("non-finite result within the inputs' error")
                    fin = y[torch.isfinite(y)]
                    scale = float(_a(fin).max()) if fin.numel() else 0.0
                    if radius.numel() and float(radius.max()) > COND[t.dtype] * scale + 4 * MIN_NORMAL[t.dtype]:
                        raise Reject("ill-conditioned (radius %.3g vs max %.3g)" % (float(radius.max()), scale))
                else:
                    radius = torch.zeros(y.shape, dtype=F64)
                special = t.dtype in FLOATS and not bool(torch.all(torch.isfinite(y)))
                out.append(Value(t.name, t.dtype, y.shape, y, radius, special))
        for v in out:
            self.values[v.name] = v
        return out

    def propagate(self, node: MSCJoint, ins: List[Value], w, ys, outs: List[int]) -> Dict[int, torch.Tensor]:
        """How far the float outputs `outs` may move when every float input moves within its
        radius (first order): exact bounds for products and sums (see PRODUCT_OPS, SUM_OPS),
        else the largest deviation over the uniform sign corners (+-r for each uncertain input:
        exact for elementwise and data-movement ops) and COPIES random sign patterns, times
        SAFETY for the ops that mix elements."""
        prop = {i: torch.zeros_like(ys[i]) for i in outs}
        uncertain = [v.dtype in FLOATS and bool(torch.any(v.radius > 0)) for v in ins]
        if not any(uncertain):
            return prop
        op = node.optype
        if op in PRODUCT_OPS or op in SUM_OPS:
            for j, v in enumerate(ins):
                if not uncertain[j]:
                    continue
                args = [v.radius if k == j else (_a(u.ref) if op in PRODUCT_OPS else torch.zeros_like(u.ref))
                        if u.dtype in FLOATS else u.ref for k, u in enumerate(ins)]
                ww = {r: (torch.zeros_like(t) if r == "bias" or op in SUM_OPS else _a(t)) for r, t in w.items()}
                yj = run_node(node, args, ww, F64)
                for i in outs:
                    prop[i] = prop[i] + _a(yj[i])
            return prop
        m = [j for j, u in enumerate(uncertain) if u]
        corners = [[(c >> b) & 1 for b in range(len(m))] for c in range(2 ** min(len(m), 3))] if len(m) <= 3 else []
        patterns = [("corner", c) for c in corners] + [("random", None)] * COPIES
        for kind, c in patterns:
            xk = []
            for j, v in enumerate(ins):
                if not uncertain[j]:
                    xk.append(v.ref)
                elif kind == "corner":
                    xk.append(v.ref + (1.0 if c[m.index(j)] else -1.0) * v.radius)
                else:
                    xk.append(v.ref + (torch.randint(0, 2, v.ref.shape, generator=self.gen).to(F64) * 2 - 1) * v.radius)
            yk = run_node(node, xk, w, F64)
            for i in outs:
                dev = _a(yk[i] - ys[i])
                prop[i] = torch.maximum(prop[i], torch.where(torch.isfinite(ys[i]), dev, torch.zeros_like(dev)))
        if op not in ELEMENTWISE_OPS:
            for i in outs:
                prop[i] = SAFETY * prop[i]
        return prop

    def tolerance(self, v: Value) -> np.ndarray:
        """Per element: radius + 2 u |expected| + the smallest normal (0 where expected is inf or
        nan: those must be matched exactly)."""
        tol = v.radius + 2 * UNIT[v.dtype] * _a(v.ref) + MIN_NORMAL[v.dtype]
        return torch.where(torch.isfinite(v.ref), tol, torch.zeros_like(tol)).numpy()


# ---- the generator ------------------------------------------------------------------------------

class _Gen:
    def __init__(self, seed: int, max_numel: int = 256, big: bool = False):
        self.seed = seed
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.ev = Evaluator(seed)
        self.nodes: List[MSCJoint] = []
        self.node_weights: Dict[str, Dict[str, np.ndarray]] = {}
        self.inputs: List[str] = []
        self.live: List[Value] = []
        self.special_live: List[Value] = []  # values holding inf / nan: only SPECIAL_OPS take them
        self.weights: Dict[str, np.ndarray] = {}
        self.counts: Dict[str, int] = collections.Counter()
        self.max_numel = max_numel
        # dims of new shapes; a "big" graph also has long dims (vec4 and cooperative reduction
        # paths of the Vulkan kernels start at 4 / 64 elements)
        self.dims = [1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8] + ([16, 33, 64, 65, 100, 128] if big else [])
        self.n_weights = 0
        self.input_values: Dict[str, np.ndarray] = {}

    # -- bookkeeping
    def checkpoint(self):
        return (len(self.nodes), len(self.inputs), len(self.live), dict(self.weights), self.n_weights,
                collections.Counter(self.counts), [v.uses for v in self.live], len(self.special_live))

    def rollback(self, cp):
        n_nodes, n_inputs, n_live, weights, n_weights, counts, uses, n_special = cp
        del self.special_live[n_special:]
        for node in self.nodes[n_nodes:]:
            for t in node.outputs:
                self.ev.values.pop(t.name, None)
        del self.nodes[n_nodes:]
        del self.inputs[n_inputs:]
        del self.live[n_live:]
        self.weights, self.n_weights, self.counts = weights, n_weights, counts
        for v, u in zip(self.live, uses):
            v.uses = u

    def fresh(self, optype: str) -> str:
        base = {"input": "inp", "constant": "const"}.get(optype, optype.split(".")[-1])
        k = self.counts[base]
        self.counts[base] += 1
        return base if k == 0 and base != "inp" else "%s_%d" % (base, k)

    # -- values
    def rand_floats(self, shape, lo=-2.0, hi=2.0, dtype="float32") -> np.ndarray:
        return self.np_rng.uniform(lo, hi, size=shape).astype(NP_DTYPES[dtype])

    def rand_ints(self, shape, lo=-8, hi=8, dtype="int32") -> np.ndarray:
        return self.np_rng.integers(lo, hi + 1, size=shape).astype(NP_DTYPES[dtype])

    def rand_values(self, dtype, shape, lo=None, hi=None) -> np.ndarray:
        if dtype in FLOATS:
            return self.rand_floats(shape, -2.0 if lo is None else lo, 2.0 if hi is None else hi, dtype)
        if dtype == "bool":
            return self.np_rng.random(size=shape) < 0.5
        if dtype == "int64" and lo is None and self.rng.random() < 0.25:
            return self.rand_ints(shape, -BIG_INT64, BIG_INT64, dtype)
        return self.rand_ints(shape, -8 if lo is None else int(lo), 8 if hi is None else int(hi), dtype)

    def new_input(self, dtype: str, shape, lo=None, hi=None, values=None, special=False) -> Value:
        name = self.fresh("input")
        arr = self.rand_values(dtype, tuple(shape), lo, hi) if values is None else np.asarray(values, NP_DTYPES[dtype])
        t = MSCTensor(name + ":0", dtype, "", list(arr.shape), alias=name)
        self.nodes.append(MSCJoint(len(self.nodes), name, "input", [], [t], OrderedDict(), {}))
        self.inputs.append(t.name)
        v = self.ev.add_input(t.name, dtype, arr, special)
        self.input_values[t.name] = arr
        (self.special_live if special else self.live).append(v)
        return v

    def special_input(self, dtype: Optional[str] = None, shape=None) -> Value:
        """A float value holding inf / nan: a live one (of `shape` when given) or a new input."""
        cands = [v for v in self.special_live if (dtype is None or v.dtype == dtype) and v.dtype in FLOATS
                 and (shape is None or v.shape == tuple(shape))]
        if cands and self.rng.random() < 0.4:
            return self.rng.choice(cands)
        dt = dtype or self.rng.choice(FLOATS)
        shape = tuple(shape) if shape is not None else self.rand_shape()
        vals = self.rand_floats(shape, -3, 3, dt).reshape(-1)
        specials = np.array([np.inf, -np.inf, np.nan], dtype=vals.dtype)
        for i in range(len(vals)):
            if self.rng.random() < 0.3:
                vals[i] = self.rng.choice(specials)
        return self.new_input(dt, shape, values=vals.reshape(shape), special=True)

    def rand_shape(self, rank: Optional[int] = None, max_numel: Optional[int] = None) -> Tuple[int, ...]:
        max_numel = max_numel or self.max_numel
        rank = self.rng.choice([1, 2, 2, 3, 3, 4]) if rank is None else rank
        for _ in range(50):
            shape = tuple(self.rng.choice(self.dims) for _ in range(rank))
            if int(np.prod(shape)) <= max_numel:
                return shape
        return (1,) * rank

    def pick(self, dtypes: Sequence[str] = NUMERIC, min_rank=0, max_rank=6,
             pred: Optional[Callable[[Value], bool]] = None, p_new=0.25,
             new: Optional[Callable[[], Value]] = None) -> Value:
        """A live value of an allowed dtype and rank (recent ones likelier) or, with probability
        p_new or when there is none, new() / a new graph input."""
        cands = [v for v in self.live if v.dtype in dtypes and min_rank <= v.rank <= max_rank
                 and (pred is None or pred(v))]
        if cands and self.rng.random() >= p_new:
            return self.rng.choices(cands, [1.0 + i for i in range(len(cands))])[0]
        if new is not None:
            return new()
        lo = max(min_rank, 1)
        rank = self.rng.randint(lo, max(lo, min(max_rank, 4)))
        return self.new_input(self.rng.choice(list(dtypes)), self.rand_shape(rank))

    def in_range(self, lo, hi):
        return lambda v: bool(torch.all((v.ref - v.radius >= lo) & (v.ref + v.radius <= hi)))

    def weight(self, node_name: str, role: str, array: np.ndarray, layout: str = "") -> Tuple[MSCTensor, np.ndarray]:
        name = "const" if self.n_weights == 0 else "const_%d" % self.n_weights
        self.n_weights += 1
        arr = np.asarray(array)
        t = MSCTensor(name, {np.dtype(np.float32): "float32", np.dtype(np.float16): "float16",
                             np.dtype(np.int32): "int32", np.dtype(np.int64): "int64",
                             np.dtype(np.bool_): "bool"}[arr.dtype], layout, list(arr.shape),
                      alias="%s.%s" % (node_name, role))
        return t, arr

    def node(self, optype: str, inputs: Sequence[Value], attrs: Optional[Dict[str, object]],
             outs: Sequence[Tuple[Sequence[int], str]], weights: Optional[Dict[str, np.ndarray]] = None,
             layout: str = "", weight_layouts: Optional[Dict[str, str]] = None) -> List[Value]:
        """Adds a node; `outs`: the inferred (shape, dtype) of each output. Raises Reject."""
        name = self.fresh(optype)
        wt, warr = {}, {}
        for role, arr in (weights or {}).items():
            t, a = self.weight(name, role, arr, (weight_layouts or {}).get(role, ""))
            wt[role], warr[t.name] = t, a
        attr_s = OrderedDict((k, v if isinstance(v, str) else attr_str(v)) for k, v in (attrs or {}).items())
        outputs = [MSCTensor("%s:%d" % (name, i), dtype, layout, [int(s) for s in shape])
                   for i, (shape, dtype) in enumerate(outs)]
        for t in outputs:
            if any(s <= 0 for s in t.shape):
                raise Reject("empty output")
            if int(np.prod(t.shape)) > 4 * self.max_numel:
                raise Reject("output too large")
        node = MSCJoint(len(self.nodes), name, optype, [v.name for v in inputs], outputs, attr_s, wt)
        self.nodes.append(node)
        values = self.ev.run(node, warr)
        self.weights.update(warr)
        for v in inputs:
            v.uses += 1
        for v in values:
            (self.special_live if v.special else self.live).append(v)
        return values

    def scalar(self, dtype: str, value) -> Value:
        """A 0-d `constant` node (MSC's scalar constant: attr `scalar`, 0-d weight)."""
        arr = np.array(value, dtype=NP_DTYPES[dtype])
        text = ("%f" % float(arr)) if dtype in FLOATS else str(int(arr))
        if dtype in FLOATS and float(text) != float(arr):
            arr = np.array(float(text), dtype=NP_DTYPES[dtype])
        return self.node("constant", [], {"scalar": text}, [((), dtype)], weights={"const": arr})[0]

    def const(self, array: np.ndarray) -> Value:
        """A tensor `constant` node (a weight passed as an input)."""
        arr = np.asarray(array)
        return self.node("constant", [], {}, [(arr.shape, _np_name(arr.dtype))], weights={"const": arr})[0]

    # -- finish
    def finish(self) -> RandomGraph:
        consumed = {t for n in self.nodes for t in n.inputs}
        outputs = []
        for n in self.nodes:
            if n.optype == "input":
                continue
            for t in n.outputs:
                if t.name not in consumed or self.rng.random() < 0.15:
                    outputs.append(t.name)
        for n in self.nodes:
            for i, t in enumerate(n.outputs):
                if t.name in outputs and n.optype != "input":
                    t.alias = n.name if len(n.outputs) == 1 else t.name.replace(":", "_")
        graph = OrderedDict([("name", "rand_%d" % self.seed), ("inputs", list(self.inputs)), ("outputs", outputs),
                             ("nodes", [n.to_dict() for n in self.nodes]), ("prims", [])])
        expected, tol = {}, {}
        for name, v in self.ev.values.items():
            if name in self.inputs:
                continue
            expected[name] = v.ref.numpy()
            if v.dtype in FLOATS:
                tol[name] = self.ev.tolerance(v)
        used = sorted({n.optype for n in self.nodes if n.optype != "input"})
        return RandomGraph(self.seed, graph, dict(self.weights), dict(self.input_values), expected, tol, used)


def _np_name(dt) -> str:
    return {np.dtype(np.float32): "float32", np.dtype(np.float16): "float16", np.dtype(np.int32): "int32",
            np.dtype(np.int64): "int64", np.dtype(np.bool_): "bool"}[np.dtype(dt)]


# ---- op builders --------------------------------------------------------------------------------
# Each builder adds one node (and the inputs / constants it needs) through g.node(); it may raise
# Reject. Shapes and dtypes of the outputs are inferred here, independently of interp.

_UNARY_FLOAT = {
    # optype: (input range for new inputs, range a live input must lie in)
    "abs": ((-3, 3), None), "acos": ((-0.9, 0.9), (-0.95, 0.95)), "acosh": ((1.1, 4.0), (1.08, 1e4)),
    "asin": ((-0.9, 0.9), (-0.95, 0.95)), "asinh": ((-4, 4), (-100, 100)), "atan": ((-4, 4), None),
    "atanh": ((-0.85, 0.85), (-0.9, 0.9)), "ceil": ((-4, 4), None), "cos": ((-3.0, 3.0), (-3.05, 3.05)),
    "cosh": ((-3, 3), (-6, 6)), "erf": ((-3, 3), None), "exp": ((-4, 4), (-20, 8)), "floor": ((-4, 4), None),
    "log": ((0.1, 6.0), (0.08, 1e4)), "negative": ((-3, 3), None), "round": ((-4, 4), None),
    "rsqrt": ((0.1, 5.0), (0.08, 1e4)), "sign": ((-3, 3), None), "sin": ((-3.0, 3.0), (-3.05, 3.05)),
    "sinh": ((-3, 3), (-6, 6)), "sqrt": ((0.0, 5.0), (0.0, 1e4)), "square": ((-3, 3), (-50, 50)),
    "tan": ((-1.2, 1.2), (-1.25, 1.25)), "sigmoid": ((-5, 5), None), "tanh": ((-4, 4), None),
    "nn.relu": ((-3, 3), None), "nn.gelu": ((-4, 4), None), "nn.gelu_tanh": ((-4, 4), (-30, 30)),
    "msc.gelu": ((-4, 4), (-30, 30)), "nn.silu": ((-4, 4), None), "nn.selu": ((-3, 3), None),
    "nn.leakyrelu": ((-3, 3), None), "nn.softplus": ((-3, 3), None), "clip": ((-3, 3), None),
}
_UNARY_INT = {"abs", "negative", "sign", "square", "nn.relu", "ceil", "floor", "round", "clip"}


def b_unary(g: _Gen, op: str):
    new_range, live_range = _UNARY_FLOAT[op]
    dtypes = FLOATS + (INTS if op in _UNARY_INT else ())
    pred = g.in_range(*live_range) if live_range else None

    def new():
        dt = g.rng.choice(dtypes)
        lo, hi = new_range if dt in FLOATS else (-8, 8)
        return g.new_input(dt, g.rand_shape(), lo, hi)
    if op in ("abs", "negative") and _use_special(g):
        x = g.special_input()
    else:
        x = g.pick(dtypes, 1, 6, pred=lambda v: v.dtype not in FLOATS or pred is None or pred(v), new=new)
    attrs = {}
    if op == "nn.leakyrelu":
        attrs = {"alpha": g.rng.choice([0.01, 0.1, 0.2, 0.5])}
    elif op == "nn.softplus":
        attrs = {"beta": g.rng.choice([0.5, 1.0, 2.0]), "threshold": g.rng.choice([1.0, 5.0, 20.0])}
    elif op == "clip":
        if x.dtype in FLOATS:
            lo = g.rng.choice([float("-inf"), -2.0, -1.0, -0.5, 0.0])
            hi = g.rng.choice([float("inf"), 0.5, 1.0, 2.0, 6.0])
        else:
            lo = g.rng.choice([float("-inf"), -5.0, -1.0, 0.0])
            hi = g.rng.choice([float("inf"), 1.0, 3.0, 6.0])
        if lo >= hi:
            raise Reject("empty clip")
        attrs = {"min": lo, "max": hi}
    g.node(op, [x], attrs, [(x.shape, x.dtype)])


def b_predicate(g: _Gen, op: str):
    x = g.special_input()
    g.node(op, [x], {}, [(x.shape, "bool")])


def _use_special(g: _Gen) -> bool:
    return g.rng.random() < 0.15


def b_logical_not(g: _Gen, op: str):
    x = g.pick(("bool",), 1, 6)
    g.node(op, [x], {}, [(x.shape, "bool")])


def b_bitwise_not(g: _Gen, op: str):
    x = g.pick(INTS + ("bool",), 1, 6)
    g.node(op, [x], {}, [(x.shape, x.dtype)])


def b_astype(g: _Gen, op: str):
    if _use_special(g):
        x = g.special_input()
        to = g.rng.choice([d for d in FLOATS + ("bool",) if d != x.dtype])
        g.node(op, [x], {"dtype": to}, [(x.shape, to)])
        return
    x = g.pick(NUMERIC + ("bool",), 1, 6)
    to = g.rng.choice([d for d in NUMERIC + ("bool",) if d != x.dtype])
    if to == "float16" and x.ref.numel() and float(x.ref.to(F64).abs().max()) > 1000:
        raise Reject("float16 range")
    g.node(op, [x], {"dtype": to}, [(x.shape, to)])


def _bshape(g: _Gen, shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """A shape that broadcasts with `shape` to `shape` (or to a larger one)."""
    r = g.rng.random()
    if r < 0.35:
        return shape
    s = list(shape[g.rng.randint(0, len(shape)):]) if shape else []
    s = [1 if g.rng.random() < 0.35 else d for d in s]
    if r > 0.9 and len(shape) < 4 and int(np.prod(shape or (1,))) * 2 <= g.max_numel:
        s = [2] + list(shape) if g.rng.random() < 0.5 else s
    return tuple(s) or (1,)


def _broadcast(*shapes):
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def _partner(g: _Gen, a: Value, dtype: str, lo=None, hi=None, pred=None) -> Value:
    """A second operand for a broadcasting op on `a`: a itself, a compatible live value, a new
    input of a broadcastable shape, or a scalar constant."""
    r = g.rng.random()
    if r < 0.1 and (pred is None or pred(a)):
        return a
    if r < 0.45:
        cands = [v for v in g.live if v.dtype == dtype and v.rank >= 1 and (pred is None or pred(v))
                 and _compatible(a.shape, v.shape) and int(np.prod(_broadcast(a.shape, v.shape))) <= 2 * g.max_numel]
        if cands:
            return g.rng.choice(cands)
    if r < 0.55:
        if dtype in FLOATS:
            val = g.rand_floats((), -2 if lo is None else lo, 2 if hi is None else hi, dtype)
        else:
            val = g.rand_ints((), -5 if lo is None else int(lo), 5 if hi is None else int(hi), dtype)
        return g.scalar(dtype, val)
    return g.new_input(dtype, _bshape(g, a.shape), lo, hi)


def _compatible(a, b) -> bool:
    try:
        np.broadcast_shapes(tuple(a), tuple(b))
        return True
    except ValueError:
        return False


_BINARY_DTYPES = {
    "add": NUMERIC, "subtract": NUMERIC, "multiply": NUMERIC, "divide": NUMERIC, "maximum": NUMERIC,
    "minimum": NUMERIC, "floor_divide": NUMERIC, "floor_mod": NUMERIC, "power": FLOATS,
    "equal": NUMERIC + ("bool",), "not_equal": NUMERIC + ("bool",), "less": NUMERIC, "less_equal": NUMERIC,
    "greater": NUMERIC, "greater_equal": NUMERIC, "logical_and": ("bool",), "logical_or": ("bool",),
    "logical_xor": ("bool",), "bitwise_and": INTS + ("bool",), "bitwise_or": INTS + ("bool",),
    "bitwise_xor": INTS + ("bool",),
}
_COMPARE = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
            "logical_xor"}


def b_binary(g: _Gen, op: str):
    dtypes = _BINARY_DTYPES[op]
    if op == "power":
        a = g.pick(dtypes, 1, 6, pred=g.in_range(0.2, 4.0), new=lambda: g.new_input(g.rng.choice(FLOATS),
                                                                                       g.rand_shape(), 0.2, 3.0))
        b = _partner(g, a, a.dtype, -2.0, 2.0, pred=g.in_range(-2.5, 2.5))
    elif op in ("divide", "floor_divide", "floor_mod"):
        a = g.pick(dtypes, 1, 6)
        if a.dtype in FLOATS:
            b = _partner(g, a, a.dtype, 0.5, 3.0, pred=lambda v: bool(torch.all(v.ref.abs() > 0.3)))
            if b.name != a.name and g.rng.random() < 0.5 and b.uses == 0 and b.name in g.inputs:
                b.ref.neg_()  # negative divisors too
                g.input_values[b.name] *= -1
        else:
            b = _partner(g, a, a.dtype, 1, 6, pred=lambda v: bool(torch.all(v.ref != 0)))
    elif op in SPECIAL_OPS and _use_special(g):
        a = g.special_input()
        b = g.special_input(a.dtype, a.shape) if g.rng.random() < 0.4 else _partner(g, a, a.dtype)
        if g.rng.random() < 0.5:
            a, b = b, a
    else:
        a = g.pick(dtypes, 1, 6)
        b = _partner(g, a, a.dtype)
    out = _broadcast(a.shape, b.shape)
    if len(a.shape) == 0 and len(b.shape) == 0:
        raise Reject("0-d")
    g.node(op, [a, b], {}, [(out, "bool" if op in _COMPARE else a.dtype)])


def b_where(g: _Gen, op: str):
    x1 = g.special_input() if _use_special(g) else g.pick(NUMERIC, 1, 5)
    x2 = _partner(g, x1, x1.dtype)
    shape = _broadcast(x1.shape, x2.shape)
    cands = [v for v in g.live if v.dtype == "bool" and _compatible(v.shape, shape) and v.rank >= 1]
    if cands and g.rng.random() < 0.6:
        cond = g.rng.choice(cands)
    else:
        cond = g.new_input("bool", _bshape(g, shape))
    out = _broadcast(cond.shape, shape)
    g.node(op, [cond, x1, x2], {}, [(out, x1.dtype)])


def b_masked_fill(g: _Gen, op: str):
    x = g.pick(NUMERIC, 1, 5)
    cands = [v for v in g.live if v.dtype == "bool" and 1 <= v.rank <= x.rank
             and _compatible(v.shape, x.shape) and _broadcast(v.shape, x.shape) == x.shape]
    mask = g.rng.choice(cands) if cands and g.rng.random() < 0.6 else g.new_input("bool", _bshape(g, x.shape)[-x.rank:])
    if _broadcast(mask.shape, x.shape) != x.shape:
        raise Reject("mask shape")
    val = g.rand_floats((), -3, 3, x.dtype) if x.dtype in FLOATS else g.rand_ints((), -9, 9, x.dtype)
    value = g.scalar(x.dtype, val)
    g.node(op, [x, mask, value], {}, [(x.shape, x.dtype)])


def b_bias_add(g: _Gen, op: str):
    x = g.pick(NUMERIC, 2, 4)
    axis = g.rng.randrange(x.rank)
    c = x.shape[axis]
    bias = g.rand_values(x.dtype, (c,))
    attrs = {"axis": axis if g.rng.random() < 0.7 else axis - x.rank}
    if g.rng.random() < 0.5:
        g.node(op, [x], attrs, [(x.shape, x.dtype)], weights={"bias": bias}, weight_layouts={"bias": "O"})
    else:
        g.node(op, [x, g.const(bias)], attrs, [(x.shape, x.dtype)])


def _rand_axes(g: _Gen, rank: int, allow_none=True):
    if allow_none and g.rng.random() < 0.2:
        return None, list(range(rank))
    k = g.rng.randint(1, rank)
    axes = sorted(g.rng.sample(range(rank), k))
    written = [a - rank if g.rng.random() < 0.3 else a for a in axes]
    return written, axes


def b_reduce(g: _Gen, op: str):
    dtypes = FLOATS if op in ("mean", "std", "variance") else NUMERIC
    if op == "prod":
        x = g.pick(dtypes, 1, 4, pred=lambda v: v.dtype not in FLOATS or g.in_range(-1.6, 1.6)(v),
                   new=lambda: g.new_input(g.rng.choice(dtypes), g.rand_shape(), 0.6, 1.5))
    else:
        x = g.pick(dtypes, 1, 4)
    written, axes = _rand_axes(g, x.rank)
    keep = g.rng.random() < 0.4
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape)) if keep else \
        tuple(s for i, s in enumerate(x.shape) if i not in axes)
    g.node(op, [x], {"axis": written, "keepdims": keep}, [(shape, x.dtype)])


def b_argreduce(g: _Gen, op: str):
    x = g.special_input() if _use_special(g) else g.pick(NUMERIC, 1, 4)
    keep = g.rng.random() < 0.4
    if g.rng.random() < 0.25:
        axis, shape = None, ((1,) * x.rank if keep else ())
    else:
        ax = g.rng.randrange(x.rank)
        axis = ax - x.rank if g.rng.random() < 0.3 else ax
        shape = tuple(1 if i == ax else s for i, s in enumerate(x.shape)) if keep else \
            tuple(s for i, s in enumerate(x.shape) if i != ax)
    g.node(op, [x], {"axis": axis, "keepdims": keep}, [(shape, "int64")])


def b_cumsum(g: _Gen, op: str):
    x = g.pick(NUMERIC, 1, 4)
    dtype = ""
    if x.dtype == "int32" and g.rng.random() < 0.3:
        dtype = "int64"
    elif x.dtype == "float16" and g.rng.random() < 0.3:
        dtype = "float32"
    if g.rng.random() < 0.25:
        axis, shape = None, (x.numel,)
    else:
        ax = g.rng.randrange(x.rank)
        axis, shape = (ax - x.rank if g.rng.random() < 0.3 else ax), x.shape
    g.node(op, [x], {"axis": axis, "dtype": dtype, "exclusive": g.rng.random() < 0.3},
           [(shape, dtype or x.dtype)])


def b_topk(g: _Gen, op: str):
    x = g.special_input() if _use_special(g) else g.pick(NUMERIC, 1, 4)
    ax = g.rng.randrange(x.rank)
    k = g.rng.randint(1, x.shape[ax])
    ret = g.rng.choice(["both", "both", "values", "indices"])
    idt = g.rng.choice(["int32", "int64"])
    shape = tuple(k if i == ax else s for i, s in enumerate(x.shape))
    outs = {"both": [(shape, x.dtype), (shape, idt)], "values": [(shape, x.dtype)], "indices": [(shape, idt)]}[ret]
    g.node(op, [x], {"k": k, "axis": ax - x.rank if g.rng.random() < 0.5 else ax, "ret_type": ret,
                     "largest": g.rng.random() < 0.7, "dtype": idt}, outs)


def _factor_shape(g: _Gen, numel: int, rank: int) -> Tuple[int, ...]:
    dims = []
    rest = numel
    for i in range(rank - 1):
        divs = [d for d in range(1, rest + 1) if rest % d == 0]
        d = g.rng.choice(divs)
        dims.append(d)
        rest //= d
    dims.append(rest)
    g.rng.shuffle(dims)
    return tuple(dims)


def b_reshape(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 5)
    shape = _factor_shape(g, x.numel, g.rng.randint(1, 4))
    written = list(shape)
    if g.rng.random() < 0.3:
        written[g.rng.randrange(len(written))] = -1
    g.node(op, [x], {"shape": written}, [(shape, x.dtype)])


def b_permute(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 2, 5)
    if g.rng.random() < 0.2:
        axes, written = list(reversed(range(x.rank))), None
    else:
        axes = list(range(x.rank))
        g.rng.shuffle(axes)
        written = axes
    g.node(op, [x], {"axes": written}, [(tuple(x.shape[a] for a in axes), x.dtype)])


def _same_but(g: _Gen, x: Value, axis: Optional[int], n: int) -> List[Value]:
    """n more values with x's dtype and shape (except along `axis`), live or new."""
    out = [x]
    for _ in range(n):
        cands = [v for v in g.live if v.dtype == x.dtype and v.rank == x.rank
                 and all(a == b for i, (a, b) in enumerate(zip(v.shape, x.shape)) if i != axis)]
        if cands and g.rng.random() < 0.5:
            out.append(g.rng.choice(cands))
        else:
            shape = list(x.shape)
            if axis is not None:
                shape[axis] = g.rng.randint(1, 4)
            out.append(g.new_input(x.dtype, shape))
    return out


def b_concat(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 4)
    ax = g.rng.randrange(x.rank)
    parts = _same_but(g, x, ax, g.rng.randint(1, 2))
    g.rng.shuffle(parts)
    shape = list(x.shape)
    shape[ax] = sum(v.shape[ax] for v in parts)
    g.node(op, parts, {"axis": ax - x.rank if g.rng.random() < 0.3 else ax}, [(shape, x.dtype)])


def b_stack(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 3)
    parts = _same_but(g, x, None, g.rng.randint(1, 2))
    ax = g.rng.randint(0, x.rank)
    shape = list(x.shape)
    shape.insert(ax, len(parts))
    g.node(op, parts, {"axis": ax - x.rank - 1 if g.rng.random() < 0.3 else ax}, [(shape, x.dtype)])


def b_squeeze(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 5, pred=lambda v: 1 in v.shape and v.rank >= 2)
    ones = [i for i, s in enumerate(x.shape) if s == 1]
    if not ones:
        raise Reject("no unit dim")
    if g.rng.random() < 0.3:
        axes, shape = None, tuple(s for s in x.shape if s != 1)
    else:
        axes = sorted(g.rng.sample(ones, g.rng.randint(1, len(ones))))
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        axes = [a - x.rank if g.rng.random() < 0.3 else a for a in axes]
    g.node(op, [x], {"axis": axes}, [(shape, x.dtype)])


def b_expand_dims(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 4)
    nd = x.rank + g.rng.randint(1, 2)
    axes = sorted(g.rng.sample(range(nd), nd - x.rank))
    it = iter(x.shape)
    shape = tuple(1 if i in axes else next(it) for i in range(nd))
    g.node(op, [x], {"axis": [a - nd if g.rng.random() < 0.3 else a for a in axes]}, [(shape, x.dtype)])


def b_strided_slice(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 4)
    k = g.rng.randint(1, x.rank)
    axes = sorted(g.rng.sample(range(x.rank), k))
    begin, end, strides, shape = [], [], [], list(x.shape)
    for ax in axes:
        n = x.shape[ax]
        s = g.rng.choice([1, 1, 1, 2, 3, -1, -2])
        if s > 0:
            b = g.rng.randint(0, n - 1)
            e = g.rng.choice([g.rng.randint(b + 1, n), 2 ** 63 - 1, n + 3, -(n - g.rng.randint(b + 1, n)) or n])
        else:
            b = g.rng.randint(0, n - 1)
            e = g.rng.choice([g.rng.randint(-1, b - 1) if b > 0 else -n - 1, -n - 1, -(2 ** 63)])
            if e == -1:
                e = -n - 1
        if g.rng.random() < 0.3:
            b -= n
        begin.append(b)
        end.append(e)
        strides.append(s)
        shape[ax] = len(range(*slice(b, e, s).indices(n)))
    written = list(axes)
    g.node(op, [x], {"axes": written, "begin": begin, "end": end, "strides": strides}, [(shape, x.dtype)])


def b_split(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 4, pred=lambda v: max(v.shape) >= 2)
    cands = [i for i, s in enumerate(x.shape) if s >= 2]
    if not cands:
        raise Reject("nothing to split")
    ax = g.rng.choice(cands)
    n = x.shape[ax]
    if g.rng.random() < 0.5:
        divs = [d for d in range(2, n + 1) if n % d == 0]
        sections = g.rng.choice(divs)
        ios = str(sections)
        sizes = [n // sections] * sections
    else:
        idx = sorted(g.rng.sample(range(1, n), g.rng.randint(1, min(3, n - 1))))
        ios = attr_str(idx)
        sizes = [b - a for a, b in zip([0] + idx, idx + [n])]
    outs = []
    for s in sizes:
        shape = list(x.shape)
        shape[ax] = s
        outs.append((shape, x.dtype))
    parts = g.node(op, [x], {"indices_or_sections": ios, "axis": ax - x.rank if g.rng.random() < 0.3 else ax}, outs)
    if g.rng.random() < 0.4:
        i = g.rng.randrange(len(parts))
        g.node("get_item", parts, {"index": i}, [(parts[i].shape, x.dtype)])


def b_tuple(g: _Gen, op: str):
    xs = [g.pick(NUMERIC + ("bool",), 1, 4) for _ in range(g.rng.randint(1, 3))]
    if len({v.name for v in xs}) != len(xs):
        raise Reject("repeated tuple field")
    fields = g.node(op, xs, {}, [(v.shape, v.dtype) for v in xs])
    i = g.rng.randrange(len(fields))
    g.node("get_item", fields, {"index": i}, [(fields[i].shape, fields[i].dtype)])


def b_get_item(g: _Gen, op: str):
    b_tuple(g, "tuple")


def b_broadcast_to(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 3)
    shape = [s if s != 1 or g.rng.random() < 0.4 else g.rng.randint(2, 4) for s in x.shape]
    lead = [g.rng.randint(1, 3) for _ in range(g.rng.randint(0, 4 - x.rank))] if x.rank < 4 else []
    shape = lead + shape
    g.node(op, [x], {"shape": shape}, [(shape, x.dtype)])


def b_tile(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 3)
    n = g.rng.randint(1, x.rank + 1)
    reps = [g.rng.randint(1, 3) for _ in range(n)]
    nd = max(n, x.rank)
    xs = [1] * (nd - x.rank) + list(x.shape)
    rs = [1] * (nd - n) + reps
    g.node(op, [x], {"repeats": reps}, [([a * b for a, b in zip(xs, rs)], x.dtype)])


def b_repeat(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 4)
    reps = g.rng.randint(1, 3)
    if g.rng.random() < 0.25:
        axis, shape = None, (x.numel * reps,)
    else:
        ax = g.rng.randrange(x.rank)
        shape = list(x.shape)
        shape[ax] *= reps
        axis = ax - x.rank if g.rng.random() < 0.3 else ax
    g.node(op, [x], {"repeats": reps, "axis": axis}, [(shape, x.dtype)])


def b_flip(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 4)
    ax = g.rng.randrange(x.rank)
    g.node(op, [x], {"axis": ax - x.rank if g.rng.random() < 0.3 else ax}, [(x.shape, x.dtype)])


def b_trilu(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 2, 4)
    attrs = {"k": g.rng.randint(-2, 2)}
    if op == "trilu":
        attrs["upper"] = g.rng.random() < 0.5
    g.node(op, [x], attrs, [(x.shape, x.dtype)])


def b_pad(g: _Gen, op: str):
    x = g.pick(("float32",), 1, 4)
    mode = g.rng.choice(["constant", "constant", "edge", "reflect"])
    pw = []
    for s in x.shape:
        lim = s - 1 if mode == "reflect" else 2
        pw += [g.rng.randint(0, min(2, lim)), g.rng.randint(0, min(2, lim))]
    shape = [s + pw[2 * i] + pw[2 * i + 1] for i, s in enumerate(x.shape)]
    g.node(op, [x], {"pad_width": pw, "pad_mode": mode, "pad_value": g.rng.choice([0.0, 1.5, -2.0])},
           [(shape, x.dtype)])


def _index_input(g: _Gen, shape, lo, hi, dtype=None) -> Value:
    return g.new_input(dtype or g.rng.choice(INTS), shape, lo, hi)


def b_take(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 3)
    mode = g.rng.choice(["fast", "fast", "clip", "wrap"])
    if g.rng.random() < 0.25:
        axis, n = None, x.numel
    else:
        ax = g.rng.randrange(x.rank)
        axis, n = ax, x.shape[ax]
    ishape = g.rand_shape(g.rng.randint(1, 2), 12)
    lo, hi = (-n, n - 1) if mode == "fast" else (-n - 3, n + 3)
    idx = _index_input(g, ishape, lo, hi)
    if axis is None:
        shape = list(ishape)
    else:
        shape = list(x.shape[:axis]) + list(ishape) + list(x.shape[axis + 1:])
        axis = axis - x.rank if g.rng.random() < 0.3 else axis
    g.node(op, [x, idx], {"axis": axis, "mode": mode}, [(shape, x.dtype)])


def b_gather_elements(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 4)
    ax = g.rng.randrange(x.rank)
    ishape = [g.rng.randint(1, s) if i != ax else g.rng.randint(1, 4) for i, s in enumerate(x.shape)]
    idx = _index_input(g, ishape, -x.shape[ax], x.shape[ax] - 1)
    g.node(op, [x, idx], {"axis": ax - x.rank if g.rng.random() < 0.3 else ax}, [(ishape, x.dtype)])


def b_gather_nd(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 4)
    b = g.rng.randint(0, x.rank - 1) if x.rank > 1 and g.rng.random() < 0.4 else 0
    m = g.rng.randint(1, x.rank - b)
    mid = [g.rng.randint(1, 3) for _ in range(g.rng.randint(0, 2))]
    ishape = list(x.shape[:b]) + mid + [m]
    vals = np.stack([g.rand_ints(ishape[:-1], -x.shape[b + j], x.shape[b + j] - 1, "int64") for j in range(m)], -1)
    idx = g.new_input(g.rng.choice(INTS), ishape, values=vals)
    shape = ishape[:-1] + list(x.shape[b + m:])
    g.node(op, [x, idx], {"batch_dims": b}, [(shape, x.dtype)])


def b_scatter_elements(g: _Gen, op: str):
    x = g.pick(NUMERIC, 1, 3)
    ax = g.rng.randrange(x.rank)
    red = g.rng.choice(["update", "add", "mul", "mean", "max", "min"])
    if x.dtype not in FLOATS and red == "mean":
        red = "add"
    ishape = [g.rng.randint(1, s) for s in x.shape]
    n = x.shape[ax]
    distinct = red in ("update", "mean")
    if distinct:
        ishape[ax] = g.rng.randint(1, n)
        vals = np.zeros(ishape, np.int64)
        moved = np.moveaxis(vals, ax, -1)
        for pos in np.ndindex(*moved.shape[:-1]):
            moved[pos] = g.np_rng.permutation(n)[:ishape[ax]]
        vals = np.moveaxis(moved, -1, ax)
    else:
        ishape[ax] = g.rng.randint(1, 4)
        vals = g.rand_ints(ishape, 0, n - 1, "int64")
    if g.rng.random() < 0.3:
        vals = np.where(g.np_rng.random(vals.shape) < 0.5, vals - n, vals)
    idx = g.new_input(g.rng.choice(INTS), ishape, values=vals)
    lo, hi = (0.7, 1.4) if red == "mul" else (-3, 3)
    upd = g.new_input(x.dtype, ishape, lo, hi)
    g.node(op, [x, idx, upd], {"axis": ax - x.rank if g.rng.random() < 0.3 else ax, "reduction": red},
           [(x.shape, x.dtype)])


def b_scatter_nd(g: _Gen, op: str):
    x = g.pick(NUMERIC, 1, 3)
    m = g.rng.randint(1, x.rank)
    red = g.rng.choice(["update", "add", "mul", "max", "min"])
    total = int(np.prod(x.shape[:m]))
    cnt = g.rng.randint(1, min(total, 4))
    if red == "update":
        flat = g.np_rng.permutation(total)[:cnt]
    else:
        flat = g.np_rng.integers(0, total, cnt)
    vals = np.stack(np.unravel_index(flat, x.shape[:m]), -1).astype(np.int64)
    lead = [cnt] if g.rng.random() < 0.7 or cnt % 2 else [2, cnt // 2]
    vals = vals.reshape(lead + [m])
    if g.rng.random() < 0.2:
        vals = vals - np.array(x.shape[:m]) * (g.np_rng.random(vals.shape) < 0.5)
    idx = g.new_input(g.rng.choice(INTS), vals.shape, values=vals)
    lo, hi = (0.7, 1.4) if red == "mul" else (-3, 3)
    upd = g.new_input(x.dtype, lead + list(x.shape[m:]), lo, hi)
    g.node(op, [x, idx, upd], {"reduction": red}, [(x.shape, x.dtype)])


def b_one_hot(g: _Gen, op: str):
    depth = g.rng.randint(2, 6)
    shape = g.rand_shape(g.rng.randint(1, 2), 16)
    idx = _index_input(g, shape, 0, depth - 1)
    axis = g.rng.randint(-1, len(shape))
    dt = g.rng.choice(["float32", "float32", "int32"])
    on, off = (g.rng.choice([1.0, 2.5, -1.0]), g.rng.choice([0.0, -0.5, 3.0])) if dt == "float32" else \
        (g.rng.choice([1.0, 7.0]), g.rng.choice([0.0, -2.0]))
    out = list(shape)
    out.insert(axis % (len(shape) + 1), depth)
    g.node(op, [idx], {"depth": depth, "axis": axis, "on_value": on, "off_value": off}, [(out, dt)])


def b_embedding(g: _Gen, op: str):
    vocab, dim = g.rng.randint(3, 10), g.rng.randint(1, 6)
    ids = _index_input(g, g.rand_shape(g.rng.randint(1, 2), 12), 0, vocab - 1)
    g.node(op, [ids], {"axis": 0}, [(list(ids.shape) + [dim], "float32")],
           weights={"weight": g.rand_floats((vocab, dim))})


def b_full(g: _Gen, op: str):
    src = g.rng.choice(NUMERIC)
    fill = g.scalar(src, g.rand_values(src, ()))
    dt = g.rng.choice(["", "", "float32", "int32", "int64"])
    if dt in INTS and src in FLOATS:
        raise Reject("float fill to int")  # truncation of the fill: avoid relying on it
    shape = g.rand_shape()
    g.node(op, [fill], {"shape": list(shape), "dtype": dt}, [(shape, dt or src)])


def b_ones(g: _Gen, op: str):
    dt = g.rng.choice(NUMERIC)
    shape = g.rand_shape()
    g.node(op, [], {"shape": list(shape), "dtype": dt}, [(shape, dt)])


def b_ones_like(g: _Gen, op: str):
    x = g.pick(NUMERIC + ("bool",), 1, 4)
    dt = g.rng.choice(["", ""] + list(NUMERIC))
    g.node(op, [x], {"dtype": dt}, [(x.shape, dt or x.dtype)])


def b_arange(g: _Gen, op: str):
    dt = g.rng.choice(["int64", "int32", "float32"])
    if dt == "float32":
        start = g.rng.choice([0.0, -1.5, 0.25, 2.0])
        step = g.rng.choice([0.5, 0.25, -0.75, 1.0])
        n = g.rng.randint(1, 12)
        end = start + step * (n - 0.5)
    else:
        start = float(g.rng.randint(-5, 5))
        step = float(g.rng.choice([1, 2, 3, -1, -2]))
        n = g.rng.randint(1, 12)
        end = start + step * n - (step / 2 if abs(step) > 1 and g.rng.random() < 0.5 else 0)
    n = max(0, int(math.ceil((end - start) / step)))
    g.node(op, [], {"start": start, "end": end, "step": step, "dtype": dt}, [((n,), dt)])


def b_shape(g: _Gen, op: str):
    shape = list(g.rand_shape())
    g.node(op, [], {"shape": shape}, [((len(shape),), "int64")])


def b_constant(g: _Gen, op: str):
    if g.rng.random() < 0.4:
        dt = g.rng.choice(NUMERIC)
        g.scalar(dt, g.rand_values(dt, ()))
    else:
        dt = g.rng.choice(NUMERIC + ("bool",))
        g.const(g.rand_values(dt, g.rand_shape()))


def b_matmul(g: _Gen, op: str):
    a = g.pick(("float32",), 1, 4)
    k = a.shape[-1]
    if op == "nn.batch_matmul":
        if a.rank != 3:
            a = g.new_input("float32", (g.rng.randint(1, 3), g.rng.randint(1, 5), g.rng.randint(1, 6)))
        bsz, m, k = a.shape
        ta, tb = g.rng.random() < 0.3, g.rng.random() < 0.4
        if ta:
            m, k = k, m
        n = g.rng.randint(1, 6)
        bshape = (bsz, n, k) if tb else (bsz, k, n)
        b = g.new_input("float32", bshape, -1.5, 1.5)
        g.node(op, [a, b], {"transpose_a": ta, "transpose_b": tb, "out_dtype": g.rng.choice(["", "float32"])},
               [((bsz, m, n), "float32")])
        return
    n = g.rng.choice([g.rng.randint(1, 6), g.rng.choice(g.dims)])
    if a.rank == 1:
        bshape = (k, n) if g.rng.random() < 0.7 else (k,)
    else:
        batch = list(a.shape[:-2])
        bb = batch[g.rng.randint(0, len(batch)):] if batch else []
        bb = [1 if g.rng.random() < 0.3 else d for d in bb]
        bshape = tuple(bb) + (k, n) if g.rng.random() < 0.85 else (k,)
    b = g.new_input("float32", bshape, -1.5, 1.5) if g.rng.random() < 0.8 else g.const(g.rand_floats(bshape))
    out = np.matmul(np.zeros(a.shape, np.float32), np.zeros(b.shape, np.float32)).shape
    if not out:
        raise Reject("0-d matmul")
    g.node(op, [a, b], {"out_dtype": g.rng.choice(["", "float32"])}, [(out, "float32")])


def b_linear(g: _Gen, op: str):
    x = g.pick(("float32",), 1, 4)
    i, o = x.shape[-1], g.rng.choice([g.rng.randint(1, 8), g.rng.choice(g.dims)])
    weights = {"weight": g.rand_floats((o, i), -1, 1)}
    attrs = {"out_dtype": g.rng.choice(["", "float32"])}
    if op == "msc.linear_bias":
        weights["bias"] = g.rand_floats((o,), -1, 1)
    if op == "nn.dense":
        attrs = {"units": o if g.rng.random() < 0.7 else None, "out_dtype": attrs["out_dtype"]}
    g.node(op, [x], attrs, [(tuple(x.shape[:-1]) + (o,), "float32")], weights=weights,
           weight_layouts={"weight": "OI", "bias": "O"})


_EINSUM = [
    ("ij,jk->ik", "ij jk"), ("bij,bjk->bik", "bij bjk"), ("ij->ji", "ij"), ("ii->i", "ii"), ("ii->", "ii"),
    ("ijk->j", "ijk"), ("ij,jk", "ij jk"), ("...ij,...jk->...ik", "aij ajk"), ("i,i->", "i i"), ("i,j->ij", "i j"),
    ("bhqd,bhkd->bhqk", "bhqd bhkd"), ("ij,ij->i", "ij ij"), ("ijk,ik->ij", "ijk ik"), ("i,ij,j->", "i ij j"),
    ("ij->", "ij"), ("abc->cab", "abc"),
]


def b_einsum(g: _Gen, op: str):
    eq, labels = g.rng.choice(_EINSUM)
    sizes = {c: g.rng.randint(1, 4) for c in "abcdhijkq"}
    ops = []
    for term in labels.split():
        shape = tuple(sizes[c] for c in term)
        ops.append(g.new_input("float32", shape, -1.5, 1.5) if g.rng.random() < 0.7 else None)
    # reuse a live value of the right shape when there is one
    ops = [v if v is not None else g.pick(("float32",), len(t), len(t),
                                          pred=lambda u, s=tuple(sizes[c] for c in t): u.shape == s,
                                          new=lambda s=tuple(sizes[c] for c in t): g.new_input("float32", s, -1.5, 1.5))
           for v, t in zip(ops, labels.split())]
    out = np.einsum(eq, *[np.zeros(v.shape) for v in ops]).shape
    g.node(op, ops, {"subscripts": eq}, [(out, "float32")])


def _conv_out(n, k, s, d, p0, p1):
    return (n + p0 + p1 - d * (k - 1) - 1) // s + 1


def _nchw_input(g: _Gen, rank: int, max_c=6) -> Value:
    def new():
        shape = (g.rng.randint(1, 2), g.rng.randint(1, max_c)) + tuple(g.rng.randint(3, 9) for _ in range(rank - 2))
        return g.new_input("float32", shape)
    return g.pick(("float32",), rank, rank, pred=lambda v: v.numel <= g.max_numel * 2, new=new, p_new=0.4)


def _pads(g: _Gen, dims: int, kmax: List[int]):
    """MSC padding forms: 1-D [l, r] or [p]; 2-D [t, l, b, r], [h, w] or [p]."""
    form = g.rng.random()
    if dims == 1:
        if form < 0.3:
            p = g.rng.randint(0, kmax[0])
            return [p], (p, p)
        pl, pr = g.rng.randint(0, kmax[0]), g.rng.randint(0, kmax[0])
        return [pl, pr], (pl, pr)
    if form < 0.2:
        p = g.rng.randint(0, min(kmax))
        return [p], (p, p, p, p)
    if form < 0.4:
        ph, pw = g.rng.randint(0, kmax[0]), g.rng.randint(0, kmax[1])
        return [ph, pw], (ph, pw, ph, pw)
    t, lft, b, r = (g.rng.randint(0, kmax[0]), g.rng.randint(0, kmax[1]), g.rng.randint(0, kmax[0]),
                    g.rng.randint(0, kmax[1]))
    return [t, lft, b, r], (t, lft, b, r)


def b_conv(g: _Gen, op: str):
    dims = 1 if "1d" in op else 2
    x = _nchw_input(g, dims + 2)
    c = x.shape[1]
    groups = g.rng.choice([d for d in range(1, c + 1) if c % d == 0]) if g.rng.random() < 0.4 else 1
    o = groups * g.rng.randint(1, 3)
    k = [g.rng.randint(1, min(4, x.shape[2 + i])) for i in range(dims)]
    s = [g.rng.randint(1, 2) for _ in range(dims)]
    d = [g.rng.choice([1, 1, 2]) for _ in range(dims)]
    written, pads = _pads(g, dims, [kk - 1 + 1 for kk in k])
    spatial = []
    for i in range(dims):
        p0, p1 = (pads[0], pads[1]) if dims == 1 else (pads[i], pads[i + 2])
        n = _conv_out(x.shape[2 + i], k[i], s[i], d[i], p0, p1)
        if n < 1:
            raise Reject("conv output empty")
        spatial.append(n)
    w = g.rand_floats((o, c // groups) + tuple(k), -1, 1)
    lay = "NCW" if dims == 1 else "NCHW"
    attrs = {"strides": s, "padding": written, "dilation": d, "groups": groups, "data_layout": lay,
             "kernel_layout": "OIW" if dims == 1 else "OIHW", "out_layout": lay, "out_dtype": g.rng.choice(["", "float32"])}
    out = [((x.shape[0], o) + tuple(spatial), "float32")]
    weights = {"weight": w}
    if op.startswith("msc."):
        weights["bias"] = g.rand_floats((o,), -1, 1)
    if op == "nn.conv1d" and g.rng.random() < 0.3:
        g.node(op, [x, g.const(w)], attrs, out, layout=lay)
        return
    g.node(op, [x], attrs, out, weights=weights, layout=lay,
           weight_layouts={"weight": attrs["kernel_layout"], "bias": "O"})


def b_conv_transpose(g: _Gen, op: str):
    dims = 1 if "1d" in op else 2
    x = _nchw_input(g, dims + 2, 4)
    c = x.shape[1]
    groups = g.rng.choice([d for d in range(1, c + 1) if c % d == 0]) if g.rng.random() < 0.4 else 1
    og = g.rng.randint(1, 3)
    k = [g.rng.randint(1, 3) for _ in range(dims)]
    s = [g.rng.randint(1, 3) for _ in range(dims)]
    d = [g.rng.choice([1, 1, 2]) for _ in range(dims)]
    op_pad = [g.rng.randint(0, s[i] - 1) if g.rng.random() < 0.4 else 0 for i in range(dims)]
    written, pads = _pads(g, dims, [d[i] * (k[i] - 1) for i in range(dims)])
    spatial = []
    for i in range(dims):
        p0, p1 = (pads[0], pads[1]) if dims == 1 else (pads[i], pads[i + 2])
        n = (x.shape[2 + i] - 1) * s[i] - p0 - p1 + d[i] * (k[i] - 1) + op_pad[i] + 1
        if n < 1:
            raise Reject("empty output")
        spatial.append(n)
    w = g.rand_floats((c, og) + tuple(k), -1, 1)
    lay = "NCW" if dims == 1 else "NCHW"
    attrs = {"strides": s, "padding": written, "output_padding": op_pad, "dilation": d, "groups": groups,
             "data_layout": lay, "kernel_layout": "IOW" if dims == 1 else "IOHW", "out_layout": lay,
             "out_dtype": g.rng.choice(["", "float32"])}
    out = [((x.shape[0], og * groups) + tuple(spatial), "float32")]
    if g.rng.random() < 0.3:
        g.node(op, [x, g.const(w)], attrs, out, layout=lay)
    else:
        g.node(op, [x], attrs, out, weights={"weight": w}, layout=lay, weight_layouts={"weight": attrs["kernel_layout"]})


def b_pool(g: _Gen, op: str):
    dims = 1 if "1d" in op else 2
    x = _nchw_input(g, dims + 2)
    k = [g.rng.randint(1, min(3, x.shape[2 + i])) for i in range(dims)]
    s = [g.rng.randint(1, 3) for _ in range(dims)]
    d = [g.rng.choice([1, 1, 2]) for _ in range(dims)]
    written, pads = _pads(g, dims, [kk // 2 for kk in k])
    ceil = g.rng.random() < 0.4
    include = g.rng.random() < 0.5
    spatial = []
    for i in range(dims):
        p0, p1 = (pads[0], pads[1]) if dims == 1 else (pads[i], pads[i + 2])
        n_in = x.shape[2 + i]
        n = (n_in + p0 + p1 - d[i] * (k[i] - 1) - 1 + (s[i] - 1 if ceil else 0)) // s[i] + 1
        if n < 1:
            raise Reject("empty pool")
        for o in range(n):  # every window must overlap the input
            if not any(0 <= o * s[i] - p0 + j * d[i] < n_in for j in range(k[i])):
                raise Reject("window outside the input")
        spatial.append(n)
    lay = "NCW" if dims == 1 else "NCHW"
    same = g.rng.random() < 0.3
    attrs = {"pool_size": k[:1] if same and dims == 2 and k[0] == k[1] else k,
             "strides": s[:1] if same and dims == 2 and s[0] == s[1] else s,
             "dilation": d, "padding": written, "ceil_mode": ceil, "count_include_pad": include,
             "layout": lay, "out_layout": lay}
    g.node(op, [x], attrs, [((x.shape[0], x.shape[1]) + tuple(spatial), "float32")], layout=lay)


def b_adaptive_pool(g: _Gen, op: str):
    dims = 1 if "1d" in op else 2
    x = _nchw_input(g, dims + 2)
    if g.rng.random() < 0.15:
        size, spatial = None, x.shape[2:]
    else:
        spatial = tuple(g.rng.randint(1, x.shape[2 + i] + 1) for i in range(dims))
        size = list(spatial[:1]) if dims == 2 and spatial[0] == spatial[1] and g.rng.random() < 0.5 else list(spatial)
    lay = "NCW" if dims == 1 else "NCHW"
    g.node(op, [x], {"output_size": size, "layout": lay, "out_layout": lay},
           [((x.shape[0], x.shape[1]) + tuple(spatial), "float32")], layout=lay)


def b_batch_norm(g: _Gen, op: str):
    x = g.pick(("float32",), 2, 4)
    axis = 1 if g.rng.random() < 0.8 or x.rank < 2 else g.rng.randrange(x.rank)
    c = x.shape[axis]
    w = {"gamma": g.rand_floats((c,), 0.5, 1.5), "beta": g.rand_floats((c,), -1, 1),
         "mean": g.rand_floats((c,), -1, 1), "var": g.rand_floats((c,), 0.3, 2.0)}
    eps = g.rng.choice([1e-5, 1e-3])
    outs = g.node(op, [x], {"axis": axis, "epsilon": eps, "center": True, "scale": True, "momentum": 0.1,
                            "training": True}, [(x.shape, "float32")], weights=w,
                  weight_layouts={k: "O" for k in w})
    g.node("get_item", outs, {"index": 0}, [(x.shape, "float32")])


def _norm_axes(g: _Gen, x: Value) -> List[int]:
    if g.rng.random() < 0.6:
        n = g.rng.randint(1, x.rank)
        return list(range(x.rank - n, x.rank))
    return sorted(g.rng.sample(range(x.rank), g.rng.randint(1, x.rank)))


def _spread(v: Value) -> bool:
    """Enough spread for a normalization: not a constant row (variance well away from zero)."""
    return v.numel >= 2 and float(v.ref.std()) > 0.2


def b_layer_norm(g: _Gen, op: str):
    x = g.pick(("float32",), 1, 4, pred=_spread)
    axes = _norm_axes(g, x)
    nshape = [x.shape[a] for a in axes]
    affine = g.rng.random() < 0.7
    w = {"gamma": g.rand_floats(nshape, 0.5, 1.5), "beta": g.rand_floats(nshape, -1, 1)} if affine else {}
    written = [a - x.rank if g.rng.random() < 0.3 else a for a in axes]
    g.node(op, [x], {"axes": written, "epsilon": g.rng.choice([1e-5, 1e-3]), "center": affine, "scale": affine},
           [(x.shape, "float32")], weights=w)


def b_group_norm(g: _Gen, op: str):
    x = g.pick(("float32",), 3, 4, pred=_spread, new=lambda: g.new_input(
        "float32", (g.rng.randint(1, 2), g.rng.choice([2, 4, 6]), g.rng.randint(2, 5), g.rng.randint(2, 5))))
    c = x.shape[1]
    groups = g.rng.choice([d for d in range(1, c + 1) if c % d == 0])
    affine = g.rng.random() < 0.7
    w = {"gamma": g.rand_floats((c,), 0.5, 1.5), "beta": g.rand_floats((c,), -1, 1)} if affine else {}
    g.node(op, [x], {"num_groups": groups, "channel_axis": 1, "axes": list(range(2, x.rank)),
                     "epsilon": g.rng.choice([1e-5, 1e-3]), "center": affine, "scale": affine},
           [(x.shape, "float32")], weights=w, layout="NCHW" if x.rank == 4 else "NCW")


def b_rms_norm(g: _Gen, op: str):
    x = g.pick(("float32",), 1, 4, pred=lambda v: float((v.ref ** 2).mean()) > 0.05)
    axes = _norm_axes(g, x)
    nshape = [x.shape[a] for a in axes]
    attrs = {"axes": [a - x.rank if g.rng.random() < 0.3 else a for a in axes],
             "epsilon": g.rng.choice([1e-5, 1e-6, 1e-3])}
    r = g.rng.random()
    if r < 0.5:
        g.node(op, [x], attrs, [(x.shape, "float32")], weights={"weight": g.rand_floats(nshape, 0.5, 1.5)})
    elif r < 0.8:
        g.node(op, [x, g.const(g.rand_floats(nshape, 0.5, 1.5))], attrs, [(x.shape, "float32")])
    else:
        g.node(op, [x], attrs, [(x.shape, "float32")])


def b_softmax(g: _Gen, op: str):
    x = g.pick(("float32",), 1, 4, pred=g.in_range(-30, 30))
    ax = g.rng.randrange(x.rank)
    g.node(op, [x], {"axis": ax - x.rank if g.rng.random() < 0.5 else ax}, [(x.shape, "float32")])


def b_attention(g: _Gen, op: str):
    b, n, sq, skv, h = g.rng.randint(1, 2), g.rng.randint(1, 2), g.rng.randint(1, 5), g.rng.randint(1, 5), g.rng.randint(1, 6)
    hv = h if g.rng.random() < 0.7 else g.rng.randint(1, 6)
    std = (0, 2, 1, 3)
    axes = [std if g.rng.random() < 0.75 else (0, 1, 2, 3) for _ in range(4)]

    def layout(shape_bsnh, ax):  # tensor shape T with T.permute(ax) = [B, S, N, H]
        out = [0] * 4
        for i, a in enumerate(ax):
            out[a] = shape_bsnh[i]
        return tuple(out)
    q = g.new_input("float32", layout((b, sq, n, h), axes[0]), -1.5, 1.5)
    k = g.new_input("float32", layout((b, skv, n, h), axes[1]), -1.5, 1.5)
    v = g.new_input("float32", layout((b, skv, n, hv), axes[2]), -1.5, 1.5)
    ins = [q, k, v]
    causal = g.rng.choice(["", "", "TopLeft", "BottomRight"])
    if g.rng.random() < 0.3:
        mshape = (b if g.rng.random() < 0.5 else 1, n if g.rng.random() < 0.5 else 1, sq, skv)
        ins.append(g.new_input("float32", mshape, -2, 0))
    scale = g.rng.choice([None, None, 0.3, 0.5])
    out_bsnh = (b, sq, n, hv)
    out = [0] * 4
    for i, a in enumerate(axes[3]):
        out[i] = out_bsnh[a]
    attrs = {"axes": list(axes[0]), "axes_1": list(axes[1]), "axes_2": list(axes[2]), "axes_3": list(axes[3]),
             "scale": scale, "causal_mask": causal, "window_size": None}
    if causal:  # every query must see at least one key
        offset = 0 if causal == "TopLeft" else abs(sq - skv)
        if offset < 0 or skv < 1:
            raise Reject("no key")
    g.node(op, ins, attrs, [(tuple(out), "float32")])


def b_resize(g: _Gen, op: str):
    x = _nchw_input(g, 4)
    method = g.rng.choice(["nearest_neighbor", "linear", "cubic"])
    mode = g.rng.choice(["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"])
    if method != "nearest_neighbor" and mode == "tf_half_pixel_for_nn":
        mode = "half_pixel"
    size = [g.rng.randint(1, 2 * x.shape[2]), g.rng.randint(1, 2 * x.shape[3])]
    if mode == "align_corners" and (size[0] == 1 or size[1] == 1):
        raise Reject("align_corners to size 1")
    rounding = g.rng.choice(["", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"]) \
        if method == "nearest_neighbor" else ""
    attrs = {"size": size, "roi": [0.0] * 4, "layout": "NCHW", "method": method,
             "coordinate_transformation_mode": mode, "rounding_method": rounding,
             "cubic_alpha": g.rng.choice([-0.5, -0.75]), "cubic_exclude": int(g.rng.random() < 0.3),
             "extrapolation_value": 0.0, "out_dtype": ""}
    g.node(op, [x], attrs, [((x.shape[0], x.shape[1], size[0], size[1]), "float32")], layout="NCHW")


# ---- unary ops known from their opdef alone -----------------------------------------------------
# A unary_math op (opdefs' traits) with a `reference` (a torch callable) that the tables above do
# not model joins the random graphs by its opdef: inputs drawn from its `domain` (within +-3 for
# new inputs, 5% inside its finite bounds), the domain as its guard, and a generic error budget
# for float32 kernels: 16 ULP of the result plus the input's 16 ULP carried through the slope
# (|x f'(x)|, f' by a central difference of the float64 reference), plus 2e-7 absolute (the
# polynomial approximations of transcendentals, e.g. erf's Abramowitz & Stegun 7.1.26, 1.5e-7).
# An op needing a tighter or looser model gets its own entries above.

def _slope(fn, x):
    x = x.double()
    h = 1e-6 * torch.clamp(x.abs(), min=1.0)
    return (fn(x + h) - fn(x - h)) / (2 * h)


def _generic_amp(fn):
    return _amp_unary(lambda x, y: 16 * ULP * (_a(y) + _a(x) * _slope(fn, x).abs()).to(y.dtype) + 2e-7)


def _opdef_unary_ops():
    from . import opdefs
    for op in opdefs.with_trait("unary_math"):
        ref = opdefs.reference(op)
        if op in _UNARY_FLOAT or ref is None:
            continue
        fn, domain = ref
        lo, hi = domain if domain is not None else (-math.inf, math.inf)
        nlo, nhi = max(lo, -3.0), min(hi, 3.0)
        pad = 0.05 * (nhi - nlo)
        _UNARY_FLOAT[op] = ((nlo + (pad if math.isfinite(lo) else 0.0), nhi - (pad if math.isfinite(hi) else 0.0)),
                            None)
        if domain is not None:
            GUARDS[op] = _domain(lo, hi)
        AMP[op] = _generic_amp(fn)
        ELEMENTWISE_OPS.add(op)


_opdef_unary_ops()

BUILDERS: Dict[str, Callable] = {}
for _op in _UNARY_FLOAT:
    BUILDERS[_op] = b_unary
for _op in ("isfinite", "isinf", "isnan"):
    BUILDERS[_op] = b_predicate
for _op in _BINARY_DTYPES:
    BUILDERS[_op] = b_binary
for _op in ("sum", "prod", "max", "min", "mean", "std", "variance"):
    BUILDERS[_op] = b_reduce
for _op in ("concat", "concatenate"):
    BUILDERS[_op] = b_concat
for _op in ("permute_dims", "transpose"):
    BUILDERS[_op] = b_permute
for _op in ("tril", "triu", "trilu"):
    BUILDERS[_op] = b_trilu
for _op in ("matmul", "msc.matmul", "nn.batch_matmul"):
    BUILDERS[_op] = b_matmul
for _op in ("nn.dense", "msc.linear", "msc.linear_bias"):
    BUILDERS[_op] = b_linear
for _op in ("nn.conv2d", "msc.conv2d_bias", "nn.conv1d", "msc.conv1d_bias"):
    BUILDERS[_op] = b_conv
for _op in ("nn.conv2d_transpose", "nn.conv1d_transpose"):
    BUILDERS[_op] = b_conv_transpose
for _op in ("nn.max_pool2d", "nn.avg_pool2d", "nn.max_pool1d", "nn.avg_pool1d"):
    BUILDERS[_op] = b_pool
for _op in ("nn.adaptive_avg_pool2d", "nn.adaptive_avg_pool1d"):
    BUILDERS[_op] = b_adaptive_pool
for _op in ("nn.softmax", "nn.log_softmax"):
    BUILDERS[_op] = b_softmax
for _op in ("ones", "zeros"):
    BUILDERS[_op] = b_ones
for _op in ("ones_like", "zeros_like"):
    BUILDERS[_op] = b_ones_like
BUILDERS.update({
    "logical_not": b_logical_not, "bitwise_not": b_bitwise_not, "astype": b_astype, "cast": b_astype,
    "where": b_where, "masked_fill": b_masked_fill, "nn.bias_add": b_bias_add, "argmax": b_argreduce,
    "argmin": b_argreduce, "cumsum": b_cumsum, "topk": b_topk, "reshape": b_reshape, "stack": b_stack,
    "squeeze": b_squeeze, "expand_dims": b_expand_dims, "strided_slice": b_strided_slice, "split": b_split,
    "tuple": b_tuple, "get_item": b_get_item, "broadcast_to": b_broadcast_to, "tile": b_tile, "repeat": b_repeat,
    "flip": b_flip, "nn.pad": b_pad, "take": b_take, "gather_elements": b_gather_elements,
    "gather_nd": b_gather_nd, "scatter_elements": b_scatter_elements, "scatter_nd": b_scatter_nd,
    "one_hot": b_one_hot, "msc.embedding": b_embedding, "full": b_full, "arange": b_arange, "shape": b_shape,
    "constant": b_constant, "einsum": b_einsum, "nn.batch_norm": b_batch_norm, "nn.layer_norm": b_layer_norm,
    "nn.group_norm": b_group_norm, "nn.rms_norm": b_rms_norm, "msc.attention": b_attention,
    "image.resize2d": b_resize,
})
OPTYPES = sorted(BUILDERS)


def generate(seed: int, n_ops: Tuple[int, int] = (3, 10), optypes: Optional[Sequence[str]] = None,
             max_numel: int = 256, stats: Optional[Dict[str, collections.Counter]] = None) -> RandomGraph:
    """A random valid graph of n_ops[0]..n_ops[1] op nodes (plus inputs and constants), drawn
    from `optypes` (default: every optype in OPTYPES) uniformly; tensors of up to max_numel
    elements (one graph in four: 16 x max_numel, with dims up to 128). `stats` (optional) collects
    accepted / rejected counts per optype and rejection reasons."""
    big = random.Random(seed ^ 0x5EED).random() < 0.25
    g = _Gen(seed, max_numel * 16 if big else max_numel, big)
    ops = list(optypes or OPTYPES)
    unknown = [o for o in ops if o not in BUILDERS]
    if unknown:
        raise ValueError("randgraph: no generator for optypes %s" % unknown)
    target = g.rng.randint(*n_ops)
    added, attempts = 0, 0
    while added < target and attempts < 25 * target:
        attempts += 1
        op = g.rng.choice(ops)
        cp = g.checkpoint()
        cp_inputs = dict(g.input_values)
        try:
            BUILDERS[op](g, op)
            added += 1
            if stats is not None:
                stats.setdefault(op, collections.Counter())["accepted"] += 1
        except Reject as r:
            g.rollback(cp)
            g.input_values = cp_inputs
            if stats is not None:
                stats.setdefault(op, collections.Counter())["rejected: " + str(r).split(" (")[0]] += 1
    if not any(n.optype not in ("input",) for n in g.nodes):
        g.node("nn.relu", [g.new_input("float32", (2, 3))], {}, [((2, 3), "float32")])
    return g.finish()


def evaluate(graph: dict, weights: Dict[str, np.ndarray], inputs: Dict[str, np.ndarray], seed: int = 0):
    """(expected, tolerance) of every node output of an existing graph (see RandomGraph), with the
    generator's guards; raises Reject when a node is not well defined on these inputs."""
    ev = Evaluator(seed)
    expected, tol = {}, {}
    for nd in graph["nodes"]:
        node = MSCJoint.from_dict(nd)
        if node.optype == "input":
            t = node.outputs[0]
            ev.add_input(t.name, t.dtype, np.asarray(inputs[t.name]))
            continue
        wts = {t.name: weights[t.name] for t in node.weights.values()}
        for v in ev.run(node, wts):
            expected[v.name] = v.ref.numpy()
            if v.dtype in FLOATS:
                tol[v.name] = ev.tolerance(v)
    return expected, tol
