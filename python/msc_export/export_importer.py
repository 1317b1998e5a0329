"""torch.export ``ExportedProgram`` (core ATen) -> Relax function, as TVM's
``relax.frontend.torch.from_exported_program`` imports it (apache/tvm
``python/tvm/relax/frontend/torch/exported_program_translator.py``, v0.26/v0.27), so that MSC's
passes (:mod:`msc_export.passes`) and graph builder name and fuse it as MSC would.

Needs torch >= 2.1 (``torch.export``); the project pins torch 2.15 (scripts/requirements-venv.txt).

Pipeline (:func:`translate_exported_program`):

1. ``ep.run_decompositions(table)``: the default core-ATen table minus :data:`PRESERVED_OPS`
   (``aten.linear``, ``aten.scaled_dot_product_attention``, ``aten.silu``,
   ``aten.adaptive_avg_pool2d``, ``aten.hardswish``, ``aten.hardsigmoid``, the 2-D nearest and
   bilinear upsampling, reflection / replication padding), which stay whole because they are MSC optypes (``msc.linear_bias`` /
   ``msc.linear``, ``msc.attention``, ``nn.silu``, ``nn.adaptive_avg_pool2d``,
   ``image.resize2d``, ``nn.pad``; the default table turns them into gathers) or have TVM's own expression (hardswish:
   ``x * clip(x + 3, 0, 6) / 6``, as the torch.fx path); everything else is core ATen.
2. The graph signature: user inputs become ``inp_0``, ``inp_1``, ... (shapes and dtypes from the
   placeholders' example values); every parameter, buffer and lifted tensor constant becomes one
   ``relax.Constant`` shared by all its uses (MSC's ``shared_ref``).
3. Each ATen op overload becomes relax calls through the same emitters as the torch.fx path
   (:class:`~msc_export.fx_importer.FXImporter`), e.g. ``aten.convolution`` (2-D / 1-D, not
   transposed) -> ``nn.conv2d`` (+ bias add: ``msc.conv2d_bias``), ``aten.linear`` ->
   ``matmul(x, permute_dims(W)) + b`` (``msc.linear_bias``), ``aten._native_batch_norm_legit_no_training``
   -> ``nn.batch_norm`` + ``get_item``, ``aten.scaled_dot_product_attention`` -> ``msc.attention``,
   ``aten.view`` / ``aten._unsafe_view`` -> ``reshape``, ``aten.slice`` / ``aten.select`` ->
   ``strided_slice`` (+ ``reshape``). The supported overloads are the keys of
   :attr:`ExportedProgramImporter.aten_map`; docs/torch-export.md lists them and the core ATen
   ops left out, with the reason.

Every op overload without a conversion is reported at once (:class:`UnsupportedOpsError`, node
names included) before anything is built. Dynamic dims (``torch.export.Dim``) become MSC prims
(:mod:`msc_export.dynamic_dims`: the program is converted at several sizes and the dims that
change are fitted as affine functions of the symbols).
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple as PyTuple

import numpy as np
import torch
from torch import fx

from . import relax_ir as R
from .fx_importer import (_INT64_MAX, ExportError, FXImporter, UnsupportedOpsError, _arg, _out_dtype, _reduce_axes,
                          torch_dtype_name)

#: ATen ops kept whole by run_decompositions (they are MSC optypes; see the module docstring).
PRESERVED_OPS = ("linear.default", "scaled_dot_product_attention.default", "silu.default",
                 "adaptive_avg_pool2d.default", "hardswish.default", "hardsigmoid.default",
                 "upsample_nearest2d.vec", "upsample_bilinear2d.vec", "upsample_nearest2d.default",
                 "upsample_bilinear2d.default", "reflection_pad1d.default", "reflection_pad2d.default",
                 "replication_pad2d.default")

def aten_name(target: Any) -> str:
    """``torch.ops.aten.add.Tensor`` -> ``"add.Tensor"``; other callables by their qualified name."""
    name = str(target)
    if name.startswith("aten."):
        return name[len("aten."):]
    if target is operator.getitem:
        return "getitem"
    return getattr(target, "__qualname__", name)


class DynamicDim:
    """A dynamic dim asked for on the command line or through :func:`export_program`: its name (a
    Python identifier; the MSC prim name) and range [min, max] (torch.export.Dim's; max None:
    unbounded)."""

    def __init__(self, name: str, min: int = 2, max: Optional[int] = None) -> None:  # noqa: A002
        if not name.isidentifier():
            raise ExportError(f"dynamic dim name {name!r} is not an identifier")
        self.name, self.min, self.max = name, min, max

    @classmethod
    def parse(cls, text: str) -> PyTuple[PyTuple[int, int], "DynamicDim"]:
        """``"INPUT:DIM=NAME[:MIN:MAX]"`` (e.g. ``0:0=batch``, ``1:1=seq:2:512``) ->
        ((input index, dim), DynamicDim). Raises ExportError on other text."""
        try:
            where, spec = text.split("=", 1)
            index, dim = (int(v) for v in where.split(":"))
            parts = spec.split(":")
            if len(parts) not in (1, 3):
                raise ValueError
            lo, hi = (int(parts[1]), int(parts[2])) if len(parts) == 3 else (2, None)
        except ValueError:
            raise ExportError(f"--dynamic {text!r}: expected INPUT:DIM=NAME or INPUT:DIM=NAME:MIN:MAX "
                              "(e.g. 0:0=batch, 1:1=seq:2:512)") from None
        return (index, dim), cls(parts[0], lo, hi)


def _concrete_dim(d: Any, sizes: Optional[Dict[Any, int]]) -> int:
    """An input dim as an int: a static one as it is, a symbolic one (SymInt) at ``sizes`` (sympy
    symbol -> size) or, without them, at its example size."""
    if isinstance(d, int):
        return d
    if sizes is None:
        return int(d.node.hint)
    value = d.node.expr.subs(sizes)
    if not value.is_Integer:
        raise ExportError(f"symbolic dim {d.node.expr} has no size at {sizes}")
    return int(value)


def decompose(ep: "torch.export.ExportedProgram") -> "torch.export.ExportedProgram":
    """``ep.run_decompositions`` to core ATen, keeping :data:`PRESERVED_OPS` whole."""
    table = torch.export.default_decompositions()
    for name in PRESERVED_OPS:
        packet, overload = name.split(".")
        table.pop(getattr(getattr(torch.ops.aten, packet), overload), None)
    return ep.run_decompositions(table)


class ExportedProgramImporter(FXImporter):
    """Translates a (decomposed) ``ExportedProgram`` to a :class:`relax_ir.Function`."""

    def __init__(self) -> None:
        super().__init__()
        f = self.function_map
        add, sub, mul, div = f[operator.add], f[operator.sub], f[operator.mul], f[operator.truediv]
        unary = self._unary
        self.aten_map: Dict[str, Callable[[fx.Node], Any]] = {
            "getitem": self._getitem,
            # elementwise
            "add.Tensor": add, "add.Scalar": add, "sub.Tensor": sub, "sub.Scalar": sub,
            "mul.Tensor": mul, "mul.Scalar": mul, "div.Tensor": div, "div.Scalar": div,
            "rsub.Scalar": self._rsub,
            "pow.Tensor_Scalar": f[torch.pow], "pow.Tensor_Tensor": f[torch.pow],
            "maximum.default": self._binary("relax.maximum", max), "minimum.default": self._binary("relax.minimum", min),
            "neg.default": unary("relax.negative"), "exp.default": unary("relax.exp"),
            **{f"{op}.default": unary(f"relax.{op}") for op in (
                "abs", "log", "sin", "cos", "tan", "floor", "ceil", "sign", "cosh", "sinh", "asin", "acos", "atan",
                "acosh", "asinh", "atanh", "round", "isnan", "isinf", "bitwise_not")},
            "sqrt.default": unary("relax.sqrt"), "rsqrt.default": unary("relax.rsqrt"),
            "erf.default": unary("relax.erf"), "relu.default": unary("relax.nn.relu"),
            "sigmoid.default": unary("relax.sigmoid"), "tanh.default": unary("relax.tanh"),
            "silu.default": unary("relax.nn.silu"), "gelu.default": self._gelu,
            "logical_not.default": unary("relax.logical_not"),
            "logical_and.default": self._binary("relax.logical_and", operator.and_),
            "logical_or.default": self._binary("relax.logical_or", operator.or_),
            "clamp.default": self._clamp, "hardtanh.default": self._hardtanh,
            "hardsigmoid.default": self._hardsigmoid, "hardswish.default": self._hardswish,
            "eq.Tensor": f[torch.eq], "eq.Scalar": f[torch.eq], "ne.Tensor": f[torch.ne], "ne.Scalar": f[torch.ne],
            "lt.Tensor": f[torch.lt], "lt.Scalar": f[torch.lt], "le.Tensor": f[torch.le], "le.Scalar": f[torch.le],
            "gt.Tensor": f[torch.gt], "gt.Scalar": f[torch.gt], "ge.Tensor": f[torch.ge], "ge.Scalar": f[torch.ge],
            "where.self": self._where,
            "triu.default": self._trilu("relax.triu"), "tril.default": self._trilu("relax.tril"),
            # nn
            "convolution.default": self._convolution,
            "linear.default": self._linear,
            "addmm.default": self._addmm, "mm.default": self._matmul, "bmm.default": self._matmul,
            "_native_batch_norm_legit_no_training.default": self._batch_norm_no_training,
            "native_layer_norm.default": self._native_layer_norm,
            "_softmax.default": self._aten_softmax,
            "max_pool2d_with_indices.default": self._max_pool2d_with_indices,
            "avg_pool2d.default": self._avg_pool2d,
            "_adaptive_avg_pool2d.default": self._adaptive_avg_pool2d,
            "adaptive_avg_pool2d.default": self._adaptive_avg_pool2d,
            "mean.dim": self._mean, "sum.dim_IntList": self._sum, "amax.default": self._reduce_dims("relax.max"),
            "embedding.default": self._aten_embedding,
            "scaled_dot_product_attention.default": self._sdpa,
            "constant_pad_nd.default": self._constant_pad_nd,
            # shapes and copies
            "view.default": self._reshape, "_unsafe_view.default": self._reshape, "reshape.default": self._reshape,
            "permute.default": self._permute, "unsqueeze.default": self._unsqueeze,
            "squeeze.dims": self._squeeze, "squeeze.dim": self._squeeze, "squeeze.default": self._squeeze,
            "expand.default": self._expand, "cat.default": self._cat,
            "split_with_sizes.default": self._split, "split.Tensor": self._split,
            "select.int": self._select, "slice.Tensor": self._slice,
            "index_select.default": self._index_select, "gather.default": self._gather,
            "clone.default": self._identity, "alias.default": self._identity, "detach.default": self._identity,
            "lift_fresh_copy.default": self._identity, "_to_copy.default": self._to_copy,
            # creation (values known at export time)
            "full.default": self._full, "full_like.default": self._aten_full_like,
            "scalar_tensor.default": self._scalar_tensor,
            "arange.start_step": self._arange, "arange.start": self._arange, "arange.default": self._arange,
            # more core ATen ops with an MSC optype
            **{f"{op}.{ov}": self._binary(f"relax.{op}", fn) for op, fn in (
                ("bitwise_and", operator.and_), ("bitwise_or", operator.or_), ("bitwise_xor", operator.xor))
               for ov in ("Tensor", "Scalar")},
            "logical_xor.default": self._binary("relax.logical_xor", operator.xor),
            "remainder.Tensor": self._binary("relax.floor_mod", operator.mod),
            "remainder.Scalar": self._binary("relax.floor_mod", operator.mod),
            "div.Tensor_mode": self._div_mode, "div.Scalar_mode": self._div_mode,
            "pow.Scalar": self._pow_scalar, "reciprocal.default": self._reciprocal,
            "log2.default": self._log_base(2.0), "log10.default": self._log_base(10.0),
            "log1p.default": self._log1p, "expm1.default": self._expm1,
            "clamp.Tensor": self._clamp_tensor,
            "leaky_relu.default": self._leaky_relu, "_log_softmax.default": self._aten_log_softmax,
            "argmax.default": self._arg_reduce("relax.argmax"), "argmin.default": self._arg_reduce("relax.argmin"),
            "max.dim": self._max_min_dim("relax.max", "relax.argmax"),
            "min.dim": self._max_min_dim("relax.min", "relax.argmin"),
            "amin.default": self._reduce_dims("relax.min"), "mean.default": self._mean_all,
            "prod.default": self._prod, "prod.dim_int": self._prod,
            "var.correction": self._aten_var, "var.dim": self._aten_var,
            "cumsum.default": self._cumsum, "flip.default": self._flip, "repeat.default": self._tile,
            "topk.default": self._topk, "native_group_norm.default": self._native_group_norm,
            "upsample_nearest2d.vec": self._upsample("nearest_neighbor"),
            "upsample_bilinear2d.vec": self._upsample("linear"),
            "upsample_nearest2d.default": self._upsample("nearest_neighbor"),
            "upsample_bilinear2d.default": self._upsample("linear"),
            "scatter.src": self._scatter("update"), "scatter.value": self._scatter("update"),
            "scatter_add.default": self._scatter("add"),
            "reflection_pad1d.default": self._pad_mode("reflect"), "reflection_pad2d.default": self._pad_mode("reflect"),
            "replication_pad2d.default": self._pad_mode("edge"),
            "native_dropout.default": self._native_dropout,
            "copy.default": self._copy, "fill.Scalar": self._fill_with(),
            "empty.memory_format": self._empty, "empty_strided.default": self._empty,
            "avg_pool1d.default": self._avg_pool1d, "adaptive_avg_pool1d.default": self._adaptive_avg_pool1d,
            "elu.default": self._elu, "trunc.default": self._trunc,
            "fmod.Tensor": self._fmod, "fmod.Scalar": self._fmod,
            "any.default": self._any, "any.dim": self._any, "any.dims": self._any,
            "slice_scatter.default": self._slice_scatter, "select_scatter.default": self._select_scatter,
            "index.Tensor": self._index,
            # checks and symbolic sizes (concrete here: sizes of the conversion's input shapes)
            "_assert_tensor_metadata.default": self._drop, "_assert_scalar.default": self._drop,
            "sym_size.int": self._sym_size, "sym_constrain_range_for_size.default": self._drop,
            **{op.__name__: self._python_only(op) for op in (
                operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod, operator.truediv,
                operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge)},
        }

    # ------------------------------------------------------------------ entry point

    def unsupported(self, gm: fx.GraphModule) -> List[str]:  # type: ignore[override]
        problems = []
        for node in gm.graph.nodes:
            if node.op == "call_function" and aten_name(node.target) not in self.aten_map:
                problems.append(f"{node.name}: {node.target}")
            elif node.op in ("call_module", "call_method", "get_attr"):
                problems.append(f"{node.name}: {node.op} {node.target} (not core ATen)")
        return problems

    def from_exported_program(self, ep: "torch.export.ExportedProgram", sizes: Optional[Dict[Any, int]] = None
                              ) -> R.Function:
        """Translates an already decomposed program (see :func:`decompose`). Symbolic input dims
        (``torch.export.Dim``) take the sizes ``sizes`` gives their sympy symbols, else their
        example sizes; the result is static (:mod:`msc_export.dynamic_dims` makes prims of it)."""
        gm = ep.graph_module
        problems = self.unsupported(gm)
        if problems:
            raise UnsupportedOpsError(problems, "ATen op use")
        from torch.export.graph_signature import InputKind

        state = dict(ep.state_dict)
        state.update(ep.constants)
        specs = {spec.arg.name: spec for spec in ep.graph_signature.input_specs}
        inputs: List[R.Var] = []
        output = None
        for node in gm.graph.nodes:
            try:
                if node.op == "placeholder":
                    spec = specs[node.name]
                    if spec.kind == InputKind.USER_INPUT:
                        val = node.meta.get("val")
                        if not isinstance(val, torch.Tensor):
                            raise ExportError(f"user input {node.name} is not a tensor ({type(val).__name__})")
                        shape = tuple(_concrete_dim(d, sizes) for d in val.shape)
                        var = R.Var(f"inp_{len(inputs)}", R.TensorSI(shape, torch_dtype_name(val.dtype)))
                        inputs.append(var)
                        self.env[node] = var
                    else:
                        if spec.target not in state:
                            raise ExportError(f"{spec.kind.name.lower()} {spec.target!r} is not in the program's state")
                        self.env[node] = self._tensor_const(state[spec.target])
                elif node.op == "call_function":
                    self.env[node] = self.aten_map[aten_name(node.target)](node)
                elif node.op == "output":
                    output = self._program_output(node)
            except (ExportError, ValueError, TypeError, IndexError, KeyError) as err:
                raise ExportError(f"node '{node.name}' ({node.target}): {err}") from None
        return R.Function(inputs, self.bb.bindings, output)

    def _program_output(self, node: fx.Node) -> R.Expr:
        """The program's outputs (a tuple): one tensor as itself, several as a Tuple."""
        values = node.args[0]
        if isinstance(values, (list, tuple)) and len(values) == 1:
            value = self._retrieve(values[0])
            if not isinstance(value, R.Expr) or not isinstance(value.sinfo, R.TensorSI):
                raise ExportError(f"graph output must be a tensor, got {type(value).__name__}")
            return value
        return self._output(node)

    # ------------------------------------------------------------------ converters

    def _drop(self, node: fx.Node) -> Any:
        return None

    def _convolution(self, node: fx.Node) -> Any:
        """``aten.convolution(input, weight, bias, stride, padding, dilation, transposed,
        output_padding, groups)``: 2-D -> ``nn.conv2d``, 1-D -> ``nn.conv1d`` (+ bias add)."""
        x, w = self._x(node), self._x(node, 1, "weight")
        b = self._retrieve(node.args[2])
        stride, padding, dilation, transposed, _, groups = (self._retrieve(a) for a in node.args[3:9])
        if transposed:
            raise ExportError("transposed convolution is not supported by the export path")
        if x.sinfo.ndim == 4:
            return self._conv2d_impl(x, w, b, stride, padding, dilation, groups)
        if x.sinfo.ndim == 3:
            conv = self.emit("relax.nn.conv1d", [x, w], strides=[int(stride[0])], padding=[int(padding[0])] * 2,
                             dilation=[int(dilation[0])], groups=int(groups), data_layout="NCW",
                             kernel_layout="OIW", out_layout="NCW", out_dtype=_out_dtype(x))
            if b is None:
                return conv
            bias = R.make_call("relax.reshape", [b, R.ShapeExpr((1, b.sinfo.shape[0], 1))])
            return self.emit("relax.add", [conv, bias])
        raise ExportError(f"{x.sinfo.ndim - 2}-d convolution is not supported")

    def _batch_norm_no_training(self, node: fx.Node) -> Any:
        """``(input, weight, bias, running_mean, running_var, momentum, eps)`` -> ``nn.batch_norm``
        + ``get_item`` 0; the saved mean / invstd outputs (empty in inference) are not tensors here."""
        x = self._x(node)
        gamma, beta, mean, var = (self._retrieve(a) for a in node.args[1:5])
        c = x.sinfo.shape[1]
        gamma = R.const(np.ones(c), x.sinfo.dtype) if gamma is None else gamma
        beta = R.const(np.zeros(c), x.sinfo.dtype) if beta is None else beta
        bn = self.emit("relax.nn.batch_norm", [x, gamma, beta, mean, var], axis=1, epsilon=float(node.args[6]))
        return (self.bb.emit(R.TupleGetItem(bn, 0)), None, None)

    def _native_layer_norm(self, node: fx.Node) -> Any:
        """``(input, normalized_shape, weight, bias, eps)`` -> ``nn.layer_norm`` (mean / rstd unused)."""
        x = self._x(node)
        shape, gamma, beta, eps = (self._retrieve(a) for a in node.args[1:5])
        return (self._layer_norm_impl(x, list(shape), gamma, beta, eps), None, None)

    def _aten_softmax(self, node: fx.Node) -> Any:
        if node.args[2]:
            raise ExportError("_softmax with half_to_float=True is not supported")
        return self._softmax_impl(self._x(node), node.args[1])

    def _max_pool2d_with_indices(self, node: fx.Node) -> Any:
        """``(input, kernel, stride, padding, dilation, ceil_mode)``; the indices output is not
        supported (an error if used: it is not a tensor here)."""
        pool = self._max_pool2d_impl(self._x(node), _arg(node, 1, "kernel_size"), _arg(node, 2, "stride"),
                                     _arg(node, 3, "padding", 0), _arg(node, 4, "dilation", 1),
                                     _arg(node, 5, "ceil_mode", False))
        return (pool, None)

    def _aten_embedding(self, node: fx.Node) -> Any:
        """``embedding(weight, indices, padding_idx, ...)`` (weight first, unlike F.embedding)."""
        return self._embedding_impl(self._x(node, 1, "indices"), self._x(node, 0, "weight"))

    def _constant_pad_nd(self, node: fx.Node) -> Any:
        return self._pad_impl(self._x(node), self._retrieve(node.args[1]), float(_arg(node, 2, "value", 0.0)))

    def _slice(self, node: fx.Node) -> Any:
        """``slice(x, dim, start, end, step)``: clamped as torch does, one ``strided_slice``."""
        x = self._x(node)
        dim = int(_arg(node, 1, "dim", 0)) % x.sinfo.ndim
        n = self._shape(x)[dim]
        start, end = _arg(node, 2, "start", None), _arg(node, 3, "end", None)
        step = int(_arg(node, 4, "step", 1))
        start = 0 if start is None else int(start)
        end = n if end is None or end >= _INT64_MAX else int(end)
        start, end = (v + n if v < 0 else v for v in (start, end))
        start, end = min(max(start, 0), n), min(max(end, 0), n)
        if start == 0 and end == n and step == 1:
            return x
        return self._slice_axis(x, dim, start, max(start, end), step)

    def _div_mode(self, node: fx.Node) -> Any:
        """``div(x, y, rounding_mode=)``: "floor" -> ``floor_divide``, None -> ``divide``; "trunc"
        has no MSC optype."""
        mode = node.kwargs.get("rounding_mode")
        if mode not in (None, "floor"):
            raise ExportError(f"div rounding_mode={mode!r} has no MSC optype (only 'floor')")
        lhs, rhs = self._retrieve(node.args[0]), self._retrieve(node.args[1])
        if not isinstance(lhs, R.Expr):
            lhs = R.const(lhs, rhs.sinfo.dtype)
        if not isinstance(rhs, R.Expr):
            rhs = R.const(rhs, lhs.sinfo.dtype)
        return self.emit("relax.floor_divide" if mode == "floor" else "relax.divide", [lhs, rhs])

    def _pow_scalar(self, node: fx.Node) -> Any:
        """``pow(s, x)``: ``power(const s, x)``."""
        x = self._x(node, 1, "exponent")
        return self.emit("relax.power", [R.const(node.args[0], x.sinfo.dtype), x])

    def _expm1(self, node: fx.Node) -> Any:
        x = self._x(node)
        return self.emit("relax.subtract", [self.emit("relax.exp", [x]), R.const(1.0, x.sinfo.dtype)])

    def _clamp_tensor(self, node: fx.Node) -> Any:
        """``clamp(x, min_tensor, max_tensor)``: ``minimum(maximum(x, min), max)``."""
        x = self._x(node)
        lo, hi = self._retrieve(_arg(node, 1, "min")), self._retrieve(_arg(node, 2, "max"))
        if lo is not None:
            x = self.emit("relax.maximum", [x, lo])
        if hi is not None:
            x = self.emit("relax.minimum", [x, hi])
        return x

    def _aten_log_softmax(self, node: fx.Node) -> Any:
        if node.args[2]:
            raise ExportError("_log_softmax with half_to_float=True is not supported")
        return self._softmax_impl(self._x(node), node.args[1], "log_softmax")

    def _reduce_dims(self, op: str) -> Callable[[fx.Node], Any]:
        """``amax`` / ``amin(x, dim=[], keepdim)``: ``max`` / ``min`` over ``dim`` (all when empty)."""
        def convert(node: fx.Node) -> Any:
            dim = self._retrieve(_arg(node, 1, "dim", []))
            return self.emit(op, [self._x(node)], axis=_reduce_axes(dim),
                             keepdims=bool(_arg(node, 2, "keepdim", False)))
        return convert

    def _mean_all(self, node: fx.Node) -> Any:
        if self._dtype_kwarg(node) is not None:
            raise ExportError("mean with dtype= is not supported")
        return self.emit("relax.mean", [self._x(node)], axis=None, keepdims=False)

    def _aten_var(self, node: fx.Node) -> Any:
        """``var.correction(x, dim, *, correction, keepdim)`` / ``var.dim(x, dim, unbiased,
        keepdim)``: :meth:`FXImporter._var_impl` (relax's ``variance`` times n / (n - correction);
        torch's default correction 1: the unbiased estimate). ``std`` decomposes to its sqrt."""
        x = self._x(node)
        dim = self._retrieve(_arg(node, 1, "dim"))
        axes = None if not dim else [int(d) % x.sinfo.ndim for d in dim]
        if node.target == torch.ops.aten.var.dim:
            correction = 1.0 if _arg(node, 2, "unbiased", True) else 0.0
            keepdim = bool(_arg(node, 3, "keepdim", False))
        else:
            c = node.kwargs.get("correction")
            correction, keepdim = 1.0 if c is None else float(c), bool(node.kwargs.get("keepdim", False))
        return self._var_impl(x, axes, correction, keepdim)

    def _native_group_norm(self, node: fx.Node) -> Any:
        """``(input, weight, bias, N, C, HxW, group, eps)`` -> ``nn.group_norm`` (mean / rstd unused)."""
        x = self._x(node)
        out = self._group_norm_impl(x, int(node.args[6]), self._retrieve(node.args[1]), self._retrieve(node.args[2]),
                                    float(node.args[7]))
        return (out, None, None)

    def _upsample(self, method: str) -> Callable[[fx.Node], Any]:
        """``upsample_nearest2d`` / ``upsample_bilinear2d(x, output_size, [align_corners,]
        scale_factors)`` -> :meth:`FXImporter._resize2d_impl` (``image.resize2d`` as TVM's frontend
        maps them: nearest: asymmetric + floor; bilinear: align_corners or half_pixel)."""
        def convert(node: fx.Node) -> Any:
            x = self._x(node)
            size = self._retrieve(node.args[1])
            if size is None:  # the .vec overloads: (input, output_size | None, [align_corners,] scale_factors)
                scales = self._retrieve(node.args[-1])
                size = [int(math.floor(x.sinfo.shape[2 + i] * float(scales[i]))) for i in range(2)]
            align = bool(self._retrieve(node.args[2])) if method == "linear" else False
            return self._resize2d_impl(x, size, method, align)
        return convert

    def _pad_mode(self, mode: str) -> Callable[[fx.Node], Any]:
        """``reflection_pad{1,2}d`` / ``replication_pad2d(x, pad)`` -> ``nn.pad`` with pad_mode."""
        def convert(node: fx.Node) -> Any:
            return self._pad_impl(self._x(node), self._retrieve(node.args[1]), 0.0, mode)
        return convert

    def _native_dropout(self, node: fx.Node) -> Any:
        """Inference (``train`` False): the input and an all-true mask."""
        if _arg(node, 2, "train", False):
            raise ExportError("native_dropout with train=True is random; export the model in eval mode")
        x = self._x(node)
        return (x, R.Constant(np.ones(x.sinfo.shape, dtype=bool)))

    def _empty(self, node: fx.Node) -> Any:
        """``empty`` / ``empty_strided``: zeros (the values are unspecified)."""
        return self._creation_value(node, 0, self._retrieve(node.args[0]), "float32")

    def _any(self, node: fx.Node) -> Any:
        """``any(x, dim?, keepdim)``: ``max`` of the bool tensor as int32, compared with 0."""
        x = self._x(node)
        dim = self._retrieve(_arg(node, 1, "dim"))
        axes = _reduce_axes(dim)
        as_int = self.emit("relax.astype", [x], dtype="int32")
        top = self.emit("relax.max", [as_int], axis=axes, keepdims=bool(_arg(node, 2, "keepdim", False)))
        return self.emit("relax.greater", [top, R.const(0, "int32")])

    def _select_scatter(self, node: fx.Node) -> Any:
        """``select_scatter(x, src, dim, index)``: src (x without ``dim``) put back at ``index``."""
        x, src = self._x(node), self._x(node, 1, "src")
        dim = int(node.args[2]) % x.sinfo.ndim
        n = x.sinfo.shape[dim]
        index = int(node.args[3]) % n
        row = self.emit("relax.expand_dims", [src], axis=[dim])
        parts = ([self._slice_axis(x, dim, 0, index)] if index > 0 else []) + [row] + \
            ([self._slice_axis(x, dim, index + 1, n)] if index + 1 < n else [])
        return parts[0] if len(parts) == 1 else self.emit("relax.concat", [R.Tuple(parts)], axis=dim)

    def _index(self, node: fx.Node) -> Any:
        """``index(x, [None, ..., idx, None, ...])`` with one index tensor: ``take`` on that axis
        (output: x's dims before it, the index's dims, the dims after it, as torch's). Several
        index tensors (advanced indexing over more than one axis) are not supported."""
        x = self._x(node)
        indices = [self._retrieve(i) for i in node.args[1]]
        given = [(d, i) for d, i in enumerate(indices) if i is not None]
        if len(given) != 1:
            raise ExportError(f"indexing with {len(given)} index tensors is not supported (only one)")
        axis, idx = given[0]
        if idx.sinfo.dtype == "bool":
            raise ExportError("indexing with a bool mask has a data-dependent shape; not supported")
        return self.emit("relax.take", [x, idx], axis=axis)

    def _to_copy(self, node: fx.Node) -> Any:
        x = self._x(node)
        dtype = self._dtype_kwarg(node)
        return x if dtype is None or torch_dtype_name(dtype) == x.sinfo.dtype else self._astype(x, dtype)

    def _aten_full_like(self, node: fx.Node) -> Any:
        x = self._x(node)
        return self._creation_value(node, self._retrieve(node.args[1]), x.sinfo.shape, x.sinfo.dtype)

    def _scalar_tensor(self, node: fx.Node) -> Any:
        value = self._retrieve(node.args[0])
        return self._creation_value(node, value, [], "float32")



def core_aten_coverage() -> PyTuple[List[str], List[str]]:
    """(covered, not covered): the overloads of this torch's core ATen opset (``torch.Tag.core``)
    that :class:`ExportedProgramImporter` converts and those it does not, by ``name.overload``
    (docs/torch-export.md lists the second with the reason)."""
    core = set()
    # every registered operator (dir(torch.ops.aten) lists only the packets loaded so far)
    for full in torch._C._dispatch_get_all_op_names():
        if not full.startswith("aten::"):
            continue
        name, _, overload = full[len("aten::"):].partition(".")
        packet = getattr(torch.ops.aten, name, None)
        op = getattr(packet, overload or "default", None) if packet is not None else None
        if op is not None and torch.Tag.core in op.tags:
            core.add(f"{name}.{overload or 'default'}")
    converted = ExportedProgramImporter().aten_map
    return sorted(core & set(converted)), sorted(core - set(converted))


def require_torch_export() -> None:
    """Raises :class:`ExportError` on a torch without ``torch.export`` (before 2.1, e.g. Debian's 1.13)."""
    if not hasattr(torch, "export") or not hasattr(torch.export, "export"):
        raise ExportError(f"the export path needs torch >= 2.1 (torch.export); this is torch {torch.__version__}: "
                          "use the fx path, or the project's venv (scripts/install_venv.sh)")


def export_program(model: torch.nn.Module, example_inputs: Sequence[torch.Tensor],
                   dynamic: Optional[Dict[PyTuple[int, int], DynamicDim]] = None) -> "torch.export.ExportedProgram":
    """``torch.export.export(model.eval(), example_inputs, dynamic_shapes=...)``; failures become
    :class:`ExportError`. ``dynamic``: {(input index, dim): DynamicDim}; one name is one
    ``torch.export.Dim`` wherever it appears (its range from the first mention)."""
    require_torch_export()
    model.eval()
    dynamic_shapes = None
    if dynamic:
        dims: Dict[str, Any] = {}
        spec: List[Dict[int, Any]] = [{} for _ in example_inputs]
        for (index, dim), d in sorted(dynamic.items()):
            if not 0 <= index < len(example_inputs) or not 0 <= dim < example_inputs[index].dim():
                raise ExportError(f"dynamic dim {d.name}: input {index} has no dim {dim}")
            if d.name not in dims:
                dims[d.name] = torch.export.Dim(d.name, min=d.min, max=d.max)
            spec[index][dim] = dims[d.name]
        dynamic_shapes = tuple(spec)
    try:
        return torch.export.export(model, tuple(example_inputs), dynamic_shapes=dynamic_shapes)
    except Exception as err:  # torch's UserError, Unsupported, TypeError, ...
        raise ExportError(f"torch.export.export failed: {type(err).__name__}: {str(err).splitlines()[0]}") from err


def program_input_info(ep: "torch.export.ExportedProgram") -> List[PyTuple[List[int], str]]:
    """(shape, dtype) of each user input of ``ep``, from its placeholders' example values (a
    symbolic dim at its example size)."""
    from torch.export.graph_signature import InputKind
    user = {spec.arg.name for spec in ep.graph_signature.input_specs if spec.kind == InputKind.USER_INPUT}
    info = []
    for node in ep.graph.nodes:
        if node.op == "placeholder" and node.name in user:
            val = node.meta["val"]
            info.append(([_concrete_dim(d, None) for d in val.shape], torch_dtype_name(val.dtype)))
    return info
