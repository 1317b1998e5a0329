"""A small, valid MSCGraph whose names are hostile to code generators.

Node, tensor, weight and graph names contain double quotes, backslashes, newlines, tabs,
spaces, ``:``/``.``/``/``, ``../``, Python and C++ keywords (``class``, ``def``, ``return``,
``int``, ``namespace``) and non-ASCII text (``nœud``, ``卷积``).  Tensor names stay
``"<node>:<idx>"`` and readers must split them on the LAST ``:`` (node names contain ``:``).
Generated code must therefore never paste a name into source text unescaped or use it as an
identifier or a file path.

Dataflow (batch 1, float32)::

    x  [1,3,4,4] NCHW ---- nn.conv2d (3x3, pad 1, W [6,3,3,3]) --- nn.relu --+
    y  [1,6,4,4] NCHW -------------------------------------------------------+-- add
    add -- reshape [1,96] --+-- msc.linear_bias (W [5,96] OI, b [5]) -- [1,5] --+
                            +---------------------------------------------------+-- concat(axis 1) [1,101]

Golden outputs are computed with ``torch.nn.functional`` directly (not from the graph), from
inputs drawn with ``torch.manual_seed(seed)``.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Dict, Tuple

import numpy as np
import torch
import torch.nn.functional as F

from .exporter import check_golden_outputs
from .mscgraph import MSCGraph, MSCJoint, MSCTensor, validate
from .safetensors_np import save_file

GRAPH_NAME = 'main "hostile"\\graph/../\n\tclass'

# node names
N_X = 'in:put "x"\\ ../ 卷积'
N_Y = "int"
N_CONV = "class"
N_RELU = 'return\nnew line "r"'
N_ADD = "namespace::std.add"
N_RESHAPE = "nœud/../reshape 1"
N_LINEAR = "卷积.linear def"
N_CONCAT = 'concat "final"\\ :0'

# weight tensor names (the safetensors keys)
W_CONV = 'def:weight\\"conv"'
W_FC = "w/../fc.weight 卷积"
B_FC = "b:0 namespace"


def _t(node: str, shape, layout: str, idx: int = 0, alias: str = "") -> MSCTensor:
    return MSCTensor(f"{node}:{idx}", "float32", layout, shape, alias)


def build_hostile() -> MSCGraph:
    """The graph only (no data)."""
    conv_attrs = OrderedDict([("strides", "1,1"), ("padding", "1,1,1,1"), ("dilation", "1,1"), ("groups", "1"),
                              ("data_layout", "NCHW"), ("kernel_layout", "OIHW"), ("out_layout", "NCHW"),
                              ("out_dtype", "float32")])
    w_conv = MSCTensor(W_CONV, "float32", "OIHW", [6, 3, 3, 3], N_CONV.replace(".", "_") + ".weight")
    w_fc = MSCTensor(W_FC, "float32", "OI", [5, 96], N_LINEAR.replace(".", "_") + ".weight")
    b_fc = MSCTensor(B_FC, "float32", "O", [5], N_LINEAR.replace(".", "_") + ".bias")
    nodes = [
        MSCJoint(0, N_X, "input", [], [_t(N_X, [1, 3, 4, 4], "NCHW", alias=N_X)], OrderedDict(), {}),
        MSCJoint(1, N_Y, "input", [], [_t(N_Y, [1, 6, 4, 4], "NCHW", alias=N_Y)], OrderedDict(), {}),
        MSCJoint(2, N_CONV, "nn.conv2d", [f"{N_X}:0"], [_t(N_CONV, [1, 6, 4, 4], "NCHW")], conv_attrs,
                 {"weight": w_conv}),
        MSCJoint(3, N_RELU, "nn.relu", [f"{N_CONV}:0"], [_t(N_RELU, [1, 6, 4, 4], "NCHW")], OrderedDict(), {}),
        MSCJoint(4, N_ADD, "add", [f"{N_RELU}:0", f"{N_Y}:0"], [_t(N_ADD, [1, 6, 4, 4], "NCHW")], OrderedDict(), {}),
        MSCJoint(5, N_RESHAPE, "reshape", [f"{N_ADD}:0"], [_t(N_RESHAPE, [1, 96], "NC")],
                 OrderedDict([("shape", "1,96")]), {}),
        MSCJoint(6, N_LINEAR, "msc.linear_bias", [f"{N_RESHAPE}:0"], [_t(N_LINEAR, [1, 5], "NC")],
                 OrderedDict([("out_dtype", "float32")]), {"weight": w_fc, "bias": b_fc}),
        MSCJoint(7, N_CONCAT, "concat", [f"{N_LINEAR}:0", f"{N_RESHAPE}:0"],
                 [_t(N_CONCAT, [1, 101], "NC", alias=N_CONCAT)], OrderedDict([("axis", "1")]), {}),
    ]
    graph = MSCGraph(GRAPH_NAME, nodes, [f"{N_X}:0", f"{N_Y}:0"], [f"{N_CONCAT}:0"])
    validate(graph)
    return graph


def hostile_data(seed: int = 0) -> Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray], Dict[str, np.ndarray]]:
    """``(weights, golden inputs, golden outputs)`` keyed by tensor name; outputs via torch functional ops."""
    torch.manual_seed(seed)
    w_conv = torch.randn(6, 3, 3, 3) * 0.3
    w_fc = torch.randn(5, 96) * 0.1
    b_fc = torch.randn(5)
    x = torch.randn(1, 3, 4, 4)
    y = torch.randn(1, 6, 4, 4)
    with torch.no_grad():
        r = F.relu(F.conv2d(x, w_conv, None, 1, 1))
        flat = torch.reshape(r + y, (1, 96))
        out = torch.cat([F.linear(flat, w_fc, b_fc), flat], dim=1)
    weights = {W_CONV: w_conv.numpy(), W_FC: w_fc.numpy(), B_FC: b_fc.numpy()}
    inputs = {f"{N_X}:0": x.numpy(), f"{N_Y}:0": y.numpy()}
    outputs = {f"{N_CONCAT}:0": out.numpy()}
    return weights, inputs, outputs


def write_hostile(out_dir: str, seed: int = 0) -> Dict[str, str]:
    """Write ``graph.json``, ``weights.safetensors``, ``golden/{inputs,outputs}.safetensors``."""
    graph = build_hostile()
    weights, inputs, outputs = hostile_data(seed)
    check_golden_outputs(outputs)
    os.makedirs(os.path.join(out_dir, "golden"), exist_ok=True)
    paths = {
        "graph": os.path.join(out_dir, "graph.json"),
        "weights": os.path.join(out_dir, "weights.safetensors"),
        "golden_inputs": os.path.join(out_dir, "golden", "inputs.safetensors"),
        "golden_outputs": os.path.join(out_dir, "golden", "outputs.safetensors"),
    }
    graph.save(paths["graph"])
    save_file(weights, paths["weights"])
    save_file(inputs, paths["golden_inputs"])
    save_file(outputs, paths["golden_outputs"])
    return paths


if __name__ == "__main__":
    import sys

    target = sys.argv[1] if len(sys.argv) > 1 else "out/hostile"
    for k, v in sorted(write_hostile(target).items()):
        print(f"{k}: {v}")
