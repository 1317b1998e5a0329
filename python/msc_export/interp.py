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
* ``constant``: its ``const`` weight (0-d stays 0-d).
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


def run_node(node: MSCJoint, args: List[torch.Tensor], w: Mapping[str, torch.Tensor]) -> List[torch.Tensor]:
    a, op = node.attrs, node.optype
    x = args[0] if args else None
    if op == "constant":
        return [w["const"]]
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
