"""Evaluation of the relax ops beyond _impl.IMPLS, with PyTorch, following TVM v0.20 relax's
documented semantics (python/tvm/relax/op/*.py docstrings, src/relax/op/**/*.cc struct info rules,
python/tvm/relax/transform/legalize_ops/*.py + python/tvm/topi/* for what LegalizeOps computes).

Dtype rules are relax's, not torch's: elementwise ops keep the input dtype (torch would promote
int32 sums to int64), binary ops require equal dtypes, float-only unary ops (exp, sqrt, ...) reject
integer tensors, logical ops want bool. Every function takes exactly the op's parameters (bound by
_impl.bind with the op's signature) and returns a tensor or a tuple of tensors. Not modelled: TVM's
float rounding, NaN propagation of maximum/minimum.
"""
import math

import torch
import torch.nn.functional as F

from . import _impl as I


def _dt(name):
    return I._TORCH_DTYPES[str(name)]


def _is_float(t):
    return t.is_floating_point()


def _unary(fn, name, require_float):
    # src/relax/op/tensor/unary.cc: RELAX_REGISTER_UNARY_ARITH_OP_AND_IMPL(<op>, require_float_dtype).
    # float16 is computed in float32 (torch's CPU kernels lack most half ops) and rounded back.
    def run(**kwargs):
        (x,) = kwargs.values()  # the op's one parameter (x or data)
        if require_float and not _is_float(x):
            raise TypeError("relax.op.%s requires the input tensor to have float dtype, got %s" % (name, I.dtype_name(x)))
        return fn(x.float() if x.dtype == torch.float16 else x).to(x.dtype)
    return run


def _llvm_round(x):
    """tir.round lowers to llvm.round (src/target/llvm/intrin_rule_llvm.cc): halves away from zero
    (not torch.round's half-to-even)."""
    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5) if _is_float(x) else x


def _require_bool(name, *ts):
    for t in ts:
        if t.dtype != torch.bool:
            raise TypeError("relax.op.%s: operands must be bool, got %s" % (name, I.dtype_name(t)))


def _require_int(name, *ts):
    for t in ts:
        if _is_float(t):
            raise TypeError("relax.op.%s: operands must be integer or bool, got %s" % (name, I.dtype_name(t)))


def _divide(x1, x2):
    I._same_dtype("divide", x1, x2)
    if _is_float(x1):
        return x1 / x2
    return torch.div(x1, x2, rounding_mode="trunc")  # tir Div on integers truncates


def _floor_divide(x1, x2):
    I._same_dtype("floor_divide", x1, x2)
    return torch.div(x1, x2, rounding_mode="floor")


def _compare(fn, name):
    def run(x1, x2):
        I._same_dtype(name, x1, x2)
        return fn(x1, x2)
    return run


def _logical(fn, name):
    def run(x1, x2):
        _require_bool(name, x1, x2)
        return fn(x1, x2)
    return run


def _bitwise(fn, name):
    def run(x1, x2):
        I._same_dtype(name, x1, x2)
        _require_int(name, x1, x2)
        return fn(x1, x2)
    return run


def _where(condition, x1, x2):
    _require_bool("where", condition)
    I._same_dtype("where", x1, x2)
    return torch.where(condition, x1, x2)


def _astype(x, dtype):
    return x.to(_dt(dtype))


def _reduce(fn, name, float_only=False):
    def run(x, axis, keepdims):
        if float_only and not _is_float(x):
            raise TypeError("relax.op.%s: requires a float tensor" % name)
        axes = I._reduce_axes(x, axis)
        y = x
        for a in sorted(axes, reverse=True):
            y = fn(y, a)
            y = y.unsqueeze(a) if keepdims else y
        return y.to(x.dtype)
    return run


def _population(x, axis, keepdims, sqrt):
    if not _is_float(x):
        raise TypeError("relax.op.std/variance: requires a float tensor")
    axes = I._reduce_axes(x, axis)
    y = x.var(dim=axes, unbiased=False, keepdim=bool(keepdims)) if axes else x.clone()
    return y.sqrt() if sqrt else y


def _arg(fn):
    def run(x, axis, keepdims):
        if axis is None:
            y = fn(x.reshape(-1), 0)
            return y.reshape([1] * x.dim()) if keepdims else y
        return fn(x, axis % x.dim(), bool(keepdims))
    return run


def _argmax(x, dim, keepdim=False):
    return torch.argmax(x, dim, keepdim)


def _argmin(x, dim, keepdim=False):
    return torch.argmin(x, dim, keepdim)


def _cumsum(data, axis, dtype, exclusive):
    x = data.reshape(-1) if axis is None else data
    a = 0 if axis is None else axis % data.dim()
    out_dtype = data.dtype if dtype in (None, "") else _dt(dtype)
    y = torch.cumsum(x.to(out_dtype), a).to(out_dtype)
    if exclusive:  # TOPI's scan adds only the earlier terms (inclusive - x would cancel)
        y = torch.cat([torch.zeros_like(y.narrow(a, 0, 1)), y.narrow(a, 0, y.shape[a] - 1)], a)
    return y


def _topk(data, k, axis, ret_type, largest, dtype):
    # TOPI sorts stably: equal values keep their index order (torch.topk leaves it unspecified)
    order = torch.sort(data, dim=axis, descending=bool(largest), stable=True).indices.narrow(axis, 0, k)
    values, indices = data.gather(axis, order), order
    indices = indices.to(_dt(dtype))
    if ret_type == "both":
        return values, indices
    if ret_type == "values":
        return values
    if ret_type == "indices":
        return indices
    raise ValueError("topk: ret_type must be both, values or indices, got %r" % (ret_type,))


def _einsum(operands, subscripts):
    I._same_dtype("einsum", *operands)
    return torch.einsum(subscripts, *operands)


def _split(x, indices_or_sections, axis):
    a = axis % x.dim()
    n = x.shape[a]
    if isinstance(indices_or_sections, int):
        if indices_or_sections == 1:
            return x  # relax returns the input's struct info itself, not a 1-tuple
        size = -(-n // indices_or_sections)
        bounds = [min(size * i, n) for i in range(indices_or_sections)] + [n]
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
    return tuple(x.narrow(a, b, max(e - b, 0)) for b, e in zip(bounds[:-1], bounds[1:]))


def _broadcast_to(x, shape):
    shape = [int(d) for d in shape]
    if len(shape) < x.dim():
        raise ValueError("broadcast_to: target rank %d < input rank %d" % (len(shape), x.dim()))
    return x.broadcast_to(shape).clone()


def _tile(data, repeats):
    repeats = [int(r) for r in ([repeats] if isinstance(repeats, int) else repeats)]
    if len(repeats) < data.dim():
        repeats = [1] * (data.dim() - len(repeats)) + repeats
    return data.reshape([1] * (len(repeats) - data.dim()) + list(data.shape)).repeat(*repeats)


def _repeat(data, repeats, axis):
    if axis is None:
        return torch.repeat_interleave(data.reshape(-1), int(repeats), 0)
    return torch.repeat_interleave(data, int(repeats), axis % data.dim())


def _tri(upper):
    def run(x, k):
        return torch.triu(x, int(k)) if upper else torch.tril(x, int(k))
    return run


def _check_index(name, t):
    if _is_float(t) or t.dtype == torch.bool:
        raise TypeError("relax.op.%s: indices must be an integer tensor, got %s" % (name, I.dtype_name(t)))


def _take(x, indices, axis):
    _check_index("take", indices)
    if axis is None:
        if x.dim() != 1:
            raise ValueError("relax.op.take: axis=None requires a 1-D input, got %d-D" % x.dim())
        axis = 0
    a = axis % x.dim()
    n = x.shape[a]
    if bool(((indices < 0) | (indices >= n)).any()):  # topi.take mode "fast": no bounds handling
        raise IndexError("fake tvm: relax.op.take index out of [0, %d) (v0.20 lowers take with mode fast)" % n)
    flat = torch.index_select(x, a, indices.reshape(-1).long())
    return flat.reshape(list(x.shape[:a]) + list(indices.shape) + list(x.shape[a + 1:]))


def _gather_elements(data, indices, axis):
    _check_index("gather_elements", indices)
    return torch.gather(data, axis % data.dim(), indices.long())


def _gather_nd(data, indices, batch_dims):
    # ONNX GatherND (relax.op.gather_nd legalizes with the index tuples moved to the front for topi)
    if indices.dtype != torch.int64:  # src/relax/op/tensor/manipulate.cc, InferStructInfoGatherND
        raise TypeError("GatherND requires the input indices to have int64 dtype. However, the given indices dtype is %s"
                        % I.dtype_name(indices))
    b = int(batch_dims)
    m = indices.shape[-1]
    batch = list(data.shape[:b])
    nb = int(torch.tensor(batch).prod()) if batch else 1
    d = data.reshape([nb] + list(data.shape[b:]))
    idx = indices.reshape([nb, -1, m]).long()
    outs = []
    for i in range(nb):
        outs.append(d[i][tuple(idx[i, :, j] for j in range(m))])
    out = torch.stack(outs)
    return out.reshape(list(indices.shape[:-1]) + list(data.shape[b + m:]))


_SCATTER_REDUCE = {"add": "sum", "mul": "prod", "mean": "mean", "max": "amax", "min": "amin"}


def _scatter_elements(data, indices, updates, axis, reduction):
    _check_index("scatter_elements", indices)
    I._same_dtype("scatter_elements", data, updates)
    a = axis % data.dim()
    idx = indices.long()
    if reduction == "update":
        return data.scatter(a, idx, updates)
    if reduction not in _SCATTER_REDUCE:
        raise ValueError("scatter_elements: unknown reduction %r" % (reduction,))
    return data.scatter_reduce(a, idx, updates, _SCATTER_REDUCE[reduction], include_self=True)


def _scatter_nd(data, indices, updates, reduction):
    _check_index("scatter_nd", indices)
    I._same_dtype("scatter_nd", data, updates)
    out = data.clone()
    m = indices.shape[-1]
    idx = indices.reshape(-1, m).long()
    upd = updates.reshape([idx.shape[0]] + list(data.shape[m:]))
    for i in range(idx.shape[0]):
        key = tuple(int(v) for v in idx[i])
        if reduction == "update":
            out[key] = upd[i]
        elif reduction == "add":
            out[key] = out[key] + upd[i]
        elif reduction == "mul":
            out[key] = out[key] * upd[i]
        elif reduction == "max":
            out[key] = torch.maximum(out[key], upd[i])
        elif reduction == "min":
            out[key] = torch.minimum(out[key], upd[i])
        else:
            raise ValueError("scatter_nd: unknown reduction %r" % (reduction,))
    return out


def _one_hot(indices, on_value, off_value, depth, axis):
    _check_index("one_hot", indices)
    on_dtype, on = on_value
    off_dtype, off = off_value
    if on_dtype != off_dtype:
        raise ValueError("one_hot: on_value and off_value must have the same dtype")
    hot = F.one_hot(indices.long().clamp(min=0), int(depth)) & (indices >= 0).unsqueeze(-1)
    out = torch.where(hot.bool(), torch.tensor(on, dtype=_dt(on_dtype)), torch.tensor(off, dtype=_dt(on_dtype)))
    a = axis % (indices.dim() + 1)
    return out.movedim(-1, a)


def _full_shape(shape, dtype, value):
    return torch.full([int(d) for d in shape], value, dtype=_dt(dtype))


def _like(value):
    def run(x, dtype):
        return torch.full(x.shape, value, dtype=x.dtype if dtype in (None, "") else _dt(dtype))
    return run


def _arange(start, end, step, dtype):
    # python/tvm/relax/op/create.py: numbers become PrimValues; end None = arange(0, start)
    vals = [v[1] if isinstance(v, tuple) else v for v in (start, end, step)]
    if vals[1] is None:
        vals = [0, vals[0], vals[2]]
    if dtype is None:
        dtype = "int64" if all(isinstance(v, int) for v in vals) else "float32"
    s, e, st = vals
    if all(isinstance(v, int) for v in vals):
        # src/relax/op/tensor/create.cc, InferStructInfoArange: floordiv(end - start + step - 1, step),
        # one too many for a negative step (TVM v0.20); float bounds: ceil((end - start) / step)
        n = max((e - s + st - 1) // st, 0)
    else:
        n = max(int(math.ceil((e - s) / st)), 0)
    return (torch.arange(n, dtype=torch.float64) * st + s).to(_dt(dtype))


def _shape_to_tensor(expr):
    return torch.tensor([int(v) for v in expr], dtype=torch.int64)


def _conv1d(data, weight, strides, padding, dilation, groups, data_layout, kernel_layout, out_layout, out_dtype):
    if data_layout != "NCW" or kernel_layout != "OIW" or out_layout not in (None, "NCW"):
        raise NotImplementedError("fake tvm: conv1d layouts %s/%s/%s" % (data_layout, kernel_layout, out_layout))
    I._same_dtype("nn.conv1d", data, weight)
    if weight.shape[1] * groups != data.shape[1]:
        raise ValueError("nn.conv1d: weight I=%d x groups %d != data channels %d" % (weight.shape[1], groups, data.shape[1]))
    left, right = _pad2(padding)
    data = F.pad(data, (left, right))
    return I._out_dtype(F.conv1d(data, weight, None, _one(strides), 0, _one(dilation), groups), out_dtype)


def _one(v):
    v = [v] if isinstance(v, int) else list(v)
    if len(v) != 1:
        raise ValueError("expected 1 value, got %r" % (v,))
    return v[0]


def _pad2(p):
    p = [p] if isinstance(p, int) else list(p)
    if len(p) == 1:
        return p * 2
    if len(p) == 2:
        return p
    raise ValueError("1-D padding must have 1 or 2 values, got %r" % (p,))


def _crop(y, begin_end):
    """Crops trailing spatial dims of y by [(before, after), ...] (transposed-conv padding)."""
    index = [slice(None), slice(None)]
    for (b, e), n in zip(begin_end, y.shape[2:]):
        index.append(slice(b, n - e))
    return y[tuple(index)]


def _conv_transpose(nd):
    conv = F.conv_transpose1d if nd == 1 else F.conv_transpose2d
    names = ("NCW", "IOW") if nd == 1 else ("NCHW", "IOHW")

    def run(data, weight, strides, padding, output_padding, dilation, groups, data_layout, kernel_layout,
            out_layout, out_dtype):
        if (data_layout, kernel_layout) != names or out_layout not in (None, names[0]):
            raise NotImplementedError("fake tvm: conv%dd_transpose layouts %s/%s/%s" % (nd, data_layout, kernel_layout, out_layout))
        I._same_dtype("nn.conv%dd_transpose" % nd, data, weight)
        if weight.shape[0] != data.shape[1]:
            raise ValueError("nn.conv_transpose: weight I=%d != data channels %d" % (weight.shape[0], data.shape[1]))
        if nd == 1:
            s, d, op = [_one(strides)], [_one(dilation)], [_one(output_padding)]
            left, right = _pad2(padding)
            pads = [(left, right)]
        else:
            s, d = I._pair(strides, "strides"), I._pair(dilation, "dilation")
            op = I._pair(output_padding, "output_padding")
            top, left, bottom, right = I._pad4(padding)
            pads = [(top, bottom), (left, right)]
        # full transposed convolution, then crop [before, after] and extend by output_padding
        y = conv(data, weight, None, s, 0, [0] * nd, groups, d)
        y = F.pad(y, sum(([0, o] for o in reversed(op)), []))
        return I._out_dtype(_crop(y, pads), out_dtype)
    return run


def _pool1d(is_max):
    def run(data, pool_size, strides, padding, dilation, ceil_mode, count_include_pad, layout, out_layout):
        if ceil_mode and I.FLAVOR == "v0.20":
            # src/relax/op/nn/pooling.cc, InferStructInfoPool1D reads strides[1] with ceil_mode
            raise IndexError("fake tvm (v0.20): pool1d with ceil_mode: indexing 1 on an array of size 1")
        if layout != "NCW" or out_layout not in (None, "NCW"):
            raise NotImplementedError("fake tvm: pool1d layout %s/%s" % (layout, out_layout))
        left, right = _pad2(padding)
        k, s, d = _one(pool_size), _one(strides), _one(dilation)
        # torch's kernels: float only, symmetric padding of at most half the kernel
        if left != right or (not is_max and d != 1) or not data.is_floating_point() or 2 * left > k:
            return I.topi_pool(data, [k], [s], [d], [(left, right)], bool(ceil_mode), bool(count_include_pad), is_max)
        if is_max:
            return F.max_pool1d(data, k, s, left, d, bool(ceil_mode))
        return F.avg_pool1d(data, k, s, left, bool(ceil_mode), bool(count_include_pad))
    return run


def _adaptive_avg_pool1d(data, output_size, layout, out_layout):
    if layout != "NCW" or out_layout not in (None, "NCW"):
        raise NotImplementedError("fake tvm: adaptive pool layout %s/%s" % (layout, out_layout))
    size = data.shape[2] if output_size is None else _one(output_size)
    return F.adaptive_avg_pool1d(data, size)


def _layer_norm(data, gamma, beta, axes, epsilon, center, scale):
    axes = sorted(a % data.dim() for a in axes)
    if list(gamma.shape) != [data.shape[a] for a in axes] or list(beta.shape) != list(gamma.shape):
        raise ValueError("nn.layer_norm: gamma/beta shape %s/%s != normalized dims" % (list(gamma.shape), list(beta.shape)))
    mean = data.mean(dim=axes, keepdim=True)
    var = data.var(dim=axes, unbiased=False, keepdim=True)
    y = (data - mean) / torch.sqrt(var + epsilon)
    shape = [data.shape[i] if i in axes else 1 for i in range(data.dim())]
    if scale:
        y = y * gamma.reshape(shape)
    if center:
        y = y + beta.reshape(shape)
    return y


def _group_norm(data, gamma, beta, num_groups, channel_axis, axes, epsilon, center, scale):
    c = channel_axis % data.dim()
    axes = [a % data.dim() for a in axes]
    x = data.movedim(c, 1)
    n_c = x.shape[1]
    if n_c % num_groups:
        raise ValueError("nn.group_norm: %d channels not divisible by %d groups" % (n_c, num_groups))
    perm = [i for i in range(data.dim()) if i != c]
    perm.insert(1, c)  # x = data.movedim(c, 1) has data's dim perm[j] at position j
    # g splits x's dim 1 into (groups, channels per group): x's positions >= 2 move up by one
    g = x.reshape([x.shape[0], num_groups, n_c // num_groups] + list(x.shape[2:]))
    red = [2] + [perm.index(a) + 1 for a in axes if a != c]
    mean = g.mean(dim=red, keepdim=True)
    var = g.var(dim=red, unbiased=False, keepdim=True)
    y = ((g - mean) / torch.sqrt(var + epsilon)).reshape(x.shape)
    shape = [1, n_c] + [1] * (x.dim() - 2)
    if scale:
        y = y * gamma.reshape(shape)
    if center:
        y = y + beta.reshape(shape)
    return y.movedim(1, c)


def _rms_norm(data, weight, axes, epsilon):
    axes = [a % data.dim() for a in ([axes] if isinstance(axes, int) else axes)]
    if list(weight.shape) != [data.shape[a] for a in sorted(axes)]:
        raise ValueError("nn.rms_norm: weight shape %s != normalized dims" % list(weight.shape))
    y = data / torch.sqrt((data * data).mean(dim=axes, keepdim=True) + epsilon)
    return y * weight.reshape([data.shape[i] if i in axes else 1 for i in range(data.dim())])


def _nn_pad(data, pad_width, pad_mode, pad_value):
    pw = [int(p) for p in pad_width]
    if len(pw) != 2 * data.dim():
        raise ValueError("nn.pad: pad_width needs 2 values per dim")
    torch_pad = []
    for i in reversed(range(data.dim())):
        torch_pad += [pw[2 * i], pw[2 * i + 1]]
    if pad_mode != "constant" and I.FLAVOR == "v0.20":
        # python/tvm/relax/transform/legalize_ops/nn.py (v0.20): topi.nn.pad, pad_mode ignored
        pad_mode = "constant"
    if pad_mode == "constant":
        return F.pad(data, torch_pad, value=float(pad_value))
    raise NotImplementedError("fake tvm: pad_mode %s" % pad_mode)


def _attention(query, key, value, bias, scale, causal_mask, window_size):
    if window_size is not None:
        raise NotImplementedError("fake tvm: sliding-window attention")
    for t in (query, key, value):
        if t.dim() != 4:
            raise ValueError("nn.attention: inputs must be 4-D [B, S, N, H]")
    I._same_dtype("nn.attention", query, key, value)
    q, k, v = (t.permute(0, 2, 1, 3) for t in (query, key, value))  # -> [B, N, S, H]
    s = q.shape[2]
    t_kv = k.shape[2]
    p = torch.matmul(q, k.transpose(-1, -2))
    p = p * scale if scale is not None else p / math.sqrt(q.shape[-1])
    if bias is not None:
        if bias.dim() != 4 or bias.shape[-1] != t_kv:
            raise ValueError("nn.attention: bias must be 4-D ending with seq_len_kv")
        p = p + bias
    if causal_mask is not None:
        if causal_mask == "TopLeft":
            offset = 0
        elif causal_mask == "BottomRight":
            offset = abs(s - t_kv)
        else:
            raise ValueError("nn.attention: causal_mask %r" % (causal_mask,))
        keep = torch.ones(s, t_kv, dtype=torch.bool).tril(offset)
        p = p.masked_fill(~keep, float("-inf"))
    o = torch.matmul(torch.softmax(p, -1), v)
    return o.permute(0, 2, 1, 3)


def _resize_coord(x, in_size, out_size, mode):
    scale = in_size / out_size
    if mode == "half_pixel":
        return (x + 0.5) * scale - 0.5
    if mode == "align_corners":
        return x * ((in_size - 1) / (out_size - 1)) if out_size > 1 else x * 0.0
    if mode == "asymmetric":
        return x * scale
    if mode == "pytorch_half_pixel":
        return (x + 0.5) * scale - 0.5 if out_size > 1 else x * 0.0
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) * scale
    raise NotImplementedError("fake tvm: coordinate_transformation_mode %s" % mode)


def _resize_axis(data, axis, out_size, method, mode, rounding, alpha, exclude):
    """topi.image.resize along one axis (python/tvm/topi/image/resize.py: get_inx,
    get_closest_index, _lerp, _cubic_spline_weights; indices clamped to the edge)."""
    n = data.shape[axis]
    x = _resize_coord(torch.arange(out_size, dtype=torch.float64), n, out_size, mode)

    def take(i):
        return data.index_select(axis, i.clamp(0, n - 1).long())

    shape = [1] * data.dim()
    shape[axis] = out_size
    if method == "nearest_neighbor" and mode == "asymmetric" and out_size % n == 0:
        return take(torch.div(torch.arange(out_size), out_size // n, rounding_mode="floor"))  # use_int_div
    if method == "nearest_neighbor":
        if rounding == "":
            rounding = "round" if mode == "align_corners" else "floor"
        if rounding == "round":
            i = _llvm_round(x)
        elif rounding == "round_prefer_floor":
            i = torch.ceil(x - 0.5)
        elif rounding == "round_prefer_ceil":
            i = torch.floor(x + 0.5)
        elif rounding == "floor":
            i = torch.floor(x + 1e-5)
        elif rounding == "ceil":
            i = torch.ceil(x - 1e-5)
        else:
            raise ValueError("resize2d: rounding_method %r" % (rounding,))
        return take(i)
    i0 = torch.floor(x)
    t = (x - i0).reshape(shape).to(data.dtype)
    if method == "linear":
        return take(i0) * (1 - t) + take(i0 + 1) * t
    if method == "cubic":
        t2, t3 = t * t, t * t * t
        w = [alpha * (t3 - 2 * t2 + t), (alpha + 2) * t3 - (3 + alpha) * t2 + 1,
             -(alpha + 2) * t3 + (3 + 2 * alpha) * t2 - alpha * t, -alpha * t3 + alpha * t2]
        if exclude:
            for j in range(4):
                out = ((i0 - 1 + j < 0) | (i0 + j > n)).reshape(shape)
                w[j] = torch.where(out, torch.zeros_like(w[j]), w[j])
            total = sum(w)
            w = [wj / total for wj in w]
        return sum(take(i0 - 1 + j) * w[j] for j in range(4))
    raise ValueError("resize2d: method %r" % (method,))


def _resize2d(data, size, roi, layout, method, coordinate_transformation_mode, rounding_method, cubic_alpha,
              cubic_exclude, extrapolation_value, out_dtype):
    if layout != "NCHW":
        raise NotImplementedError("fake tvm: resize2d layout %s" % layout)
    size = [int(s) for s in size]
    if len(size) == 1:
        size = size * 2
    y = _resize_axis(data, 2, size[0], method, coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude)
    y = _resize_axis(y, 3, size[1], method, coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude)
    return I._out_dtype(y, out_dtype)


def _softplus(data, beta, threshold):
    return F.softplus(data, beta, threshold)


UNARY = {
    "abs": (torch.abs, False), "acos": (torch.acos, True), "acosh": (torch.acosh, True), "asin": (torch.asin, True),
    "asinh": (torch.asinh, True), "atan": (torch.atan, True), "atanh": (torch.atanh, True),
    "bitwise_not": (torch.bitwise_not, False), "ceil": (lambda x: torch.ceil(x) if _is_float(x) else x, False),
    "cos": (torch.cos, True), "cosh": (torch.cosh, True), "exp": (torch.exp, True),
    "floor": (lambda x: torch.floor(x) if _is_float(x) else x, False), "log": (torch.log, True),
    "logical_not": (torch.logical_not, False), "negative": (torch.neg, False),
    "round": (_llvm_round, False), "rsqrt": (torch.rsqrt, True),
    "sign": (torch.sign, False), "sin": (torch.sin, True), "sinh": (torch.sinh, True), "square": (lambda x: x * x, False),
    "sqrt": (torch.sqrt, True), "tan": (torch.tan, True), "erf": (torch.erf, True),
    "isnan": (torch.isnan, False), "isinf": (torch.isinf, False), "isfinite": (torch.isfinite, False),
}

IMPLS = {"relax.op." + k: _unary(fn, k, req) for k, (fn, req) in UNARY.items()}
for _k in ("isnan", "isinf", "isfinite"):
    IMPLS["relax.op." + _k] = (lambda fn: lambda x: fn(x))(UNARY[_k][0])  # bool result
IMPLS["relax.op.logical_not"] = lambda x: (_require_bool("logical_not", x), torch.logical_not(x))[1]
IMPLS.update({
    "relax.op.divide": _divide,
    "relax.op.floor_divide": _floor_divide,
    "relax.op.power": I._binary(torch.pow, "power"),
    "relax.op.floor_mod": I._binary(torch.remainder, "floor_mod"),
    "relax.op.maximum": I._binary(torch.maximum, "maximum"),
    "relax.op.minimum": I._binary(torch.minimum, "minimum"),
    "relax.op.equal": _compare(torch.eq, "equal"),
    "relax.op.not_equal": _compare(torch.ne, "not_equal"),
    "relax.op.greater": _compare(torch.gt, "greater"),
    "relax.op.greater_equal": _compare(torch.ge, "greater_equal"),
    "relax.op.less": _compare(torch.lt, "less"),
    "relax.op.less_equal": _compare(torch.le, "less_equal"),
    "relax.op.logical_and": _logical(torch.logical_and, "logical_and"),
    "relax.op.logical_or": _logical(torch.logical_or, "logical_or"),
    "relax.op.logical_xor": _logical(torch.logical_xor, "logical_xor"),
    "relax.op.bitwise_and": _bitwise(torch.bitwise_and, "bitwise_and"),
    "relax.op.bitwise_or": _bitwise(torch.bitwise_or, "bitwise_or"),
    "relax.op.bitwise_xor": _bitwise(torch.bitwise_xor, "bitwise_xor"),
    "relax.op.where": _where,
    "relax.op.astype": _astype,
    "relax.op.sum": _reduce(lambda y, a: y.sum(a), "sum"),
    "relax.op.prod": _reduce(lambda y, a: y.prod(a), "prod"),
    "relax.op.max": _reduce(lambda y, a: y.amax(a), "max"),
    "relax.op.min": _reduce(lambda y, a: y.amin(a), "min"),
    "relax.op.std": lambda x, axis, keepdims: _population(x, axis, keepdims, True),
    "relax.op.variance": lambda x, axis, keepdims: _population(x, axis, keepdims, False),
    "relax.op.argmax": _arg(_argmax),
    "relax.op.argmin": _arg(_argmin),
    "relax.op.cumsum": _cumsum,
    "relax.op.topk": _topk,
    "relax.op.einsum": _einsum,
    "relax.op.split": _split,
    "relax.op.broadcast_to": _broadcast_to,
    "relax.op.tile": _tile,
    "relax.op.repeat": _repeat,
    "relax.op.flip": lambda data, axis: torch.flip(data, [axis % data.dim()]),
    "relax.op.tril": _tri(False),
    "relax.op.triu": _tri(True),
    "relax.op.take": _take,
    "relax.op.gather_elements": _gather_elements,
    "relax.op.gather_nd": _gather_nd,
    "relax.op.scatter_elements": _scatter_elements,
    "relax.op.scatter_nd": _scatter_nd,
    "relax.op.one_hot": _one_hot,
    "relax.op.ones": lambda shape, dtype: _full_shape(shape, dtype, 1),
    "relax.op.zeros": lambda shape, dtype: _full_shape(shape, dtype, 0),
    "relax.op.ones_like": _like(1),
    "relax.op.zeros_like": _like(0),
    "relax.op.arange": _arange,
    "relax.op.shape_to_tensor": _shape_to_tensor,
    "relax.op.nn.silu": _unary(F.silu, "nn.silu", True),
    "relax.op.nn.selu": _unary(F.selu, "nn.selu", True),
    "relax.op.nn.gelu_tanh": _unary(lambda x: F.gelu(x, approximate="tanh"), "nn.gelu_tanh", True),
    "relax.op.nn.leakyrelu": lambda data, alpha: F.leaky_relu(data, alpha),
    "relax.op.nn.softplus": _softplus,
    "relax.op.nn.log_softmax": lambda data, axis: torch.log_softmax(data, axis),
    "relax.op.nn.conv1d": _conv1d,
    "relax.op.nn.conv1d_transpose": _conv_transpose(1),
    "relax.op.nn.conv2d_transpose": _conv_transpose(2),
    "relax.op.nn.max_pool1d": _pool1d(True),
    "relax.op.nn.avg_pool1d": _pool1d(False),
    "relax.op.nn.adaptive_avg_pool1d": _adaptive_avg_pool1d,
    "relax.op.nn.layer_norm": _layer_norm,
    "relax.op.nn.group_norm": _group_norm,
    "relax.op.nn.rms_norm": _rms_norm,
    "relax.op.nn.pad": _nn_pad,
    "relax.op.nn.attention": _attention,
    "relax.op.image.resize2d": _resize2d,
})
