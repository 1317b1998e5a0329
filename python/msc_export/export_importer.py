"""torch.export ``ExportedProgram`` (core ATen) -> Relax function, as TVM's
``relax.frontend.torch.from_exported_program`` imports it (apache/tvm
``python/tvm/relax/frontend/torch/exported_program_translator.py``, v0.26/v0.27), so that MSC's
passes (:mod:`msc_export.passes`) and graph builder name and fuse it as MSC would.

Needs torch >= 2.1 (``torch.export``); the project pins torch 2.15 (scripts/requirements-venv.txt).

Pipeline (:func:`translate_exported_program`):

1. ``ep.run_decompositions(table)``: the default core-ATen table minus :data:`PRESERVED_OPS`
   (``aten.linear``, ``aten.scaled_dot_product_attention``, ``aten.silu``,
   ``aten.adaptive_avg_pool2d``, ``aten.hardswish``, ``aten.hardsigmoid``), which stay whole
   because they are MSC optypes (``msc.linear_bias`` / ``msc.linear``, ``msc.attention``,
   ``nn.silu``, ``nn.adaptive_avg_pool2d``) or have TVM's own expression (hardswish:
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
names included) before anything is built. Dynamic dims (``torch.export.Dim``) are not supported
yet: an ExportedProgram with symbolic input dims is an :class:`ExportError` naming them.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple as PyTuple

import numpy as np
import torch
from torch import fx

from . import relax_ir as R
from .fx_importer import ExportError, FXImporter, UnsupportedOpsError, _arg, torch_dtype_name

#: ATen ops kept whole by run_decompositions (they are MSC optypes; see the module docstring).
PRESERVED_OPS = ("linear.default", "scaled_dot_product_attention.default", "silu.default",
                 "adaptive_avg_pool2d.default", "hardswish.default", "hardsigmoid.default")

_INT64_MAX = 2 ** 63 - 1


def aten_name(target: Any) -> str:
    """``torch.ops.aten.add.Tensor`` -> ``"add.Tensor"``; other callables by their qualified name."""
    name = str(target)
    if name.startswith("aten."):
        return name[len("aten."):]
    if target is operator.getitem:
        return "getitem"
    return getattr(target, "__qualname__", name)


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
            **{f"{op}.default": unary(f"relax.{op}") for op in ("abs", "log", "sin", "cos", "tan", "floor", "ceil",
                                                                  "sign", "cosh", "sinh", "asin", "acos", "atan")},
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
            "mean.dim": self._mean, "sum.dim_IntList": self._sum, "amax.default": self._amax,
            "embedding.default": self._aten_embedding,
            "scaled_dot_product_attention.default": self._sdpa,
            "constant_pad_nd.default": self._constant_pad_nd,
            # shapes and copies
            "view.default": self._reshape, "_unsafe_view.default": self._reshape, "reshape.default": self._reshape,
            "permute.default": self._permute, "unsqueeze.default": self._unsqueeze,
            "squeeze.dims": self._squeeze, "squeeze.dim": self._squeeze, "squeeze.default": self._squeeze,
            "expand.default": self._expand, "cat.default": self._aten_cat,
            "split_with_sizes.default": self._split, "split.Tensor": self._split,
            "select.int": self._select, "slice.Tensor": self._slice,
            "index_select.default": self._index_select, "gather.default": self._gather,
            "clone.default": self._identity, "alias.default": self._identity, "detach.default": self._identity,
            "lift_fresh_copy.default": self._identity, "_to_copy.default": self._to_copy,
            # creation (values known at export time)
            "full.default": self._full, "full_like.default": self._aten_full_like,
            "scalar_tensor.default": self._scalar_tensor,
            "arange.start_step": self._arange, "arange.start": self._arange, "arange.default": self._arange,
            # checks and symbolic sizes (static here)
            "_assert_tensor_metadata.default": self._drop, "_assert_scalar.default": self._drop,
            "sym_size.int": self._sym_size,
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

    def from_exported_program(self, ep: "torch.export.ExportedProgram") -> R.Function:
        """Translates an already decomposed program (see :func:`decompose`)."""
        gm = ep.graph_module
        problems = self.unsupported(gm)
        if problems:
            raise UnsupportedOpsError(problems)
        from torch.export.graph_signature import InputKind

        symbolic = [f"{node.name} dim {i} ({d})" for node in gm.graph.nodes if node.op == "placeholder"
                    and isinstance(node.meta.get("val"), torch.Tensor)
                    for i, d in enumerate(node.meta["val"].shape) if not isinstance(d, int)]
        if symbolic:
            raise ExportError("dynamic dims (torch.export.Dim) are not supported by the export path yet: "
                              + ", ".join(symbolic) + "; export with static shapes")
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
                        shape = tuple(int(d) for d in val.shape)
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

    def _sym_size(self, node: fx.Node) -> Any:
        return self._shape(self._x(node))[int(node.args[1])]

    def _rsub(self, node: fx.Node) -> Any:
        """``rsub(x, s)`` = ``s - x``."""
        x, other = self._x(node), self._retrieve(_arg(node, 1, "other"))
        if node.kwargs.get("alpha", 1) != 1:
            raise ExportError("rsub with alpha != 1 is not supported")
        lhs = other if isinstance(other, R.Expr) else R.const(other, x.sinfo.dtype)
        return self.emit("relax.subtract", [lhs, x])

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
                             kernel_layout="OIW", out_layout="NCW", out_dtype="float32")
            if b is None:
                return conv
            bias = R.make_call("relax.reshape", [b, R.ShapeExpr((1, b.sinfo.shape[0], 1))])
            return self.emit("relax.add", [conv, bias])
        raise ExportError(f"{x.sinfo.ndim - 2}-d convolution is not supported")

    def _addmm(self, node: fx.Node) -> Any:
        """``addmm(bias, a, b)`` = ``a @ b + bias`` (beta = alpha = 1)."""
        if node.kwargs.get("beta", 1) != 1 or node.kwargs.get("alpha", 1) != 1:
            raise ExportError("addmm with beta or alpha != 1 is not supported")
        bias, a, b = self._x(node), self._x(node, 1, "mat1"), self._x(node, 2, "mat2")
        mm = self.emit("relax.matmul", [a, b], out_dtype="float32")
        return self.emit("relax.add", [mm, bias])

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

    def _amax(self, node: fx.Node) -> Any:
        x = self._x(node)
        dim = self._retrieve(_arg(node, 1, "dim", []))
        axis = None if not dim else [int(d) for d in dim]
        return self.emit("relax.max", [x], axis=axis, keepdims=bool(_arg(node, 2, "keepdim", False)))

    def _aten_embedding(self, node: fx.Node) -> Any:
        """``embedding(weight, indices, padding_idx, ...)`` (weight first, unlike F.embedding)."""
        return self._embedding_impl(self._x(node, 1, "indices"), self._x(node, 0, "weight"))

    def _constant_pad_nd(self, node: fx.Node) -> Any:
        return self._pad_impl(self._x(node), self._retrieve(node.args[1]), float(_arg(node, 2, "value", 0.0)))

    def _aten_cat(self, node: fx.Node) -> Any:
        """``cat``, without its empty inputs (a KV cache that starts empty, e.g. Hugging Face's
        DynamicCache: ``cat([empty [1, h, 0, d], k], -2)`` is ``k``)."""
        tensors = [self._retrieve(t) for t in node.args[0]]
        kept = [t for t in tensors if not (isinstance(t, R.Expr) and 0 in t.sinfo.shape)]
        if len(kept) == 1:
            return kept[0]
        if not kept:
            raise ExportError("cat of empty tensors only")
        axis = int(_arg(node, 1, "dim", 0))
        return self.emit("relax.concat", [R.Tuple(kept)], axis=axis)

    def _select(self, node: fx.Node) -> Any:
        """``select(x, dim, index)`` = ``x[..., index]`` on ``dim``: ``strided_slice`` + ``reshape``."""
        x = self._x(node)
        dim = int(node.args[1]) % x.sinfo.ndim
        return self._index_tensor(x, (slice(None),) * dim + (int(node.args[2]),))

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

    def _index_select(self, node: fx.Node) -> Any:
        x, index = self._x(node), self._x(node, 2, "index")
        return self.emit("relax.take", [x, index], axis=int(node.args[1]) % x.sinfo.ndim)

    def _gather(self, node: fx.Node) -> Any:
        """``gather(x, dim, index)`` -> ``gather_elements`` (same shapes and meaning)."""
        if node.kwargs.get("sparse_grad"):
            raise ExportError("gather with sparse_grad=True is not supported")
        x, index = self._x(node), self._x(node, 2, "index")
        return self.emit("relax.gather_elements", [x, index], axis=int(node.args[1]) % x.sinfo.ndim)

    def _to_copy(self, node: fx.Node) -> Any:
        x = self._x(node)
        dtype = node.kwargs.get("dtype")
        return x if dtype is None or torch_dtype_name(dtype) == x.sinfo.dtype else self._astype(x, dtype)

    def _creation_value(self, node: fx.Node, value: Any, shape: Sequence[int], default_dtype: str) -> R.Constant:
        if isinstance(value, R.Expr):
            raise ExportError("a fill value computed from tensors is not supported")
        dtype = node.kwargs.get("dtype")
        dtype = default_dtype if dtype is None else torch_dtype_name(dtype)
        return R.Constant(np.full([int(s) for s in shape], value, dtype=np.dtype(dtype)))

    def _full(self, node: fx.Node) -> Any:
        value = self._retrieve(node.args[1])
        default = "float32" if isinstance(value, float) else "bool" if isinstance(value, bool) else "int64"
        return self._creation_value(node, value, self._retrieve(node.args[0]), default)

    def _aten_full_like(self, node: fx.Node) -> Any:
        x = self._x(node)
        return self._creation_value(node, self._retrieve(node.args[1]), x.sinfo.shape, x.sinfo.dtype)

    def _scalar_tensor(self, node: fx.Node) -> Any:
        value = self._retrieve(node.args[0])
        return self._creation_value(node, value, [], "float32")

    def _arange(self, node: fx.Node) -> Any:
        args = [self._retrieve(a) for a in node.args]
        start, end, step = (0, args[0], 1) if len(args) == 1 else (args + [1])[:3]
        if any(isinstance(v, R.Expr) for v in (start, end, step)):
            raise ExportError("arange bounds computed from tensors are not supported")
        dtype = node.kwargs.get("dtype")
        if dtype is None:
            dtype = torch.int64 if all(isinstance(v, int) for v in (start, end, step)) else torch.float32
        values = torch.arange(start, end, step, dtype=dtype)
        return R.Constant(values.numpy())


def require_torch_export() -> None:
    """Raises :class:`ExportError` on a torch without ``torch.export`` (before 2.1, e.g. Debian's 1.13)."""
    if not hasattr(torch, "export") or not hasattr(torch.export, "export"):
        raise ExportError(f"the export path needs torch >= 2.1 (torch.export); this is torch {torch.__version__}: "
                          "use the fx path, or the project's venv (scripts/install_venv.sh)")


def export_program(model: torch.nn.Module, example_inputs: Sequence[torch.Tensor]) -> "torch.export.ExportedProgram":
    """``torch.export.export(model.eval(), example_inputs)``; failures become :class:`ExportError`."""
    require_torch_export()
    model.eval()
    try:
        return torch.export.export(model, tuple(example_inputs))
    except Exception as err:  # torch's UserError, Unsupported, TypeError, ...
        raise ExportError(f"torch.export.export failed: {type(err).__name__}: {str(err).splitlines()[0]}") from err


def program_input_info(ep: "torch.export.ExportedProgram") -> List[PyTuple[List[int], str]]:
    """(shape, dtype) of each user input of ``ep``, from its placeholders' example values
    (-1 for a symbolic dim)."""
    from torch.export.graph_signature import InputKind
    user = {spec.arg.name for spec in ep.graph_signature.input_specs if spec.kind == InputKind.USER_INPUT}
    info = []
    for node in ep.graph.nodes:
        if node.op == "placeholder" and node.name in user:
            val = node.meta["val"]
            info.append(([d if isinstance(d, int) else -1 for d in val.shape], torch_dtype_name(val.dtype)))
    return info
