"""torch.fx graph -> Relax function, the way TVM v0.20's ``relax.frontend.torch.from_fx`` does it.

Sources mirrored (apache/tvm, ``python/tvm/relax/frontend/torch/fx_translator.py`` and
``base_fx_graph_translator.py``; release v0.20):

* graph inputs become function parameters named ``inp_0``, ``inp_1``, ... (in placeholder order);
* every ``model.named_parameters()`` tensor becomes one ``relax.Constant`` (the same object at
  every use, which is what makes MSC's ``shared_ref`` work); buffers (e.g. BatchNorm running
  statistics) become a new constant at each use;
* ``nn.Conv2d``: ``conv2d(x, W, data_layout="NCHW", kernel_layout="OIHW", out_dtype="float32")``,
  then, with a bias, ``add(conv, reshape(b, (1, -1, 1, 1)))``;
* ``nn.Linear`` / ``F.linear``: ``relax.op.linear(x, W, b, "float32")`` =
  ``add(matmul(x, permute_dims(W), out_dtype="float32"), b)``;
* ``nn.BatchNorm2d``: ``batch_norm(x, gamma, beta, mean, var, axis=1, epsilon=eps)`` (relax's
  defaults ``momentum=0.1, training=True`` stay -- hence MSC's ``training="1"``), then
  ``TupleGetItem(bn, 0)`` as its own binding;
* binary ops promote a Python scalar operand to a 0-d constant of the tensor's dtype;
* ``x[...]`` on a tensor: ``strided_slice`` then ``reshape``; on a tuple value: ``TupleGetItem``;
* ``ReLU6``/``F.relu6``: ``clip(x, 0, 6)`` (int bounds); ``Hardtanh``/``clamp``: ``clip`` with the
  given bounds (``-inf``/``inf`` when absent); ``Dropout``/``Identity``/``contiguous``: no op.

Deliberate differences from v0.20 (each one a wrong result in TVM):

* integer indices in ``x[i, ...]`` drop that dimension (TVM kept it as size 1);
* ``nn.AvgPool2d`` passes its ``count_include_pad`` (TVM always used relax's default ``False``);
* ``nn.Hardtanh`` uses the module's ``min_val``/``max_val`` (TVM read them from the call's kwargs,
  i.e. always -1/1);
* ``squeeze(dim)`` of a dimension that is not 1 is the identity, as in torch (relax rejects it).

Supported FX targets (see the three maps in :class:`FXImporter`):

* modules: Conv1d, Conv2d, BatchNorm2d, LayerNorm, ReLU, ReLU6, Hardtanh, GELU, SiLU, Sigmoid,
  Tanh, Softmax, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Linear, Flatten, Dropout(2d), Identity;
* functions: ``+ - * /`` (``operator``, in-place forms, ``torch.add/sub/mul/div``; Python
  scalars become 0-d constants), ``getitem``, ``getattr`` (``.shape``), ``flatten``, ``reshape``,
  ``permute``, ``transpose``, ``cat``/``concat``, ``softmax``, ``relu``, ``sigmoid``, ``tanh``,
  ``gelu``, ``silu``, ``relu6``, ``hardtanh``, ``clamp``/``clip``, ``mean``, ``squeeze``,
  ``unsqueeze``, ``matmul``/``mm``/``bmm``/``@``, ``F.linear``, ``F.conv2d``, ``F.layer_norm``,
  ``F.max_pool2d``, ``F.avg_pool2d``, ``F.adaptive_avg_pool2d``, ``F.dropout``, ``split``,
  ``chunk``, ``torchvision.ops.stochastic_depth`` (eval mode: identity);
* Tensor methods: the same names plus ``size``, ``view``, ``contiguous``.

Python values computed at trace time (``x.size(0)``, ``x.shape[1] // 2``) stay Python values.
Unsupported FX targets are collected over the whole graph first and reported together in one
:class:`UnsupportedOpsError`.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple as PyTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import fx, nn

from . import relax_ir as R


class ExportError(Exception):
    """A model cannot be exported (bad argument values, unsupported dtype, ...)."""


class UnsupportedOpsError(ExportError):
    """The FX graph uses targets the exporter does not support; ``problems`` lists all of them."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        lines = "\n".join("  " + p for p in self.problems)
        super().__init__(f"{len(self.problems)} unsupported FX node(s):\n{lines}")


_TORCH_DTYPES = {
    torch.float32: "float32", torch.float16: "float16", torch.float64: "float64",
    torch.int64: "int64", torch.int32: "int32", torch.bool: "bool",
}


def torch_dtype_name(dtype: torch.dtype) -> str:
    try:
        return _TORCH_DTYPES[dtype]
    except KeyError:
        raise ExportError(f"unsupported torch dtype {dtype}") from None


def _pair(v: Any, n: int = 2) -> List[int]:
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return [int(v[0])] * n
        return [int(x) for x in v]
    return [int(v)] * n


def _pad4(p: Any) -> List[int]:
    """relax ``GetCompletePadding2D``: 1 value -> all sides; 2 (h, w) -> (h, w, h, w); 4 as is."""
    p = _pair(p)
    if len(p) == 2:
        return [p[0], p[1], p[0], p[1]]
    if len(p) == 4:
        return p
    raise ExportError(f"padding {p} is neither 1, 2 nor 4 values")


def _arg(node: fx.Node, idx: int, name: str, default: Any = None) -> Any:
    if len(node.args) > idx:
        return node.args[idx]
    return node.kwargs.get(name, default)


class FXImporter:
    """Translates a traced ``fx.GraphModule`` to a :class:`relax_ir.Function`."""

    def __init__(self) -> None:
        self.env: Dict[fx.Node, Any] = {}
        self.params: Dict[int, R.Constant] = {}
        self.bb = R.BlockBuilder()
        self.named_modules: Dict[str, nn.Module] = {}
        self.module_map: Dict[type, Callable[[fx.Node], Any]] = {
            nn.Conv2d: self._conv2d_module,
            nn.Conv1d: self._conv1d_module,
            nn.BatchNorm2d: self._batch_norm_module,
            nn.LayerNorm: self._layer_norm_module,
            nn.ReLU: self._unary("relax.nn.relu"),
            nn.ReLU6: self._relu6,
            nn.Hardtanh: self._hardtanh_module,
            nn.GELU: self._gelu_module,
            nn.SiLU: self._unary("relax.nn.silu"),
            nn.Sigmoid: self._unary("relax.sigmoid"),
            nn.Tanh: self._unary("relax.tanh"),
            nn.Softmax: self._softmax_module,
            nn.MaxPool2d: self._max_pool2d_module,
            nn.AvgPool2d: self._avg_pool2d_module,
            nn.AdaptiveAvgPool2d: self._adaptive_avg_pool2d_module,
            nn.Linear: self._linear_module,
            nn.Flatten: self._flatten_module,
            nn.Dropout: self._identity,
            nn.Dropout2d: self._identity,
            nn.Identity: self._identity,
        }
        add, sub = self._binary("relax.add", operator.add), self._binary("relax.subtract", operator.sub)
        mul, div = self._binary("relax.multiply", operator.mul), self._binary("relax.divide", operator.truediv)
        self.function_map: Dict[Any, Callable[[fx.Node], Any]] = {
            operator.add: add, operator.iadd: add, torch.add: add,
            operator.sub: sub, operator.isub: sub, torch.sub: sub, torch.subtract: sub,
            operator.mul: mul, operator.imul: mul, torch.mul: mul, torch.multiply: mul,
            operator.truediv: div, operator.itruediv: div, torch.div: div, torch.divide: div,
            operator.floordiv: self._python_only(operator.floordiv),
            operator.getitem: self._getitem,
            getattr: self._getattr,
            torch.flatten: self._flatten,
            torch.reshape: self._reshape,
            torch.permute: self._permute,
            torch.transpose: self._transpose,
            torch.cat: self._cat, torch.concat: self._cat,
            torch.softmax: self._softmax, F.softmax: self._softmax,
            torch.relu: self._unary("relax.nn.relu"), F.relu: self._unary("relax.nn.relu"),
            torch.sigmoid: self._unary("relax.sigmoid"), F.sigmoid: self._unary("relax.sigmoid"),
            torch.tanh: self._unary("relax.tanh"), F.tanh: self._unary("relax.tanh"),
            F.gelu: self._gelu, F.silu: self._unary("relax.nn.silu"),
            F.relu6: self._relu6, F.hardtanh: self._hardtanh,
            torch.clamp: self._clamp, torch.clip: self._clamp,
            torch.mean: self._mean,
            torch.squeeze: self._squeeze,
            torch.unsqueeze: self._unsqueeze,
            torch.matmul: self._matmul, operator.matmul: self._matmul, torch.mm: self._matmul,
            torch.bmm: self._matmul,
            F.linear: self._linear,
            F.conv2d: self._conv2d,
            F.layer_norm: self._layer_norm,
            F.max_pool2d: self._max_pool2d,
            F.avg_pool2d: self._avg_pool2d,
            F.adaptive_avg_pool2d: self._adaptive_avg_pool2d,
            F.dropout: self._identity,
            torch.split: self._split, torch.chunk: self._chunk,
        }
        try:  # torchvision's stochastic depth (EfficientNet, ConvNeXt ...): the identity in eval mode
            from torchvision.ops import stochastic_depth
            self.function_map[stochastic_depth] = self._stochastic_depth
        except ImportError:  # pragma: no cover - torchvision is optional
            pass
        self.method_map: Dict[str, Callable[[fx.Node], Any]] = {
            "add": add, "add_": add, "sub": sub, "mul": mul, "div": div,
            "size": self._size,
            "view": self._reshape, "reshape": self._reshape,
            "permute": self._permute, "transpose": self._transpose,
            "flatten": self._flatten,
            "softmax": self._softmax,
            "relu": self._unary("relax.nn.relu"), "relu_": self._unary("relax.nn.relu"),
            "sigmoid": self._unary("relax.sigmoid"), "tanh": self._unary("relax.tanh"),
            "clamp": self._clamp, "clip": self._clamp,
            "mean": self._mean,
            "squeeze": self._squeeze, "unsqueeze": self._unsqueeze,
            "matmul": self._matmul,
            "contiguous": self._identity,
            "split": self._split, "chunk": self._chunk,
        }

    # ------------------------------------------------------------------ entry points

    def unsupported(self, gm: fx.GraphModule) -> List[str]:
        """Every node whose target has no converter, as ``"<node>: <kind> <target>"``."""
        modules = dict(gm.named_modules())
        problems = []
        for node in gm.graph.nodes:
            if node.op == "call_module":
                mod = modules[node.target]
                if type(mod) not in self.module_map:
                    problems.append(f"{node.name}: call_module {node.target} ({type(mod).__module__}."
                                    f"{type(mod).__qualname__})")
            elif node.op == "call_function":
                if node.target not in self.function_map:
                    problems.append(f"{node.name}: call_function {_target_name(node.target)}")
            elif node.op == "call_method":
                if node.target not in self.method_map:
                    problems.append(f"{node.name}: call_method Tensor.{node.target}")
        return problems

    def from_fx(self, gm: fx.GraphModule, input_info: Sequence[PyTuple[Sequence[int], str]]) -> R.Function:
        problems = self.unsupported(gm)
        if problems:
            raise UnsupportedOpsError(problems)
        self.named_modules = dict(gm.named_modules())
        inputs = [R.Var(f"inp_{i}", R.TensorSI(shape, dtype)) for i, (shape, dtype) in enumerate(input_info)]
        for _, param in gm.named_parameters():
            dtype = torch_dtype_name(param.dtype)
            if dtype not in ("float32", "float16"):
                raise ExportError(f"unsupported data type for model parameters: {dtype}")
            self.params[id(param)] = R.Constant(param.detach().cpu().numpy())
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(inputs):
            raise ExportError(f"the model takes {len(placeholders)} inputs, {len(inputs)} input shapes given")
        output = None
        for node in gm.graph.nodes:
            try:
                if node.op == "placeholder":
                    self.env[node] = inputs[placeholders.index(node)]
                elif node.op == "get_attr":
                    self.env[node] = self._fetch_attr(gm, node.target)
                elif node.op == "call_module":
                    self.env[node] = self.module_map[type(self.named_modules[node.target])](node)
                elif node.op == "call_function":
                    self.env[node] = self.function_map[node.target](node)
                elif node.op == "call_method":
                    self.env[node] = self.method_map[node.target](node)
                elif node.op == "output":
                    output = self._output(node)
            except (ExportError, ValueError, TypeError, IndexError, KeyError) as err:
                raise ExportError(f"node '{node.name}' ({node.op} {_target_name(node.target)}): {err}") from None
        return R.Function(inputs, self.bb.bindings, output)

    # ------------------------------------------------------------------ utilities

    def _fetch_attr(self, gm: nn.Module, target: str) -> Any:
        obj: Any = gm
        for atom in target.split("."):
            obj = getattr(obj, atom)
        if isinstance(obj, torch.Tensor):
            if id(obj) in self.params:
                return self.params[id(obj)]
            return self._tensor_const(obj)
        return obj

    @staticmethod
    def _tensor_const(t: torch.Tensor) -> R.Constant:
        torch_dtype_name(t.dtype)
        return R.Constant(t.detach().cpu().numpy())

    def _param(self, t: Optional[torch.Tensor]) -> Optional[R.Constant]:
        if t is None:
            return None
        return self.params.get(id(t)) or self._tensor_const(t)

    def _retrieve(self, a: Any) -> Any:
        if isinstance(a, fx.Node):
            return self.env[a]
        if isinstance(a, tuple):
            return tuple(self._retrieve(x) for x in a)
        if isinstance(a, list):
            return [self._retrieve(x) for x in a]
        if isinstance(a, dict):
            return {k: self._retrieve(v) for k, v in a.items()}
        return a

    def _x(self, node: fx.Node, idx: int = 0, name: str = "input") -> R.Expr:
        value = self._retrieve(_arg(node, idx, name))
        if not isinstance(value, R.Expr) or not isinstance(value.sinfo, R.TensorSI):
            raise ExportError(f"argument {idx} is not a tensor ({type(value).__name__})")
        return value

    @staticmethod
    def _shape(x: R.Expr) -> PyTuple[int, ...]:
        return x.sinfo.shape

    def emit(self, op: str, args: Sequence[Any], **attrs: Any) -> R.Var:
        try:
            return self.bb.emit(R.make_call(op, args, **attrs))
        except (ValueError, TypeError, IndexError) as err:
            raise ExportError(f"{op}: {err}") from None

    def _output(self, node: fx.Node) -> R.Expr:
        """``emit_output``: a tensor, a tuple-valued var (e.g. ``split``) or a Python tuple -> ``Tuple``."""
        value = self._retrieve(node.args[0])
        if isinstance(value, (tuple, list)):
            fields = []
            for v in value:
                if not isinstance(v, R.Expr) or not isinstance(v.sinfo, R.TensorSI):
                    raise ExportError(f"graph outputs must be tensors, got {type(v).__name__}")
                fields.append(v)
            return self.bb.emit(R.Tuple(fields))
        if not isinstance(value, R.Expr) or not isinstance(value.sinfo, (R.TensorSI, R.TupleSI)):
            raise ExportError(f"graph output must be a tensor or a tuple of tensors, got {type(value).__name__}")
        return value

    # ------------------------------------------------------------------ elementwise

    def _identity(self, node: fx.Node) -> Any:
        return self._retrieve(node.args[0])

    def _stochastic_depth(self, node: fx.Node) -> Any:
        if _arg(node, 3, "training", True):
            raise ExportError("stochastic_depth with training=True is random; export the model in eval mode")
        return self._retrieve(node.args[0])

    def _unary(self, op: str) -> Callable[[fx.Node], Any]:
        def convert(node: fx.Node) -> Any:
            return self.emit(op, [self._x(node)])
        return convert

    def _binary(self, op: str, py_op: Callable[[Any, Any], Any]) -> Callable[[fx.Node], Any]:
        def convert(node: fx.Node) -> Any:
            lhs, rhs = self._retrieve(node.args[0]), self._retrieve(_arg(node, 1, "other"))
            alpha = node.kwargs.get("alpha", 1)
            if alpha != 1:
                raise ExportError(f"alpha={alpha} is not supported")
            if node.kwargs.get("rounding_mode") is not None:
                raise ExportError(f"rounding_mode={node.kwargs['rounding_mode']!r} is not supported")
            lexpr, rexpr = isinstance(lhs, R.Expr), isinstance(rhs, R.Expr)
            if not lexpr and not rexpr:
                return py_op(lhs, rhs)
            if not lexpr:
                lhs = R.const(lhs, rhs.sinfo.dtype)
            if not rexpr:
                rhs = R.const(rhs, lhs.sinfo.dtype)
            return self.emit(op, [lhs, rhs])
        return convert

    def _python_only(self, py_op: Callable[[Any, Any], Any]) -> Callable[[fx.Node], Any]:
        def convert(node: fx.Node) -> Any:
            lhs, rhs = self._retrieve(node.args[0]), self._retrieve(node.args[1])
            if isinstance(lhs, R.Expr) or isinstance(rhs, R.Expr):
                raise ExportError(f"{py_op.__name__} on tensors is not supported")
            return py_op(lhs, rhs)
        return convert

    def _clip(self, x: R.Expr, lo: Any, hi: Any) -> Any:
        for v in (lo, hi):
            if not isinstance(v, (int, float)):
                raise ExportError(f"clip bounds must be numbers, got {type(v).__name__}")
        return self.emit("relax.clip", [x, R.PrimValue(lo), R.PrimValue(hi)])

    def _clamp(self, node: fx.Node) -> Any:
        x = self._x(node)
        lo = self._retrieve(_arg(node, 1, "min"))
        hi = self._retrieve(_arg(node, 2, "max"))
        return self._clip(x, -math.inf if lo is None else lo, math.inf if hi is None else hi)

    def _relu6(self, node: fx.Node) -> Any:
        return self._clip(self._x(node), 0, 6)

    def _hardtanh(self, node: fx.Node) -> Any:
        return self._clip(self._x(node), float(_arg(node, 1, "min_val", -1.0)), float(_arg(node, 2, "max_val", 1.0)))

    def _hardtanh_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        return self._clip(self._x(node), float(mod.min_val), float(mod.max_val))

    def _gelu_approx(self, approximate: str, node: fx.Node) -> Any:
        if approximate != "none":
            raise ExportError(f"gelu approximate={approximate!r} is not supported (MSC has no gelu_tanh)")
        return self.emit("relax.nn.gelu", [self._x(node)])

    def _gelu(self, node: fx.Node) -> Any:
        return self._gelu_approx(node.kwargs.get("approximate", "none"), node)

    def _gelu_module(self, node: fx.Node) -> Any:
        return self._gelu_approx(self.named_modules[node.target].approximate, node)

    def _softmax_impl(self, x: R.Expr, dim: Any) -> Any:
        if dim is None:
            raise ExportError("softmax needs an explicit dim")
        return self.emit("relax.nn.softmax", [x], axis=int(dim))

    def _softmax(self, node: fx.Node) -> Any:
        if node.kwargs.get("dtype") is not None:
            raise ExportError("softmax with dtype= is not supported")
        return self._softmax_impl(self._x(node), _arg(node, 1, "dim"))

    def _softmax_module(self, node: fx.Node) -> Any:
        return self._softmax_impl(self._x(node), self.named_modules[node.target].dim)

    # ------------------------------------------------------------------ nn

    def _conv2d_impl(self, x, weight, bias, strides, padding, dilation, groups) -> Any:
        if isinstance(padding, str):
            if padding != "valid":
                raise ExportError(f"padding={padding!r} is not supported")
            padding = 0
        conv = self.emit("relax.nn.conv2d", [x, weight], strides=_pair(strides), padding=_pad4(padding),
                         dilation=_pair(dilation), groups=int(groups), data_layout="NCHW",
                         kernel_layout="OIHW", out_layout="NCHW", out_dtype="float32")
        if bias is None:
            return conv
        b = R.make_call("relax.reshape", [bias, R.ShapeExpr((1, bias.sinfo.shape[0], 1, 1))])
        return self.emit("relax.add", [conv, b])

    def _conv2d_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        if mod.padding_mode != "zeros":
            raise ExportError(f"padding_mode={mod.padding_mode!r} is not supported")
        return self._conv2d_impl(self._x(node), self._param(mod.weight), self._param(mod.bias), mod.stride,
                                 mod.padding, mod.dilation, mod.groups)

    def _conv2d(self, node: fx.Node) -> Any:
        x, w = self._x(node), self._retrieve(_arg(node, 1, "weight"))
        b = self._retrieve(_arg(node, 2, "bias"))
        return self._conv2d_impl(x, w, b, _arg(node, 3, "stride", 1), _arg(node, 4, "padding", 0),
                                 _arg(node, 5, "dilation", 1), _arg(node, 6, "groups", 1))

    def _conv1d_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        if mod.padding_mode != "zeros" or isinstance(mod.padding, str):
            raise ExportError("only zero padding given as numbers is supported")
        x = self._x(node)
        (p,) = _pair(mod.padding, 1)
        conv = self.emit("relax.nn.conv1d", [x, self._param(mod.weight)], strides=_pair(mod.stride, 1),
                         padding=[p, p], dilation=_pair(mod.dilation, 1), groups=int(mod.groups),
                         data_layout="NCW", kernel_layout="OIW", out_layout="NCW", out_dtype="float32")
        if mod.bias is None:
            return conv
        bias = self._param(mod.bias)
        b = R.make_call("relax.reshape", [bias, R.ShapeExpr((1, bias.sinfo.shape[0], 1))])
        return self.emit("relax.add", [conv, b])

    def _linear_impl(self, x, weight, bias) -> Any:
        # relax.op.linear(x, w, b, "float32"): matmul(x, permute_dims(w)) (+ b), one emit.
        wt = R.make_call("relax.permute_dims", [weight], axes=None)
        mm = R.make_call("relax.matmul", [x, wt], out_dtype="float32")
        if bias is None:
            return self.bb.emit(mm)
        return self.bb.emit(R.make_call("relax.add", [mm, bias]))

    def _linear_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        return self._linear_impl(self._x(node), self._param(mod.weight), self._param(mod.bias))

    def _linear(self, node: fx.Node) -> Any:
        w = self._retrieve(_arg(node, 1, "weight"))
        b = self._retrieve(_arg(node, 2, "bias"))
        return self._linear_impl(self._x(node), w, b)

    def _matmul(self, node: fx.Node) -> Any:
        a, b = self._x(node), self._x(node, 1, "other")
        return self.emit("relax.matmul", [a, b], out_dtype="float32")

    def _batch_norm_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        if not mod.track_running_stats or mod.running_mean is None:
            raise ExportError("BatchNorm2d without running statistics is not supported")
        x = self._x(node)
        c = mod.num_features
        if mod.affine:
            gamma, beta = self._param(mod.weight), self._param(mod.bias)
        else:
            gamma, beta = R.const(np.ones(c), x.sinfo.dtype), R.const(np.zeros(c), x.sinfo.dtype)
        mean, var = self._tensor_const(mod.running_mean), self._tensor_const(mod.running_var)
        bn = self.emit("relax.nn.batch_norm", [x, gamma, beta, mean, var], axis=1, epsilon=float(mod.eps))
        return self.bb.emit(R.TupleGetItem(bn, 0))

    def _layer_norm_impl(self, x: R.Expr, shape: Sequence[int], gamma: Any, beta: Any, eps: float) -> Any:
        shape = tuple(int(s) for s in shape)
        gamma = R.const(np.ones(shape), x.sinfo.dtype) if gamma is None else gamma
        beta = R.const(np.zeros(shape), x.sinfo.dtype) if beta is None else beta
        return self.emit("relax.nn.layer_norm", [x, gamma, beta], axes=list(range(-len(shape), 0)),
                         epsilon=float(eps))

    def _layer_norm_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        affine = mod.elementwise_affine
        return self._layer_norm_impl(self._x(node), mod.normalized_shape, self._param(mod.weight) if affine else None,
                                     self._param(mod.bias) if affine else None, mod.eps)

    def _layer_norm(self, node: fx.Node) -> Any:
        shape = self._retrieve(_arg(node, 1, "normalized_shape"))
        shape = [shape] if isinstance(shape, int) else list(shape)
        return self._layer_norm_impl(self._x(node), shape, self._retrieve(_arg(node, 2, "weight")),
                                     self._retrieve(_arg(node, 3, "bias")), _arg(node, 4, "eps", 1e-5))

    def _max_pool2d_impl(self, x, kernel, stride, padding, dilation, ceil_mode) -> Any:
        stride = kernel if stride is None or stride == [] else stride
        return self.emit("relax.nn.max_pool2d", [x], pool_size=_pair(kernel), strides=_pair(stride),
                         dilation=_pair(dilation), padding=_pad4(padding), ceil_mode=bool(ceil_mode),
                         count_include_pad=False, layout="NCHW", out_layout="NCHW")

    def _max_pool2d_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        if mod.return_indices:
            raise ExportError("return_indices=True is not supported")
        return self._max_pool2d_impl(self._x(node), mod.kernel_size, mod.stride, mod.padding, mod.dilation,
                                     mod.ceil_mode)

    def _max_pool2d(self, node: fx.Node) -> Any:
        if _arg(node, 6, "return_indices", False):
            raise ExportError("return_indices=True is not supported")
        return self._max_pool2d_impl(self._x(node), _arg(node, 1, "kernel_size"), _arg(node, 2, "stride"),
                                     _arg(node, 3, "padding", 0), _arg(node, 4, "dilation", 1),
                                     _arg(node, 5, "ceil_mode", False))

    def _avg_pool2d_impl(self, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor) -> Any:
        if divisor is not None:
            raise ExportError("divisor_override is not supported")
        stride = kernel if stride is None or stride == [] else stride
        return self.emit("relax.nn.avg_pool2d", [x], pool_size=_pair(kernel), strides=_pair(stride),
                         dilation=[1, 1], padding=_pad4(padding), ceil_mode=bool(ceil_mode),
                         count_include_pad=bool(count_include_pad), layout="NCHW", out_layout="NCHW")

    def _avg_pool2d_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        return self._avg_pool2d_impl(self._x(node), mod.kernel_size, mod.stride, mod.padding, mod.ceil_mode,
                                     mod.count_include_pad, mod.divisor_override)

    def _avg_pool2d(self, node: fx.Node) -> Any:
        return self._avg_pool2d_impl(self._x(node), _arg(node, 1, "kernel_size"), _arg(node, 2, "stride"),
                                     _arg(node, 3, "padding", 0), _arg(node, 4, "ceil_mode", False),
                                     _arg(node, 5, "count_include_pad", True), _arg(node, 6, "divisor_override"))

    def _adaptive_avg_pool2d_impl(self, x, output_size) -> Any:
        size = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size, output_size]
        return self.emit("relax.nn.adaptive_avg_pool2d", [x], output_size=size, layout="NCHW", out_layout="NCHW")

    def _adaptive_avg_pool2d_module(self, node: fx.Node) -> Any:
        return self._adaptive_avg_pool2d_impl(self._x(node), self.named_modules[node.target].output_size)

    def _adaptive_avg_pool2d(self, node: fx.Node) -> Any:
        return self._adaptive_avg_pool2d_impl(self._x(node), _arg(node, 1, "output_size"))

    # ------------------------------------------------------------------ shape manipulation

    def _reshape_to(self, x: R.Expr, dims: Sequence[Any]) -> Any:
        dims = [int(d) for d in dims]
        if dims.count(-1) > 1:
            raise ExportError(f"reshape with more than one -1: {dims}")
        if -1 in dims:  # relax resolves -1 when it builds the ShapeExpr
            known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
            total = int(np.prod(self._shape(x), dtype=np.int64))
            if known == 0 or total % known:
                raise ExportError(f"cannot reshape {list(self._shape(x))} to {dims}")
            dims[dims.index(-1)] = total // known
        return self.emit("relax.reshape", [x, R.ShapeExpr(dims)])

    def _dims_arg(self, node: fx.Node) -> List[Any]:
        rest = [self._retrieve(a) for a in node.args[1:]]
        if not rest:
            rest = [self._retrieve(node.kwargs.get("shape", node.kwargs.get("size", node.kwargs.get("dims"))))]
        if len(rest) == 1 and isinstance(rest[0], (list, tuple, torch.Size)):
            rest = list(rest[0])
        for d in rest:
            if isinstance(d, R.Expr):
                raise ExportError("shape arguments computed from tensors are not supported")
        return rest

    def _reshape(self, node: fx.Node) -> Any:
        return self._reshape_to(self._x(node), self._dims_arg(node))

    def _flatten_impl(self, x: R.Expr, start: int, end: int) -> Any:
        shape = list(self._shape(x))
        start = start if start >= 0 else len(shape) + start
        end = end if end >= 0 else len(shape) + end
        flat = int(np.prod(shape[start:end + 1], dtype=np.int64))
        return self.emit("relax.reshape", [x, R.ShapeExpr(shape[:start] + [flat] + shape[end + 1:])])

    def _flatten(self, node: fx.Node) -> Any:
        return self._flatten_impl(self._x(node), int(_arg(node, 1, "start_dim", 0)), int(_arg(node, 2, "end_dim", -1)))

    def _flatten_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        return self._flatten_impl(self._x(node), mod.start_dim, mod.end_dim)

    def _permute(self, node: fx.Node) -> Any:
        x = self._x(node)
        dims = [int(d) % len(self._shape(x)) for d in self._dims_arg(node)]
        return self.emit("relax.permute_dims", [x], axes=dims)

    def _transpose(self, node: fx.Node) -> Any:
        x = self._x(node)
        ndim = len(self._shape(x))
        idx = list(range(ndim))
        a, b = int(_arg(node, 1, "dim0")) % ndim, int(_arg(node, 2, "dim1")) % ndim
        idx[a], idx[b] = idx[b], idx[a]
        return self.emit("relax.permute_dims", [x], axes=idx)

    def _cat(self, node: fx.Node) -> Any:
        tensors = self._retrieve(_arg(node, 0, "tensors"))
        axis = int(_arg(node, 1, "dim", 0))
        for t in tensors:
            if not isinstance(t, R.Expr):
                raise ExportError("cat of non-tensors is not supported")
        return self.emit("relax.concat", [R.Tuple(list(tensors))], axis=axis)

    def _mean(self, node: fx.Node) -> Any:
        x = self._x(node)
        dim = _arg(node, 1, "dim")
        keepdim = bool(_arg(node, 2, "keepdim", False))
        if node.kwargs.get("dtype") is not None:
            raise ExportError("mean with dtype= is not supported")
        axis = None if dim is None else ([int(dim)] if isinstance(dim, int) else [int(d) for d in dim])
        return self.emit("relax.mean", [x], axis=axis, keepdims=keepdim)

    def _squeeze(self, node: fx.Node) -> Any:
        x = self._x(node)
        dim = _arg(node, 1, "dim")
        if dim is None:
            return self.emit("relax.squeeze", [x], axis=None)
        dims = [int(dim)] if isinstance(dim, int) else [int(d) for d in dim]
        shape = self._shape(x)
        keep = [d for d in dims if shape[d % len(shape)] == 1]  # torch: squeezing a non-1 dim is a no-op
        if not keep:
            return x
        return self.emit("relax.squeeze", [x], axis=keep)

    def _unsqueeze(self, node: fx.Node) -> Any:
        return self.emit("relax.expand_dims", [self._x(node)], axis=[int(_arg(node, 1, "dim"))])

    def _split_impl(self, x: R.Expr, sections: Any, dim: int) -> Any:
        return self.emit("relax.split", [x], indices_or_sections=sections, axis=int(dim))

    def _split(self, node: fx.Node) -> Any:
        x = self._x(node)
        size = _arg(node, 1, "split_size_or_sections", _arg(node, 1, "split_size"))
        dim = int(_arg(node, 2, "dim", 0))
        if isinstance(size, (list, tuple)):
            bounds, acc = [], 0
            for s in size[:-1]:
                acc += int(s)
                bounds.append(acc)
            return self._split_impl(x, bounds, dim)
        n = self._shape(x)[dim]
        if n % int(size):
            raise ExportError(f"split size {size} does not divide dimension {dim} of size {n}")
        return self._split_impl(x, n // int(size), dim)

    def _chunk(self, node: fx.Node) -> Any:
        x = self._x(node)
        chunks, dim = int(_arg(node, 1, "chunks")), int(_arg(node, 2, "dim", 0))
        n = self._shape(x)[dim]
        if n % min(chunks, n):
            raise ExportError(f"chunk({chunks}) of a dimension of size {n} gives unequal chunks")
        return self._split_impl(x, min(chunks, n), dim)

    def _size(self, node: fx.Node) -> Any:
        shape = self._shape(self._x(node))
        dim = _arg(node, 1, "dim")
        return tuple(shape) if dim is None else shape[int(dim)]

    def _getattr(self, node: fx.Node) -> Any:
        obj, name = self._retrieve(node.args[0]), node.args[1]
        if isinstance(obj, R.Expr) and isinstance(obj.sinfo, R.TensorSI):
            if name == "shape":
                return tuple(obj.sinfo.shape)
            if name == "ndim":
                return obj.sinfo.ndim
            raise ExportError(f"tensor attribute {name!r} is not supported")
        return getattr(obj, name)

    def _getitem(self, node: fx.Node) -> Any:
        x = self._retrieve(node.args[0])
        index = node.args[1]
        if isinstance(x, (list, tuple, torch.Size)):
            return x[index]
        if isinstance(x, R.Expr) and isinstance(x.sinfo, R.TupleSI):
            return self.bb.emit(R.TupleGetItem(x, int(index)))
        if not (isinstance(x, R.Expr) and isinstance(x.sinfo, R.TensorSI)):
            raise ExportError(f"indexing a {type(x).__name__} is not supported")
        if not isinstance(index, tuple):
            index = (index,)

        def scalar(v: Any) -> Any:  # ints computed at trace time (e.g. from x.size()) are fx nodes
            if isinstance(v, fx.Node):
                v = self.env[v]
                if isinstance(v, R.Expr):
                    raise ExportError("indexing with a tensor is not supported")
            return v

        index = tuple(slice(scalar(i.start), scalar(i.stop), scalar(i.step)) if isinstance(i, slice) else scalar(i)
                      for i in index)
        shape = self._shape(x)
        n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
        axes, begin, end, strides = [], [], [], []
        out_shape: List[Any] = []  # the torch result shape, built alongside
        i = 0
        for item in index:
            if item is None:
                out_shape.append(1)
            elif item is Ellipsis:
                for _ in range(len(shape) - n_real):
                    axes.append(i); begin.append(0); end.append(shape[i]); strides.append(1)
                    out_shape.append(("dim", i))
                    i += 1
            elif isinstance(item, int):
                b = item + shape[i] if item < 0 else item
                if not 0 <= b < shape[i]:
                    raise ExportError(f"index {item} is out of range for dimension {i} of size {shape[i]}")
                axes.append(i); begin.append(b); end.append(b + 1); strides.append(1)
                i += 1  # integer index: the dimension disappears (torch semantics)
            elif isinstance(item, slice):
                step = 1 if item.step is None else int(item.step)
                if step <= 0:
                    raise ExportError("slices with a non-positive step are not supported")
                axes.append(i)
                begin.append(0 if item.start is None else int(item.start))
                end.append(shape[i] if item.stop is None else int(item.stop))
                strides.append(step)
                out_shape.append(("dim", i))
                i += 1
            else:
                raise ExportError(f"unsupported index {item!r}")
        while i < len(shape):
            axes.append(i); begin.append(0); end.append(shape[i]); strides.append(1)
            out_shape.append(("dim", i))
            i += 1
        tup = lambda vals: R.Tuple([R.PrimValue(int(v)) for v in vals])  # noqa: E731
        sliced = self.emit("relax.strided_slice", [x, tup(axes), tup(begin), tup(end), tup(strides)],
                           assume_inbound=False)
        sshape = sliced.sinfo.shape
        final = [sshape[d[1]] if isinstance(d, tuple) else d for d in out_shape]
        return self.emit("relax.reshape", [sliced, R.ShapeExpr(final)])


def _target_name(target: Any) -> str:
    """A readable name for an FX target: ``torch.exp``, ``operator.add``, ``torch.nn.functional.gelu``."""
    if isinstance(target, str):
        return target
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None) or repr(target)
    if mod in ("_operator", "operator"):
        return "operator." + name
    if mod == "torch._C._nn" or mod.startswith("torch.nn.functional"):
        return "torch.nn.functional." + name
    if mod == "torch" or mod.startswith("torch.") or "VariableFunctions" in (getattr(target, "__qualname__", "") or ""):
        return "torch." + name
    if mod == "builtins":
        return name
    return f"{mod}.{name}" if mod else name
