"""A reference interpreter for MSCGraphs (torch functional ops), used to check exports and as the
oracle of the random-graph differential test (tests/difftest).

``run_graph(graph, weights, inputs)`` executes the nodes in order, reading every attribute from
its MSC string form (``"1,1"``, ``"1,"``, ``""``, ``"0.000010"``, ``"1"/"0"``, ``"inf"``) the way a
reader of the format must, and returns ``{output tensor name: np.ndarray}``. Every optype of
opdefs/*.yaml with an inference meaning is covered (all but ``nn.nll_loss`` and ``plugin``).
``run_graph(..., float_dtype=torch.float64)`` computes every floating-point tensor in float64
(inputs, weights and float results of astype / creation ops are widened; integer and bool tensors
keep their dtypes): the exact-arithmetic reference the differential test compares backends with.
Without it, float16 tensors compute their math in float32 rounded back to float16 (torch 1.13 has
no CPU half kernels for most ops), as a backend storing float16 does.

Semantics are TVM v0.20 relax's (python/tvm/relax/op/*, the TOPI legalizations), as opdefs/*.yaml
summarize them. The less obvious ones:

* ``nn.conv2d``/``msc.conv2d_bias``: ``padding`` is ``top,left,bottom,right`` ("p," all four,
  "h,w" symmetric); ``nn.conv1d``: ``left,right``; the weight is a weight or the second input;
  ``msc.conv*_bias`` adds a per-channel bias; ``msc.linear(_bias)``/``nn.dense``: weight ``OI``;
* ``nn.conv{1,2}d_transpose``: weight ``IO[H]W``; the full transposed convolution, extended by
  ``output_padding`` at the end and cropped by ``padding`` (TOPI ``conv2d_transpose_nchw``);
* pooling: TOPI ``pool_impl_nd`` (include/tvm/topi/nn/pooling.h): output size
  ``(in + pads - dilation*(k-1) - 1 [+ stride-1 if ceil_mode]) // stride + 1``; max pads with
  the lowest value; avg divides by the window positions inside the input (``count_include_pad``
  0) or inside the input plus its declared padding (1), at least 1; adaptive pools use torch's
  (= TOPI's) bins ``floor(i*W/o) .. ceil((i+1)*W/o)``;
* ``nn.batch_norm``: uses the ``mean``/``var`` weights (running statistics) whatever ``training``
  says (MSC wrote ``training="1"`` for eval-mode models);
* ``nn.layer_norm``/``nn.group_norm``/``nn.rms_norm``: population variance over ``axes``; gamma/
  beta have the shape of the normalized dims (group_norm: ``[C]``); absent weights are not applied;
* ``divide`` of integers truncates toward zero; ``floor_divide``/``floor_mod`` round toward -inf
  (``floor_mod`` has the divisor's sign); ``round`` is half to even;
* reductions keep the input dtype (``sum`` of int32 is int32); ``std``/``variance`` divide by N;
  ``argmax``/``argmin`` give the first extreme as int64; ``topk`` is sorted with ties in index order;
* ``strided_slice``: numpy slicing per axis (negative steps, clamped bounds);
* ``split``: ``indices_or_sections`` without a comma is a section count, else split indices;
* ``get_item``: ``index`` selects among the inputs; ``tuple``: passes its inputs through;
* ``constant``: its ``const`` weight (0-d stays 0-d);
* ``msc.embedding``: ``weight[indices]`` (indices cast to int32 as the fused ``astype`` does);
* ``msc.attention``: q/k/v permuted by ``axes``/``axes_1``/``axes_2`` to relax's [B, S, N, H],
  then TVM v0.20's ``_te_attention`` (``python/tvm/relax/transform/legalize_ops/nn.py``):
  ``p = q k^T * scale`` (``scale`` "" = 1/sqrt(head_dim)), ``+ mask`` (4th input, broadcast to
  [B, N, S_q, S_kv]), softmax over the keys (``causal_mask`` TopLeft / BottomRight: only keys
  ``j <= i + offset``, offset 0 / |S_q - S_kv|), ``p v``, permuted back by ``axes_3``;
* index ops (``take``, ``gather_*``, ``scatter_*``): negative indices count from the end of the
  indexed dim; ``take`` ``mode`` clip / wrap clamp / wrap them; ``axis`` "" = of the flattened x;
  scatters apply duplicates in index order (``mean``: torch's, the original value counted);
* ``image.resize2d``: TOPI ``resize2d`` (python/tvm/topi/image/resize.py) with the source
  coordinates computed in float32 as TOPI does;
* ``nn.pad``: ``pad_width`` = (before, after) per axis in order, modes constant / edge / reflect
  (numpy.pad's).
"""

from __future__ import annotations

import math
import warnings
from typing import Callable, Dict, List, Mapping, Optional

import numpy as np
import torch
import torch.nn.functional as F

from . import opdefs
from .mscgraph import MSCGraph, MSCJoint


def ints(s: str) -> List[int]:
    return [int(x) for x in s.split(",") if x != ""]


def _float(s: str) -> float:
    return float(s)


def _bool(a: Mapping[str, str], key: str, default: bool) -> bool:
    v = a.get(key, "")
    return default if v == "" else bool(int(v))


def _axes_attr(s: str):
    return None if s == "" else ints(s)


def _opt_int(a: Mapping[str, str], key: str) -> Optional[int]:
    v = a.get(key, "")
    return None if v == "" else int(v)


_TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "float64": torch.float64,
                 "int32": torch.int32, "int64": torch.int64, "bool": torch.bool, "int8": torch.int8,
                 "uint8": torch.uint8, "int16": torch.int16}
_MSC_DTYPES = {v: k for k, v in _TORCH_DTYPES.items()}


def _dtype(name: str, float_dtype: Optional[torch.dtype]) -> torch.dtype:
    """MSC dtype -> torch dtype; floats become `float_dtype` when it is set."""
    dt = _TORCH_DTYPES[name]
    return float_dtype if float_dtype is not None and dt.is_floating_point else dt


# ---- convolution and pooling --------------------------------------------------------------------

def _pad4(p: List[int]) -> List[int]:
    """MSC 2-D padding (length 1, 2 or 4) -> [top, left, bottom, right]."""
    if len(p) == 1:
        return p * 4
    if len(p) == 2:
        return [p[0], p[1], p[0], p[1]]
    return p


def _pad2(p: List[int]) -> List[int]:
    """MSC 1-D padding (length 1 or 2) -> [left, right]."""
    return p * 2 if len(p) == 1 else p


def _sym_pad(pad: List[int], x: torch.Tensor, value: float = 0.0):
    """(top, left, bottom, right) -> torch padding arg, or pre-pad x when asymmetric."""
    top, left, bottom, right = pad
    if top == bottom and left == right:
        return x, (top, left)
    return F.pad(x, (left, right, top, bottom), value=value), (0, 0)


def _conv2d(node: MSCJoint, x, w, b=None):
    x, pad = _sym_pad(_pad4(ints(node.attrs["padding"])), x)
    return F.conv2d(x, w, b, tuple(ints(node.attrs["strides"])), pad, tuple(ints(node.attrs["dilation"])),
                    int(node.attrs["groups"]))


def _conv1d(node: MSCJoint, x, w, b=None):
    p = _pad2(ints(node.attrs["padding"]))
    if p[0] != p[1]:
        x = F.pad(x, (p[0], p[1]))
        p = [0, 0]
    return F.conv1d(x, w, b, tuple(ints(node.attrs["strides"])), p[0], tuple(ints(node.attrs["dilation"])),
                    int(node.attrs["groups"]))


def _conv_transpose(node: MSCJoint, x, w, dims: int):
    """TOPI conv{1,2}d_transpose: full transposed conv, + output_padding zeros at the end, cropped
    by padding (before, after) per spatial dim."""
    a = node.attrs
    strides, dilation = ints(a["strides"]), ints(a["dilation"])
    groups = int(a.get("groups", "1") or 1)
    outpad = ints(a.get("output_padding", "")) or [0] * dims
    if len(outpad) == 1 and dims == 2:
        outpad = outpad * 2
    if dims == 2:
        pt, pl, pb, pr = _pad4(ints(a["padding"]))
        pads = [(pt, pb), (pl, pr)]
        full = F.conv_transpose2d(x, w, None, tuple(strides), 0, 0, groups, tuple(dilation))
    else:
        pl, pr = _pad2(ints(a["padding"]))
        pads = [(pl, pr)]
        full = F.conv_transpose1d(x, w, None, tuple(strides), 0, 0, groups, tuple(dilation))
    for i in range(dims):
        axis = 2 + i
        if outpad[i]:
            shape = list(full.shape)
            shape[axis] = outpad[i]
            full = torch.cat([full, full.new_zeros(shape)], axis)
        before, after = pads[i]
        full = full.narrow(axis, before, full.shape[axis] - before - after)
    return full


def _window_index(n_in: int, k: int, s: int, d: int, head: int, tail: int, ceil: bool):
    """Per output position o and tap j: the input index o*s - head + j*d, whether it is inside the
    input, and whether it is inside the input plus its declared padding (TOPI pool_impl_nd)."""
    numer = n_in + head + tail - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    n_out = numer // s + 1
    pos = torch.arange(n_out).reshape(-1, 1) * s - head + torch.arange(k).reshape(1, -1) * d
    inside = (pos >= 0) & (pos < n_in)
    padded = pos < n_in + tail
    return pos.clamp(0, n_in - 1), inside, padded


def _pool(node: MSCJoint, x: torch.Tensor, is_max: bool, dims: int) -> torch.Tensor:
    """max / avg pooling over the last `dims` (1 or 2) axes, TOPI's semantics."""
    a = node.attrs
    k = ints(a.get("pool_size", "1,"))
    s = ints(a.get("strides", "")) or [1]
    d = ints(a.get("dilation", "")) or [1]
    if dims == 2:
        k, s, d = (v * 2 if len(v) == 1 else v for v in (k, s, d))
        pt, pl, pb, pr = _pad4(ints(a.get("padding", "")) or [0])
        pads = [(pt, pb), (pl, pr)]
    else:
        pads = [tuple(_pad2(ints(a.get("padding", "")) or [0]))]
    ceil = _bool(a, "ceil_mode", False)
    include = _bool(a, "count_include_pad", False)
    if dims == 1:
        x = x.unsqueeze(-2)
        k, s, d, pads = [1] + k, [1] + s, [1] + d, [(0, 0)] + pads
    ih, iw = x.shape[-2], x.shape[-1]
    hi, hin, hpad = _window_index(ih, k[0], s[0], d[0], pads[0][0], pads[0][1], ceil)
    wi, win, wpad = _window_index(iw, k[1], s[1], d[1], pads[1][0], pads[1][1], ceil)
    # [.., OH, KH, W] -> [.., OH, KH, OW, KW]
    g = x[..., hi, :][..., wi]
    inside = hin[:, :, None, None] & win[None, None, :, :]
    if is_max:
        low = torch.finfo(x.dtype).min if x.dtype.is_floating_point else torch.iinfo(x.dtype).min
        y = torch.where(inside, g, torch.tensor(low, dtype=x.dtype)).amax(dim=(-3, -1))
    else:
        total = torch.where(inside, g, torch.zeros((), dtype=x.dtype)).sum(dim=(-3, -1))
        region = (hpad[:, :, None, None] & wpad[None, None, :, :]) if include else inside
        count = region.sum(dim=(1, 3)).clamp(min=1).to(x.dtype)
        y = total / count
    return y.squeeze(-2) if dims == 1 else y


def _adaptive_size(a: Mapping[str, str], x: torch.Tensor, dims: int) -> List[int]:
    size = ints(a.get("output_size", ""))
    if not size:
        return list(x.shape[-dims:])
    return size * dims if len(size) == 1 else size


# ---- normalization ------------------------------------------------------------------------------

def _normalize(x: torch.Tensor, dims: List[int], eps: float) -> torch.Tensor:
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps)


def _layer_norm(a: Mapping[str, str], x: torch.Tensor, w: Mapping[str, torch.Tensor]) -> torch.Tensor:
    axes = sorted(v % x.dim() for v in ints(a["axes"]))
    y = _normalize(x, axes, _float(a.get("epsilon", "0.00001")))
    shape = [x.shape[i] if i in axes else 1 for i in range(x.dim())]
    if "gamma" in w:
        y = y * w["gamma"].reshape(shape)
    if "beta" in w:
        y = y + w["beta"].reshape(shape)
    return y


def _group_norm(a: Mapping[str, str], x: torch.Tensor, w: Mapping[str, torch.Tensor]) -> torch.Tensor:
    groups = int(a["num_groups"])
    c = int(a.get("channel_axis", "1")) % x.dim()
    axes = [v % x.dim() for v in ints(a["axes"])]
    xs = x.unflatten(c, (groups, x.shape[c] // groups))
    dims = [c + 1] + [v + 1 if v > c else v for v in axes]
    y = _normalize(xs, dims, _float(a.get("epsilon", "0.00001"))).flatten(c, c + 1)
    shape = [x.shape[i] if i == c else 1 for i in range(x.dim())]
    if "gamma" in w:
        y = y * w["gamma"].reshape(shape)
    if "beta" in w:
        y = y + w["beta"].reshape(shape)
    return y


def _rms_norm(a: Mapping[str, str], x: torch.Tensor, weight: Optional[torch.Tensor]) -> torch.Tensor:
    axes = sorted(v % x.dim() for v in (ints(a.get("axes", "")) or [-1]))
    y = x / torch.sqrt((x * x).mean(dim=axes, keepdim=True) + _float(a.get("epsilon", "0.00001")))
    if weight is not None:
        y = y * weight.reshape([x.shape[i] if i in axes else 1 for i in range(x.dim())])
    return y


# ---- attention, indexing ------------------------------------------------------------------------

def _attention(node: MSCJoint, args: List[torch.Tensor]) -> torch.Tensor:
    a = node.attrs
    axes = [ints(a.get(k, "0,2,1,3") or "0,2,1,3") for k in ("axes", "axes_1", "axes_2", "axes_3")]
    q, k, v = (t.permute(*ax) for t, ax in zip(args[:3], axes[:3]))  # relax layout [B, S, N, H]
    q, k, v = (t.permute(0, 2, 1, 3) for t in (q, k, v))               # [B, N, S, H]
    p = torch.matmul(q, k.transpose(-1, -2))
    scale = a.get("scale", "")
    p = p * _float(scale) if scale != "" else p / torch.sqrt(torch.tensor(float(q.shape[-1]), dtype=p.dtype))
    if len(args) > 3:
        p = p + args[3]
    causal = a.get("causal_mask", "")
    if causal:
        s_q, s_kv = p.shape[-2], p.shape[-1]
        offset = 0 if causal == "TopLeft" else abs(s_q - s_kv)
        keep = torch.ones(s_q, s_kv, dtype=torch.bool).tril(offset)
        p = p.masked_fill(~keep, float("-inf"))
    out = torch.matmul(torch.softmax(p, dim=-1), v).permute(0, 2, 1, 3)  # relax layout [B, S, N, H]
    return out.permute(*axes[3])


def _norm_index(idx: torch.Tensor, n: int) -> torch.Tensor:
    idx = idx.long()
    return torch.where(idx < 0, idx + n, idx)


def _take(x: torch.Tensor, idx: torch.Tensor, axis_attr: str, mode: str = "fast") -> torch.Tensor:
    if axis_attr == "":
        src, axis = x.reshape(-1), 0
    else:
        src, axis = x, int(axis_attr) % x.dim()
    n = src.shape[axis]
    idx = idx.long()
    if mode == "clip":
        flat = idx.clamp(0, n - 1)
    elif mode == "wrap":
        flat = torch.remainder(idx, n)
    else:
        flat = _norm_index(idx, n)
    out = src.index_select(axis, flat.reshape(-1))
    return out.reshape(list(src.shape[:axis]) + list(idx.shape) + list(src.shape[axis + 1:]))


def _gather_nd(x: torch.Tensor, idx: torch.Tensor, batch_dims: int) -> torch.Tensor:
    m = idx.shape[-1]
    bshape = list(x.shape[:batch_dims])
    nb = int(np.prod(bshape)) if bshape else 1
    xr = x.reshape([nb] + list(x.shape[batch_dims:]))
    ir = idx.long().reshape(nb, -1, m)
    cols = [_norm_index(ir[..., j], xr.shape[1 + j]) for j in range(m)]
    out = xr[(torch.arange(nb).reshape(-1, 1),) + tuple(cols)]
    return out.reshape(list(idx.shape[:-1]) + list(x.shape[batch_dims + m:]))


_SCATTER_REDUCE = {"add": "sum", "mul": "prod", "mean": "mean", "max": "amax", "min": "amin"}


def _scatter_elements(x, idx, upd, axis: int, reduction: str):
    axis %= x.dim()
    idx = _norm_index(idx, x.shape[axis])
    if reduction == "update":
        return x.scatter(axis, idx, upd)
    with warnings.catch_warnings():  # torch 1.13: "scatter_reduce() is in beta"
        warnings.simplefilter("ignore", UserWarning)
        return x.scatter_reduce(axis, idx, upd, _SCATTER_REDUCE[reduction], include_self=True)


def _scatter_nd(x, idx, upd, reduction: str):
    out = x.clone()
    m = idx.shape[-1]
    flat_idx = idx.long().reshape(-1, m)
    flat_upd = upd.reshape([flat_idx.shape[0]] + list(x.shape[m:]))
    for i in range(flat_idx.shape[0]):
        dst = tuple(int(v) + (x.shape[j] if int(v) < 0 else 0) for j, v in enumerate(flat_idx[i]))
        u = flat_upd[i]
        if reduction == "update":
            out[dst] = u
        elif reduction == "add":
            out[dst] = out[dst] + u
        elif reduction == "mul":
            out[dst] = out[dst] * u
        elif reduction == "max":
            out[dst] = torch.maximum(out[dst], u)
        else:
            out[dst] = torch.minimum(out[dst], u)
    return out


def _strided_slice(x: torch.Tensor, a: Mapping[str, str]) -> torch.Tensor:
    axes, begin, end = ints(a["axes"]), ints(a["begin"]), ints(a["end"])
    strides = ints(a.get("strides", "")) or [1] * len(axes)
    y = x
    for ax, b, e, s in zip(axes, begin, end, strides):
        ax %= x.dim()
        idx = list(range(*slice(b, e, s).indices(x.shape[ax])))
        y = y.index_select(ax, torch.tensor(idx, dtype=torch.long))
    return y


# ---- image.resize2d (TOPI python/tvm/topi/image/resize.py) --------------------------------------

def _resize_taps(n_in: int, n_out: int, method: str, mode: str, rounding: str, alpha: float,
                 exclude: int):
    """Per output index: input indices [n_out, taps] and weights [n_out, taps] (float64)."""
    f32 = np.float32
    x = np.arange(n_out)
    scale = f32(n_in) / f32(n_out)
    if mode == "half_pixel":
        src = (x.astype(f32) + f32(0.5)) * scale - f32(0.5)
    elif mode == "align_corners":
        src = (f32(n_in - 1) / f32(n_out - 1) if n_out > 1 else f32(0)) * x.astype(f32)
    elif mode == "asymmetric":
        src = scale * x.astype(f32)
    elif mode == "pytorch_half_pixel":
        src = (x.astype(f32) + f32(0.5)) * scale - f32(0.5) if n_out > 1 else np.zeros(n_out, f32)
    else:  # tf_half_pixel_for_nn
        src = (x.astype(f32) + f32(0.5)) * scale
    src = src.astype(f32)
    if method == "nearest_neighbor":
        if mode == "asymmetric" and n_out % n_in == 0:
            idx = x // (n_out // n_in)
        else:
            r = rounding or ("round" if mode == "align_corners" else "floor")
            s64 = src.astype(np.float64)
            if r == "round":
                idx = np.where(s64 >= 0, np.floor(s64 + 0.5), -np.floor(-s64 + 0.5))
            elif r == "round_prefer_floor":
                idx = np.ceil(s64 - 0.5)
            elif r == "round_prefer_ceil":
                idx = np.floor(s64 + 0.5)
            elif r == "floor":
                idx = np.floor((src + f32(1e-5)).astype(np.float64))
            else:
                idx = np.ceil((src - f32(1e-5)).astype(np.float64))
        idx = np.clip(idx.astype(np.int64), 0, n_in - 1).reshape(-1, 1)
        return idx, np.ones_like(idx, dtype=np.float64)
    base = np.floor(src.astype(np.float64)).astype(np.int64)
    t = src.astype(np.float64) - base
    if method == "linear":
        idx = np.stack([base, base + 1], 1)
        w = np.stack([1 - t, t], 1)
    else:
        t2, t3 = t * t, t * t * t
        w = np.stack([alpha * (t3 - 2 * t2 + t), (alpha + 2) * t3 - (3 + alpha) * t2 + 1,
                      -(alpha + 2) * t3 + (3 + 2 * alpha) * t2 - alpha * t, -alpha * t3 + alpha * t2], 1)
        idx = np.stack([base - 1, base, base + 1, base + 2], 1)
        if exclude:
            w = np.where((idx < 0) | (idx >= n_in), 0.0, w)
            w = w / w.sum(1, keepdims=True)
    return np.clip(idx, 0, n_in - 1), w


def _resize2d(x: torch.Tensor, a: Mapping[str, str]) -> torch.Tensor:
    size = ints(a["size"])
    oh, ow = size * 2 if len(size) == 1 else size
    method = a.get("method", "linear") or "linear"
    mode = a.get("coordinate_transformation_mode", "half_pixel") or "half_pixel"
    rounding = a.get("rounding_method", "")
    alpha = _float(a.get("cubic_alpha", "-0.5") or "-0.5")
    exclude = int(a.get("cubic_exclude", "0") or 0)
    hi, hw = _resize_taps(x.shape[2], oh, method, mode, rounding, alpha, exclude)
    wi, ww = _resize_taps(x.shape[3], ow, method, mode, rounding, alpha, exclude)
    g = x[:, :, torch.from_numpy(hi)][..., torch.from_numpy(wi)]  # [N, C, OH, TH, OW, TW]
    wt = torch.from_numpy(hw)[:, :, None, None] * torch.from_numpy(ww)[None, None, :, :]
    return (g.to(torch.float64) * wt).sum(dim=(3, 5)).to(x.dtype)


# ---- elementwise tables -------------------------------------------------------------------------

# Float unary ops: every `unary_math` op whose opdef names its PyTorch `reference`
# (opdefs/*.yaml), and those whose reference needs an argument.
_UNARY: Dict[str, Callable] = {op: ref[0] for op in opdefs.with_trait("unary_math")
                               if (ref := opdefs.reference(op))}
_UNARY.update({"nn.gelu_tanh": lambda v: F.gelu(v, approximate="tanh"),
               "msc.gelu": lambda v: F.gelu(v, approximate="tanh")})
# integer inputs: these are exact (ceil/floor/round are the identity)
_INT_UNARY: Dict[str, Callable] = {
    "abs": torch.abs, "negative": torch.neg, "sign": torch.sign, "square": lambda v: v * v,
    "nn.relu": lambda v: torch.clamp(v, min=0), "ceil": torch.clone, "floor": torch.clone, "round": torch.clone,
}
_PREDICATES: Dict[str, Callable] = {"isfinite": torch.isfinite, "isinf": torch.isinf, "isnan": torch.isnan}
_COMPARE: Dict[str, Callable] = {
    "equal": torch.eq, "not_equal": torch.ne, "less": torch.lt, "less_equal": torch.le, "greater": torch.gt,
    "greater_equal": torch.ge, "logical_and": torch.logical_and, "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor}
_BINARY: Dict[str, Callable] = {
    "add": torch.add, "subtract": torch.sub, "multiply": torch.mul, "maximum": torch.maximum,
    "minimum": torch.minimum, "power": torch.pow, "floor_mod": torch.remainder,
    "floor_divide": lambda p, q: torch.div(p, q, rounding_mode="floor"),
    "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor}


def _half_math(fn: Callable, *args: torch.Tensor) -> torch.Tensor:
    """fn on float16 tensors computed in float32 and rounded back (CPU torch lacks half kernels)."""
    if any(t.dtype == torch.float16 for t in args):
        out = fn(*[t.float() if t.dtype == torch.float16 else t for t in args])
        return out.half() if out.dtype == torch.float32 else out
    return fn(*args)


def _reduce(op: str, x: torch.Tensor, a: Mapping[str, str]) -> torch.Tensor:
    axes = _axes_attr(a.get("axis", ""))
    keep = _bool(a, "keepdims", False)
    dims = sorted({v % x.dim() for v in axes}) if axes else list(range(x.dim()))
    if not dims:
        return x.clone()
    if op == "sum":
        y = _half_math(lambda t: t.sum(dim=dims, keepdim=True, dtype=t.dtype), x)
    elif op == "prod":
        def prod(t):
            for d in dims:
                t = t.prod(d, keepdim=True, dtype=t.dtype)
            return t
        y = _half_math(prod, x)
    elif op == "max":
        y = x.amax(dim=dims, keepdim=True)
    elif op == "min":
        y = x.amin(dim=dims, keepdim=True)
    elif op == "mean":
        y = _half_math(lambda t: t.mean(dim=dims, keepdim=True), x)
    elif op == "variance":
        y = _half_math(lambda t: t.var(dim=dims, unbiased=False, keepdim=True), x)
    else:
        y = _half_math(lambda t: t.std(dim=dims, unbiased=False, keepdim=True), x)
    return y if keep else y.reshape([s for i, s in enumerate(x.shape) if i not in dims])


def _argreduce(op: str, x: torch.Tensor, a: Mapping[str, str]) -> torch.Tensor:
    axis = _opt_int(a, "axis")
    keep = _bool(a, "keepdims", False)
    fn = torch.argmax if op == "argmax" else torch.argmin
    src = x.float() if x.dtype == torch.float16 else x
    if axis is None:
        y = fn(src.reshape(-1))
        return y.reshape([1] * x.dim()) if keep else y
    return fn(src, axis % x.dim(), keepdim=keep)


def _topk(a: Mapping[str, str], x: torch.Tensor, fd) -> List[torch.Tensor]:
    k = int(a.get("k", "1") or 1)
    axis = int(a.get("axis", "-1") or -1) % x.dim()
    largest = _bool(a, "largest", True)
    src = x.float() if x.dtype == torch.float16 else x
    _, order = torch.sort(src, dim=axis, descending=largest, stable=True)
    idx = order.narrow(axis, 0, k)
    vals = x.gather(axis, idx)
    idx = idx.to(_dtype(a.get("dtype", "int32") or "int32", fd))
    ret = a.get("ret_type", "both") or "both"
    return [vals, idx] if ret == "both" else [vals] if ret == "values" else [idx]


def _cumsum(a: Mapping[str, str], x: torch.Tensor, fd) -> torch.Tensor:
    axis = _opt_int(a, "axis")
    dt = _dtype(a["dtype"], fd) if a.get("dtype", "") else x.dtype
    src = x.reshape(-1) if axis is None else x
    ax = 0 if axis is None else axis % x.dim()
    y = _half_math(lambda t: torch.cumsum(t.to(dt) if dt != torch.float16 else t, ax), src).to(dt)
    if _bool(a, "exclusive", False):  # TOPI's scan: only the earlier terms (no inclusive - x)
        y = torch.cat([torch.zeros_like(y.narrow(ax, 0, 1)), y.narrow(ax, 0, y.shape[ax] - 1)], ax)
    return y


def _pad(a: Mapping[str, str], x: torch.Tensor) -> torch.Tensor:
    pw = ints(a["pad_width"])
    mode = a.get("pad_mode", "constant") or "constant"
    pairs = [(pw[2 * i], pw[2 * i + 1]) for i in range(x.dim())]
    if mode == "constant":
        torch_pad = [p for i in reversed(range(x.dim())) for p in (pw[2 * i], pw[2 * i + 1])]
        return F.pad(x, torch_pad, value=_float(a.get("pad_value", "0") or "0"))
    return torch.from_numpy(np.pad(x.numpy(), pairs, mode=mode))


def _split(a: Mapping[str, str], x: torch.Tensor) -> List[torch.Tensor]:
    axis = int(a.get("axis", "0") or 0) % x.dim()
    ios = a["indices_or_sections"]
    if "," in ios:
        bounds = [0] + [min(max(v, 0), x.shape[axis]) for v in ints(ios)] + [x.shape[axis]]
        return [x.narrow(axis, lo, max(hi - lo, 0)) for lo, hi in zip(bounds[:-1], bounds[1:])]
    n = int(ios)
    size = -(-x.shape[axis] // n)
    return [x.narrow(axis, min(i * size, x.shape[axis]), max(0, min(size, x.shape[axis] - i * size)))
            for i in range(n)]


# ---- the interpreter ----------------------------------------------------------------------------

def run_node(node: MSCJoint, args: List[torch.Tensor], w: Mapping[str, torch.Tensor],
             float_dtype: Optional[torch.dtype] = None, out_shapes: Optional[List[List[int]]] = None
             ) -> List[torch.Tensor]:
    """The outputs of one node. `float_dtype` (e.g. torch.float64): the dtype every float tensor
    is computed in (inputs and weights must already be in it). `out_shapes`: the outputs' shapes
    with dynamic dims resolved (a reshape's `shape` attr holds -1 for each of them)."""
    a, op, fd = node.attrs, node.optype, float_dtype
    x = args[0] if args else None
    if op == "constant":
        return [w["const"]]
    if op in ("tuple",):
        return list(args)
    if op == "get_item":
        return [args[int(a["index"])]]
    if op in _UNARY:
        if not x.dtype.is_floating_point:
            if op in _INT_UNARY:
                return [_INT_UNARY[op](x)]
            raise NotImplementedError(f"interp: {op} of {x.dtype} (node {node.name!r})")
        return [_half_math(_UNARY[op], x)]
    if op in _PREDICATES:
        return [_PREDICATES[op](x)]
    if op == "logical_not":
        return [torch.logical_not(x)]
    if op == "bitwise_not":
        return [torch.bitwise_not(x)]
    if op == "nn.leakyrelu":
        return [_half_math(lambda v: F.leaky_relu(v, _float(a.get("alpha", "0.01") or "0.01")), x)]
    if op == "nn.softplus":
        beta = _float(a.get("beta", "1") or "1")
        threshold = _float(a.get("threshold", "20") or "20")
        return [_half_math(lambda v: F.softplus(v, beta, threshold), x)]
    if op == "clip":
        lo, hi = _float(a["min"]), _float(a["max"])
        if not x.dtype.is_floating_point:  # integer bounds (TVM casts them to the dtype)
            info = torch.iinfo(x.dtype)
            lo = info.min if math.isinf(lo) else int(lo)
            hi = info.max if math.isinf(hi) else int(hi)
            return [torch.clamp(x, lo, hi)]
        return [x.clone() if math.isinf(lo) and math.isinf(hi) and lo < 0 < hi
                else _half_math(lambda v: torch.clamp(v, lo, hi), x)]
    if op in ("astype", "cast"):
        return [x.to(_dtype(a["dtype"], fd))]
    if op == "divide":
        if not args[0].dtype.is_floating_point:
            return [torch.div(args[0], args[1], rounding_mode="trunc")]
        return [_half_math(torch.div, args[0], args[1])]
    if op in _BINARY:
        if args[0].dtype.is_floating_point:
            return [_half_math(_BINARY[op], args[0], args[1])]
        return [_BINARY[op](args[0], args[1])]
    if op in _COMPARE:
        return [_COMPARE[op](args[0], args[1])]
    if op == "where":
        return [torch.where(args[0].bool(), args[1], args[2])]
    if op == "masked_fill":
        return [torch.where(args[1].bool(), args[2].to(x.dtype), x)]
    if op == "nn.bias_add":
        bias = args[1] if len(args) > 1 else w["bias"]
        axis = int(a.get("axis", "1") or 1) % x.dim()
        return [x + bias.reshape([x.shape[i] if i == axis else 1 for i in range(x.dim())])]
    if op in ("triu", "tril", "trilu"):
        upper = op == "triu" or (op == "trilu" and _bool(a, "upper", True))
        return [(torch.triu if upper else torch.tril)(x, int(a.get("k", "0") or 0))]
    # reductions, scans, sorting
    if op in ("sum", "prod", "max", "min", "mean", "std", "variance"):
        return [_reduce(op, x, a)]
    if op in ("argmax", "argmin"):
        return [_argreduce(op, x, a)]
    if op == "cumsum":
        return [_cumsum(a, x, fd)]
    if op == "topk":
        return _topk(a, x, fd)
    if op == "einsum":
        return [_half_math(lambda *t: torch.einsum(a["subscripts"], *t), *args)]
    # shape and data movement
    if op == "reshape":
        return [x.reshape(out_shapes[0] if out_shapes else ints(a["shape"]))]
    if op in ("permute_dims", "transpose"):
        axes = _axes_attr(a.get("axes", ""))
        return [x.permute(*(axes if axes is not None else reversed(range(x.dim()))))]
    if op in ("concat", "concatenate"):
        return [torch.cat(args, int(a.get("axis", "0") or 0))]
    if op == "stack":
        return [torch.stack(args, int(a.get("axis", "0") or 0))]
    if op == "squeeze":
        axes = _axes_attr(a.get("axis", ""))
        if axes is None:
            return [x.reshape([s for s in x.shape if s != 1])]
        drop = {v % x.dim() for v in axes}
        return [x.reshape([s for i, s in enumerate(x.shape) if i not in drop])]
    if op == "expand_dims":
        y = x
        nd = x.dim() + len(ints(a["axis"]))
        for ax in sorted(v % nd for v in ints(a["axis"])):
            y = y.unsqueeze(ax)
        return [y]
    if op == "strided_slice":
        return [_strided_slice(x, a)]
    if op == "split":
        return _split(a, x)
    if op == "broadcast_to":
        return [torch.broadcast_to(x, ints(a["shape"])).clone()]
    if op == "tile":
        return [torch.tile(x, tuple(ints(a["repeats"])))]
    if op == "repeat":
        axis = _opt_int(a, "axis")
        reps = int(a["repeats"])
        return [torch.repeat_interleave(x.reshape(-1), reps) if axis is None
                else torch.repeat_interleave(x, reps, axis % x.dim())]
    if op == "flip":
        return [torch.flip(x, [int(a["axis"]) % x.dim()])]
    if op == "nn.pad":
        return [_pad(a, x)]
    # indexing
    if op == "take":
        return [_take(args[0], args[1], a.get("axis", ""), a.get("mode", "fast") or "fast")]
    if op == "msc.embedding":
        return [F.embedding(x.to(torch.int32).long(), w["weight"])]
    if op == "gather_elements":
        axis = int(a.get("axis", "0") or 0) % x.dim()
        return [torch.gather(x, axis, _norm_index(args[1], x.shape[axis]))]
    if op == "gather_nd":
        return [_gather_nd(x, args[1], int(a.get("batch_dims", "0") or 0))]
    if op == "scatter_elements":
        return [_scatter_elements(x, args[1], args[2], int(a.get("axis", "0") or 0),
                                  a.get("reduction", "update") or "update")]
    if op == "scatter_nd":
        return [_scatter_nd(x, args[1], args[2], a.get("reduction", "update") or "update")]
    if op == "one_hot":
        depth, axis = int(a["depth"]), int(a.get("axis", "-1") or -1)
        dt = _dtype(node.outputs[0].dtype, fd)
        hot = F.one_hot(x.long().clamp(min=0), depth).bool() & (x.long() >= 0).unsqueeze(-1)
        y = torch.where(hot, torch.tensor(_float(a.get("on_value", "1"))), torch.tensor(_float(a.get("off_value", "0"))))
        return [y.movedim(-1, axis % (x.dim() + 1)).to(dt)]
    # creation
    if op == "full":
        dt = _dtype(a["dtype"], fd) if a.get("dtype", "") else x.dtype
        return [torch.full(ints(a["shape"]), 0, dtype=dt) + x.to(dt)]
    if op in ("ones", "zeros"):
        dt = _dtype(a.get("dtype", "float32") or "float32", fd)
        return [(torch.ones if op == "ones" else torch.zeros)(ints(a["shape"]), dtype=dt)]
    if op in ("ones_like", "zeros_like"):
        dt = _dtype(a["dtype"], fd) if a.get("dtype", "") else x.dtype
        return [(torch.ones if op == "ones_like" else torch.zeros)(list(x.shape), dtype=dt)]
    if op == "arange":
        start, end = _float(a.get("start", "0") or "0"), _float(a["end"])
        step = _float(a.get("step", "1") or "1")
        dt = _dtype(a.get("dtype", "int64") or "int64", fd)
        n = max(0, int(math.ceil((end - start) / step)))
        vals = torch.tensor([start + i * step for i in range(n)], dtype=torch.float64)
        return [vals.to(dt) if dt.is_floating_point else vals.round().to(dt)]
    if op == "shape":
        return [torch.tensor(ints(a["shape"]), dtype=torch.int64)]
    # nn
    if op == "nn.conv2d":
        return [_conv2d(node, x, w["weight"])]
    if op == "msc.conv2d_bias":
        return [_conv2d(node, x, w["weight"], w["bias"].reshape(-1))]
    if op == "nn.conv1d":
        return [_conv1d(node, x, args[1] if len(args) > 1 else w["weight"])]
    if op == "msc.conv1d_bias":
        return [_conv1d(node, x, w["weight"], w["bias"].reshape(-1))]
    if op == "nn.conv2d_transpose":
        return [_conv_transpose(node, x, args[1] if len(args) > 1 else w["weight"], 2)]
    if op == "nn.conv1d_transpose":
        return [_conv_transpose(node, x, args[1] if len(args) > 1 else w["weight"], 1)]
    if op == "nn.batch_norm":
        axis = int(a.get("axis", "1"))
        if axis != 1:
            x = x.movedim(axis, 1)
        y = F.batch_norm(x, w["mean"], w["var"], w.get("gamma"), w.get("beta"), False, 0.0, _float(a["epsilon"]))
        return [y.movedim(1, axis) if axis != 1 else y]
    if op == "nn.layer_norm":
        return [_layer_norm(a, x, w)]
    if op == "nn.group_norm":
        return [_group_norm(a, x, w)]
    if op == "nn.rms_norm":
        return [_rms_norm(a, x, args[1] if len(args) > 1 else w.get("weight"))]
    if op == "nn.softmax":
        return [_half_math(lambda v: torch.softmax(v, int(a.get("axis", "-1") or -1)), x)]
    if op == "nn.log_softmax":
        return [_half_math(lambda v: torch.log_softmax(v, int(a.get("axis", "-1") or -1)), x)]
    if op in ("nn.max_pool2d", "nn.avg_pool2d", "nn.max_pool1d", "nn.avg_pool1d"):
        return [_pool(node, x, "max" in op, 2 if op.endswith("2d") else 1)]
    if op == "nn.adaptive_avg_pool2d":
        return [F.adaptive_avg_pool2d(x, tuple(_adaptive_size(a, x, 2)))]
    if op == "nn.adaptive_avg_pool1d":
        return [F.adaptive_avg_pool1d(x, tuple(_adaptive_size(a, x, 1)))]
    if op in ("msc.linear", "msc.linear_bias", "nn.dense"):
        return [F.linear(x, w["weight"], w.get("bias"))]
    if op in ("matmul", "msc.matmul"):
        return [torch.matmul(args[0], args[1])]
    if op == "nn.batch_matmul":
        p, q = args
        if _bool(a, "transpose_a", False):
            p = p.transpose(-1, -2)
        if _bool(a, "transpose_b", False):
            q = q.transpose(-1, -2)
        return [torch.matmul(p, q)]
    if op == "msc.attention":
        return [_attention(node, args)]
    if op == "image.resize2d":
        return [_resize2d(x, a)]
    raise NotImplementedError(f"interp: optype {op!r} (node {node.name!r})")


def _kind(dtype: torch.dtype) -> str:
    return "float" if dtype.is_floating_point else "bool" if dtype == torch.bool else "int"


def eval_prims(graph: MSCGraph, values: Mapping[str, torch.Tensor]) -> Dict[str, int]:
    """The value of every MSC prim of ``graph`` (mscgraph_schema.md "Prim object") given the input
    tensors in ``values`` (by tensor name): ``shape`` reads the producer's dim, ``Int`` its value,
    ``Add Sub Mul FloorDiv FloorMod Min Max`` as Python's (TIR's floor ops round toward -inf)."""
    ops = {"Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
           "FloorDiv": lambda a, b: a // b, "FloorMod": lambda a, b: a % b, "Min": min, "Max": max}
    out: Dict[str, int] = {}
    for p in graph.prims:
        name, optype, attrs = p["name"], p["optype"], p.get("attrs", {})
        if optype == "shape":
            tensor = values["%s:%s" % (attrs["producer"], attrs.get("out_idx", "0"))]
            out[name] = int(tensor.shape[int(attrs["dim"])])
        elif optype == "Int":
            out[name] = int(attrs["value"])
        elif optype in ops and len(p.get("parents", [])) == 2:
            out[name] = ops[optype](out[p["parents"][0]], out[p["parents"][1]])
        else:
            raise RuntimeError(f"interp: prim {name!r}: optype {optype} is not supported")
    return out


def run_graph(graph: MSCGraph, weights: Mapping[str, np.ndarray], inputs: Mapping[str, np.ndarray],
              float_dtype: Optional[torch.dtype] = None) -> Dict[str, np.ndarray]:
    """Execute ``graph``; ``weights`` keyed by weight tensor name, ``inputs`` by input tensor name.
    Every node output must have the shape (and dtype; with `float_dtype`, the float/int/bool kind)
    the graph declares. ``float_dtype``: see the module docstring."""
    values: Dict[str, torch.Tensor] = {}

    def load(arr) -> torch.Tensor:
        t = torch.from_numpy(np.array(arr))
        return t.to(float_dtype) if float_dtype is not None and t.dtype.is_floating_point else t

    prims: Dict[str, int] = {}

    def resolved(t) -> List[int]:  # a tensor's shape with its dynamic dims' prim values
        if -1 not in t.shape:
            return list(t.shape)
        if not prims:  # first use: every input the shape prims read has been loaded by now
            prims.update(eval_prims(graph, values))
        if len(t.prims) != len(t.shape) or any(d < 0 and p not in prims for d, p in zip(t.shape, t.prims)):
            raise RuntimeError(f"interp: {t.name} has a dynamic dim without a prim value (prims {t.prims})")
        return [prims[p] if d < 0 else d for d, p in zip(t.shape, t.prims)]

    with torch.no_grad():
        for node in graph.nodes:
            if node.optype == "input":
                values[node.outputs[0].name] = load(inputs[node.outputs[0].name])
                continue
            args = [values[t] for t in node.inputs]
            w = {role: load(weights[t.name]) for role, t in node.weights.items()}
            outs = run_node(node, args, w, float_dtype, [resolved(t) for t in node.outputs])
            if len(outs) != len(node.outputs):
                raise RuntimeError(f"interp: node {node.name!r} produced {len(outs)} outputs, "
                                   f"expected {len(node.outputs)}")
            for t, v in zip(node.outputs, outs):
                if list(v.shape) != resolved(t):
                    raise RuntimeError(f"interp: {t.name} has shape {list(v.shape)}, graph says {t.shape}")
                want = _TORCH_DTYPES.get(t.dtype)
                if want is not None and (_kind(v.dtype) != _kind(want) if float_dtype is not None else v.dtype != want):
                    raise RuntimeError(f"interp: {t.name} has dtype {_MSC_DTYPES.get(v.dtype, v.dtype)}, "
                                       f"graph says {t.dtype}")
                values[t.name] = v
    return {name: values[name].numpy() for name in graph.outputs}
