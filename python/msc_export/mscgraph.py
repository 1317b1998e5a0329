"""MSCGraph data model, JSON writer/reader and structural validation.

Field names and JSON keys are MSC's (``src/contrib/msc/core/ir/graph.h``: ``JsonMSCTensor``,
``JsonMSCJoint``, ``JsonMSCGraph``); see ``shared/reference/mscgraph_schema.md``.

:func:`to_json` writes the text the way TVM v0.20 wrote it (``dmlc::JSONWriter``, as
``MSCGraph.to_json()`` did before the 2026 "Phase out dmlc dep" change): objects one key per
line indented by 2 per level, ``", "`` before the line break, arrays of numbers with at most
10 items inline, maps with one entry inline, no trailing newline.  Key order within nodes and
tensors is MSC's; ``attrs`` keep the order the builder set them (the C++ ``Attrs`` field order),
``weights`` are sorted by role (MSC wrote both from hash maps, so no order is meaningful).
Control characters other than ``\\n \\r \\t`` are escaped as ``\\u00XX`` (dmlc wrote them raw,
which is not valid JSON); non-ASCII text is written as UTF-8.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Dict, Iterable, List, Optional


class MSCTensor:
    """``{name, alias, dtype, layout, shape, prims}``."""

    __slots__ = ("name", "alias", "dtype", "layout", "shape", "prims")

    def __init__(self, name: str, dtype: str, layout: str, shape: Iterable[int], alias: str = "",
                 prims: Optional[List[str]] = None):
        self.name = name
        self.alias = alias
        self.dtype = dtype
        self.layout = layout
        self.shape = [int(s) for s in shape]
        self.prims = list(prims or [])

    def to_dict(self) -> "OrderedDict[str, object]":
        return OrderedDict([("name", self.name), ("alias", self.alias), ("dtype", self.dtype),
                            ("layout", self.layout), ("shape", list(self.shape)), ("prims", list(self.prims))])

    @classmethod
    def from_dict(cls, d: dict) -> "MSCTensor":
        return cls(d["name"], d["dtype"], d.get("layout", ""), d["shape"], d.get("alias", ""), d.get("prims", []))

    def __repr__(self) -> str:
        return f"MSCTensor({self.name!r}, {self.dtype}, {self.layout!r}, {self.shape})"


class MSCJoint:
    """A node: ``{index, name, shared_ref, optype, parents, inputs, outputs, attrs, weights}``."""

    def __init__(self, index: int, name: str, optype: str, inputs: List[str], outputs: List[MSCTensor],
                 attrs: "OrderedDict[str, str]", weights: Dict[str, MSCTensor], shared_ref: str = "",
                 parents: Optional[List[str]] = None):
        self.index = index
        self.name = name
        self.shared_ref = shared_ref
        self.optype = optype
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.attrs = attrs
        self.weights = weights
        if parents is None:
            parents = []
            for t in self.inputs:
                p = split_tensor_name(t)[0]
                if p not in parents:
                    parents.append(p)
        self.parents = parents

    def to_dict(self) -> "OrderedDict[str, object]":
        return OrderedDict([
            ("index", self.index), ("name", self.name), ("shared_ref", self.shared_ref), ("optype", self.optype),
            ("parents", list(self.parents)), ("inputs", list(self.inputs)),
            ("outputs", [t.to_dict() for t in self.outputs]),
            ("attrs", OrderedDict(self.attrs)),
            ("weights", OrderedDict((k, self.weights[k].to_dict()) for k in sorted(self.weights))),
        ])

    @classmethod
    def from_dict(cls, d: dict) -> "MSCJoint":
        return cls(d["index"], d["name"], d["optype"], d.get("inputs", []),
                   [MSCTensor.from_dict(t) for t in d["outputs"]], OrderedDict(d.get("attrs", {})),
                   {k: MSCTensor.from_dict(v) for k, v in d.get("weights", {}).items()},
                   d.get("shared_ref", ""), d.get("parents", []))


class MSCGraph:
    """``{name, inputs, outputs, nodes, prims}``; ``inputs``/``outputs`` are tensor names."""

    def __init__(self, name: str, nodes: List[MSCJoint], inputs: List[str], outputs: List[str],
                 prims: Optional[list] = None):
        self.name = name
        self.nodes = nodes
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.prims = list(prims or [])

    # -- lookup
    def node(self, name: str) -> MSCJoint:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def find_tensor(self, name: str) -> MSCTensor:
        """Find an output or weight tensor by name or alias (like ``MSCGraph.find_tensor``)."""
        for n in self.nodes:
            for t in list(n.outputs) + list(n.weights.values()):
                if t.name == name:
                    return t
        for n in self.nodes:
            for t in list(n.outputs) + list(n.weights.values()):
                if t.alias and t.alias == name:
                    return t
        raise KeyError(name)

    def weight_tensors(self) -> Dict[str, MSCTensor]:
        out: Dict[str, MSCTensor] = {}
        for n in self.nodes:
            for t in n.weights.values():
                out.setdefault(t.name, t)
        return out

    def to_dict(self) -> "OrderedDict[str, object]":
        return OrderedDict([("name", self.name), ("inputs", list(self.inputs)), ("outputs", list(self.outputs)),
                            ("nodes", [n.to_dict() for n in self.nodes]), ("prims", list(self.prims))])

    @classmethod
    def from_dict(cls, d: dict) -> "MSCGraph":
        return cls(d["name"], [MSCJoint.from_dict(n) for n in d["nodes"]], d["inputs"], d["outputs"],
                   d.get("prims", []))

    def to_json(self) -> str:
        return to_json(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> "MSCGraph":
        return cls.from_dict(json.loads(text))

    @classmethod
    def load(cls, path: str) -> "MSCGraph":
        with open(path, "r", encoding="utf-8") as f:
            return cls.from_json(f.read())

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(self.to_json())


def output_dtypes(graph: dict) -> Dict[str, str]:
    """``{tensor name: dtype}`` of the graph outputs of an MSCGraph JSON object (graph.json)."""
    outs = set(graph["outputs"])
    return {t["name"]: t["dtype"] for n in graph["nodes"] for t in n["outputs"] if t["name"] in outs}


def split_tensor_name(name: str):
    """``"<node>:<idx>"`` -> (node, idx), split on the LAST ':' (``StringUtils::SplitOnce``)."""
    pos = name.rfind(":")
    if pos < 0:
        return name, ""
    return name[:pos], name[pos + 1:]


# ----------------------------------------------------------------------------- dmlc-style writer


def _escape(s: str) -> str:
    out = []
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ch in "\u2028\u2029":
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


class _DmlcWriter:
    def __init__(self) -> None:
        self.parts: List[str] = []
        self.stack: List[List] = []  # [multi_line, counter]

    def sep(self) -> None:
        if not self.stack or self.stack[-1][0]:
            self.parts.append("\n" + " " * (2 * len(self.stack)))

    def begin(self, ch: str, multi_line: bool) -> None:
        self.parts.append(ch)
        self.stack.append([multi_line, 0])

    def end(self, ch: str) -> None:
        multi_line, n = self.stack.pop()
        if multi_line and n:
            self.sep()
        self.parts.append(ch)

    def value(self, v: object, as_struct: bool = False) -> None:
        if isinstance(v, str):
            self.parts.append(_escape(v))
        elif isinstance(v, bool):
            self.parts.append("true" if v else "false")
        elif isinstance(v, int):
            self.parts.append(str(v))
        elif isinstance(v, float):
            self.parts.append(repr(v))
        elif isinstance(v, list):
            pod = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
            self.begin("[", len(v) > 10 or not pod)
            for item in v:
                if self.stack[-1][1]:
                    self.parts.append(", ")
                self.stack[-1][1] += 1
                self.sep()
                self.value(item)
            self.end("]")
        elif isinstance(v, dict):
            # MSC's structs (graph, node, tensor) are OrderedDicts: always multi-line objects;
            # plain maps (attrs, weights) are multi-line only with more than one entry.
            is_struct = isinstance(v, _Struct)
            self.begin("{", True if is_struct else len(v) > 1)
            for k, item in v.items():
                if self.stack[-1][1]:
                    self.parts.append(", ")
                self.sep()
                self.parts.append(_escape(k) + ": ")
                self.stack[-1][1] += 1
                self.value(item)
            self.end("}")
        else:
            raise TypeError(f"cannot write {type(v).__name__} to JSON")


class _Struct(OrderedDict):
    pass


def _mark_structs(graph: dict) -> dict:
    def tensor(t: dict) -> _Struct:
        return _Struct(t)

    nodes = []
    for n in graph["nodes"]:
        nd = _Struct(n)
        nd["outputs"] = [tensor(t) for t in n["outputs"]]
        nd["attrs"] = OrderedDict(n["attrs"])
        nd["weights"] = OrderedDict((k, tensor(v)) for k, v in n["weights"].items())
        nodes.append(nd)
    g = _Struct(graph)
    g["nodes"] = nodes
    g["prims"] = [_Struct(p) for p in graph.get("prims", [])]
    return g


def to_json(graph: dict) -> str:
    """Serialize a graph dict (see :meth:`MSCGraph.to_dict`) in dmlc::JSONWriter's layout."""
    w = _DmlcWriter()
    w.value(_mark_structs(graph))
    return "".join(w.parts)


# ----------------------------------------------------------------------------- validation


class GraphError(ValueError):
    pass


def validate(graph: MSCGraph) -> None:
    """Structural checks MSC's loader relies on; raises :class:`GraphError` listing every problem.

    Unique node names and tensor names, ``index`` == position, every input ``"<node>:<i>"``
    (split on the last ``:``) produced by an EARLIER node, ``parents`` == distinct producers
    of ``inputs`` in first-use order, graph inputs produced by ``input`` nodes, graph outputs
    produced by some node, non-negative static shapes.
    """
    problems: List[str] = []
    produced: Dict[str, str] = {}
    seen_nodes = set()
    for pos, node in enumerate(graph.nodes):
        where = f"node {pos} '{node.name}'"
        if node.index != pos:
            problems.append(f"{where}: index {node.index} != position {pos}")
        if node.name in seen_nodes:
            problems.append(f"{where}: duplicate node name")
        expected_parents: List[str] = []
        for t in node.inputs:
            producer, idx = split_tensor_name(t)
            if t not in produced:
                problems.append(f"{where}: input '{t}' is not produced by an earlier node")
            elif produced[t] != producer:
                problems.append(f"{where}: input '{t}' names producer '{producer}' but '{produced[t]}' made it")
            if not idx.isdigit():
                problems.append(f"{where}: input '{t}' has no ':<index>' suffix")
            if producer not in expected_parents:
                expected_parents.append(producer)
        if node.parents != expected_parents:
            problems.append(f"{where}: parents {node.parents} != producers of inputs {expected_parents}")
        if not node.outputs:
            problems.append(f"{where}: no outputs")
        for i, t in enumerate(node.outputs):
            if t.name != f"{node.name}:{i}":
                problems.append(f"{where}: output {i} is named '{t.name}', expected '{node.name}:{i}'")
            if t.name in produced:
                problems.append(f"{where}: duplicate tensor name '{t.name}'")
            if any(s < 0 for s in t.shape):
                problems.append(f"{where}: output '{t.name}' has a dynamic shape {t.shape}")
            produced[t.name] = node.name
        if node.optype == "input" and (node.inputs or node.weights):
            problems.append(f"{where}: input nodes take no inputs or weights")
        seen_nodes.add(node.name)
    for t in graph.inputs:
        producer = split_tensor_name(t)[0]
        if t not in produced:
            problems.append(f"graph input '{t}' is not a node output")
        elif graph.node(producer).optype != "input":
            problems.append(f"graph input '{t}' is not produced by an input node")
    for t in graph.outputs:
        if t not in produced:
            problems.append(f"graph output '{t}' is not a node output")
    if problems:
        raise GraphError("invalid MSCGraph '%s':\n  %s" % (graph.name, "\n  ".join(problems)))
