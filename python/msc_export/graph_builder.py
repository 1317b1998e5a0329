"""Relax function (after MSC's passes) -> MSCGraph + weights, as MSC's ``RelaxGraphBuilder``.

Mirrors ``src/contrib/msc/core/ir/graph_builder.cc`` (``RelaxGraphBuilder::Build``/``AddNode``),
``python/tvm/contrib/msc/core/frontend/translate.py`` (``normalize_weights``) and
``python/tvm/contrib/msc/framework/torch/frontend/translate.py`` (``set_weight_alias``):

* one ``input`` node per function parameter (``inp_0`` ...); every constant met as a call
  argument becomes a ``constant`` node (attr ``scalar`` when 0-d, weight ``const``);
* a call's arguments are classified by ``ExprUtils::GetInputTypes``: ``ShapeExpr`` /
  ``PrimValue`` / tuples of non-``input`` type become attrs (``shape``, ``min``, ``max``,
  ``axes``, ``begin`` ...); constants of a non-``input`` type become weights (``weight``,
  ``bias``, ``gamma``, ``beta``, ``mean``, ``var``) and their constant nodes are dropped;
  everything else is an input ``"<producer>:<i>"``;
* weight tensors: a ``bias`` is 1-D ``[size]`` with layout ``O``; the weight of
  ``msc.linear``/``msc.linear_bias`` inferred as ``IO`` is stored ``OI`` (transposed back);
* a tuple-valued call has one output per field, except ``nn.batch_norm`` which keeps field 0;
  ``get_item`` takes every output of its tuple producer and copies the selected layout;
  ``tuple`` nodes' layout is the comma-joined input layouts;
* graph input aliases are the producer names; output aliases the producer name when it has one
  output, else the tensor name with ``:`` -> ``_``;
* weight aliases (torch frontend): ``<node name with . -> _>.<role>``; norm ops use
  ``.weight/.bias/.running_mean/.running_var``; a ``constant`` node's weight is aliased with
  the node name.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Dict, List, Tuple as PyTuple

import numpy as np

from . import relax_ir as R
from .mscfmt import attr_str, scalar_str
from .mscgraph import MSCGraph, MSCJoint, MSCTensor
from .passes import call_optype, composite_attrs, input_types


class _Builder:
    def __init__(self, graph_name: str) -> None:
        self.graph_name = graph_name
        self.nodes: List[MSCJoint] = []
        self.expr_tensors: Dict[int, List[str]] = {}
        self.tensor_owner: Dict[str, PyTuple[MSCJoint, int]] = {}
        self.weights: Dict[str, MSCTensor] = {}
        self.weight_data: Dict[str, np.ndarray] = {}
        self.const_data: Dict[str, np.ndarray] = {}

    # -- helpers
    def _register(self, node: MSCJoint, ref: R.Expr) -> None:
        self.nodes.append(node)
        names = [t.name for t in node.outputs]
        for i, n in enumerate(names):
            self.tensor_owner[n] = (node, i)
        self.expr_tensors[id(ref)] = names

    def _tensor(self, name: str) -> MSCTensor:
        node, i = self.tensor_owner[name]
        return node.outputs[i]

    @staticmethod
    def _outputs(node_name: str, sinfo, layout: str, optype: str) -> List[MSCTensor]:
        if isinstance(sinfo, R.TensorSI):
            layouts = [x for x in layout.split(",") if x] or [""]
            return [MSCTensor(f"{node_name}:0", sinfo.dtype, layouts[0], sinfo.shape)]
        if isinstance(sinfo, R.TupleSI):
            layouts = layout.split(",") if layout else [""] * len(sinfo.fields)  # a field's layout may be ""
            if len(layouts) != len(sinfo.fields):
                raise ValueError(f"Layouts {layouts} mismatch with output size {len(sinfo.fields)}")
            count = 1 if optype == "nn.batch_norm" else len(sinfo.fields)
            return [MSCTensor(f"{node_name}:{i}", f.dtype, layouts[i], f.shape)
                    for i, f in enumerate(sinfo.fields[:count])]
        raise ValueError(f"Unexpected struct info {sinfo!r}")

    # -- nodes
    def add_input(self, var: R.Var) -> None:
        node = MSCJoint(0, var.name_hint, "input", [],
                        self._outputs(var.name_hint, var.sinfo, var.span.get("layout", ""), "input"),
                        OrderedDict(), {})
        self._register(node, var)

    def visit_arg(self, e: R.Expr) -> None:
        if isinstance(e, R.Constant) and id(e) not in self.expr_tensors:
            self.add_constant(e)
        elif isinstance(e, R.Tuple):
            for f in e.fields:
                self.visit_arg(f)

    def add_constant(self, c: R.Constant) -> None:
        name = c.span["name"]
        layout = c.span.get("layout", "")
        attrs: "OrderedDict[str, str]" = OrderedDict()
        if c.is_scalar:
            attrs["scalar"] = scalar_str(c.data)
        weight = MSCTensor(name, c.sinfo.dtype, layout, c.sinfo.shape)
        node = MSCJoint(0, name, "constant", [], self._outputs(name, c.sinfo, layout, "constant"), attrs,
                        {"const": weight})
        self.const_data[name] = c.data
        self._register(node, c)

    def add_call(self, var: R.Var, call: R.Call) -> None:
        for a in call.args:
            self.visit_arg(a)
        optype = call_optype(call)
        if isinstance(call.op, R.Function):
            name = call.op.attrs["unique_name"]
            raw_attrs = composite_attrs(call.op)
        else:
            name = call.span["name"]
            raw_attrs = call.attrs
        attrs: "OrderedDict[str, str]" = OrderedDict((k, attr_str(v)) for k, v in raw_attrs.items())
        types = input_types(optype, len(call.args))
        for t, a in zip(types, call.args):
            if isinstance(a, R.ShapeExpr):
                attrs[t] = attr_str(list(a.values))
            elif isinstance(a, R.PrimValue):
                if t == "input":
                    raise ValueError(f"PrimValue argument of {optype} should have a special type, got {types}")
                attrs[t] = attr_str(a.value)
            elif t != "input" and isinstance(a, R.Tuple):
                attrs[t] = attr_str([f.value for f in a.fields])
        inputs: List[str] = []
        weights: Dict[str, MSCTensor] = {}
        for t, a in zip(types, call.args):
            if t in attrs:
                continue
            if isinstance(a, R.Tuple):
                names = [n for f in a.fields for n in self.expr_tensors[id(f)]]
            else:
                names = self.expr_tensors[id(a)]
            if t != "input" and isinstance(a, R.Constant):
                wname = a.span["name"]
                ref = self._tensor(names[0])
                if wname not in self.weights:
                    data = self.const_data[wname]
                    if t == "bias":
                        size = int(np.prod(ref.shape, dtype=np.int64))
                        weight = MSCTensor(wname, ref.dtype, "O", [size])
                        data = data.reshape([size])
                    elif t == "weight" and optype in ("msc.linear", "msc.linear_bias") and ref.layout == "IO":
                        weight = MSCTensor(wname, ref.dtype, "OI", [ref.shape[1], ref.shape[0]])
                        data = np.ascontiguousarray(data.T)
                    else:
                        weight = MSCTensor(wname, ref.dtype, ref.layout, ref.shape)
                    self.weights[wname] = weight
                    self.weight_data[wname] = data
                owner = self.tensor_owner[names[0]][0]
                if "scalar" in owner.attrs:
                    attrs[t] = owner.attrs["scalar"]
                weights[t] = self.weights[wname]
            else:
                inputs.extend(names)
        layout = call.span.get("layout", "")
        node = MSCJoint(0, name, optype, inputs, self._outputs(name, call.sinfo, layout, optype), attrs, weights,
                        call.span.get("shared_ref", ""))
        self._register(node, var)

    def add_tuple(self, var: R.Var, tup: R.Tuple) -> None:
        for f in tup.fields:
            self.visit_arg(f)
        inputs = [n for f in tup.fields for n in self.expr_tensors[id(f)]]
        layout = ",".join(self._tensor(n).layout for n in inputs)
        name = tup.span["name"]
        node = MSCJoint(0, name, "tuple", inputs, self._outputs(name, tup.sinfo, layout, "tuple"), OrderedDict(), {})
        self._register(node, var)

    def add_get_item(self, var: R.Var, item: R.TupleGetItem) -> None:
        inputs = list(self.expr_tensors[id(item.tuple_value)])
        layout = self._tensor(inputs[item.index]).layout
        name = item.span["name"]
        node = MSCJoint(0, name, "get_item", inputs, self._outputs(name, item.sinfo, layout, "get_item"),
                        OrderedDict([("index", str(item.index))]), {})
        self._register(node, var)

    # -- graph
    def build(self, func: R.Function) -> PyTuple[MSCGraph, Dict[str, np.ndarray]]:
        input_names = []
        for p in func.params:
            self.add_input(p)
            input_names.append(self.expr_tensors[id(p)][0])
        for b in func.bindings:
            v = b.value
            if isinstance(v, R.Call):
                self.add_call(b.var, v)
            elif isinstance(v, R.Tuple):
                self.add_tuple(b.var, v)
            elif isinstance(v, R.TupleGetItem):
                self.add_get_item(b.var, v)
            elif isinstance(v, R.Var):
                self.expr_tensors[id(b.var)] = self.expr_tensors[id(v)]
            elif isinstance(v, R.Constant):
                self.visit_arg(v)
                self.expr_tensors[id(b.var)] = self.expr_tensors[id(v)]
            else:
                raise ValueError(f"unexpected binding value {v!r}")
        body = func.body
        if isinstance(body, R.Constant):
            self.visit_arg(body)
        output_names = list(self.expr_tensors[id(body)])
        # remove constant nodes that became weights; re-index
        valid, ignore_inputs = [], set()
        for n in self.nodes:
            if n.name in self.weights:
                ignore_inputs.update(t.name for t in n.outputs)
                continue
            n.index = len(valid)
            valid.append(n)
            if n.optype != "input":
                ignore_inputs.update(t.name for t in n.outputs)
        inputs = [i for i in input_names if i not in ignore_inputs]
        graph = MSCGraph(self.graph_name, valid, inputs, output_names)
        for i in inputs:
            graph.find_tensor(i).alias = graph.node(i.rsplit(":", 1)[0]).name
        for o in output_names:
            t = graph.find_tensor(o)
            if t.alias:
                continue
            producer = graph.node(o.rsplit(":", 1)[0])
            t.alias = producer.name if len(producer.outputs) == 1 else o.replace(":", "_")
        # weights: every weight tensor of the graph, constant nodes' included
        data: Dict[str, np.ndarray] = {}
        for n in graph.nodes:
            for role, t in n.weights.items():
                if t.name in self.weight_data:
                    data[t.name] = self.weight_data[t.name]
                else:
                    data[t.name] = self.const_data[t.name]
        set_weight_alias(graph)
        return graph, data


def set_weight_alias(graph: MSCGraph) -> None:
    """``set_weight_alias`` of MSC's torch frontend (``framework/torch/frontend/translate.py``)."""
    norm_alias = {"gamma": "weight", "beta": "bias", "mean": "running_mean", "var": "running_var"}
    for node in graph.nodes:
        base = node.name.replace(".", "_")
        for role, weight in node.weights.items():
            if node.optype == "constant":
                alias = base
            elif node.optype in ("nn.batch_norm", "nn.layer_norm", "nn.group_norm"):
                alias = base + "." + norm_alias.get(role, role)
            else:
                alias = base + "." + role
            weight.alias = alias


def build_graph(func: R.Function, name: str = "main") -> PyTuple[MSCGraph, Dict[str, np.ndarray]]:
    """Build the MSCGraph and its weights ``{weight tensor name: array}`` from ``func``."""
    return _Builder(name).build(func)
