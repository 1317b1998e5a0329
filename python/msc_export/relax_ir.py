"""A minimal model of the Relax IR that MSC's graph builder reads.

MSC v0.20's torch path is ``torch.fx.symbolic_trace`` -> ``relax.frontend.torch.from_fx`` ->
``msc.core.frontend.from_relax`` (FoldConstant, SetExprName, FuseOpsByPattern, SetExprLayout)
-> ``RelaxGraphBuilder``.  We do not depend on TVM; instead this module models just enough of a
Relax function for those passes to be reproduced faithfully in :mod:`msc_export.passes` and
:mod:`msc_export.graph_builder`:

* expressions: :class:`Var`, :class:`Constant`, :class:`PrimValue`, :class:`ShapeExpr`,
  :class:`Tuple`, :class:`TupleGetItem`, :class:`Call` (``op`` is a Relax op name such as
  ``"relax.nn.conv2d"``, or a composite :class:`Function` after pattern fusion);
* every expression carries ``span``: a dict standing in for MSC's span attributes
  (``name``, ``layout``, ``shared_ref``; ``src/contrib/msc/core/utils.cc`` ``SpanUtils``);
* struct info: :class:`TensorSI` (static shape, dtype), :class:`TupleSI`, :class:`ShapeSI`;
* :class:`BlockBuilder`: ``emit`` normalizes nested calls into bindings in post-order, like
  ``relax.BlockBuilder.emit`` (A-normal form; tuples of leaves stay inline as call arguments).

Each Relax op used by the importer is registered in :data:`OPS` with its attribute fields in the
order of the C++ ``Attrs`` struct (``include/tvm/relax/attrs/*.h``; that is the order
``AttrGetter`` visits them) and a shape function.  Only static shapes are supported.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

# ----------------------------------------------------------------------------- struct info


class TensorSI:
    """TensorStructInfo with a static shape."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Sequence[int], dtype: str):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Tensor({list(self.shape)}, {self.dtype})"


class TupleSI:
    __slots__ = ("fields",)

    def __init__(self, fields: Sequence[Any]):
        self.fields = list(fields)

    def __repr__(self) -> str:
        return f"Tuple({self.fields})"


class ShapeSI:
    __slots__ = ("ndim",)

    def __init__(self, ndim: int):
        self.ndim = ndim


class PrimSI:
    __slots__ = ("dtype",)

    def __init__(self, dtype: str):
        self.dtype = dtype


# ----------------------------------------------------------------------------- expressions


class Expr:
    """Base expression: ``sinfo`` (struct info) and ``span`` (MSC's span attributes)."""

    sinfo: Any = None

    def __init__(self) -> None:
        self.span: Dict[str, str] = {}


class Var(Expr):
    """A function parameter or a binding variable."""

    def __init__(self, name_hint: str, sinfo: Any):
        super().__init__()
        self.name_hint = name_hint
        self.sinfo = sinfo

    def __repr__(self) -> str:
        return f"%{self.name_hint}"


class Constant(Expr):
    """``relax.Constant``; ``data`` is a numpy array (0-d for scalars)."""

    def __init__(self, data: np.ndarray):
        super().__init__()
        self.data = np.asarray(data)
        self.sinfo = TensorSI(self.data.shape, str(self.data.dtype))

    @property
    def is_scalar(self) -> bool:
        return self.data.ndim == 0

    def __repr__(self) -> str:
        return f"const{list(self.data.shape)}"


class PrimValue(Expr):
    def __init__(self, value: Any):
        super().__init__()
        self.value = value
        self.sinfo = PrimSI("int64" if isinstance(value, int) and not isinstance(value, bool) else "float64")


class ShapeExpr(Expr):
    def __init__(self, values: Sequence[int]):
        super().__init__()
        self.values = tuple(int(v) for v in values)
        self.sinfo = ShapeSI(len(self.values))


class Tuple(Expr):
    def __init__(self, fields: Sequence[Expr]):
        super().__init__()
        self.fields = list(fields)
        self.sinfo = TupleSI([f.sinfo for f in self.fields])


class TupleGetItem(Expr):
    def __init__(self, tuple_value: Expr, index: int):
        super().__init__()
        self.tuple_value = tuple_value
        self.index = int(index)
        self.sinfo = tuple_value.sinfo.fields[self.index]


class Call(Expr):
    """A call of a Relax op (``op`` is a str) or of a composite :class:`Function`."""

    def __init__(self, op: Any, args: Sequence[Expr], attrs: Optional["OrderedDict[str, Any]"] = None,
                 sinfo: Any = None):
        super().__init__()
        self.op = op
        self.args = list(args)
        self.attrs = attrs if attrs is not None else OrderedDict()
        self.sinfo = sinfo

    @property
    def op_name(self) -> str:
        return self.op if isinstance(self.op, str) else "<composite %s>" % self.op.attrs.get("Composite")

    def __repr__(self) -> str:
        return f"{self.op_name}({', '.join(map(repr, self.args))})"


class Binding:
    __slots__ = ("var", "value")

    def __init__(self, var: Var, value: Expr):
        self.var = var
        self.value = value


class Function:
    """A Relax function: ``params``, one dataflow block of ``bindings``, ``body`` (the output)."""

    def __init__(self, params: List[Var], bindings: List[Binding], body: Expr, attrs: Optional[dict] = None):
        self.params = params
        self.bindings = bindings
        self.body = body
        self.attrs = attrs or {}


# ----------------------------------------------------------------------------- op registry


class OpDef:
    """A Relax op: attribute fields (C++ ``Attrs`` order, with defaults) and its shape function."""

    def __init__(self, name: str, attrs: Sequence[tuple], infer: Callable[..., Any]):
        self.name = name
        self.attr_fields = list(attrs)  # [(field, default)]
        self.infer = infer


OPS: Dict[str, OpDef] = {}


def _register(name: str, attrs: Sequence[tuple], infer: Callable[..., Any]) -> None:
    OPS[name] = OpDef(name, attrs, infer)


def _tensor(e: Expr) -> TensorSI:
    si = e.sinfo
    if not isinstance(si, TensorSI):
        raise TypeError(f"expected a tensor, got {si!r}")
    return si


def _same(args, attrs):
    return TensorSI(_tensor(args[0]).shape, _tensor(args[0]).dtype)


#: The unary ops relax registers with require_float_dtype (src/relax/op/tensor/unary.cc: its
#: InferTypeUnaryArith refuses an integer or bool input).
FLOAT_UNARY = frozenset("relax." + op for op in (
    "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "sin", "cos", "tan", "sinh", "cosh", "asin", "acos",
    "atan", "asinh", "acosh", "atanh"))


def is_float(dtype: str) -> bool:
    """Whether the dtype name ``dtype`` is a floating-point one (float16/32/64, bfloat16)."""
    return dtype.startswith(("float", "bfloat"))


def _float_same(args, attrs):
    x = _tensor(args[0])
    if not is_float(x.dtype):
        raise ValueError(f"the input must have a float dtype, not {x.dtype} (relax requires one)")
    return _same(args, attrs)


def _broadcast(args, attrs):
    a, b = _tensor(args[0]), _tensor(args[1])
    shape = np.broadcast_shapes(a.shape, b.shape)
    return TensorSI(shape, a.dtype)


def _conv_out(size: int, k: int, s: int, p0: int, p1: int, d: int) -> int:
    return (size + p0 + p1 - d * (k - 1) - 1) // s + 1


def _conv2d(args, attrs):
    x, w = _tensor(args[0]), _tensor(args[1])
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    (sh, sw), (pt, pl, pb, pr), (dh, dw) = attrs["strides"], attrs["padding"], attrs["dilation"]
    dtype = attrs["out_dtype"] or x.dtype
    return TensorSI((n, o, _conv_out(h, kh, sh, pt, pb, dh), _conv_out(wd, kw, sw, pl, pr, dw)), dtype)


def _conv1d(args, attrs):
    x, w = _tensor(args[0]), _tensor(args[1])
    n, _, length = x.shape
    o, _, k = w.shape
    (s,), (p0, p1), (d,) = attrs["strides"], attrs["padding"], attrs["dilation"]
    return TensorSI((n, o, _conv_out(length, k, s, p0, p1, d)), attrs["out_dtype"] or x.dtype)


def _pool_out(size: int, k: int, s: int, p0: int, p1: int, d: int, ceil_mode: bool) -> int:
    # torch's rule (aten/src/ATen/native/Pool.h pooling_output_shape): with ceil_mode the last
    # window must start inside the (left-padded) input.
    num = size + p0 + p1 - d * (k - 1) - 1
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p0:
        out -= 1
    return out


def _pool2d(args, attrs):
    x = _tensor(args[0])
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (dh, dw) = attrs["pool_size"], attrs["strides"], attrs["dilation"]
    pt, pl, pb, pr = attrs["padding"]
    cm = bool(attrs["ceil_mode"])
    return TensorSI((n, c, _pool_out(h, kh, sh, pt, pb, dh, cm), _pool_out(w, kw, sw, pl, pr, dw, cm)), x.dtype)


def _adaptive_pool2d(args, attrs):
    x = _tensor(args[0])
    n, c, h, w = x.shape
    oh, ow = attrs["output_size"] if attrs["output_size"] is not None else (h, w)
    return TensorSI((n, c, h if oh is None else oh, w if ow is None else ow), x.dtype)


def _matmul(args, attrs):
    a, b = _tensor(args[0]), _tensor(args[1])
    sa, sb = list(a.shape), list(b.shape)
    squeeze_a, squeeze_b = len(sa) == 1, len(sb) == 1
    if squeeze_a:
        sa = [1] + sa
    if squeeze_b:
        sb = sb + [1]
    if sa[-1] != sb[-2]:
        raise ValueError(f"matmul: reduction dims differ: {a.shape} x {b.shape}")
    batch = list(np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
    out = batch + [sa[-2], sb[-1]]
    if squeeze_b:
        out.pop(-1)
    if squeeze_a:
        out.pop(-2 if not squeeze_b else -1)
    return TensorSI(out, attrs["out_dtype"] or a.dtype)


def _permute(args, attrs):
    x = _tensor(args[0])
    axes = attrs["axes"] if attrs["axes"] is not None else list(reversed(range(x.ndim)))
    return TensorSI([x.shape[a] for a in axes], x.dtype)


def _reshape(args, attrs):
    x = _tensor(args[0])
    shape = args[1].values
    if int(np.prod(shape, dtype=np.int64)) != int(np.prod(x.shape, dtype=np.int64)):
        raise ValueError(f"reshape: cannot reshape {list(x.shape)} to {list(shape)}")
    return TensorSI(shape, x.dtype)


def _concat(args, attrs):
    fields = [_tensor(f) for f in args[0].fields]
    axis = attrs["axis"] % fields[0].ndim
    for f in fields[1:]:  # relax's InferStructInfoConcat: one rank and dtype, equal dims off the axis
        if f.ndim != fields[0].ndim or f.dtype != fields[0].dtype or any(
                a != b for d, (a, b) in enumerate(zip(f.shape, fields[0].shape)) if d != axis):
            raise ValueError(f"concat: {f.dtype}{list(f.shape)} does not join {fields[0].dtype}"
                             f"{list(fields[0].shape)} on axis {axis}")
    shape = list(fields[0].shape)
    shape[axis] = sum(f.shape[axis] for f in fields)
    return TensorSI(shape, fields[0].dtype)


def _reduce(args, attrs):
    x = _tensor(args[0])
    axes = range(x.ndim) if attrs["axis"] is None else [a % x.ndim for a in attrs["axis"]]
    shape = [(1 if i in axes else s) for i, s in enumerate(x.shape)] if attrs["keepdims"] else \
        [s for i, s in enumerate(x.shape) if i not in axes]
    return TensorSI(shape, x.dtype)


def _squeeze(args, attrs):
    x = _tensor(args[0])
    if attrs["axis"] is None:
        return TensorSI([s for s in x.shape if s != 1], x.dtype)
    axes = {a % x.ndim for a in attrs["axis"]}
    return TensorSI([s for i, s in enumerate(x.shape) if i not in axes], x.dtype)


def _expand_dims(args, attrs):
    x = _tensor(args[0])
    out_ndim = x.ndim + len(attrs["axis"])
    axes = sorted(a % out_ndim for a in attrs["axis"])
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return TensorSI(shape, x.dtype)


def _strided_slice(args, attrs):
    x = _tensor(args[0])
    axes, begin, end, strides = (tuple(p.value for p in t.fields) for t in args[1:5])
    shape = list(x.shape)
    for a, b, e, s in zip(axes, begin, end, strides):
        shape[a] = len(range(*slice(b, e, s).indices(x.shape[a])))
    return TensorSI(shape, x.dtype)


def _split(args, attrs):
    x = _tensor(args[0])
    axis = attrs["axis"] % x.ndim
    ios = attrs["indices_or_sections"]
    size = x.shape[axis]
    if isinstance(ios, int):
        if size % ios:
            raise ValueError(f"split: {size} is not divisible into {ios} sections")
        bounds = [size // ios * i for i in range(ios + 1)]
    else:
        bounds = [0] + list(ios) + [size]
    fields = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        shape = list(x.shape)
        shape[axis] = hi - lo
        fields.append(TensorSI(shape, x.dtype))
    return TupleSI(fields)


def _batch_norm(args, attrs):
    x = _tensor(args[0])
    c = x.shape[attrs["axis"]]
    return TupleSI([TensorSI(x.shape, x.dtype), TensorSI((c,), x.dtype), TensorSI((c,), x.dtype)])


_POOL_ATTRS = [("pool_size", None), ("strides", None), ("dilation", None), ("padding", None),
               ("ceil_mode", False), ("count_include_pad", False), ("layout", "NCHW"), ("out_layout", "NCHW")]

_register("relax.nn.conv2d", [("strides", None), ("padding", None), ("dilation", None), ("groups", 1),
                              ("data_layout", "NCHW"), ("kernel_layout", "OIHW"), ("out_layout", "NCHW"),
                              ("out_dtype", "float32")], _conv2d)
_register("relax.nn.conv1d", [("strides", None), ("padding", None), ("dilation", None), ("groups", 1),
                              ("data_layout", "NCW"), ("kernel_layout", "OIW"), ("out_layout", "NCW"),
                              ("out_dtype", "float32")], _conv1d)
_register("relax.nn.max_pool2d", _POOL_ATTRS, _pool2d)
_register("relax.nn.avg_pool2d", _POOL_ATTRS, _pool2d)
_register("relax.nn.adaptive_avg_pool2d", [("output_size", None), ("layout", "NCHW"), ("out_layout", "NCHW")],
          _adaptive_pool2d)
_register("relax.nn.batch_norm", [("axis", 1), ("epsilon", 1e-5), ("center", True), ("scale", True),
                                  ("momentum", 0.1), ("training", True)], _batch_norm)
_register("relax.nn.layer_norm", [("axes", None), ("epsilon", 1e-5), ("center", True), ("scale", True)], _same)
_register("relax.nn.softmax", [("axis", -1)], _same)
for _u in ("relax.nn.relu", "relax.nn.gelu", "relax.nn.silu", "relax.sigmoid", "relax.tanh"):
    _register(_u, [], _float_same if _u in FLOAT_UNARY else _same)
_register("relax.clip", [], _same)
for _b in ("relax.add", "relax.subtract", "relax.multiply", "relax.divide"):
    _register(_b, [], _broadcast)
_register("relax.matmul", [("out_dtype", None)], _matmul)
_register("relax.permute_dims", [("axes", None)], _permute)
_register("relax.reshape", [], _reshape)
_register("relax.concat", [("axis", 0)], _concat)
_register("relax.mean", [("axis", None), ("keepdims", False)], _reduce)
_register("relax.squeeze", [("axis", None)], _squeeze)
_register("relax.expand_dims", [("axis", None)], _expand_dims)
_register("relax.strided_slice", [("assume_inbound", False)], _strided_slice)
_register("relax.split", [("indices_or_sections", None), ("axis", 0)], _split)


# -- ops for transformers and modern CNNs (include/tvm/relax/attrs/{datatype,index,nn,statistical}.h)


def _astype(args, attrs):
    return TensorSI(_tensor(args[0]).shape, attrs["dtype"])


def _compare(args, attrs):
    return TensorSI(_broadcast(args, attrs).shape, "bool")


def _logical_not(args, attrs):
    return TensorSI(_tensor(args[0]).shape, "bool")


def _where(args, attrs):
    c, a, b = (_tensor(x) for x in args)
    return TensorSI(np.broadcast_shapes(c.shape, a.shape, b.shape), a.dtype)


def _take(args, attrs):
    x, idx = _tensor(args[0]), _tensor(args[1])
    if attrs["axis"] is None:
        return TensorSI(idx.shape, x.dtype)
    axis = attrs["axis"] % x.ndim
    return TensorSI(x.shape[:axis] + idx.shape + x.shape[axis + 1:], x.dtype)


def _broadcast_to(args, attrs):
    x = _tensor(args[0])
    shape = args[1].values
    np.broadcast_shapes(x.shape, shape)  # raises ValueError when not broadcastable
    return TensorSI(shape, x.dtype)


def _full(args, attrs):
    return TensorSI(args[0].values, attrs["dtype"] or _tensor(args[1]).dtype)


def _pad(args, attrs):
    x = _tensor(args[0])
    pw = attrs["pad_width"]
    if len(pw) != 2 * x.ndim:
        raise ValueError(f"nn.pad: pad_width has {len(pw)} values for a {x.ndim}-d tensor")
    return TensorSI([s + pw[2 * i] + pw[2 * i + 1] for i, s in enumerate(x.shape)], x.dtype)


def _attention(args, attrs):
    q, v = _tensor(args[0]), _tensor(args[2])
    for name, t in zip(("query", "key", "value"), args[:3]):
        if _tensor(t).ndim != 4:
            raise ValueError(f"nn.attention: the {name} must be 4-d [batch, seq, heads, head_dim]")
    if len(args) == 4 and _tensor(args[3]).ndim != 4:
        raise ValueError("nn.attention: the bias must be 4-d [batch, heads, seq_q, seq_kv]")
    k = _tensor(args[1])
    # relax's InferStructInfoAttention (src/relax/op/nn/attention.cc): one batch size and one head
    # count for query, key and value, one key length for key and value, one head dim for query and key
    for (a, i, b, j, what) in ((q, 0, k, 0, "batch size"), (q, 0, v, 0, "batch size"), (q, 2, k, 2, "head count"),
                               (q, 2, v, 2, "head count"), (k, 1, v, 1, "key length"), (q, 3, k, 3, "head dim")):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"nn.attention: {what} differs: {list(a.shape)} vs {list(b.shape)} "
                             "([batch, seq, heads, head_dim])")
    b, s, n, _ = q.shape
    return TensorSI((b, s, n, v.shape[3]), q.dtype)


_register("relax.astype", [("dtype", None)], _astype)
for _c in ("relax.equal", "relax.not_equal", "relax.less", "relax.less_equal", "relax.greater",
           "relax.greater_equal"):
    _register(_c, [], _compare)
for _b in ("relax.logical_and", "relax.logical_or", "relax.maximum", "relax.minimum", "relax.power"):
    _register(_b, [], _broadcast)
_register("relax.logical_not", [], _logical_not)
for _u in ("relax.nn.gelu_tanh", "relax.exp", "relax.sqrt", "relax.rsqrt", "relax.erf", "relax.negative",
           "relax.abs", "relax.log", "relax.sin", "relax.cos", "relax.tan", "relax.floor", "relax.ceil", "relax.sign",
           "relax.square", "relax.cosh", "relax.sinh", "relax.asin", "relax.acos", "relax.atan"):
    _register(_u, [], _float_same if _u in FLOAT_UNARY else _same)
_register("relax.where", [], _where)
_register("relax.take", [("axis", None)], _take)
_register("relax.gather_elements", [("axis", 0)],
          lambda args, attrs: TensorSI(_tensor(args[1]).shape, _tensor(args[0]).dtype))
_register("relax.triu", [], _same)
_register("relax.tril", [], _same)
_register("relax.sum", [("axis", None), ("keepdims", False)], _reduce)
_register("relax.max", [("axis", None), ("keepdims", False)], _reduce)
_register("relax.broadcast_to", [], _broadcast_to)
_register("relax.full", [("dtype", None)], _full)
_register("relax.nn.pad", [("pad_width", None), ("pad_value", 0.0), ("pad_mode", "constant")], _pad)
_ATTENTION_ATTRS = [("scale", None), ("causal_mask", None), ("window_size", None)]
_register("relax.nn.attention", _ATTENTION_ATTRS, _attention)
_register("relax.nn.attention_bias", _ATTENTION_ATTRS, _attention)


# ---- ops the torch.export path adds (attrs named and ordered as relax's, i.e. as MSC writes them)

def _bool_same(args, attrs):
    return TensorSI(_tensor(args[0]).shape, "bool")


def _arg_reduce(args, attrs):
    x = _tensor(args[0])
    axis = attrs["axis"]
    if axis is None:
        return TensorSI([1] * x.ndim if attrs["keepdims"] else [], "int64")
    axis %= x.ndim
    shape = [(1 if i == axis else s) for i, s in enumerate(x.shape)] if attrs["keepdims"] else \
        [s for i, s in enumerate(x.shape) if i != axis]
    return TensorSI(shape, "int64")


def _cumsum(args, attrs):
    x = _tensor(args[0])
    return TensorSI(x.shape, attrs["dtype"] or x.dtype)


def _tile(args, attrs):
    x = _tensor(args[0])
    reps = list(attrs["repeats"])
    n = max(len(reps), x.ndim)
    shape = [1] * (n - x.ndim) + list(x.shape)
    reps = [1] * (n - len(reps)) + reps
    return TensorSI([a * b for a, b in zip(shape, reps)], x.dtype)


def _repeat(args, attrs):
    x = _tensor(args[0])
    r = attrs["repeats"]
    if attrs["axis"] is None:
        n = 1
        for d in x.shape:
            n *= d
        return TensorSI([n * r], x.dtype)
    shape = list(x.shape)
    shape[attrs["axis"] % x.ndim] *= r
    return TensorSI(shape, x.dtype)


def _topk(args, attrs):
    x = _tensor(args[0])
    shape = list(x.shape)
    shape[attrs["axis"] % x.ndim] = attrs["k"]
    return TupleSI([TensorSI(shape, x.dtype), TensorSI(shape, attrs["dtype"])])


def _resize2d(args, attrs):
    x = _tensor(args[0])
    layout = attrs["layout"]
    shape = list(x.shape)
    shape[layout.index("H")], shape[layout.index("W")] = attrs["size"]
    return TensorSI(shape, attrs["out_dtype"] or x.dtype)


for _u in ("relax.acosh", "relax.asinh", "relax.atanh", "relax.round", "relax.bitwise_not"):
    _register(_u, [], _float_same if _u in FLOAT_UNARY else _same)
for _u in ("relax.isnan", "relax.isinf", "relax.isfinite"):
    _register(_u, [], _bool_same)
for _b in ("relax.bitwise_and", "relax.bitwise_or", "relax.bitwise_xor", "relax.logical_xor", "relax.floor_mod",
           "relax.floor_divide"):
    _register(_b, [], _broadcast)
_register("relax.nn.leakyrelu", [("alpha", 0.01)], _same)
_register("relax.nn.log_softmax", [("axis", -1)], _same)
_register("relax.argmax", [("axis", None), ("keepdims", False)], _arg_reduce)
_register("relax.argmin", [("axis", None), ("keepdims", False)], _arg_reduce)
_register("relax.min", [("axis", None), ("keepdims", False)], _reduce)
_register("relax.prod", [("axis", None), ("keepdims", False)], _reduce)
_register("relax.variance", [("axis", None), ("keepdims", False)], _reduce)
_register("relax.cumsum", [("axis", None), ("dtype", None), ("exclusive", False)], _cumsum)
_register("relax.flip", [("axis", None)], _same)
_register("relax.tile", [("repeats", None)], _tile)
_register("relax.repeat", [("repeats", None), ("axis", None)], _repeat)
_register("relax.topk", [("k", 1), ("axis", -1), ("ret_type", "both"), ("largest", True), ("dtype", "int64")], _topk)
_register("relax.nn.group_norm", [("num_groups", None), ("channel_axis", 1), ("axes", None), ("epsilon", 1e-5),
                                  ("center", True), ("scale", True)], _same)
_register("relax.scatter_elements", [("axis", 0), ("reduction", "update")], _same)


def _pool1d(args, attrs):
    x = _tensor(args[0])
    n, c, w = x.shape
    (k,), (st,), (d,) = attrs["pool_size"], attrs["strides"], attrs["dilation"]
    p0, p1 = attrs["padding"]
    return TensorSI((n, c, _pool_out(w, k, st, p0, p1, d, bool(attrs["ceil_mode"]))), x.dtype)


def _adaptive_pool1d(args, attrs):
    x = _tensor(args[0])
    n, c, w = x.shape
    (ow,) = attrs["output_size"] if attrs["output_size"] is not None else (w,)
    return TensorSI((n, c, ow), x.dtype)


_register("relax.nn.avg_pool1d", [("pool_size", (1,)), ("strides", (1,)), ("padding", (0, 0)), ("dilation", (1,)),
                                  ("ceil_mode", False), ("count_include_pad", True), ("layout", "NCW"),
                                  ("out_layout", "NCW")], _pool1d)
_register("relax.nn.adaptive_avg_pool1d", [("output_size", None), ("layout", "NCW"), ("out_layout", "NCW")],
          _adaptive_pool1d)
def _conv_transpose_out(args, attrs, dims: int) -> TensorSI:
    """nn.conv{1,2}d_transpose: (in - 1) * stride - pad_before - pad_after + dilation * (k - 1) +
    output_padding + 1 per spatial dim; weight IO<spatial> with O per group (relax's
    InferStructInfoConv2dTranspose)."""
    x, w = _tensor(args[0]), _tensor(args[1])
    pad = attrs["padding"]
    before, after = (pad[:dims], pad[dims:]) if len(pad) == 2 * dims else (pad, pad)
    spatial = [(x.shape[2 + i] - 1) * attrs["strides"][i] - before[i] - after[i]
               + attrs["dilation"][i] * (w.shape[2 + i] - 1) + attrs["output_padding"][i] + 1 for i in range(dims)]
    return TensorSI([x.shape[0], w.shape[1] * attrs["groups"]] + spatial, attrs["out_dtype"] or x.dtype)


def _einsum_out(args, attrs) -> TensorSI:
    fields = [_tensor(f) for f in args[0].fields]
    probe = np.einsum(attrs["subscripts"], *[np.broadcast_to(np.zeros((), np.float32), f.shape) for f in fields])
    return TensorSI(probe.shape, fields[0].dtype)


_CONV_T_ATTRS = [("strides", None), ("padding", None), ("output_padding", None), ("dilation", None), ("groups", 1)]
_register("relax.nn.selu", [], _same)
_register("relax.nn.softplus", [("beta", 1.0), ("threshold", 20.0)], _same)
_register("relax.nn.conv1d_transpose", _CONV_T_ATTRS + [("data_layout", "NCW"), ("kernel_layout", "IOW"),
                                                        ("out_layout", "NCW"), ("out_dtype", "")],
          lambda args, attrs: _conv_transpose_out(args, attrs, 1))
_register("relax.nn.conv2d_transpose", _CONV_T_ATTRS + [("data_layout", "NCHW"), ("kernel_layout", "IOHW"),
                                                        ("out_layout", "NCHW"), ("out_dtype", "")],
          lambda args, attrs: _conv_transpose_out(args, attrs, 2))
_register("relax.nn.max_pool1d", OPS["relax.nn.avg_pool1d"].attr_fields, _pool1d)
_register("relax.einsum", [("subscripts", None)], _einsum_out)
_register("relax.image.resize2d", [("size", None), ("roi", None), ("layout", "NCHW"), ("method", "linear"),
                                   ("coordinate_transformation_mode", "half_pixel"), ("rounding_method", "round"),
                                   ("cubic_alpha", -0.5), ("cubic_exclude", 0), ("extrapolation_value", 0.0),
                                   ("out_dtype", None)], _resize2d)


def make_call(op: str, args: Sequence[Expr], **attrs: Any) -> Call:
    """Create ``Call(op, args)`` with attrs in the C++ field order, defaults filled, struct info inferred."""
    opdef = OPS[op]
    ordered: "OrderedDict[str, Any]" = OrderedDict()
    for field, default in opdef.attr_fields:
        ordered[field] = attrs.pop(field, default)
    if attrs:
        raise TypeError(f"{op}: unknown attributes {sorted(attrs)}")
    call = Call(op, args, ordered)
    call.sinfo = opdef.infer(call.args, ordered)
    return call


def const(value: Any, dtype: str) -> Constant:
    """``relax.const(value, dtype)``."""
    return Constant(np.asarray(value, dtype=np.dtype(dtype)))


# ----------------------------------------------------------------------------- block builder


class BlockBuilder:
    """Collects bindings of one dataflow block, normalizing nested expressions (A-normal form)."""

    def __init__(self) -> None:
        self.bindings: List[Binding] = []
        self._count = 0

    def _new_var(self, sinfo: Any) -> Var:
        var = Var(f"lv{self._count}", sinfo)
        self._count += 1
        return var

    def _normalize_arg(self, arg: Expr) -> Expr:
        if isinstance(arg, (Call, TupleGetItem)):
            return self.emit(arg)
        if isinstance(arg, Tuple):
            fields = [self._normalize_arg(f) for f in arg.fields]
            return arg if all(a is b for a, b in zip(fields, arg.fields)) else Tuple(fields)
        return arg

    def emit(self, expr: Expr) -> Var:
        """Bind ``expr`` (after binding its non-leaf sub-expressions) and return the new var."""
        if isinstance(expr, Call):
            expr.args = [self._normalize_arg(a) for a in expr.args]
        elif isinstance(expr, TupleGetItem):
            expr.tuple_value = self._normalize_arg(expr.tuple_value)
        elif isinstance(expr, Tuple):
            expr.fields = [self._normalize_arg(f) for f in expr.fields]
        var = self._new_var(expr.sinfo)
        self.bindings.append(Binding(var, expr))
        return var


def initial_layout(ndim: int) -> str:
    """Relax's ``InitialLayout(ndim)``: ``"ABCD..."``."""
    return "".join(chr(ord("A") + i) for i in range(ndim))
