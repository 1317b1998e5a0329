"""A reference interpreter for MSCGraphs (torch functional ops), used to check exports.

``run_graph(graph, weights, inputs)`` executes the nodes in order, reading every attribute from
its MSC string form (``"1,1"``, ``"1,"``, ``""``, ``"0.000010"``, ``"1"/"0"``, ``"inf"``) the way a
reader of the format must, and returns ``{output tensor name: np.ndarray}``.  Semantics:

* ``nn.conv2d``/``msc.conv2d_bias``: ``padding`` is ``top,left,bottom,right``; ``msc.conv2d_bias``
  adds its 1-D ``bias`` per channel; ``msc.linear(_bias)``: ``weight`` is ``OI``;
* ``nn.batch_norm``: uses the ``mean``/``var`` weights (running statistics) whatever ``training``
  says (MSC wrote ``training="1"`` for eval-mode models);
* ``nn.avg_pool2d`` honours ``count_include_pad``; ``clip`` bounds may be ``inf``/``-inf``;
* ``strided_slice``: ``axes/begin/end/strides`` lists; ``reshape``: ``shape``;
* ``get_item``: ``index`` selects among the inputs; ``tuple``: passes its inputs through;
* ``constant``: its ``const`` weight (0-d stays 0-d);
* ``msc.embedding``: ``weight[indices]`` (indices cast to int32 as the fused ``astype`` does);
* ``msc.attention``: q/k/v permuted by ``axes``/``axes_1``/``axes_2`` to relax's [B, S, N, H],
  then TVM v0.20's ``_te_attention`` (``python/tvm/relax/transform/legalize_ops/nn.py``):
  ``p = q k^T * scale`` (``scale`` "" = 1/sqrt(head_dim)), ``+ mask`` (4th input, broadcast to
  [B, N, S_q, S_kv]), softmax over the keys (``causal_mask`` TopLeft / BottomRight: only keys
  ``j <= i + offset``, offset 0 / |S_q - S_kv|), ``p v``, permuted back by ``axes_3``;
* ``take``: ``numpy.take`` semantics (``axis`` "" = of the flattened input);
* ``nn.pad``: ``pad_width`` = (before, after) per axis in order, constant ``pad_value``.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Mapping

import numpy as np
import torch
import torch.nn.functional as F

from .mscgraph import MSCGraph, MSCJoint


def ints(s: str) -> List[int]:
    return [int(x) for x in s.split(",") if x != ""]


def _float(s: str) -> float:
    return float(s)


def _sym_pad(pad: List[int], x: torch.Tensor, value: float = 0.0):
    """(top, left, bottom, right) -> torch padding arg, or pre-pad x when asymmetric."""
    top, left, bottom, right = pad
    if top == bottom and left == right:
        return x, (top, left)
    return F.pad(x, (left, right, top, bottom), value=value), (0, 0)


def _conv2d(node: MSCJoint, x, w, b=None):
    x, pad = _sym_pad(ints(node.attrs["padding"]), x)
    return F.conv2d(x, w, b, tuple(ints(node.attrs["strides"])), pad, tuple(ints(node.attrs["dilation"])),
                    int(node.attrs["groups"]))


def _conv1d(node: MSCJoint, x, w, b=None):
    p = ints(node.attrs["padding"])
    if p[0] != p[1]:
        x = F.pad(x, (p[0], p[1]))
        p = [0, 0]
    return F.conv1d(x, w, b, tuple(ints(node.attrs["strides"])), p[0], tuple(ints(node.attrs["dilation"])),
                    int(node.attrs["groups"]))


def _pool(node: MSCJoint, x, is_max: bool):
    a = node.attrs
    k, s = tuple(ints(a["pool_size"])), tuple(ints(a["strides"]))
    ceil = bool(int(a.get("ceil_mode", "0")))
    pad = ints(a["padding"])
    if is_max:
        x, p = _sym_pad(pad, x, float("-inf"))
        return F.max_pool2d(x, k, s, p, tuple(ints(a.get("dilation", "1,1"))), ceil_mode=ceil)
    x, p = _sym_pad(pad, x)
    return F.avg_pool2d(x, k, s, p, ceil_mode=ceil, count_include_pad=bool(int(a.get("count_include_pad", "0"))))


def _axes_attr(s: str):
    return None if s == "" else ints(s)


_TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "float64": torch.float64,
                 "int32": torch.int32, "int64": torch.int64, "bool": torch.bool, "int8": torch.int8,
                 "uint8": torch.uint8}


def _attention(node: MSCJoint, args: List[torch.Tensor]) -> torch.Tensor:
    a = node.attrs
    axes = [ints(a.get(k, "0,2,1,3")) for k in ("axes", "axes_1", "axes_2", "axes_3")]
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


def _take(x: torch.Tensor, idx: torch.Tensor, axis_attr: str) -> torch.Tensor:
    idx = idx.long()
    if axis_attr == "":
        return x.reshape(-1)[idx.reshape(-1)].reshape(idx.shape)
    axis = int(axis_attr) % x.dim()
    out = x.index_select(axis, idx.reshape(-1))
    return out.reshape(list(x.shape[:axis]) + list(idx.shape) + list(x.shape[axis + 1:]))


def _reduce(fn: Callable, x: torch.Tensor, a: Mapping[str, str]) -> torch.Tensor:
    axes = _axes_attr(a.get("axis", ""))
    keep = bool(int(a.get("keepdims", "0")))
    dims = sorted(v % x.dim() for v in axes) if axes is not None else list(range(x.dim()))
    y = x
    for d in reversed(dims):
        y = fn(y, d, keepdim=True)
    return y if keep else y.reshape([s for i, s in enumerate(x.shape) if i not in dims])


def run_node(node: MSCJoint, args: List[torch.Tensor], w: Mapping[str, torch.Tensor]) -> List[torch.Tensor]:
    a, op = node.attrs, node.optype
    x = args[0] if args else None
    if op == "constant":
        return [w["const"]]
    if op == "msc.embedding":
        return [F.embedding(x.to(torch.int32).long(), w["weight"])]
    if op == "msc.attention":
        return [_attention(node, args)]
    if op == "take":
        return [_take(args[0], args[1], a.get("axis", ""))]
    if op in ("astype", "cast"):
        return [x.to(_TORCH_DTYPES[a["dtype"]])]
    if op == "where":
        return [torch.where(args[0].bool(), args[1], args[2])]
    if op == "masked_fill":
        return [torch.where(args[1].bool(), args[2].to(x.dtype), x)]
    if op in ("triu", "tril"):
        fn = torch.triu if op == "triu" else torch.tril
        return [fn(x, int(a.get("k", "0")))]
    if op == "nn.gelu_tanh":
        return [F.gelu(x, approximate="tanh")]
    if op == "sum":
        return [_reduce(lambda t, d, keepdim: t.sum(d, keepdim=keepdim), x, a)]
    if op == "max":
        return [_reduce(lambda t, d, keepdim: t.amax(d, keepdim=keepdim), x, a)]
    if op == "broadcast_to":
        return [torch.broadcast_to(x, ints(a["shape"]))]
    if op == "nn.pad":
        if a.get("pad_mode", "constant") != "constant":
            raise NotImplementedError(f"interp: nn.pad mode {a['pad_mode']!r} (node {node.name!r})")
        pw = ints(a["pad_width"])
        torch_pad = [p for i in reversed(range(x.dim())) for p in (pw[2 * i], pw[2 * i + 1])]
        return [F.pad(x, torch_pad, value=_float(a.get("pad_value", "0")))]
    unary_ops: Dict[str, Callable] = {"exp": torch.exp, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "erf": torch.erf,
                                      "negative": torch.neg, "logical_not": torch.logical_not}
    if op in unary_ops:
        return [unary_ops[op](x)]
    compare_ops: Dict[str, Callable] = {
        "equal": torch.eq, "not_equal": torch.ne, "less": torch.lt, "less_equal": torch.le, "greater": torch.gt,
        "greater_equal": torch.ge, "logical_and": torch.logical_and, "logical_or": torch.logical_or,
        "maximum": torch.maximum, "minimum": torch.minimum, "power": torch.pow}
    if op in compare_ops:
        return [compare_ops[op](args[0], args[1])]
    if op == "nn.conv2d":
        return [_conv2d(node, x, w["weight"])]
    if op == "msc.conv2d_bias":
        return [_conv2d(node, x, w["weight"], w["bias"])]
    if op == "nn.conv1d":
        return [_conv1d(node, x, w["weight"])]
    if op == "msc.conv1d_bias":
        return [_conv1d(node, x, w["weight"], w["bias"])]
    if op == "nn.batch_norm":
        axis = int(a.get("axis", "1"))
        if axis != 1:
            x = x.movedim(axis, 1)
        y = F.batch_norm(x, w["mean"], w["var"], w.get("gamma"), w.get("beta"), False, 0.0, _float(a["epsilon"]))
        return [y.movedim(1, axis) if axis != 1 else y]
    if op == "nn.layer_norm":
        axes = ints(a["axes"])
        shape = [x.shape[i] for i in axes]
        return [F.layer_norm(x, shape, w.get("gamma"), w.get("beta"), _float(a["epsilon"]))]
    if op == "nn.relu":
        return [F.relu(x)]
    if op == "nn.gelu":
        return [F.gelu(x)]
    if op == "nn.silu":
        return [F.silu(x)]
    if op == "sigmoid":
        return [torch.sigmoid(x)]
    if op == "tanh":
        return [torch.tanh(x)]
    if op == "nn.softmax":
        return [torch.softmax(x, int(a["axis"]))]
    if op == "clip":
        return [torch.clamp(x, _float(a["min"]), _float(a["max"]))]
    if op == "nn.max_pool2d":
        return [_pool(node, x, True)]
    if op == "nn.avg_pool2d":
        return [_pool(node, x, False)]
    if op == "nn.adaptive_avg_pool2d":
        return [F.adaptive_avg_pool2d(x, tuple(ints(a["output_size"])))]
    if op in ("msc.linear", "msc.linear_bias"):
        return [F.linear(x, w["weight"], w.get("bias"))]
    if op == "matmul":
        return [torch.matmul(args[0], args[1])]
    binary: Dict[str, Callable] = {"add": torch.add, "subtract": torch.sub, "multiply": torch.mul,
                                   "divide": torch.div}
    if op in binary:
        return [binary[op](args[0], args[1])]
    if op == "reshape":
        return [x.reshape(ints(a["shape"]))]
    if op == "permute_dims":
        axes = _axes_attr(a["axes"])
        return [x.permute(*(axes if axes is not None else reversed(range(x.dim()))))]
    if op == "concat":
        return [torch.cat(args, int(a["axis"]))]
    if op == "mean":
        axes = _axes_attr(a["axis"])
        keep = bool(int(a["keepdims"]))
        return [x.mean() if axes is None and not keep else x.mean(dim=axes if axes is not None else
                                                                  list(range(x.dim())), keepdim=keep)]
    if op == "squeeze":
        axes = _axes_attr(a["axis"])
        if axes is None:
            return [x.squeeze()]
        y = x
        for ax in sorted((v % x.dim() for v in axes), reverse=True):
            y = y.squeeze(ax)
        return [y]
    if op == "expand_dims":
        y = x
        nd = x.dim() + len(ints(a["axis"]))
        for ax in sorted(v % nd for v in ints(a["axis"])):
            y = y.unsqueeze(ax)
        return [y]
    if op == "strided_slice":
        index = [slice(None)] * x.dim()
        for ax, b, e, s in zip(ints(a["axes"]), ints(a["begin"]), ints(a["end"]), ints(a["strides"])):
            index[ax] = slice(b, e, s)
        return [x[tuple(index)]]
    if op == "split":
        axis = int(a["axis"])
        ios = a["indices_or_sections"]
        if "," in ios:
            bounds = [0] + ints(ios) + [x.shape[axis]]
            return [x.narrow(axis, lo, hi - lo) for lo, hi in zip(bounds[:-1], bounds[1:])]
        return list(torch.chunk(x, int(ios), axis))
    if op == "get_item":
        return [args[int(a["index"])]]
    if op == "tuple":
        return list(args)
    raise NotImplementedError(f"interp: optype {op!r} (node {node.name!r})")


def run_graph(graph: MSCGraph, weights: Mapping[str, np.ndarray],
              inputs: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Execute ``graph``; ``weights`` keyed by weight tensor name, ``inputs`` by input tensor name."""
    values: Dict[str, torch.Tensor] = {}
    with torch.no_grad():
        for node in graph.nodes:
            if node.optype == "input":
                values[node.outputs[0].name] = torch.from_numpy(np.array(inputs[node.outputs[0].name]))
                continue
            args = [values[t] for t in node.inputs]
            w = {role: torch.from_numpy(np.array(weights[t.name])) for role, t in node.weights.items()}
            outs = run_node(node, args, w)
            if len(outs) != len(node.outputs):
                raise RuntimeError(f"interp: node {node.name!r} produced {len(outs)} outputs, "
                                   f"expected {len(node.outputs)}")
            for t, v in zip(node.outputs, outs):
                if list(v.shape) != list(t.shape):
                    raise RuntimeError(f"interp: {t.name} has shape {list(v.shape)}, graph says {t.shape}")
                values[t.name] = v
    return {name: values[name].numpy() for name in graph.outputs}
