"""The machinery of the fake `tvm` package (see tests/relax/fake_tvm/README.md).

What it is: just enough of TVM's relax Python API for a generated model.py / test_model.py to run
end to end without TVM. Every API it offers takes exactly the parameters listed for it in
../shared/reference/relax_ops_v020_all.json, relax_ops.json or tests/relax/relax_api_extra.json
(a wrong keyword is a TypeError, as in TVM). BlockBuilder records the bindings (name_hint, op,
arguments) so tests can check the call structure; it checks scoping (a Var must be a parameter or bound earlier; no
DataflowVar escapes its block; emit_output only in a dataflow block; emit_func_output once).

What it is not: TVM. Struct info is inferred by evaluating each op on zero tensors, dynamic dims
being substituted by distinct primes (37, 41, ...) and mapped back to the symbolic expression that
has that value -- a heuristic fit for small test graphs. The "VM" evaluates relax ops with PyTorch
following relax's documented semantics (padding [top, left, bottom, right], batch_norm's
`training`, linear = matmul(data, permute_dims(weight)) + bias, avg_pool2d's count_include_pad
default False, ...). Agreement with golden data therefore checks the generated call structure and
argument semantics as read from relax's docs -- not TVM's numerics or its shape inference.
FAKE_TVM_FLAVOR=new removes tvm.nd, relax.build and tvm.tir (adds tvm.runtime.tensor, tvm.compile,
tvm.tirx) to exercise the compatibility shims' other branch.
"""
import ast
import inspect
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

FLAVOR = os.environ.get("FAKE_TVM_FLAVOR", "v0.20")
_HERE = os.path.dirname(os.path.abspath(__file__))
_REFERENCE = os.environ.get("MSC_SHARED_REFERENCE_DIR") or os.path.join(_HERE, "..", "..", "..", "..", "..", "shared", "reference")
_EXTRA = os.path.join(_HERE, "..", "..", "relax_api_extra.json")

# ---- signatures ---------------------------------------------------------------------------------


class _Opaque:
    """A default whose source text is not a literal (e.g. `cpu(0)`)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _default(text):
    if text is None:
        return inspect.Parameter.empty
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return _Opaque(text)


def _load_signatures():
    """relax_ops.json (the APIs MSC's codegen called, incl. BlockBuilder and the
    relax.op.linear_algebra.* names), then relax_ops_v020_all.json (every relax.op.* of TVM v0.20:
    the authority where both list a function), then relax_api_extra.json."""
    entries = []
    for name in ("relax_ops.json", "relax_ops_v020_all.json"):
        with open(os.path.join(_REFERENCE, name), encoding="utf-8") as f:
            entries += json.load(f)
    with open(_EXTRA, encoding="utf-8") as f:
        extra = json.load(f)
    removed = extra.get("removed_in_v0_20", {})
    sigs = {}
    for e in entries + extra["apis"]:
        params, kwonly = [], False
        for name, default in e["params"]:
            if name == "*":
                kwonly = True
                continue
            if name in removed.get(e["func"], []):
                continue  # TVM v0.20 has no such parameter (relax.op.take's mode)
            kind = inspect.Parameter.KEYWORD_ONLY if kwonly else inspect.Parameter.POSITIONAL_OR_KEYWORD
            params.append(inspect.Parameter(name, kind, default=_default(default)))
        sigs[e["func"]] = inspect.Signature(params)
    return sigs


SIGNATURES = _load_signatures()


def bind(api, args, kwargs):
    """Binds a call to `api`'s signature (TypeError like Python's on a mismatch); defaults applied."""
    try:
        bound = SIGNATURES[api].bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError("%s: %s" % (api, e)) from None
    bound.apply_defaults()
    return dict(bound.arguments)


def checked(api):
    """Decorator for methods/constructors: enforce `api`'s signature (self excluded)."""
    def wrap(fn):
        def method(self, *args, **kwargs):
            return fn(self, **bind(api, args, kwargs))
        method.__name__ = fn.__name__
        method.__doc__ = "fake TVM %s%s" % (api, SIGNATURES[api])
        return method
    return wrap


# ---- tir ----------------------------------------------------------------------------------------


class PrimExpr:
    def _key(self):
        raise NotImplementedError

    def __repr__(self):
        return self._text()


class IntImm(PrimExpr):
    @checked("tir.IntImm")
    def __init__(self, dtype, value, span):
        self.dtype, self.value = str(dtype), int(value)

    def _key(self):
        return ("int", self.value)

    def _text(self):
        return str(self.value)

    def __int__(self):
        return self.value


class FloatImm(PrimExpr):
    @checked("tir.FloatImm")
    def __init__(self, dtype, value, span):
        if not str(dtype).startswith("float"):
            raise TypeError("tir.FloatImm: dtype must be a float type, got %s" % dtype)
        self.dtype, self.value = str(dtype), float(value)

    def _key(self):
        return ("float", self.dtype, self.value)

    def _text(self):
        return repr(self.value)


class Var(PrimExpr):
    @checked("tir.Var")
    def __init__(self, name, dtype, span):
        if not isinstance(name, str):
            raise TypeError("tir.Var: name must be a str")
        self.name, self.dtype = name, str(dtype)

    def _key(self):
        return ("var", id(self))

    def _text(self):
        return self.name


_BINOPS = {
    "Add": (lambda a, b: a + b, "+"), "Sub": (lambda a, b: a - b, "-"), "Mul": (lambda a, b: a * b, "*"),
    "Div": (lambda a, b: int(a / b), "/"), "FloorDiv": (lambda a, b: a // b, "//"),
    "FloorMod": (lambda a, b: a % b, "%"), "Min": (min, "min"), "Max": (max, "max"),
}


def _binop_class(kind):
    fn, sym = _BINOPS[kind]

    class BinOp(PrimExpr):
        @checked("tir." + kind)
        def __init__(self, a, b, span):
            for v in (a, b):
                if not isinstance(v, PrimExpr):
                    raise TypeError("tir.%s: operands must be PrimExprs (got %r); a Python int would be int32 "
                                    "and mismatch int64 dims" % (kind, v))
                if getattr(v, "dtype", "int64") != getattr(a, "dtype", "int64"):
                    raise TypeError("tir.%s: mismatched dtypes %s and %s" % (kind, a.dtype, v.dtype))
            self.a, self.b, self.dtype = a, b, a.dtype

        def _key(self):
            return (kind, _simplify(self.a)._key(), _simplify(self.b)._key())

        def _text(self):
            return "(%s %s %s)" % (self.a._text(), sym, self.b._text())

    BinOp.__name__ = BinOp.__qualname__ = kind
    BinOp.kind, BinOp.fn = kind, staticmethod(fn)
    return BinOp


BINOP_CLASSES = {k: _binop_class(k) for k in _BINOPS}


def _int(v):
    obj = IntImm.__new__(IntImm)
    obj.dtype, obj.value = "int64", int(v)
    return obj


def to_prim(v):
    if isinstance(v, PrimExpr):
        return v
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return _int(v)
    raise TypeError("expected an int or a PrimExpr, got %r" % (v,))


def _simplify(e):
    if hasattr(e, "kind"):
        a, b = _simplify(e.a), _simplify(e.b)
        if isinstance(a, IntImm) and isinstance(b, IntImm):
            return _int(e.fn(a.value, b.value))
    return e


def evaluate_prim(e, env):
    """Value of a PrimExpr with tir.Vars from env {Var: int}."""
    if isinstance(e, (IntImm, FloatImm)):
        return e.value
    if isinstance(e, Var):
        if e not in env:
            raise ValueError("fake tvm: symbolic dim %s has no value" % e.name)
        return env[e]
    if hasattr(e, "kind"):
        return e.fn(evaluate_prim(e.a, env), evaluate_prim(e.b, env))
    raise TypeError("not a PrimExpr: %r" % (e,))


def prim_vars(e, out):
    if isinstance(e, Var):
        out.append(e)
    elif hasattr(e, "kind"):
        prim_vars(e.a, out)
        prim_vars(e.b, out)
    return out


class Analyzer:
    @checked("tvm.arith.Analyzer")
    def __init__(self):
        pass

    @checked("tvm.arith.Analyzer.can_prove_equal")
    def can_prove_equal(self, lhs, rhs):
        return _simplify(to_prim(lhs))._key() == _simplify(to_prim(rhs))._key()


# ---- relax IR -----------------------------------------------------------------------------------


class ShapeExpr:
    @checked("relax.ShapeExpr")
    def __init__(self, values, span):
        self.values = [to_prim(v) for v in values]

    def __getitem__(self, i):
        return self.values[i]

    def __len__(self):
        return len(self.values)

    def __repr__(self):
        return "R.shape([%s])" % ", ".join(v._text() for v in self.values)


def _shape_expr(values):
    obj = ShapeExpr.__new__(ShapeExpr)
    obj.values = [to_prim(v) for v in values]
    return obj


class StructInfo:
    pass


class TensorStructInfo(StructInfo):
    @checked("relax.TensorStructInfo")
    def __init__(self, shape, dtype, vdevice, ndim, span):
        if shape is not None and not isinstance(shape, (list, tuple, ShapeExpr)):
            raise TypeError("relax.TensorStructInfo: shape must be a list of dims")
        self.shape = None if shape is None else (shape if isinstance(shape, ShapeExpr) else _shape_expr(shape))
        self.dtype = str(dtype)
        self.ndim = len(self.shape.values) if self.shape is not None else ndim
        if shape is not None and ndim not in (-1, self.ndim):
            raise ValueError("relax.TensorStructInfo: ndim %d does not match the shape" % ndim)

    def __repr__(self):
        return "R.Tensor(%r, %r)" % (self.shape, self.dtype)


def tensor_sinfo(values, dtype):
    obj = TensorStructInfo.__new__(TensorStructInfo)
    obj.shape, obj.dtype, obj.ndim = _shape_expr(values), str(dtype), len(values)
    return obj


class TupleStructInfo(StructInfo):
    def __init__(self, fields, span=None):
        self.fields = list(fields)

    def __repr__(self):
        return "R.Tuple(%s)" % ", ".join(map(repr, self.fields))


class Expr:
    pass


class RelaxVar(Expr):
    @checked("relax.Var")
    def __init__(self, name_hint, struct_info, span):
        if not isinstance(name_hint, str):
            raise TypeError("relax.Var: name_hint must be a str")
        if struct_info is not None and not isinstance(struct_info, StructInfo):
            raise TypeError("relax.Var: struct_info must be a StructInfo")
        self.name_hint, self.struct_info, self.is_dataflow = name_hint, struct_info, False

    def __repr__(self):
        return "%%%s" % self.name_hint


def _new_var(name_hint, sinfo, dataflow):
    v = RelaxVar.__new__(RelaxVar)
    v.name_hint, v.struct_info, v.is_dataflow = name_hint, sinfo, dataflow
    return v


class Call(Expr):
    def __init__(self, op, args):
        self.op, self.args = op, args
        self.lowering = None  # set by the fake passes: "decomposed", "dispatched", "v0.20-topi"

    def __repr__(self):
        return "%s(%s)" % (self.op.replace("relax.op.", "R."), ", ".join("%s=%r" % kv for kv in self.args.items()))


class Tuple(Expr):
    @checked("relax.Tuple")
    def __init__(self, fields, span):
        self.fields = list(fields)
        for f in self.fields:
            if not isinstance(f, Expr):
                raise TypeError("relax.Tuple: fields must be relax Exprs, got %r" % (f,))

    def __repr__(self):
        return "(%s)" % ", ".join(map(repr, self.fields))


class TupleGetItem(Expr):
    @checked("relax.TupleGetItem")
    def __init__(self, tuple_value, index, span):
        if not isinstance(tuple_value, Expr) or not isinstance(index, int):
            raise TypeError("relax.TupleGetItem(tuple_value: Expr, index: int)")
        self.tuple_value, self.index = tuple_value, index

    def __repr__(self):
        return "%r[%d]" % (self.tuple_value, self.index)


class Constant(Expr):
    """relax.Constant (relax.const): a tensor value with its struct info."""

    def __init__(self, data):
        self.data = data
        self.struct_info = tensor_sinfo(list(data.shape), dtype_name(data))

    def __repr__(self):
        return "R.const(%s %s)" % (self.struct_info.dtype, list(self.data.shape))


def const(*args, **kwargs):
    """relax.const (python/tvm/relax/expr.py): python int -> int32, float -> float32 when dtype is None."""
    a = bind("relax.const", args, kwargs)
    value, dtype = a["value"], a["dtype"]
    if isinstance(value, (bool, int, float, list)) or isinstance(value, np.generic):
        value = np.array(value, dtype=dtype)
    if not isinstance(value, np.ndarray):
        raise ValueError("relax.const: value has to be scalar or NDArray")
    if not dtype:
        dtype = {np.dtype("int64"): "int32", np.dtype("float64"): "float32"}.get(value.dtype)
    if dtype == "bfloat16" and value.dtype.name != "bfloat16":
        import ml_dtypes  # numpy has no bfloat16 (nor TVM without it)
        dtype = ml_dtypes.bfloat16
    if dtype is not None:
        value = value.astype(dtype)
    return Constant(torch_of(np.array(value)))


class PrimStructInfo(StructInfo):
    def __init__(self, dtype):
        self.dtype = dtype

    def __repr__(self):
        return "R.Prim(%r)" % self.dtype


class ShapeStructInfo(StructInfo):
    def __init__(self, ndim):
        self.ndim = ndim

    def __repr__(self):
        return "R.Shape(ndim=%d)" % self.ndim


class PrimValue(Expr):
    @checked("relax.PrimValue")
    def __init__(self, value, span):
        if isinstance(value, bool) or not isinstance(value, (int, float, PrimExpr)):
            raise TypeError("relax.PrimValue: value must be a PrimExpr or an int, got %r" % (value,))
        if isinstance(value, int):
            value = _int(value)
        elif isinstance(value, float):  # the FFI converts a Python float to a float32 FloatImm
            obj = FloatImm.__new__(FloatImm)
            obj.dtype, obj.value = "float32", value
            value = obj
        self.value = value
        self.struct_info = PrimStructInfo(value.dtype)

    def __repr__(self):
        return "R.prim(%r)" % (self.value,)


def _tuple(fields):
    t = Tuple.__new__(Tuple)
    t.fields = list(fields)
    return t


# ---- ops: evaluation with torch (relax semantics) -------------------------------------------------

_TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16, "int64": torch.int64,
                 "int32": torch.int32, "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool}


def torch_of(a):
    """torch tensor of the numpy array `a`; an ml_dtypes bfloat16 array (what TVM takes and gives
    for a bfloat16 tensor) by its bits."""
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(np.asarray(a, order="C").view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def numpy_of(t):
    """numpy array of the torch tensor `t`; bfloat16 as an ml_dtypes bfloat16 array, as TVM gives it."""
    if t.dtype == torch.bfloat16:
        import ml_dtypes
        return t.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def dtype_name(t):
    return {v: k for k, v in _TORCH_DTYPES.items()}[t.dtype]


def _pair(v, what):
    v = [v] if isinstance(v, int) else list(v)
    if len(v) == 1:
        v = v * 2
    if len(v) != 2:
        raise ValueError("%s must have 1 or 2 values, got %r" % (what, v))
    return v


def _pad4(p):
    p = [p] if isinstance(p, int) else list(p)
    if len(p) == 1:
        return p * 4
    if len(p) == 2:
        return [p[0], p[1], p[0], p[1]]
    if len(p) == 4:
        return p
    raise ValueError("padding must have 1, 2 or 4 values, got %r" % (p,))


def _out_dtype(t, out_dtype):
    return t if out_dtype in (None, "") else t.to(_TORCH_DTYPES[str(out_dtype)])


def _same_dtype(op, *ts):
    if len({t.dtype for t in ts}) > 1:
        raise TypeError("%s: operands have different dtypes %s" % (op, [dtype_name(t) for t in ts]))


def _binary(fn, name):
    def run(x1, x2):
        _same_dtype(name, x1, x2)
        return fn(x1, x2)
    return run


def _expand_dims(x, axis):
    axes = [axis] if isinstance(axis, int) else list(axis)
    nd = x.dim() + len(axes)
    norm = sorted(a % nd for a in axes)
    if len(set(norm)) != len(norm):
        raise ValueError("expand_dims: repeated axes %r" % (axes,))
    for a in norm:
        x = x.unsqueeze(a)
    return x


def _squeeze(x, axis):
    if axis is None:
        return x.reshape([d for d in x.shape if d != 1])
    axes = sorted({a % x.dim() for a in ([axis] if isinstance(axis, int) else axis)}, reverse=True)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError("squeeze: axis %d has size %d" % (a, x.shape[a]))
        x = x.squeeze(a)
    return x


def _reduce_axes(x, axis):
    if axis is None:
        return list(range(x.dim()))
    return [a % x.dim() for a in ([axis] if isinstance(axis, int) else axis)]


def _mean(x, axis, keepdims):
    return x.mean(dim=_reduce_axes(x, axis), keepdim=bool(keepdims))


def _permute_dims(x, axes):
    return x.permute(*(list(reversed(range(x.dim()))) if axes is None else axes))


def _reshape(x, shape):
    return x.reshape([int(d) for d in shape])


def _strided_slice(x, axes, begin, end, strides, assume_inbound):
    index = [slice(None)] * x.dim()
    strides = strides if strides is not None else [1] * len(axes)
    if not len(axes) == len(begin) == len(end) == len(strides):
        raise ValueError("strided_slice: axes/begin/end/strides lengths differ")
    for a, b, e, s in zip(axes, begin, end, strides):
        index[a % x.dim()] = slice(int(b), int(e), int(s))
    for a, sl in enumerate(index):  # torch slices take no negative step: numpy's indices instead
        if sl.step is not None and sl.step < 0:
            x = x.index_select(a, torch.tensor(list(range(*sl.indices(x.shape[a]))), dtype=torch.long))
            index[a] = slice(None)
    return x[tuple(index)]


def _conv2d(data, weight, strides, padding, dilation, groups, data_layout, kernel_layout, out_layout, out_dtype):
    if data_layout != "NCHW" or kernel_layout != "OIHW" or out_layout not in (None, "NCHW"):
        raise NotImplementedError("fake tvm: conv2d layouts %s/%s/%s" % (data_layout, kernel_layout, out_layout))
    _same_dtype("nn.conv2d", data, weight)
    if weight.shape[1] * groups != data.shape[1]:
        raise ValueError("nn.conv2d: weight I=%d x groups %d != data channels %d" % (weight.shape[1], groups, data.shape[1]))
    top, left, bottom, right = _pad4(padding)
    data = F.pad(data, (left, right, top, bottom))
    return _out_dtype(F.conv2d(data, weight, None, _pair(strides, "strides"), 0, _pair(dilation, "dilation"), groups), out_dtype)


def topi_pool(data, k, s, d, pads, ceil_mode, count_include_pad, is_max):
    """TOPI pool_impl_nd (include/tvm/topi/nn/pooling.h) over the last len(k) dims, pads
    [(before, after)] per dim: output size (n + pads - d*(k-1) - 1 [+ s-1 if ceil_mode]) // s + 1;
    max over the window positions inside the input; avg = their sum divided by their count, or by
    the count inside input + declared padding with count_include_pad, at least 1."""
    dims = len(k)
    idx, inside, region = [], [], []
    for i in range(dims):
        n, (p0, p1) = data.shape[data.dim() - dims + i], pads[i]
        out = (n + p0 + p1 - d[i] * (k[i] - 1) - 1 + (s[i] - 1 if ceil_mode else 0)) // s[i] + 1
        pos = torch.arange(out).reshape(-1, 1) * s[i] - p0 + torch.arange(k[i]).reshape(1, -1) * d[i]
        idx.append(pos.clamp(0, n - 1))
        inside.append((pos >= 0) & (pos < n))
        region.append(pos < n + p1)
    g = data
    for i in range(dims):  # gather window positions: [..., O0, K0, O1, K1]
        axis = data.dim() - dims + 2 * i
        g = g.index_select(axis, idx[i].reshape(-1)).unflatten(axis, tuple(idx[i].shape))
    mask, reg = inside[0], region[0]
    if dims == 2:
        mask = inside[0][:, :, None, None] & inside[1][None, None, :, :]
        reg = region[0][:, :, None, None] & region[1][None, None, :, :]
    kdims = tuple(range(-2 * dims + 1, 0, 2))
    if is_max:
        low = (torch.finfo if data.is_floating_point() else torch.iinfo)(data.dtype).min
        return torch.where(mask, g, torch.tensor(low, dtype=data.dtype)).amax(dim=kdims)
    total = torch.where(mask, g, torch.zeros((), dtype=data.dtype)).sum(dim=kdims)
    count = (reg if count_include_pad else mask).sum(dim=tuple(range(1, 2 * dims, 2))).clamp(min=1)
    return total / count.to(data.dtype)


def _pool2d(is_max):
    def run(data, pool_size, strides, padding, dilation, ceil_mode, count_include_pad, layout, out_layout):
        if layout != "NCHW" or out_layout not in (None, "NCHW"):
            raise NotImplementedError("fake tvm: pool layout %s/%s" % (layout, out_layout))
        top, left, bottom, right = _pad4(padding)
        k, s, d = _pair(pool_size, "pool_size"), _pair(strides, "strides"), _pair(dilation, "dilation")
        # torch's kernels: float only, symmetric padding of at most half the kernel
        if (top != bottom or left != right or (not is_max and d != [1, 1]) or not data.is_floating_point()
                or 2 * top > k[0] or 2 * left > k[1]):
            return topi_pool(data, k, s, d, [(top, bottom), (left, right)], bool(ceil_mode), bool(count_include_pad),
                             is_max)
        if is_max:
            return F.max_pool2d(data, k, s, (top, left), d, bool(ceil_mode))
        return F.avg_pool2d(data, k, s, (top, left), bool(ceil_mode), bool(count_include_pad))
    return run


def _adaptive_avg_pool2d(data, output_size, layout, out_layout):
    if layout != "NCHW" or out_layout not in (None, "NCHW"):
        raise NotImplementedError("fake tvm: adaptive pool layout %s/%s" % (layout, out_layout))
    size = list(data.shape[2:]) if output_size is None else _pair(output_size, "output_size")
    return F.adaptive_avg_pool2d(data, size)


def _batch_norm(data, gamma, beta, moving_mean, moving_var, axis, epsilon, center, scale, momentum, training):
    axis = axis % data.dim()
    x = data.movedim(axis, 1)
    if training:  # relax/topi: normalize with the batch statistics, update the running ones
        dims = [i for i in range(x.dim()) if i != 1]
        mean, var = x.mean(dims), x.var(dims, unbiased=False)
        new_mean = (1 - momentum) * moving_mean + momentum * mean
        new_var = (1 - momentum) * moving_var + momentum * var
    else:
        mean, var, new_mean, new_var = moving_mean, moving_var, moving_mean, moving_var
    y = F.batch_norm(x, mean, var, gamma if scale else None, beta if center else None, False, 0.0, epsilon)
    return y.movedim(1, axis), new_mean, new_var


def _linear(data, weight, bias, out_dtype):
    # relax.op.linear_algebra.linear: matmul(data, permute_dims(weight), out_dtype) (+ bias)
    _same_dtype("linear", data, weight)
    y = _out_dtype(torch.matmul(data, _permute_dims(weight, None)), out_dtype)
    return y if bias is None else y + bias


IMPLS = {
    "relax.op.add": _binary(torch.add, "add"),
    "relax.op.subtract": _binary(torch.sub, "subtract"),
    "relax.op.multiply": _binary(torch.mul, "multiply"),
    "relax.op.divide": _binary(torch.true_divide, "divide"),
    "relax.op.clip": lambda x, min, max: torch.clamp(x, float(min), float(max)).to(x.dtype),
    "relax.op.concat": lambda tensors, axis: torch.cat(list(tensors), axis),
    "relax.op.expand_dims": _expand_dims,
    "relax.op.squeeze": _squeeze,
    "relax.op.linear_algebra.matmul": lambda x1, x2, out_dtype: _out_dtype(torch.matmul(x1, x2), out_dtype),
    "relax.op.linear_algebra.linear": _linear,
    "relax.op.mean": _mean,
    "relax.op.permute_dims": _permute_dims,
    "relax.op.reshape": _reshape,
    "relax.op.strided_slice": _strided_slice,
    "relax.op.sigmoid": lambda x: torch.sigmoid(x),
    "relax.op.tanh": lambda x: torch.tanh(x),
    "relax.op.nn.relu": lambda data: F.relu(data),
    "relax.op.nn.gelu": lambda data: F.gelu(data),
    "relax.op.nn.softmax": lambda data, axis: torch.softmax(data, axis),
    "relax.op.nn.conv2d": _conv2d,
    "relax.op.nn.max_pool2d": _pool2d(True),
    "relax.op.nn.avg_pool2d": _pool2d(False),
    "relax.op.nn.adaptive_avg_pool2d": _adaptive_avg_pool2d,
    "relax.op.nn.batch_norm": _batch_norm,
}


def _check_reshape(args):
    """relax.op.reshape with a -1 or 0 dim infers it from x's struct info when the call is made
    (src/relax/op/tensor/manipulate.cc, ConvertNewShapeToExpr): x must already be emitted."""
    shape = args["shape"]
    dims = shape.values if isinstance(shape, ShapeExpr) else shape
    if any(isinstance(d, (int, IntImm)) and int(d) in (-1, 0) for d in dims) and \
            isinstance(args["x"], (Call, Tuple, TupleGetItem)):
        raise RuntimeError("relax.op.reshape: the struct_info is not populated, check if you have normalized the expr "
                           "(a reshape with -1 or 0 needs an emitted input)")


_CONSTRUCT_CHECKS = {"relax.op.reshape": _check_reshape}


def make_op(path):
    def op(*args, **kwargs):
        bound = bind(path, args, kwargs)
        if path in _CONSTRUCT_CHECKS:
            _CONSTRUCT_CHECKS[path](bound)
        return Call(path, bound)
    op.__name__ = path.rsplit(".", 1)[1]
    op.__doc__ = "fake TVM %s%s" % (path, SIGNATURES[path])
    return op


# ---- evaluation of expressions ------------------------------------------------------------------

_PRIMES = [37, 41, 43, 47, 53, 59]


def _to_value(v, env, lookup):
    """Arg value -> evaluation value: Constants -> their tensor, PrimValues -> (dtype, number),
    ShapeExprs -> lists of ints, other Exprs via lookup, PrimExprs -> ints, lists recursively."""
    if isinstance(v, Constant):
        return v.data.clone()
    if isinstance(v, PrimValue):
        return (v.value.dtype, v.value.value if isinstance(v.value, FloatImm) else evaluate_prim(v.value, env))
    if isinstance(v, ShapeExpr):
        return [evaluate_prim(d, env) for d in v.values]
    if isinstance(v, Expr):
        return lookup(v)
    if isinstance(v, PrimExpr):
        return evaluate_prim(v, env)
    if isinstance(v, (list, tuple)):
        return [_to_value(x, env, lookup) for x in v]
    return v


def run_call(call, env, lookup):
    if call.op not in IMPLS:
        raise NotImplementedError("fake tvm: no evaluation for %s" % call.op)
    if call.op in _SELF_COMPARE and call.args["x1"] is call.args["x2"]:
        # TVM's arith simplifier folds x == x / x != x (same operand) to a constant, NaN or not
        x = lookup(call.args["x1"]) if isinstance(call.args["x1"], Expr) else None
        return torch.full(x.shape, _SELF_COMPARE[call.op], dtype=torch.bool)
    args = {k: _to_value(v, env, lookup) for k, v in call.args.items()}
    if getattr(call, "lowering", None) == "v0.20-topi":  # see _builder.LegalizeOps
        args["training"] = not args["training"]
    with torch.no_grad():
        if (_all_half(args) and call.op != "relax.op.astype" and args.get("out_dtype") in (None, "")
                and args.get("dtype") in (None, "", "float16")):
            # (an op told its result dtype, e.g. cumsum(dtype="float32"), computes as told)
            # torch 1.13's CPU kernels lack most float16 ops: float32 math, rounded back to half
            result = IMPLS[call.op](**_map_tensors(args, lambda t: t.float() if t.dtype == torch.float16 else t))
            return _map_tensors(result, lambda t: t.half() if t.dtype == torch.float32 else t)
        return IMPLS[call.op](**args)


_SELF_COMPARE = {"relax.op.equal": True, "relax.op.not_equal": False, "relax.op.less_equal": True,
                 "relax.op.greater_equal": True, "relax.op.less": False, "relax.op.greater": False}


def _map_tensors(v, fn):
    if isinstance(v, torch.Tensor):
        return fn(v)
    if isinstance(v, dict):
        return {k: _map_tensors(x, fn) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_map_tensors(x, fn) for x in v)
    return v


def _all_half(args):
    """Whether the float tensors among args are all float16 (and there is one)."""
    dtypes = set()
    _map_tensors(args, lambda t: dtypes.add(t.dtype) if t.is_floating_point() else None)
    return dtypes == {torch.float16}


def _collect_prims(v, out):
    if isinstance(v, PrimExpr):
        out.append(v)
    elif isinstance(v, ShapeExpr):
        out.extend(v.values)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _collect_prims(x, out)
    elif isinstance(v, Expr):
        s = getattr(v, "struct_info", None)
        _collect_sinfo_prims(s, out)
    return out


def _collect_sinfo_prims(s, out):
    if isinstance(s, TensorStructInfo) and s.shape is not None:
        out.extend(s.shape.values)
    elif isinstance(s, TupleStructInfo):
        for f in s.fields:
            _collect_sinfo_prims(f, out)


def infer_call(call, sinfo_of):
    """Struct info of a Call: evaluate it on zeros, symbolic dims substituted by primes."""
    exprs = []
    for v in call.args.values():
        if isinstance(v, Expr):
            _collect_sinfo_prims(sinfo_of(v), exprs)
        else:
            _collect_prims(v, exprs)
            if isinstance(v, (list, tuple)):
                for x in v:
                    if isinstance(x, Expr):
                        _collect_sinfo_prims(sinfo_of(x), exprs)
    variables = []
    for e in exprs:
        for var in prim_vars(e, []):
            if var not in variables:
                variables.append(var)
    env = {var: _PRIMES[i] for i, var in enumerate(variables)}
    candidates = [e for e in exprs if prim_vars(e, [])]

    # divisions get ones (an integer division by zero raises in torch), everything else zeros
    fill = torch.ones if call.op in ("relax.op.divide", "relax.op.floor_divide", "relax.op.floor_mod") else torch.zeros

    def zeros(expr):
        if isinstance(expr, Constant):
            return expr.data.clone()  # real values: a floor_mod by a zero constant would fail
        s = sinfo_of(expr)
        if isinstance(s, TensorStructInfo):
            if s.shape is None:
                raise NotImplementedError("fake tvm: tensor of unknown shape")
            return fill([evaluate_prim(d, env) for d in s.shape.values], dtype=_TORCH_DTYPES[s.dtype])
        raise TypeError("%s: a tensor argument is a %s" % (call.op, type(s).__name__))

    result = run_call(call, env, zeros)

    def sinfo(t):
        dims = []
        for d in t.shape:
            match = [c for c in candidates if evaluate_prim(c, env) == d]
            dims.append(match[0] if match else int(d))
        return tensor_sinfo(dims, dtype_name(t))

    if isinstance(result, (tuple, list)):
        return TupleStructInfo([sinfo(t) for t in result])
    return sinfo(result)


# ---- runtime ------------------------------------------------------------------------------------


class Device:
    def __init__(self, kind, dev_id):
        self.kind, self.dev_id = kind, dev_id

    def __repr__(self):
        return "%s(%d)" % (self.kind, self.dev_id)


class NDArray:
    def __init__(self, array):
        self._array = np.array(array, copy=True)

    @property
    def shape(self):
        return tuple(self._array.shape)

    @property
    def dtype(self):
        return str(self._array.dtype)

    def numpy(self):
        return self._array.copy()

    def __repr__(self):
        return "<fake tvm tensor %s %s>" % (self.dtype, list(self.shape))


def make_array(api):
    def array(*args, **kwargs):
        a = bind(api, args, kwargs)
        if not isinstance(a["arr"], np.ndarray):
            raise TypeError("%s: arr must be a numpy array" % api)
        return NDArray(a["arr"])
    return array


from . import _ops  # noqa: E402  (the remaining relax ops; imports this module)

IMPLS.update(_ops.IMPLS)
