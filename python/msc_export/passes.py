"""The Relax passes MSC's ``from_relax`` runs before building the graph, re-implemented.

``python/tvm/contrib/msc/core/frontend/translate.py`` ``from_relax`` (v0.20) runs::

    FoldConstant -> SetExprName -> FuseOpsByPattern(msc patterns) -> SetExprName -> SetExprLayout

and only then ``RelaxGraphBuilder``.  Each function below reproduces one pass on the model in
:mod:`msc_export.relax_ir`:

* :func:`fold_constant` (``src/relax/transform/fold_constant.cc``): a call whose tensor
  arguments are all constants becomes a new constant (e.g. ``permute_dims(W)`` of a Linear
  weight, ``reshape(b, (1, -1, 1, 1))`` of a conv bias);
* :func:`set_expr_name` (``src/contrib/msc/core/transform/set_expr_name.cc``): calls are named
  after the op (``conv2d``, ``relu``; made unique with ``_1``, ``_2`` ... in binding order),
  constants ``const``, ``const_1`` ... at first use, tuples ``tuple``, tuple items
  ``"<tuple>.<index>"``; a constant consumed as a weight by a second call marks that call's
  ``shared_ref`` with the first consumer's name;
* :func:`fuse_ops_by_pattern` (``python/tvm/contrib/msc/core/transform/pattern.py``, the
  patterns "after optimize" that match once constants are folded): ``msc.linear_bias``
  (``add(matmul(x, W), b)``), ``msc.linear`` (``matmul(x, W)``), ``msc.conv2d_bias`` /
  ``msc.conv1d_bias`` (``add(conv(x, W), b)``), ``msc.embedding`` (``take(W, astype(x, int32))``
  and ``reshape(take(W, reshape(astype(x), [-1])), shape)``; W a 2-d float32 constant; the shape
  arguments become attrs ``reduce_in``/``expand_out``), ``msc.attention`` (``permute_dims`` of
  q, k, v -> ``nn.attention`` or ``nn.attention_bias`` (4th input: the mask) -> ``permute_dims``;
  attrs ``axes``, ``axes_1``, ``axes_2``, ``scale``, ``causal_mask``, ``window_size``,
  ``axes_3``); the fused node is named after its anchor call (``msc_attrs_getter``: the matmul /
  conv / take / attention name);
* :func:`set_expr_layout` (``src/contrib/msc/core/transform/set_expr_layout.cc``,
  ``layout_utils.cc``): MSC's forward + backward layout inference, falling back to Relax's
  ``FRelaxInferLayout`` (whose unknown layouts are ``"ABCD..."``) exactly where MSC does.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple as PyTuple

import numpy as np

from . import relax_ir as R

# ============================================================================ FoldConstant


def _const_value(e: R.Expr) -> Any:
    if isinstance(e, R.Constant):
        return e.data
    if isinstance(e, R.Tuple):
        vals = [_const_value(f) for f in e.fields]
        return None if any(v is None for v in vals) else vals
    return None


def _fold(call: R.Call) -> Optional[np.ndarray]:
    """Evaluate ``call`` if all its tensor arguments are constants and the op is foldable here."""
    op, a = call.op, call.attrs
    if not isinstance(op, str):
        return None
    tensors = [x for x in call.args if not isinstance(x, (R.ShapeExpr, R.PrimValue))]
    if op == "relax.strided_slice":
        tensors = call.args[:1]
    values = [_const_value(x) for x in tensors]
    if not tensors or any(v is None for v in values):
        return None
    x = values[0]
    dtype = np.dtype(call.sinfo.dtype) if isinstance(call.sinfo, R.TensorSI) else None
    if op == "relax.reshape":
        return x.reshape(call.args[1].values)
    if op == "relax.permute_dims":
        return np.transpose(x, a["axes"]).copy()
    if op in ("relax.add", "relax.subtract", "relax.multiply", "relax.divide"):
        fn = {"relax.add": np.add, "relax.subtract": np.subtract,
              "relax.multiply": np.multiply, "relax.divide": np.divide}[op]
        return fn(values[0], values[1]).astype(dtype)
    if op == "relax.expand_dims":
        out = x
        nd = x.ndim + len(a["axis"])
        for ax in sorted(v % nd for v in a["axis"]):
            out = np.expand_dims(out, ax)
        return out
    if op == "relax.squeeze":
        return np.reshape(x, call.sinfo.shape)
    if op == "relax.concat":
        return np.concatenate(values[0], axis=a["axis"])
    if op == "relax.strided_slice":
        index = [slice(None)] * x.ndim
        axes, begin, end, strides = (tuple(p.value for p in t.fields) for t in call.args[1:5])
        for ax, b, e, s in zip(axes, begin, end, strides):
            index[ax] = slice(b, e, s)
        return x[tuple(index)].copy()
    if op in _FOLD_ELEMENTWISE:
        return np.asarray(_FOLD_ELEMENTWISE[op](*values)).astype(dtype)
    if op == "relax.astype":
        return x.astype(dtype)
    if op == "relax.where":
        return np.where(values[0], values[1], values[2]).astype(dtype)
    if op == "relax.take":
        return np.take(x, values[1], axis=a["axis"])
    if op in ("relax.triu", "relax.tril"):
        fn = np.triu if op == "relax.triu" else np.tril
        return fn(x, int(call.args[1].value)).astype(dtype)
    if op in ("relax.sum", "relax.max"):
        axis = None if a["axis"] is None else tuple(a["axis"])
        fn = np.sum if op == "relax.sum" else np.max
        return np.asarray(fn(x, axis=axis, keepdims=bool(a["keepdims"]))).astype(dtype)
    if op == "relax.broadcast_to":
        return np.broadcast_to(x, call.args[1].values).copy()
    if op == "relax.full":
        return np.full(call.args[0].values, x, dtype=dtype)
    if op == "relax.nn.pad" and a["pad_mode"] == "constant":
        pw = a["pad_width"]
        return np.pad(x, [(pw[2 * i], pw[2 * i + 1]) for i in range(x.ndim)], constant_values=a["pad_value"])
    return None


# relax ops evaluated elementwise by FoldConstant when every operand is a constant
_FOLD_ELEMENTWISE = {
    "relax.equal": np.equal, "relax.not_equal": np.not_equal, "relax.less": np.less,
    "relax.less_equal": np.less_equal, "relax.greater": np.greater, "relax.greater_equal": np.greater_equal,
    "relax.logical_and": np.logical_and, "relax.logical_or": np.logical_or, "relax.logical_not": np.logical_not,
    "relax.maximum": np.maximum, "relax.minimum": np.minimum, "relax.power": np.power,
    "relax.exp": np.exp, "relax.sqrt": np.sqrt, "relax.negative": np.negative,
    "relax.rsqrt": lambda v: 1.0 / np.sqrt(v),
}


def fold_constant(func: R.Function) -> R.Function:
    """Replace every foldable all-constant call by a constant; uses of its var see the constant."""
    replace: Dict[int, R.Constant] = {}

    def sub(e: R.Expr) -> R.Expr:
        if isinstance(e, R.Var) and id(e) in replace:
            return replace[id(e)]
        if isinstance(e, R.Tuple):
            fields = [sub(f) for f in e.fields]
            if any(a is not b for a, b in zip(fields, e.fields)):
                return R.Tuple(fields)
        return e

    kept: List[R.Binding] = []
    for b in func.bindings:
        v = b.value
        if isinstance(v, R.Call):
            v.args = [sub(x) for x in v.args]
            folded = _fold(v)
            if folded is not None:
                replace[id(b.var)] = R.Constant(np.ascontiguousarray(folded))
                continue
        elif isinstance(v, R.Tuple):
            v.fields = [sub(f) for f in v.fields]
        elif isinstance(v, R.TupleGetItem):
            v.tuple_value = sub(v.tuple_value)
        kept.append(b)
    return R.Function(func.params, kept, sub(func.body), func.attrs)


# ============================================================================ SetExprName


def input_types(optype: str, n: int) -> List[str]:
    """``ExprUtils::GetInputTypes(optype, n, as_relax=true)`` (``src/contrib/msc/core/utils.cc``)."""
    if optype in ("broadcast_to", "reshape"):
        t = ["input"] + (["shape"] if n > 1 else [])
    elif optype == "clip":
        t = ["input"] + (["min", "max"] if n > 1 else [])
    elif optype == "full":
        t = ["shape", "input"]
    elif optype == "strided_slice":
        t = ["input"] + (["axes", "begin", "end", "strides"] if n > 1 else [])
    elif optype in ("triu", "tril", "trilu"):
        t = ["input", "k"]
    elif optype == "image.resize2d":
        t = ["input"] + (["size"] if n > 1 else [])
    elif optype in ("nn.conv1d", "nn.conv2d", "nn.conv3d", "msc.linear"):
        t = ["input"] + (["weight"] if n > 1 else [])
    elif optype == "nn.batch_norm":
        t = ["input"] + (["gamma", "beta", "mean", "var"] if n > 1 else [])
    elif optype in ("nn.layer_norm", "nn.group_norm"):
        t = ["input"] + (["gamma", "beta"] if n > 1 else [])
    elif optype in ("msc.conv1d_bias", "msc.conv2d_bias"):
        t = ["input"] + (["weight", "bias"] if n > 1 else []) + (["expand_bias"] if n > 3 else [])
    elif optype == "msc.linear_bias":
        t = ["input"] + (["weight", "bias"] if n > 1 else [])
    elif optype == "msc.embedding" and n == 2:
        t = ["input", "weight"]
    elif optype == "msc.embedding" and n == 4:
        t = ["input", "reduce_in", "weight", "expand_out"]
    elif optype == "msc.gelu":
        t = ["input", "factor_1", "factor_2", "factor_3"]
    else:
        t = ["input"] * n
    if len(t) != n:
        raise ValueError(f"Optype {optype} get input types {t} and inputs_num {n} mismatch")
    return t


def call_optype(call: R.Call) -> str:
    if isinstance(call.op, str):
        return call.op.replace("relax.", "", 1) if call.op.startswith("relax.") else call.op
    return call.op.attrs["Composite"]


class _NameSetter:
    """One run of MSC's ``RelaxExprNameSetter``."""

    def __init__(self) -> None:
        self.setted: Dict[str, int] = {}        # name -> id(expr)
        self.consumers: Dict[str, str] = {}     # constant name -> first weight consumer
        self.expr_names: Dict[int, str] = {}    # id(binding var) -> name

    def unique(self, expr: R.Expr, hint: str) -> str:
        name = expr.span.get("name") or hint
        if name not in self.setted:
            self.setted[name] = id(expr)
            return name
        if self.setted[name] == id(expr):
            return name
        cnt = 1
        while f"{name}_{cnt}" in self.setted and self.setted[f"{name}_{cnt}"] != id(expr):
            cnt += 1
        name = f"{name}_{cnt}"
        self.setted.setdefault(name, id(expr))
        return name

    def visit_arg(self, e: R.Expr) -> None:
        if isinstance(e, R.Constant):
            e.span["name"] = self.unique(e, "const")
        elif isinstance(e, R.Tuple):
            for f in e.fields:
                self.visit_arg(f)

    def run(self, func: R.Function) -> None:
        for b in func.bindings:
            v = b.value
            if isinstance(v, R.Call):
                for a in v.args:
                    self.visit_arg(a)
                if isinstance(v.op, str):
                    hint = v.op[v.op.rfind(".") + 1:]
                    name = self.unique(v, hint)
                    v.span["name"] = name
                else:
                    # A composite call: MSC names the graph node after the function's
                    # "unique_name" (its anchor call); we key the shared_ref on that name.
                    name = v.op.attrs["unique_name"]
                optype = call_optype(v)
                for t, a in zip(input_types(optype, len(v.args)), v.args):
                    if t != "input" and isinstance(a, R.Constant):
                        cname = a.span["name"]
                        if cname in self.consumers and self.consumers[cname] != name:
                            v.span["shared_ref"] = self.consumers[cname]
                        else:
                            self.consumers.setdefault(cname, name)
                self.expr_names[id(b.var)] = name
            elif isinstance(v, R.Constant):
                v.span["name"] = self.unique(v, "const")
                self.expr_names[id(b.var)] = v.span["name"]
            elif isinstance(v, R.Tuple):
                for f in v.fields:
                    self.visit_arg(f)
                v.span["name"] = self.unique(v, "tuple")
                self.expr_names[id(b.var)] = v.span["name"]
            elif isinstance(v, R.TupleGetItem):
                name = self.expr_names[id(v.tuple_value)] + "." + str(v.index)
                v.span["name"] = name
                self.expr_names[id(b.var)] = name
            elif isinstance(v, R.ShapeExpr):
                v.span["name"] = self.unique(v, "shape")
                self.expr_names[id(b.var)] = v.span["name"]
            elif isinstance(v, R.Var):
                if id(v) in self.expr_names:
                    self.expr_names[id(b.var)] = self.expr_names[id(v)]


def set_expr_name(func: R.Function) -> R.Function:
    _NameSetter().run(func)
    return func


# ============================================================================ FuseOpsByPattern


def _uses(func: R.Function) -> Dict[int, int]:
    count: Dict[int, int] = {}

    def visit(e: R.Expr) -> None:
        if isinstance(e, R.Var):
            count[id(e)] = count.get(id(e), 0) + 1
        elif isinstance(e, R.Tuple):
            for f in e.fields:
                visit(f)

    for b in func.bindings:
        v = b.value
        if isinstance(v, R.Call):
            for a in v.args:
                visit(a)
        elif isinstance(v, R.Tuple):
            visit(v)
        elif isinstance(v, R.TupleGetItem):
            visit(v.tuple_value)
        elif isinstance(v, R.Var):
            visit(v)
    visit(func.body)
    return count


def _bias_ok(bias: np.ndarray, channel_axis: int, out_ndim: int) -> bool:
    """The bias must broadcast along one axis only (stricter than MSC, which only checks ndim)."""
    if bias.ndim == 1:
        return True
    if bias.ndim != out_ndim:
        return False
    return all(s == 1 for i, s in enumerate(bias.shape) if i != channel_axis % out_ndim)


def fuse_ops_by_pattern(func: R.Function) -> R.Function:
    """Fuse MSC's composite patterns; priority as ``get_patterns_with_prefix("msc.")`` returns them."""
    producers = {id(b.var): b for b in func.bindings}
    uses = _uses(func)
    fused: Dict[int, R.Binding] = {}   # id(root binding var) -> replacement binding
    consumed: set = set()              # ids of bindings folded into a composite

    def producer(e: R.Expr, op: str) -> Optional[R.Binding]:
        if not isinstance(e, R.Var) or id(e) not in producers or id(e) in consumed or id(e) in fused:
            return None
        b = producers[id(e)]
        if isinstance(b.value, R.Call) and b.value.op == op and uses.get(id(e), 0) == 1:
            return b
        return None

    def make(name: str, root: R.Binding, inner: List[R.Binding], args: List[R.Expr], anchor: R.Call) -> None:
        params = [R.Var(f"param_{i}", a.sinfo) for i, a in enumerate(args)]
        mapping = {id(a): p for a, p in zip(args, params)}
        new_inner = []
        for b in inner:  # fresh vars: the root's var stays the caller's binding var
            c = b.value
            new_args = [mapping.get(id(x), x) for x in c.args]
            call = R.Call(c.op, new_args, c.attrs, c.sinfo)
            call.span = c.span
            var = R.Var(b.var.name_hint + "_inner", b.var.sinfo)
            mapping[id(b.var)] = var
            new_inner.append(R.Binding(var, call))
        f = R.Function(params, new_inner, new_inner[-1].var,
                       {"Composite": name, "unique_name": anchor.span.get("name", "msc_fused")})
        call = R.Call(f, args, sinfo=root.value.sinfo)
        call.span["name"] = f.attrs["unique_name"]
        fused[id(root.var)] = R.Binding(root.var, call)
        for b in inner:
            if b is not root:
                consumed.add(id(b.var))

    def permute_of(e: R.Expr) -> Optional[R.Binding]:
        return producer(e, "relax.permute_dims")

    # attention (+ mask): permute_dims(q), permute_dims(k), permute_dims(v) -> nn.attention(_bias)
    # -> permute_dims; named after the attention call ("attention" / "attention_bias")
    for b in func.bindings:
        v = b.value
        if id(b.var) in consumed or id(b.var) in fused or not isinstance(v, R.Call) or v.op != "relax.permute_dims":
            continue
        att = producer(v.args[0], "relax.nn.attention") or producer(v.args[0], "relax.nn.attention_bias")
        if att is None:
            continue
        trans = [permute_of(x) for x in att.value.args[:3]]
        if any(t is None for t in trans) or len({id(t) for t in trans}) != 3:
            continue
        args = [t.value.args[0] for t in trans] + list(att.value.args[3:])
        make("msc.attention", b, trans + [att, b], args, att.value)
    # embedding: take(W, astype(x, "int32")) and take(W, reshape(astype(x), [-1])) -> reshape;
    # W a 2-d float32 constant; named after the take
    for b in func.bindings:
        v = b.value
        if id(b.var) in consumed or id(b.var) in fused or not isinstance(v, R.Call):
            continue
        take = root = None
        if v.op == "relax.reshape":
            take = producer(v.args[0], "relax.take")
            root = b
        elif v.op == "relax.take":
            take, root = b, b
        if take is None or not isinstance(take.value.args[0], R.Constant):
            continue
        weight = take.value.args[0]
        if weight.data.ndim != 2 or str(weight.data.dtype) != "float32":
            continue
        if root is not take:  # the reshape variant
            reduce = producer(take.value.args[1], "relax.reshape")
            cast = producer(reduce.value.args[0], "relax.astype") if reduce else None
            if cast is None or cast.value.attrs["dtype"] != "int32" or len(reduce.value.sinfo.shape) != 1:
                continue
            make("msc.embedding", root, [cast, reduce, take, root],
                 [cast.value.args[0], reduce.value.args[1], weight, root.value.args[1]], take.value)
        else:
            cast = producer(take.value.args[1], "relax.astype")
            if cast is None or cast.value.attrs["dtype"] != "int32":
                continue
            make("msc.embedding", root, [cast, take], [cast.value.args[0], weight], take.value)

    # linear_bias, linear, conv2d_bias, conv1d_bias (later registrations have higher priority)
    for b in func.bindings:
        v = b.value
        if id(b.var) in consumed or id(b.var) in fused or not isinstance(v, R.Call) or v.op != "relax.add":
            continue
        mm = producer(v.args[0], "relax.matmul")
        bias = v.args[1]
        if mm and isinstance(mm.value.args[1], R.Constant) and mm.value.args[1].data.ndim == 2 \
                and isinstance(bias, R.Constant) and _bias_ok(bias.data, -1, len(v.sinfo.shape)):
            make("msc.linear_bias", b, [mm, b], [mm.value.args[0], mm.value.args[1], bias], mm.value)
    for b in func.bindings:
        v = b.value
        if id(b.var) in consumed or id(b.var) in fused or not isinstance(v, R.Call) or v.op != "relax.matmul":
            continue
        if isinstance(v.args[1], R.Constant) and v.args[1].data.ndim == 2:
            make("msc.linear", b, [b], [v.args[0], v.args[1]], v)
    for conv_op, name in (("relax.nn.conv2d", "msc.conv2d_bias"), ("relax.nn.conv1d", "msc.conv1d_bias")):
        for b in func.bindings:
            v = b.value
            if id(b.var) in consumed or id(b.var) in fused or not isinstance(v, R.Call) or v.op != "relax.add":
                continue
            conv = producer(v.args[0], conv_op)
            bias = v.args[1]
            if conv and isinstance(conv.value.args[1], R.Constant) and isinstance(bias, R.Constant) \
                    and bias.data.ndim == len(v.sinfo.shape) and _bias_ok(bias.data, 1, len(v.sinfo.shape)):
                make(name, b, [conv, b], [conv.value.args[0], conv.value.args[1], bias], conv.value)

    bindings = []
    for b in func.bindings:
        if id(b.var) in consumed:
            continue
        bindings.append(fused.get(id(b.var), b))
    return R.Function(func.params, bindings, func.body, func.attrs)


def composite_attrs(func: R.Function) -> "Dict[str, Any]":
    """``RelaxFuncAttrGetter``: attrs of every call in the composite, duplicates renamed ``key_1``..."""
    out: Dict[str, Any] = {}
    for b in func.bindings:
        for k, v in b.value.attrs.items():
            if k in out:
                cnt = 1
                while f"{k}_{cnt}" in out:
                    cnt += 1
                out[f"{k}_{cnt}"] = v
            else:
                out[k] = v
    return out


# ============================================================================ SetExprLayout

# A layout is a str ("" = undefined) or, for tuples, a list of str.


class _LayoutError(Exception):
    pass


def _get_index(index: int, size: int) -> int:
    v = index + size if index < 0 else index
    if not 0 <= v < size:
        raise _LayoutError(f"Index {index} out of range {size}")
    return v


def expand_layout(src: str, axes: Sequence[int]) -> str:
    """``LayoutUtils::ExpandLayout``: insert new axes, preferring N,C,H,W,D, else the first free letter."""
    if not src:
        return src
    layout = src
    used = set(src)
    prefer = ["N", "C", "H", "W", "D"]
    for a in sorted(axes):
        use_prefer = len(used) < len(prefer) and all(p in used for p in prefer[:len(used)])
        if use_prefer:
            new_axis = prefer[len(used)]
        else:
            c = "A"
            while c in used:
                c = chr(ord(c) + 1)
            new_axis = c
        used.add(new_axis)
        layout = layout[:a] + new_axis + layout[a:]
    return layout


def reduce_layout(src: str, axes: Sequence[int]) -> str:
    if not src:
        return src
    drop = set(axes)
    return "".join(c for i, c in enumerate(src) if i not in drop)


def permute_layout(src: str, axes: Sequence[int]) -> str:
    return "".join(src[a] for a in axes)


def infer_batch_dim(layout: str) -> int:
    return layout.index("N") if layout and "N" in layout else -1


def _accumulate_match(ins: Sequence[int], outs: Sequence[int], in_start: int, out_start: int) -> PyTuple[int, int]:
    in_size, out_size = len(ins), len(outs)
    in_pos, out_pos = in_start, out_start
    if in_pos >= in_size or out_pos >= out_size:
        return -1, -1
    in_acc, out_acc = ins[in_pos], outs[out_pos]
    while in_acc != out_acc:
        if in_acc > out_acc:
            out_pos += 1
            if out_pos >= out_size:
                return -1, -1
            out_acc *= outs[out_pos]
        else:
            in_pos += 1
            if in_pos >= in_size:
                return -1, -1
            in_acc *= ins[in_pos]
    while in_pos < in_size - 1 and ins[in_pos + 1] == 1:
        in_pos += 1
    while out_pos < out_size - 1 and outs[out_pos + 1] == 1:
        out_pos += 1
    return in_pos - in_start, out_pos - out_start


def infer_reshape_axes(ins: Sequence[int], outs: Sequence[int], batch_dim: int) -> PyTuple[List[int], List[int]]:
    """``InferReshapeAxes`` of ``set_expr_layout.cc``: (expand_axes, reduce_axes)."""
    expand: List[int] = []
    reduce: List[int] = []
    in_start = 0
    while in_start < len(ins):
        out_start = in_start + len(expand) - len(reduce)
        in_dist, out_dist = _accumulate_match(ins, outs, in_start, out_start)
        if in_dist == -1:
            return [], []
        if out_dist >= in_dist:
            for i in range(out_dist - in_dist):
                expand.append(out_start + i + 1 if batch_dim >= 0 and out_start + i == batch_dim else out_start + i)
        else:
            for i in range(in_dist - out_dist):
                reduce.append(in_start + i + 1 if batch_dim >= 0 and in_start + i == batch_dim else in_start + i)
        in_start += in_dist + 1
    if len(ins) + len(expand) - len(reduce) != len(outs):
        return [], []
    return expand, reduce


_UNARY = {"relax.nn.relu", "relax.nn.gelu", "relax.nn.silu", "relax.sigmoid", "relax.tanh", "relax.nn.gelu_tanh",
          "relax.exp", "relax.sqrt", "relax.rsqrt", "relax.erf", "relax.negative", "relax.logical_not",
          "relax.astype"}
_BINARY = {"relax.add", "relax.subtract", "relax.multiply", "relax.divide", "relax.power", "relax.maximum",
           "relax.minimum", "relax.equal", "relax.not_equal", "relax.less", "relax.less_equal", "relax.greater",
           "relax.greater_equal", "relax.logical_and", "relax.logical_or"}
_REDUCE = {"relax.mean", "relax.sum", "relax.max"}
# ops with a Relax FRelaxInferLayout (consulted only when MSC's own forward rule gives nothing)
_RELAX_INFER = _UNARY | _BINARY | {
    "relax.nn.softmax", "relax.concat", "relax.strided_slice", "relax.permute_dims", "relax.squeeze",
    "relax.expand_dims", "relax.mean", "relax.sum", "relax.max", "relax.split", "relax.nn.conv2d", "relax.nn.conv1d",
    "relax.nn.max_pool2d", "relax.nn.avg_pool2d", "relax.nn.adaptive_avg_pool2d", "relax.nn.batch_norm",
    "relax.nn.layer_norm",
}


class _LayoutInfer:
    """MSC's ``LayoutInfer`` visitor (forward pass over bindings, then backward)."""

    def __init__(self) -> None:
        self.var_layout: Dict[int, Any] = {}
        self.var_map: Dict[int, R.Expr] = {}
        self.ordered: List[R.Expr] = []

    # ---- helpers (LayoutUtils)

    @staticmethod
    def set_layout(expr: R.Expr, layout: Any) -> None:
        si = expr.sinfo
        if isinstance(si, (R.TensorSI, R.ShapeSI)):
            # deliberate difference: MSC also stored layouts whose length is not the tensor's ndim
            # (e.g. "AB" on a 0-d scalar operand of `where`); such a layout says nothing true
            if isinstance(layout, str) and layout and (not isinstance(si, R.TensorSI) or len(layout) == si.ndim):
                expr.span["layout"] = layout
        elif isinstance(si, R.TupleSI):
            if isinstance(layout, list) and all(isinstance(x, str) and x for x in layout):
                expr.span["layout"] = ",".join(layout)

    def set_expr_layout(self, expr: R.Expr, layout: Any) -> None:
        if isinstance(expr, R.Var):
            self.var_layout[id(expr)] = layout
            self.set_layout(expr, layout)
            if id(expr) in self.var_map:
                self.set_layout(self.var_map[id(expr)], layout)
        else:
            self.set_layout(expr, layout)

    def set_input_layouts(self, call: R.Call, layouts: Sequence[Any]) -> None:
        if len(layouts) == len(call.args):
            for a, l in zip(call.args, layouts):
                self.set_expr_layout(a, l)

    def nlayout(self, expr: R.Expr) -> Any:
        """``LayoutUtils::InferNLayout``: the var map, else the span."""
        if isinstance(expr, R.Var) and id(expr) in self.var_layout:
            return self.var_layout[id(expr)]
        lay = expr.span.get("layout", "")
        if not lay:
            return ""
        if isinstance(expr.sinfo, R.TupleSI):
            return [x for x in lay.split(",") if x]
        return lay

    def decision(self, expr: R.Expr) -> str:
        n = self.nlayout(expr)
        if isinstance(n, list):
            raise _LayoutError("Cannot get layout for a tuple")
        return n

    def decision_at(self, expr: R.Expr, index: int) -> str:
        n = self.nlayout(expr)
        if isinstance(n, str):
            return n if index == 0 else ""
        return n[0] if n else ""  # MSC returns field 0 whatever the index

    def relax_nlayout(self, expr: R.Expr) -> Any:
        """Relax's ``GetNLayout(var_layout_map, arg)``: var map, else the initial layout."""
        if isinstance(expr, R.Tuple):
            return [self.relax_nlayout(f) for f in expr.fields]
        if isinstance(expr, R.Var) and id(expr) in self.var_layout:
            return self.var_layout[id(expr)]
        si = expr.sinfo
        if isinstance(si, R.TensorSI):
            return R.initial_layout(si.ndim)
        if isinstance(si, R.TupleSI):
            return [R.initial_layout(f.ndim) for f in si.fields]
        return ""

    def inferred(self, arg: R.Expr) -> bool:
        if isinstance(arg, R.Var) and id(arg) in self.var_map:
            return bool(self.var_map[id(arg)].span.get("layout"))
        if isinstance(arg, R.Tuple):
            return all(self.inferred(f) for f in arg.fields)
        return bool(arg.span.get("layout"))

    # ---- forward rules (FMSCForwardInferLayout)

    def fwd_msc(self, call: R.Call) -> Optional[PyTuple[list, list]]:
        op, a, args = call.op, call.attrs, call.args
        if op in ("relax.nn.conv2d", "relax.nn.conv1d"):
            return [a["data_layout"], a["kernel_layout"]], [a["out_layout"]]
        if op in ("relax.nn.max_pool2d", "relax.nn.avg_pool2d", "relax.nn.adaptive_avg_pool2d"):
            return [a["layout"]], [a["out_layout"]]
        if op in ("relax.nn.batch_norm", "relax.nn.layer_norm"):
            shape = args[0].sinfo.shape
            if not shape:
                return None
            lay = self.decision(args[0])
            if not lay:
                lay = {4: "NCHW", 3: "NCD"}.get(len(shape), "")
            if op == "relax.nn.batch_norm":
                return [lay, "O", "O", "O", "O"], [[lay, "O", "O"]]
            return [lay, "O", "O"], [lay]
        if op in _BINARY:
            res = self.fwd_common(call)
            if res is None:
                return None
            ins, outs = res
            new_ins = []
            for i, x in enumerate(args):
                nd = x.sinfo.ndim
                if nd == 0:
                    new_ins.append("")
                elif nd == 1:
                    new_ins.append(outs[0][-1] if outs[0] else "")
                else:
                    new_ins.append(ins[i])
            return new_ins, outs
        if op in _REDUCE:
            lay = self.decision(args[0])
            if not lay:
                return None
            if a["keepdims"]:
                return [lay], [lay]
            if a["axis"] is None:
                return [lay], [""]
            nd = args[0].sinfo.ndim
            return [lay], [reduce_layout(lay, [_get_index(x, nd) for x in a["axis"]])]
        if op == "relax.reshape":
            lay = self.decision(args[0])
            if not lay:
                return None
            ins, outs = args[0].sinfo.shape, call.sinfo.shape
            if not ins or not outs:
                return None
            out = lay
            if len(ins) != len(outs):
                expand, reduce = infer_reshape_axes(ins, outs, infer_batch_dim(lay))
                if not expand and not reduce:
                    return None
                if reduce:
                    out = reduce_layout(out, reduce)
                if expand:
                    out = expand_layout(out, expand)
            return [lay, "O"], [out]
        if op == "relax.squeeze":
            lay = self.decision(args[0])
            shape = args[0].sinfo.shape
            if not lay or not shape:
                return None
            if a["axis"] is None:
                axes = [i for i, s in enumerate(shape) if s == 1]
            else:
                axes = [v for v in (_get_index(x, len(shape)) for x in a["axis"]) if shape[v] == 1]
            return [lay], [reduce_layout(lay, axes)]
        if op == "relax.expand_dims":
            lay = self.decision(args[0])
            shape = args[0].sinfo.shape
            if not lay or not shape:
                return None
            return [lay], [expand_layout(lay, [_get_index(x, len(shape)) for x in a["axis"]])]
        if op == "relax.matmul":
            a_shape, b_shape = args[0].sinfo.shape, args[1].sinfo.shape
            if not a_shape:
                return None
            lay = self.decision(args[0]) or {4: "NCHW", 3: "NCD", 2: "NC"}.get(len(a_shape), "")
            start = len(lay) - len(b_shape)
            pre = lay[start:len(lay) - 2] if start >= 0 else ""
            return [lay, pre + "IO"], [lay]
        if op == "relax.take":  # ForwardInferLayoutTake
            lay, ilay = self.decision(args[0]), self.decision(args[1])
            in_shape, out_shape = args[0].sinfo.shape, call.sinfo.shape
            if not in_shape:
                return None
            if lay:
                return [lay, ilay], [lay if len(in_shape) == len(out_shape) else reduce_layout(lay, [0])]
            if ilay:
                expand = list(range(len(ilay), len(out_shape)))
                return [lay, ilay], [expand_layout(ilay, expand) if expand else ilay]
            return None
        if op == "relax.permute_dims":
            lay = self.decision(args[0])
            if not lay:
                return None
            axes = a["axes"] if a["axes"] is not None else list(reversed(range(len(lay))))
            return [lay], [permute_layout(lay, axes)]
        return None

    def fwd_common(self, call: R.Call) -> Optional[PyTuple[list, list]]:
        ins, hint = [], ""
        for x in call.args:
            lay = self.decision(x)
            if lay:
                hint = lay
            ins.append(lay)
        if not hint:
            return None
        if isinstance(call.sinfo, R.TensorSI):
            return ins, [hint]
        if isinstance(call.sinfo, R.TupleSI):
            return ins, [[hint] * len(call.sinfo.fields)]
        return None

    def fwd_relax(self, call: R.Call) -> Optional[PyTuple[list, list]]:
        """Relax's FRelaxInferLayout for the ops we emit (only the output layout matters here)."""
        op = call.op
        si = call.sinfo
        if op in _UNARY or op in ("relax.nn.softmax", "relax.strided_slice"):
            return [], [self.relax_nlayout(call.args[0])]
        if op in _BINARY:
            l1 = self.relax_nlayout(call.args[0])
            if call.args[0].sinfo.ndim == call.args[1].sinfo.ndim:
                return [], [l1]
            return [], [R.initial_layout(si.ndim)]
        if op == "relax.concat":
            fields = self.relax_nlayout(call.args[0])
            return [], [fields[0] if fields else ""]
        if op == "relax.split":
            lay = self.relax_nlayout(call.args[0])
            return [], [[lay] * len(si.fields)]
        if op in ("relax.permute_dims", "relax.squeeze", "relax.expand_dims") or op in _REDUCE:
            return [], [R.initial_layout(si.ndim)]
        return None

    # ---- backward rules (FMSCBackwardInferLayout)

    def bwd(self, call: R.Call) -> Optional[PyTuple[list, list]]:
        op, a, args = call.op, call.attrs, call.args
        if op in ("relax.nn.conv2d", "relax.nn.conv1d", "relax.nn.max_pool2d", "relax.nn.avg_pool2d",
                  "relax.nn.adaptive_avg_pool2d"):
            return self.fwd_msc(call)
        if op in ("relax.nn.batch_norm", "relax.nn.layer_norm"):
            out = self.decision_at(call, 0)
            if not out:
                return None
            if op == "relax.nn.batch_norm":
                return [out, "O", "O", "O", "O"], [[out, "O", "O"]]
            return [out, "O", "O"], [out]
        if op in _BINARY:
            res = self.bwd_common(call)
            if res is None:
                return None
            ins, outs = res
            new_ins = []
            for i, x in enumerate(args):
                nd = x.sinfo.ndim
                new_ins.append("" if nd == 0 else (outs[0][-1] if nd == 1 else ins[i]))
            return new_ins, outs
        if op in _REDUCE:
            out = self.decision(call)
            if not out:
                return None
            if a["keepdims"]:
                return [out], [out]
            if a["axis"] is None:
                raise _LayoutError("axis of reduce is undefined")
            nd = args[0].sinfo.ndim
            return [expand_layout(out, [_get_index(x, nd) for x in a["axis"]])], [out]
        if op == "relax.reshape":
            out = self.decision(call)
            if not out:
                return None
            ins, outs = args[0].sinfo.shape, call.sinfo.shape
            if not ins or not outs:
                return None
            lay = out
            if len(ins) != len(outs):
                expand, reduce = infer_reshape_axes(ins, outs, infer_batch_dim(out))
                if not expand and not reduce:
                    return None
                if expand:
                    lay = reduce_layout(lay, expand)
                if reduce:
                    lay = expand_layout(lay, reduce)
            return [lay, "O"], [out]
        if op == "relax.squeeze":
            out = self.decision(call)
            shape = args[0].sinfo.shape
            if not out or not shape:
                return None
            if a["axis"] is None:
                axes = [i for i, s in enumerate(shape) if s == 1]
            else:
                axes = [v for v in (_get_index(x, len(shape)) for x in a["axis"]) if shape[v] == 1]
            return [expand_layout(out, axes)], [out]
        if op == "relax.expand_dims":
            out = self.decision(call)
            shape = args[0].sinfo.shape
            if not out or not shape:
                return None
            return [reduce_layout(out, [_get_index(x, len(shape)) for x in a["axis"]])], [out]
        if op == "relax.matmul":
            out = self.decision(call)
            if not out:
                return None
            b_shape = args[1].sinfo.shape
            if not b_shape:
                return None
            start = len(out) - len(b_shape)
            pre = out[start:len(out) - 2] if start >= 0 else ""
            return [out, pre + "IO"], [out]
        if op == "relax.permute_dims":
            out = self.decision(call)
            if not out:
                return None
            if a["axes"] is None:
                perm = list(reversed(range(len(out))))
            else:
                axes = list(a["axes"])
                perm = [axes.index(i) if i in axes else i for i in range(len(out))]
            return [permute_layout(out, perm)], [out]
        if op == "relax.concat":
            out = self.decision(call)
            if not out:
                return None
            return [out] * len(args[0].fields), [out]
        if op == "relax.take":  # BackwardInferLayoutTake
            out = self.decision(call)
            in_shape = args[0].sinfo.shape
            if not out or not in_shape:
                return None
            lay, ilay = self.decision(args[0]), self.decision(args[1]) or reduce_layout(out, [0])
            if len(in_shape) == len(call.sinfo.shape):
                return [out, ilay], [out]
            return [lay or expand_layout(out, [0]), ilay], [out]
        return self.bwd_common(call)

    def bwd_common(self, call: R.Call) -> Optional[PyTuple[list, list]]:
        out = self.nlayout(call)
        if isinstance(out, str):
            hint = out
        else:
            hint = ""
            for x in out:
                if x:
                    hint = x
        if not hint:
            return None
        ins = []
        for x in call.args:
            saved = self.decision(x)
            ins.append(saved if saved else hint)
        return ins, [out]

    # ---- visitors

    def forward(self, func: R.Function) -> None:
        for b in func.bindings:
            v = b.value
            if isinstance(v, R.Call):
                self.var_map[id(b.var)] = v
                self.ordered.append(v)
                if isinstance(v.op, R.Function):
                    self.forward_func(v.op, v, b.var)
                    continue
                if v.span.get("layout") or not v.args:
                    continue
                res, set_inputs = None, True
                try:
                    if v.op in ("relax.nn.conv2d", "relax.nn.conv1d", "relax.nn.max_pool2d", "relax.nn.avg_pool2d",
                                "relax.nn.adaptive_avg_pool2d", "relax.nn.batch_norm", "relax.nn.layer_norm",
                                "relax.mean", "relax.sum", "relax.max", "relax.take", "relax.reshape",
                                "relax.squeeze", "relax.expand_dims",
                                "relax.matmul", "relax.permute_dims") or v.op in _BINARY:
                        res = self.fwd_msc(v)
                    elif v.op not in _RELAX_INFER:
                        res = self.fwd_common(v)
                    if v.op in _RELAX_INFER and res is None:
                        res = self.fwd_relax(v)
                        set_inputs = False
                except _LayoutError:
                    res = None
                if res is not None and len(res[1]) == 1:
                    self.set_expr_layout(b.var, res[1][0])
                if set_inputs and res is not None:
                    self.set_input_layouts(v, res[0])
            elif isinstance(v, R.Tuple):
                self.var_map[id(b.var)] = v
                self.ordered.append(v)
                if all(isinstance(f, R.TensorSI) for f in v.sinfo.fields):
                    try:
                        self.set_expr_layout(b.var, [self.decision(f) for f in v.fields])
                    except _LayoutError:
                        pass
            elif isinstance(v, R.TupleGetItem):
                self.var_map[id(b.var)] = v
                self.ordered.append(v)
                self.set_expr_layout(b.var, self.decision_at(v.tuple_value, v.index))

    def forward_func(self, func: R.Function, call: R.Call, ret: R.Var) -> None:
        for p, a in zip(func.params, call.args):
            if isinstance(a, R.Var) and id(a) in self.var_layout:
                self.set_expr_layout(p, self.var_layout[id(a)])
        self.forward(func)
        for p, a in zip(func.params, call.args):
            if id(p) in self.var_layout:
                self.set_expr_layout(a, self.var_layout[id(p)])
        body = func.body
        if isinstance(body, R.Var) and id(body) in self.var_layout:
            self.set_expr_layout(ret, self.var_layout[id(body)])

    def backward(self) -> None:
        for e in reversed(self.ordered):
            if not isinstance(e, R.Call):
                continue
            if isinstance(e.op, R.Function):
                for p, a in zip(e.op.params, e.args):
                    if id(p) in self.var_layout:
                        self.set_expr_layout(a, self.var_layout[id(p)])
                continue
            if not e.args or all(self.inferred(a) for a in e.args):
                continue
            try:
                res = self.bwd(e)
            except _LayoutError:
                res = None
            if res is not None:
                self.set_input_layouts(e, res[0])


def set_expr_layout(func: R.Function) -> R.Function:
    infer = _LayoutInfer()
    infer.forward(func)
    infer.backward()
    return func
