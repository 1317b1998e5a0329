"""Dynamic dims of a ``torch.export`` program (``torch.export.Dim``) -> MSC prims.

MSC writes a dynamic dim as ``-1`` in a tensor's ``shape`` and names its value in the tensor's
``prims`` (one entry per dim: a prim name, or the literal size for a static dim); the graph's
``prims`` list is the DAG of those values: a ``shape`` prim per symbolic input dim (attrs
``producer``, ``out_idx``, ``dim``), ``Int`` constants and ``Add`` / ``Sub`` / ``Mul`` over them,
named ``UPPER(optype)_<n>`` (apache/tvm ``src/contrib/msc/core/ir/graph_builder.cc``,
``GraphBuilder::MatchOrCreatePrim``; ../shared/reference/mscgraph_schema.md "Prim object").

How (:func:`translate_dynamic`): the program is converted once per assignment of sizes to its
symbols -- the example sizes (each symbol's hint), then each symbol and each pair of symbols moved
to another size in its range, then all moved at once -- and the converted graphs are compared. A
dim that changes is dynamic; its value must be an integer polynomial of the symbols with terms of
degree <= 2 without squares (``c0 + c1 * s1 + c12 * s1 * s2 + ...``, fitted from all conversions
but the last and checked on it), which covers dynamic batch and sequence lengths, their multiples
(``batch * heads``) and flattened products (``batch * seq``). Everything else must not change: the graph's structure (nodes, optypes, edges),
weights and attrs, except a ``reshape``'s target ``shape``, whose dynamic entries become ``-1``,
and a ``strided_slice`` that takes a dynamic axis whole, which leaves that axis out of its lists. Anything else that depends on a dynamic size is an :class:`ExportError` naming
the tensor, node or weight (e.g. a strided convolution over a dynamic spatial dim, whose output
size is a floor division).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .fx_importer import ExportError
from .mscgraph import MSCGraph, split_tensor_name

#: Assignment of sizes to the program's symbols (sympy Symbol -> int).
Assignment = Dict[object, int]


class Symbol:
    """One symbolic input dim: the sympy ``symbol``, its MSC prim ``name`` (the ``torch.export.Dim``
    name when the program still knows it, else the symbol's, e.g. ``s77``), the example size
    ``hint`` and the range ``[lo, hi]`` from ``ep.range_constraints``."""

    def __init__(self, symbol, name: str, hint: int, lo: int, hi: int, producer: Tuple[int, int]) -> None:
        self.symbol, self.name, self.hint, self.lo, self.hi = symbol, name, hint, lo, hi
        self.producer = producer  # (user input index, dim) where it first appears

    def other_sizes(self) -> Tuple[int, int]:
        """Two more sizes in range besides the hint, at least 2 (torch.export specializes 0 and
        1): above the hint where there is room, else below. Raises ExportError if there are none."""
        lo = max(self.lo, 2)
        above = [v for v in (self.hint + 1, self.hint + 2) if v <= self.hi]
        below = [v for v in (self.hint - 1, self.hint - 2) if v >= lo]
        sizes = (above + below)[:2]
        if len(sizes) < 2:
            raise ExportError(f"dynamic dim {self.name}: its range [{self.lo}, {self.hi}] leaves fewer than three "
                              f"sizes >= 2 to tell how the graph depends on it; export it static")
        return sizes[0], sizes[1]


def program_symbols(ep) -> List[Symbol]:
    """The symbols of ``ep``'s user inputs' shapes, in order of first use. Every symbolic input
    dim must be a plain symbol (not a derived ``Dim`` expression such as ``2 * d``)."""
    import sympy
    from torch.export.graph_signature import InputKind
    user = {spec.arg.name for spec in ep.graph_signature.input_specs if spec.kind == InputKind.USER_INPUT}
    found: "OrderedDict[object, Symbol]" = OrderedDict()
    problems = []
    inputs = [node for node in ep.graph.nodes if node.op == "placeholder" and node.name in user]
    for index, node in enumerate(inputs):
        for i, d in enumerate(getattr(node.meta.get("val"), "shape", ())):
            if isinstance(d, int):
                continue
            expr = d.node.expr
            if not isinstance(expr, sympy.Symbol):
                problems.append(f"{node.name} dim {i} is {expr}")
                continue
            if expr not in found:
                vr = ep.range_constraints.get(expr)
                lo = _bound(vr.lower if vr is not None else None, 2)
                hi = _bound(vr.upper if vr is not None else None, 2 ** 31 - 1)
                found[expr] = Symbol(expr, _dim_name(d, expr), int(d.node.hint), lo, hi, (index, i))
    if problems:
        raise ExportError("derived dynamic dims are not supported (each symbolic input dim must be one "
                          "torch.export.Dim): " + ", ".join(problems))
    names = [s.name for s in found.values()]
    for s in found.values():  # two Dims of one name, or a name that is also a symbol's
        if names.count(s.name) > 1:
            s.name = str(s.symbol)
    return list(found.values())


def _bound(value, default: int) -> int:
    """A range bound as an int; an infinite one (sympy oo, torch's int_oo) or none: `default`."""
    return int(value) if getattr(value, "is_Integer", False) else default


def _dim_name(d, expr) -> str:
    """The Dim's own name ("batch") where the shape environment still maps the symbol's source to
    it (an ExportedProgram from torch.export.export; not one loaded from a .pt2), else "s77"."""
    env = d.node.shape_env
    debug = getattr(env, "source_name_to_debug_name", {}) or {}
    for source in getattr(env, "var_to_sources", {}).get(expr, []):
        name = debug.get(getattr(source, "name", None))
        if isinstance(name, str) and name.isidentifier():
            return name
    return str(expr)


def monomials(k: int) -> List[Tuple[int, ...]]:
    """The terms a dim may hold, as tuples of symbol indices: (), (i,), and (i, j) for i < j."""
    return [()] + [(i,) for i in range(k)] + [(i, j) for i in range(k) for j in range(i + 1, k)]


def assignments(symbols: Sequence[Symbol]) -> List[Assignment]:
    """Where the program is converted: the hints; each symbol moved alone; each pair moved
    together; all moved to their second other size (the check point)."""
    base = {s.symbol: s.hint for s in symbols}
    out = []
    for term in monomials(len(symbols)):
        out.append({**base, **{symbols[i].symbol: symbols[i].other_sizes()[0] for i in term}})
    out.append({s.symbol: s.other_sizes()[1] for s in symbols})
    return out


def translate_dynamic(convert: Callable[[Assignment], Tuple[MSCGraph, Dict[str, np.ndarray]]],
                      symbols: Sequence[Symbol]) -> Tuple[MSCGraph, Dict[str, np.ndarray]]:
    """``convert(assignment)`` -> (graph, weights) at those sizes; returns the graph at the hints
    with its dynamic dims as MSC prims (see the module docstring). Raises ExportError."""
    points = assignments(symbols)
    results = [convert(a) for a in points]
    graph, weights = results[0]
    others = [g for g, _ in results[1:]]
    _same_structure(graph, others)
    _same_weights(weights, [w for _, w in results[1:]])
    prims = _PrimBuilder(graph, symbols)
    shapes = [{t.name: list(t.shape) for n in g.nodes for t in n.outputs} for g, _ in results]
    for node, versions in zip(graph.nodes, zip(*[g.nodes for g in others])):
        for k, tensor in enumerate(node.outputs):
            dims = []
            for d, size in enumerate(tensor.shape):
                values = [size] + [v.outputs[k].shape[d] for v in versions]
                dims.append(_fit(values, points, symbols, lambda: f"dim {d} of tensor {tensor.name} (node "
                                                                  f"{node.name}, {node.optype})"))
            if any(c is not None for c in dims):
                tensor.prims = [prims.of(c) if c is not None else str(s) for c, s in zip(dims, tensor.shape)]
                tensor.shape = [-1 if c is not None else s for c, s in zip(dims, tensor.shape)]
        _attrs_static(node, versions, [[s.get(t) for t in node.inputs] for s in shapes])
    graph.prims = prims.prims
    return graph, weights


def _fit(values: List[int], points: List[Assignment], symbols: Sequence[Symbol], what: Callable[[], str]
         ) -> Optional[Dict[Tuple[int, ...], int]]:
    """Integer coefficients {monomial: c} with value = sum c * prod(symbols in the monomial) at
    every point (see :func:`assignments` for their order), or None when the value is the same at
    all of them (static). Raises ExportError when there are none."""
    if all(v == values[0] for v in values):
        return None
    terms = monomials(len(symbols))
    at = dict(zip(terms, values))
    base = points[0]
    h = [base[s.symbol] for s in symbols]
    step = [points[1 + i][s.symbol] - h[i] for i, s in enumerate(symbols)]
    coeffs: Optional[Dict[Tuple[int, ...], int]] = {}
    for term in terms[1 + len(symbols):]:  # pairs: v(i+j) - v(i) - v(j) + v(0) = c_ij * step_i * step_j
        i, j = term
        num, den = at[term] - at[(i,)] - at[(j,)] + at[()], step[i] * step[j]
        if num % den:
            coeffs = None
            break
        coeffs[term] = num // den
    if coeffs is not None:
        for i in range(len(symbols)):  # v(i) - v(0) = step_i * (c_i + sum_j c_ij h_j)
            delta = at[(i,)] - at[()]
            if delta % step[i]:
                coeffs = None
                break
            coeffs[(i,)] = delta // step[i] - sum(coeffs.get(tuple(sorted((i, j))), 0) * h[j]
                                                   for j in range(len(symbols)) if j != i)
    if coeffs is not None:
        coeffs[()] = values[0] - _evaluate(coeffs, h)
        check = [points[-1][s.symbol] for s in symbols]
        if _evaluate(coeffs, check) == values[-1]:
            return {t: c for t, c in coeffs.items() if c}
    sizes = ", ".join("%s=%s" % (s.name, "/".join(str(p[s.symbol]) for p in points)) for s in symbols)
    raise ExportError(f"{what()} is {'/'.join(map(str, values))} at {sizes}: not an integer polynomial of the "
                      "dynamic dims with terms of degree <= 2 (e.g. a strided window over a dynamic spatial dim); "
                      "export that dim static")


def _evaluate(coeffs: Dict[Tuple[int, ...], int], sizes: List[int]) -> int:
    total = 0
    for term, c in coeffs.items():
        for i in term:
            c *= sizes[i]
        total += c
    return total


def _same_structure(graph: MSCGraph, others: List[MSCGraph]) -> None:
    def skeleton(g: MSCGraph):
        return ([(n.name, n.optype, tuple(n.inputs), len(n.outputs), tuple(sorted(n.weights))) for n in g.nodes],
                tuple(g.inputs), tuple(g.outputs))

    ref = skeleton(graph)
    for g in others:
        mine = skeleton(g)
        if mine != ref:
            nodes = [a[0] for a, b in zip(ref[0], mine[0]) if a != b] or ["(node count %d vs %d)" % (
                len(ref[0]), len(mine[0]))]
            raise ExportError("the converted graph changes with the dynamic dims' sizes (first at node "
                              f"{nodes[0]}): the conversion depends on a dynamic size; export that dim static")


def _same_weights(weights: Dict[str, np.ndarray], others: List[Dict[str, np.ndarray]]) -> None:
    for other in others:
        for name, array in weights.items():
            o = other.get(name)
            if o is None or o.shape != array.shape or o.dtype != array.dtype or not np.array_equal(o, array):
                raise ExportError(f"weight {name} changes with the dynamic dims' sizes (a constant computed from a "
                                  "dynamic size); export that dim static")


def _msc_list(values: List[str]) -> str:
    """MSC's int-list attr text: comma-joined, a trailing comma for one element."""
    return ",".join(values) + ("," if len(values) == 1 else "")


def _drop_whole_slice_axes(node, versions, input_shapes: List[List[Optional[List[int]]]]) -> None:
    """A strided_slice lists every axis (v0.20's _getitem); an axis whose `end` is the input's
    whole dynamic extent at every size is taken whole, so it is left out of axes / begin / end /
    strides (here and in the other conversions), which keeps the attrs static."""
    lists = ("axes", "begin", "end", "strides")
    all_attrs = [node.attrs] + [v.attrs for v in versions]
    if any(k not in a for a in all_attrs for k in lists[:3]):
        return
    split = [{k: [x for x in a.get(k, "").split(",") if x] for k in lists} for a in all_attrs]
    axes = split[0]["axes"]
    drop = []
    for i, axis in enumerate(axes):
        ends = [p["end"][i] if i < len(p["end"]) else None for p in split]
        if len(set(ends)) == 1:
            continue
        dims = [shapes[0][int(axis)] if shapes and shapes[0] is not None else None for shapes in input_shapes]
        begins = [p["begin"][i] if i < len(p["begin"]) else None for p in split]
        steps = [p["strides"][i] if i < len(p["strides"]) else "1" for p in split]
        if all(e == str(d) for e, d in zip(ends, dims)) and set(begins) == {"0"} and set(steps) == {"1"}:
            drop.append(i)
    if not drop:
        return
    for attrs, parts in zip(all_attrs, split):
        for k in lists:
            if k in attrs and len(parts[k]) == len(axes):
                attrs[k] = _msc_list([v for i, v in enumerate(parts[k]) if i not in drop])


def _attrs_static(node, versions, input_shapes: List[List[Optional[List[int]]]]) -> None:
    """Every attr the same at all sizes, with two exceptions. A reshape's `shape`: its changing
    entries become -1 as MSC writes a ShapeExpr arg's symbolic dims (the generated code reshapes
    to the output's shape, known once the graph is specialized; relax uses the output's prims).
    A strided_slice taking a dynamic axis whole: that axis leaves its lists. `input_shapes`: per
    conversion, the shapes of the node's inputs."""
    if node.optype == "strided_slice":
        _drop_whole_slice_axes(node, versions, input_shapes)
    for key, value in node.attrs.items():
        seen = [v.attrs.get(key) for v in versions]
        if all(s == value for s in seen):
            continue
        entries = [value.split(",")] + [(s or "").split(",") for s in seen]
        if node.optype == "reshape" and key == "shape" and all(len(e) == len(entries[0]) for e in entries):
            node.attrs[key] = ",".join("-1" if any(e[i] != v for e in entries) else v
                                       for i, v in enumerate(entries[0]))
            continue
        raise ExportError(f"attr {key!r} of node {node.name} ({node.optype}) changes with the dynamic dims' sizes "
                          f"({value!r} vs {seen[0]!r}); export that dim static")


class _PrimBuilder:
    """MSC's prim DAG for affine expressions (c0, c1, ..., ck) of the symbols, each expression
    and sub-expression once (GraphBuilder::MatchOrCreatePrim)."""

    def __init__(self, graph: MSCGraph, symbols: Sequence[Symbol]) -> None:
        self.symbols = list(symbols)
        self.prims: List[dict] = []
        self.by_key: Dict[tuple, str] = {}
        self.counts: Dict[str, int] = {}
        for s in self.symbols:  # the shape prim: the first graph input dim that is this symbol
            self._add(("sym", s.name), s.name, "shape", [], self._producer(graph, s))

    @staticmethod
    def _producer(graph: MSCGraph, s: Symbol) -> Dict[str, str]:
        """The input node of the user input the symbol first appears in (inp_<index>, as the
        importer names them)."""
        index, dim = s.producer
        node = "inp_%d" % index
        if not any(split_tensor_name(t)[0] == node for t in graph.inputs):
            raise ExportError(f"dynamic dim {s.name}: its input {node} is not used by the graph")
        return {"producer": node, "out_idx": "0", "dim": str(dim)}

    def _add(self, key: tuple, name: str, optype: str, parents: List[str], attrs: Dict[str, str]) -> str:
        if key not in self.by_key:
            self.prims.append({"index": len(self.prims), "name": name, "optype": optype, "parents": parents,
                               "attrs": attrs})
            self.by_key[key] = name
        return self.by_key[key]

    def _op(self, optype: str, a: str, b: str) -> str:
        key = (optype, a, b)
        if key not in self.by_key:
            n = self.counts.get(optype, 0)
            self.counts[optype] = n + 1
            return self._add(key, "%s_%d" % (optype.upper(), n), optype, [a, b], {})
        return self.by_key[key]

    def _int(self, v: int) -> str:
        return self._add(("Int", v), "Int_%d" % v if v >= 0 else "Int_neg%d" % -v, "Int", [], {"value": str(v)})

    def of(self, coeffs: Dict[Tuple[int, ...], int]) -> str:
        """The prim of sum c * prod(symbols of the term), e.g. {(0, 1): 1} -> MUL_0 = batch * seq."""
        expr: Optional[str] = None
        for term in sorted((t for t in coeffs if t), key=lambda t: (len(t), t)):
            c = coeffs[term]
            value = self.by_key[("sym", self.symbols[term[0]].name)]
            for i in term[1:]:
                value = self._op("Mul", value, self.by_key[("sym", self.symbols[i].name)])
            if abs(c) != 1:
                value = self._op("Mul", value, self._int(abs(c)))
            if expr is None:
                expr = value if c > 0 else self._op("Sub", self._int(0), value)
            else:
                expr = self._op("Add" if c > 0 else "Sub", expr, value)
        c0 = coeffs.get((), 0)
        if expr is None:
            return self._int(c0)
        if c0:
            expr = self._op("Add" if c0 > 0 else "Sub", expr, self._int(abs(c0)))
        return expr
