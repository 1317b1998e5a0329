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
  given bounds (``-inf``/``inf`` when absent); ``Dropout``/``Identity``/``contiguous``: no op;
* ``nn.Embedding``/``F.embedding``: ``astype(x, "int32")``, then ``take(W, x, axis=0)`` (1-d
  indices) or ``reshape [-1]`` + ``take`` + ``reshape`` (MSC fuses both into ``msc.embedding``);
* ``F.gelu(approximate="tanh")`` / ``nn.GELU("tanh")``: ``nn.gelu_tanh``; ``torch.triu/tril``:
  ``triu/tril(x, PrimValue(k))``; ``x[int_tensor]``: ``take(x, idx, axis=0)``; ``expand`` /
  ``expand_as``: ``broadcast_to``; ``.float()/.to(dtype)/...``: ``astype``; ``torch.stack``:
  ``concat`` + ``reshape``; ``torch.where``: ``where``; ``F.scaled_dot_product_attention``
  (torch >= 2.0): q/k/v ``permute_dims [0, 2, 1, 3]``, ``nn.attention(_bias)``, ``permute_dims``
  back (MSC fuses: ``msc.attention``); ``torch._assert``: checked at export time when its
  condition is a Python value, else dropped; ``Tensor.dim``/``math.sqrt`` on trace-time values.

Beyond v0.20 (no converter there; each decomposed as torch computes it, see the methods):

* ``nn.MultiheadAttention`` (:meth:`FXImporter._mha`), ``nn.TransformerEncoderLayer`` and
  ``nn.TransformerEncoder`` (leaf modules in FX): projections (``msc.linear_bias``; the packed
  self-attention projection + ``split``), heads via ``reshape``/``permute_dims``, the attention
  core lowered as v0.20 lowers ``scaled_dot_product_attention`` (-> ``msc.attention``), bool
  masks as additive ``where(mask, -inf, 0)`` masks; the attention-weights output is rejected;
* torchvision Swin's ``torch.fx.wrap``-ed functions ``shifted_window_attention``,
  ``_get_relative_position_bias``, ``_patch_merging_pad`` (their bodies: 6-d window
  ``reshape``/``permute_dims``, ``roll`` as ``strided_slice`` + ``concat``, a constant shift mask);
* ``torch.roll`` (``strided_slice`` + ``concat``; relax v0.20 has no roll), ``F.pad`` (constant
  mode: ``nn.pad``), ``~`` on bool (``logical_not``), comparisons (``equal``, ``less``, ...),
  ``masked_fill`` (``where(mask, value, x)`` with a 0-d ``value``; v0.20 built ``full_like`` +
  ``where``, and ``full_like`` is no MSC optype here), ``sum``, ``exp``, ``sqrt``, ``rsqrt``,
  ``pow``, ``neg``; ``ones_like``/``zeros_like``/``full_like``: constants (what v0.20's ``full``
  folds to).

Deliberate differences from v0.20 (each one a wrong result in TVM):

* integer indices in ``x[i, ...]`` drop that dimension (TVM kept it as size 1);
* ``nn.AvgPool2d`` passes its ``count_include_pad`` (TVM always used relax's default ``False``);
* ``nn.Hardtanh`` uses the module's ``min_val``/``max_val`` (TVM read them from the call's kwargs,
  i.e. always -1/1);
* ``squeeze(dim)`` of a dimension that is not 1 is the identity, as in torch (relax rejects it);
* ``x[int_tensor]`` is ``take`` alone (v0.20 added a whole-axes ``strided_slice`` and ``reshape``).

The rest of TVM's ``from_fx`` convert map (v0.20 and 0.27: activations, trig / log / bit ops,
reductions, sort / topk, transposed and 1-d convolutions and pools, group / instance norm, pixel
shuffle, interpolate, einsum, indexing and scatter ops, in-place methods, factory functions,
cross entropy) is added by :meth:`FXImporter._add_tvm_coverage`; docs/torch-fx.md lists every
TVM key with the relax/MSC expression used or why it is not converted (3-d conv / pools).

Supported FX targets before that coverage (see the three maps in :class:`FXImporter`):

* modules: Conv1d, Conv2d, BatchNorm2d, LayerNorm, ReLU, ReLU6, Hardtanh, Hardsigmoid, Hardswish, GELU, SiLU, Sigmoid,
  Tanh, Softmax, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Linear, Flatten, Dropout(2d), Identity,
  Embedding, MultiheadAttention, TransformerEncoderLayer, TransformerEncoder;
* functions: ``+ - * /`` (``operator``, in-place forms, ``torch.add/sub/mul/div``; Python
  scalars become 0-d constants), ``getitem``, ``getattr`` (``.shape``), ``flatten``, ``reshape``,
  ``permute``, ``transpose``, ``cat``/``concat``, ``softmax``, ``relu``, ``sigmoid``, ``tanh``,
  ``gelu``, ``silu``, ``relu6``, ``hardtanh``, ``hardsigmoid``, ``hardswish``, ``clamp``/``clip``, ``mean``, ``squeeze``,
  ``unsqueeze``, ``matmul``/``mm``/``bmm``/``@``, ``F.linear``, ``F.conv2d``, ``F.layer_norm``,
  ``F.max_pool2d``, ``F.avg_pool2d``, ``F.adaptive_avg_pool2d``, ``F.dropout``, ``split``,
  ``chunk``, ``torchvision.ops.stochastic_depth`` (eval mode: identity), ``F.embedding``,
  ``F.pad``, ``torch.roll``, ``torch.stack``, ``torch.where``, ``torch.masked_fill``,
  ``torch.triu/tril``, ``torch.sum``, ``exp``/``sqrt``/``rsqrt``/``pow``/``neg``/``logical_not``/``~``,
  ``== != < <= > >=`` (``operator`` and ``torch.eq`` ...), ``ones_like``/``zeros_like``/
  ``full_like``, ``torch._assert``, ``math.sqrt/ceil/floor/log`` and ``%`` of trace-time values,
  the three torchvision Swin functions above;
* Tensor methods: the same names plus ``size``, ``view``, ``contiguous``, ``dim``, ``expand``,
  ``expand_as``, ``float``/``half``/``int``/``long``/``bool``/``to``/``type``, ``eq``/``ne``/``lt``/
  ``le``/``gt``/``ge``, ``masked_fill(_)``, ``triu``/``tril``, ``sum``, ``roll``.

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

    def __init__(self, problems: Sequence[str], what: str = "FX node"):
        self.problems = list(problems)
        lines = "\n".join("  " + p for p in self.problems)
        super().__init__(f"{len(self.problems)} unsupported {what}(s):\n{lines}")


_TORCH_DTYPES = {
    torch.float32: "float32", torch.float16: "float16", torch.float64: "float64", torch.bfloat16: "bfloat16",
    torch.int64: "int64", torch.int32: "int32", torch.bool: "bool",
}


def _out_dtype(x: Any) -> str:
    """The ``out_dtype`` of a conv / matmul of ``x``: TVM v0.20's from_fx writes "float32" (its
    relax.op.linear(x, W, b, "float32")); a float16 / bfloat16 ``x`` keeps its dtype, as torch does."""
    dtype = x.sinfo.dtype
    return dtype if dtype in ("float16", "bfloat16") else "float32"


def numpy_bfloat16() -> np.dtype:
    """numpy's bfloat16 dtype, from ml_dtypes (JAX's dtypes for numpy; numpy has none). Raises
    ExportError when ml_dtypes is not installed (a bfloat16 model needs it)."""
    try:
        import ml_dtypes
    except ImportError:
        raise ExportError("a bfloat16 model needs the ml_dtypes package (numpy has no bfloat16): "
                          "pip install ml_dtypes") from None
    return np.dtype(ml_dtypes.bfloat16)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A detached, contiguous CPU copy of ``t`` as a numpy array; a bfloat16 tensor as an
    ml_dtypes bfloat16 array with the same bits (numpy_bfloat16)."""
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(numpy_bfloat16()).copy()
    return t.numpy().copy()


def from_numpy(a: np.ndarray) -> torch.Tensor:
    """``torch.from_numpy``, which an ml_dtypes bfloat16 array (to_numpy) needs by its bits."""
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(np.asarray(a, order="C").view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


_TENSOR_TYPE_NAMES = {"torch.FloatTensor": "float32", "torch.HalfTensor": "float16", "torch.DoubleTensor": "float64",
                      "torch.LongTensor": "int64", "torch.IntTensor": "int32", "torch.BoolTensor": "bool"}


_INT64_MAX = 2 ** 63 - 1


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


def _reduce_axes(dim: Any) -> Optional[List[int]]:
    """A reduction's ``dim`` (int, list, tuple or None) as relax's ``axis``: None (every axis) for
    None and for an empty list, as torch reads ``x.sum(dim=[])`` and ATen's ``sum.dim_IntList(x, [])``
    (what ``x.sum()`` decomposes to)."""
    if dim is None or (isinstance(dim, (list, tuple)) and not dim):
        return None
    return [int(dim)] if isinstance(dim, int) else [int(d) for d in dim]


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
            nn.Hardsigmoid: self._hardsigmoid, nn.Hardswish: self._hardswish,
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
            nn.Embedding: self._embedding_module,
            nn.MultiheadAttention: self._mha_module,
            nn.TransformerEncoderLayer: self._encoder_layer_module,
            nn.TransformerEncoder: self._encoder_module,
        }
        add, sub = self._binary("relax.add", operator.add), self._binary("relax.subtract", operator.sub)
        mul, div = self._binary("relax.multiply", operator.mul), self._binary("relax.divide", operator.truediv)
        self.function_map: Dict[Any, Callable[[fx.Node], Any]] = {
            operator.add: add, operator.iadd: add, torch.add: add,
            operator.sub: sub, operator.isub: sub, torch.sub: sub, torch.subtract: sub,
            operator.mul: mul, operator.imul: mul, torch.mul: mul, torch.multiply: mul,
            operator.truediv: div, operator.itruediv: div, torch.div: div, torch.divide: div,
            operator.floordiv: self._binary("relax.floor_divide", operator.floordiv),
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
            F.hardsigmoid: self._hardsigmoid, F.hardswish: self._hardswish,
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
            torch._assert: self._assert,
            operator.mod: self._binary("relax.floor_mod", operator.mod),
            torch.remainder: self._binary("relax.floor_mod", operator.mod),
            torch.floor_divide: self._binary("relax.floor_divide", operator.floordiv),
            math.sqrt: self._python_call(math.sqrt), math.ceil: self._python_call(math.ceil),
            math.floor: self._python_call(math.floor), math.log: self._python_call(math.log),
            operator.eq: self._compare("relax.equal", operator.eq), torch.eq: self._compare("relax.equal", operator.eq),
            operator.ne: self._compare("relax.not_equal", operator.ne),
            torch.ne: self._compare("relax.not_equal", operator.ne),
            operator.lt: self._compare("relax.less", operator.lt), torch.lt: self._compare("relax.less", operator.lt),
            operator.le: self._compare("relax.less_equal", operator.le),
            torch.le: self._compare("relax.less_equal", operator.le),
            operator.gt: self._compare("relax.greater", operator.gt),
            torch.gt: self._compare("relax.greater", operator.gt),
            operator.ge: self._compare("relax.greater_equal", operator.ge),
            torch.ge: self._compare("relax.greater_equal", operator.ge),
            operator.invert: self._invert, torch.logical_not: self._unary("relax.logical_not"),
            operator.neg: self._unary("relax.negative"), torch.neg: self._unary("relax.negative"),
            operator.pow: self._binary("relax.power", operator.pow),
            torch.pow: self._binary("relax.power", operator.pow),
            torch.exp: self._unary("relax.exp"), torch.sqrt: self._unary("relax.sqrt"),
            torch.rsqrt: self._unary("relax.rsqrt"),
            torch.where: self._where, torch.masked_fill: self._masked_fill,
            torch.triu: self._trilu("relax.triu"), torch.tril: self._trilu("relax.tril"),
            torch.sum: self._sum,
            torch.ones_like: self._full_like(1), torch.zeros_like: self._full_like(0),
            torch.full_like: self._full_like(),
            torch.roll: self._roll,
            torch.stack: self._stack,
            F.embedding: self._embedding,
            F.pad: self._pad,
        }
        if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0
            self.function_map[F.scaled_dot_product_attention] = self._sdpa
        try:  # torchvision's Swin Transformer: functions marked torch.fx.wrap (FX leaves)
            from torchvision.models import swin_transformer as swin
            self.function_map[swin.shifted_window_attention] = self._shifted_window_attention
            self.function_map[swin._get_relative_position_bias] = self._relative_position_bias
            self.function_map[swin._patch_merging_pad] = self._patch_merging_pad
        except (ImportError, AttributeError):  # pragma: no cover - torchvision is optional
            pass
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
            "dim": self._dim,
            "expand": self._expand, "expand_as": self._expand_as,
            "float": self._astype_to("float32"), "half": self._astype_to("float16"),
            "int": self._astype_to("int32"), "long": self._astype_to("int64"), "bool": self._astype_to("bool"),
            "to": self._to, "type": self._to,
            "eq": self.function_map[torch.eq], "ne": self.function_map[torch.ne], "lt": self.function_map[torch.lt],
            "le": self.function_map[torch.le], "gt": self.function_map[torch.gt], "ge": self.function_map[torch.ge],
            "logical_not": self._unary("relax.logical_not"), "neg": self._unary("relax.negative"),
            "pow": self.function_map[torch.pow], "exp": self._unary("relax.exp"), "sqrt": self._unary("relax.sqrt"),
            "rsqrt": self._unary("relax.rsqrt"),
            "masked_fill": self._masked_fill, "masked_fill_": self._masked_fill,
            "triu": self._trilu("relax.triu"), "tril": self._trilu("relax.tril"),
            "sum": self._sum,
            "roll": self._roll,
        }
        self._add_tvm_coverage()

    def _add_tvm_coverage(self) -> None:
        """The rest of TVM's ``from_fx`` convert map (docs/torch-fx.md lists every key).  TVM keys
        a string by ``node.target.__name__`` (call_function) and by the method name
        (call_method), so each name here is registered for ``torch.<name>``,
        ``torch.nn.functional.<name>`` and ``operator.<name>`` where they exist, and as a Tensor
        method where there is one; entries already in the maps are kept."""
        unary = self._unary
        named: Dict[str, Callable[[fx.Node], Any]] = {
            **{n: unary(f"relax.{n}") for n in (
                "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "sin", "sinh", "tan", "erf",
                "sign", "square", "ceil", "floor", "log", "bitwise_not", "isnan", "isinf", "isfinite")},
            "round": self._round, "trunc": self._trunc, "reciprocal": self._reciprocal,
            "log2": self._log_base(2.0), "log10": self._log_base(10.0), "log1p": self._log1p,
            "elu": self._elu, "celu": self._celu, "selu": unary("relax.nn.selu"), "leaky_relu": self._leaky_relu,
            "softplus": self._softplus, "log_softmax": self._log_softmax, "prelu": self._prelu,
            "atan2": self._atan2, "fmod": self._fmod, "rsub": self._rsub, "lerp": self._lerp,
            "and_": self._binary("relax.bitwise_and", operator.and_),
            "or_": self._binary("relax.bitwise_or", operator.or_), "xor": self._binary("relax.bitwise_xor", operator.xor),
            "bitwise_and": self._binary("relax.bitwise_and", operator.and_),
            "bitwise_or": self._binary("relax.bitwise_or", operator.or_),
            "bitwise_xor": self._binary("relax.bitwise_xor", operator.xor),
            "bitwise_or_": self._binary_inplace("relax.bitwise_or", operator.or_),
            "logical_and": self._binary("relax.logical_and", operator.and_),
            "logical_or": self._binary("relax.logical_or", operator.or_),
            "logical_xor": self._binary("relax.logical_xor", operator.xor),
            "lshift": self._shift(True), "rshift": self._shift(False),
            "isin": self._isin, "bucketize": self._bucketize,
            # reductions, scans, sorting
            "max": self._max_min("relax.max", "relax.argmax", "relax.maximum"),
            "min": self._max_min("relax.min", "relax.argmin", "relax.minimum"),
            "argmax": self._arg_reduce("relax.argmax"), "argmin": self._arg_reduce("relax.argmin"),
            "prod": self._prod, "var": self._var, "std": self._std, "norm": self._norm,
            "cumsum": self._cumsum, "cumprod": self._cumprod, "topk": self._topk, "sort": self._sort,
            "argsort": self._argsort,
            # nn
            "conv1d": self._conv1d, "conv_transpose1d": self._conv_transpose(1),
            "conv_transpose2d": self._conv_transpose(2), "addmm": self._addmm, "baddbmm": self._addmm,
            "outer": self._outer, "einsum": self._einsum, "group_norm": self._group_norm,
            "avg_pool1d": self._avg_pool1d, "max_pool1d": self._max_pool1d,
            "adaptive_avg_pool1d": self._adaptive_avg_pool1d, "pixel_shuffle": self._pixel_shuffle,
            "interpolate": self._interpolate, "cross_entropy": self._cross_entropy,
            # shapes, indexing, copies
            "broadcast_to": self._broadcast_to, "clone": self._clone, "flip": self._flip, "repeat": self._tile,
            "tile": self._tile, "gather": self._gather, "index_select": self._index_select, "take": self._take_flat,
            "scatter": self._scatter("update"), "scatter_add": self._scatter("add"),
            "slice_scatter": self._slice_scatter, "select": self._select, "narrow": self._narrow,
            "unbind": self._unbind, "diagonal": self._diagonal, "meshgrid": self._meshgrid,
            "index_put_": self._index_put, "index_put": self._index_put, "masked_scatter": self._masked_scatter,
            "fill": self._fill_with(), "fill_": self._fill_with(), "zero_": self._fill_with(0),
            "copy_": self._copy, "tril_": self._trilu_inplace("relax.tril"), "triu_": self._trilu_inplace("relax.triu"),
            "one_hot": self._one_hot, "type_as": self._type_as, "astype": self._to, "item": self._item,
            "numel": self._numel, "is_floating_point": self._is_floating_point,
            # creation
            "arange": self._arange, "full": self._full, "ones": self._constant_of(1), "zeros": self._constant_of(0),
            "empty": self._constant_of(0), "empty_like": self._full_like(0), "new_ones": self._new_constant(1),
            "new_zeros": self._new_constant(0), "eye": self._eye, "linspace": self._linspace, "tensor": self._tensor,
        }
        for name, convert in named.items():
            for ns in (torch, F, operator):
                fn = getattr(ns, name, None)
                if callable(fn) and not isinstance(fn, type):
                    self.function_map.setdefault(fn, convert)
            if hasattr(torch.Tensor, name) or name == "astype":
                self.method_map.setdefault(name, convert)
        # the torch.export-style names in TVM's map (aten overloads a dynamo-traced graph may hold)
        aten = torch.ops.aten
        if hasattr(aten, "sym_size"):
            self.function_map.setdefault(aten.sym_size.int, self._sym_size)
        if hasattr(aten, "expand_as"):
            self.function_map.setdefault(aten.expand_as.default, self._expand_as)
        self.module_map.update({
            nn.ELU: lambda node: self._elu_impl(self._x(node), float(self.named_modules[node.target].alpha)),
            nn.CELU: lambda node: self._elu_impl(self._x(node), float(self.named_modules[node.target].alpha),
                                                 1.0 / float(self.named_modules[node.target].alpha)),
            nn.SELU: unary("relax.nn.selu"),
            nn.LeakyReLU: lambda node: self.emit("relax.nn.leakyrelu", [self._x(node)],
                                                 alpha=float(self.named_modules[node.target].negative_slope)),
            nn.Softplus: lambda node: self._softplus_impl(self._x(node), self.named_modules[node.target].beta,
                                                          self.named_modules[node.target].threshold),
            nn.LogSoftmax: lambda node: self._softmax_impl(self._x(node), self.named_modules[node.target].dim,
                                                           "log_softmax"),
            nn.PReLU: lambda node: self._prelu_impl(self._x(node), self._param(self.named_modules[node.target].weight)),
            nn.ConvTranspose1d: self._conv_transpose_module, nn.ConvTranspose2d: self._conv_transpose_module,
            nn.GroupNorm: self._group_norm_module,
            nn.InstanceNorm1d: self._instance_norm_module, nn.InstanceNorm2d: self._instance_norm_module,
            nn.InstanceNorm3d: self._instance_norm_module,
            nn.AvgPool1d: self._avg_pool1d_module, nn.MaxPool1d: self._max_pool1d_module,
            nn.AdaptiveAvgPool1d: self._adaptive_avg_pool1d_module,
            nn.PixelShuffle: lambda node: self._pixel_shuffle_impl(self._x(node),
                                                                   int(self.named_modules[node.target].upscale_factor)),
            nn.CrossEntropyLoss: self._cross_entropy_module,
        })

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
            if dtype not in ("float32", "float16", "bfloat16"):
                raise ExportError(f"unsupported data type for model parameters: {dtype}")
            self.params[id(param)] = R.Constant(to_numpy(param))
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
        return R.Constant(to_numpy(t))

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

    def _dtype_kwarg(self, node: fx.Node) -> Any:
        """``node``'s ``dtype=`` keyword: a torch.dtype or None, one computed at trace time
        (``dtype=x.dtype``: a getattr node) resolved."""
        return self._retrieve(node.kwargs.get("dtype"))

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
        """``op`` of the input; a float-only relax op (relax_ir.FLOAT_UNARY) of an integer or bool
        tensor computes in float32, as torch promotes one (``torch.log(int64 tensor)`` is float32)."""
        def convert(node: fx.Node) -> Any:
            x = self._x(node)
            if op in R.FLOAT_UNARY and not R.is_float(x.sinfo.dtype):
                x = self._astype(x, "float32")
            return self.emit(op, [x])
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

    def _python_call(self, fn: Callable[..., Any]) -> Callable[[fx.Node], Any]:
        """A Python function of trace-time values (``math.sqrt(head_dim)``); tensors are an error."""
        def convert(node: fx.Node) -> Any:
            args = [self._retrieve(a) for a in node.args]
            if any(isinstance(a, R.Expr) for a in args):
                raise ExportError(f"{fn.__module__}.{fn.__name__} of a tensor is not supported")
            return fn(*args)
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

    def _hardsigmoid_of(self, x: R.Expr) -> Any:
        """v0.20 ``_hardsigmoid``: ``divide(clip(add(x, 3), 0, 6), 6)``."""
        shifted = self.emit("relax.add", [x, R.const(3, x.sinfo.dtype)])
        clipped = self._clip(shifted, 0, 6)
        return self.emit("relax.divide", [clipped, R.const(6, x.sinfo.dtype)])

    def _hardsigmoid(self, node: fx.Node) -> Any:
        """``nn.Hardsigmoid`` / ``F.hardsigmoid``: relu6(x + 3) / 6."""
        return self._hardsigmoid_of(self._x(node))

    def _hardswish(self, node: fx.Node) -> Any:
        """``nn.Hardswish`` / ``F.hardswish`` (v0.20 ``_hardswish``): ``multiply(x, hardsigmoid(x))``."""
        x = self._x(node)
        return self.emit("relax.multiply", [x, self._hardsigmoid_of(x)])

    def _gelu_approx(self, approximate: str, node: fx.Node) -> Any:
        """v0.20 ``_gelu``: ``nn.gelu`` (erf) or, for ``approximate="tanh"``, ``nn.gelu_tanh``."""
        if approximate == "tanh":
            return self.emit("relax.nn.gelu_tanh", [self._x(node)])
        if approximate != "none":
            raise ExportError(f"gelu approximate={approximate!r} is not supported")
        return self.emit("relax.nn.gelu", [self._x(node)])

    def _gelu(self, node: fx.Node) -> Any:
        return self._gelu_approx(node.kwargs.get("approximate", "none"), node)

    def _gelu_module(self, node: fx.Node) -> Any:
        return self._gelu_approx(self.named_modules[node.target].approximate, node)

    def _softmax_impl(self, x: R.Expr, dim: Any, op: str = "softmax") -> Any:
        """``nn.softmax`` or (op "log_softmax") ``nn.log_softmax`` of ``x`` along ``dim``."""
        if dim is None:
            raise ExportError(f"{op} needs an explicit dim")
        return self.emit(f"relax.nn.{op}", [x], axis=int(dim))

    def _softmax_node(self, node: fx.Node, op: str) -> Any:
        """``F.<op>(x, dim)`` / ``x.<op>(dim)`` (no ``dtype=``)."""
        if self._dtype_kwarg(node) is not None:
            raise ExportError(f"{op} with dtype= is not supported")
        return self._softmax_impl(self._x(node), _arg(node, 1, "dim"), op)

    def _softmax(self, node: fx.Node) -> Any:
        return self._softmax_node(node, "softmax")

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
                         kernel_layout="OIHW", out_layout="NCHW", out_dtype=_out_dtype(x))
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
        return self._conv1d_impl(self._x(node), self._param(mod.weight), self._param(mod.bias), mod.stride,
                                 mod.padding, mod.dilation, mod.groups)

    def _linear_impl(self, x, weight, bias) -> Any:
        # relax.op.linear(x, w, b, "float32"): matmul(x, permute_dims(w)) (+ b), one emit.
        wt = R.make_call("relax.permute_dims", [weight], axes=None)
        mm = R.make_call("relax.matmul", [x, wt], out_dtype=_out_dtype(x))
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
        return self.emit("relax.matmul", [a, b], out_dtype=_out_dtype(a))

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
        """``cat``, without its empty inputs: a KV cache that starts empty (Hugging Face's
        DynamicCache: ``cat([empty [1, h, 0, d], k], -2)`` is ``k``) or torch's legacy 1-d
        ``torch.tensor([])``, which cat skips whatever the other inputs' rank."""
        tensors = self._retrieve(_arg(node, 0, "tensors"))
        axis = int(_arg(node, 1, "dim", 0))
        for t in tensors:
            if not isinstance(t, R.Expr):
                raise ExportError("cat of non-tensors is not supported")
        kept = [t for t in tensors if 0 not in t.sinfo.shape]
        if not kept:
            raise ExportError("cat of empty tensors only")
        if len(kept) == 1:
            return kept[0]
        return self.emit("relax.concat", [R.Tuple(kept)], axis=axis)

    def _mean(self, node: fx.Node) -> Any:
        x = self._x(node)
        dim = _arg(node, 1, "dim")
        keepdim = bool(_arg(node, 2, "keepdim", False))
        if self._dtype_kwarg(node) is not None:
            raise ExportError("mean with dtype= is not supported")
        axis = _reduce_axes(dim)
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
        size = self._retrieve(_arg(node, 1, "split_size_or_sections", _arg(node, 1, "split_size")))
        dim = int(self._retrieve(_arg(node, 2, "dim", 0)))
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
        chunks, dim = int(self._retrieve(_arg(node, 1, "chunks"))), int(self._retrieve(_arg(node, 2, "dim", 0)))
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
            if name == "dtype":
                return getattr(torch, obj.sinfo.dtype)
            if name == "device":
                return torch.device("cpu")
            if name in ("T", "mT"):  # all dims reversed (x.permute(*reversed(range(ndim)))); the last two swapped
                n = obj.sinfo.ndim
                axes = list(range(n))[::-1] if name == "T" else list(range(n - 2)) + [n - 1, n - 2]
                if name == "mT" and n < 2:
                    raise ExportError(f"x.mT of a {n}-d tensor (it needs at least 2 dims)")
                return self.emit("relax.permute_dims", [obj], axes=axes)
            raise ExportError(f"tensor attribute {name!r} is not supported")
        if isinstance(obj, tuple) and name in ("values", "indices"):  # torch.max(x, dim).values, sort, topk
            return obj[0 if name == "values" else 1]
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
        if isinstance(index, fx.Node) and isinstance(self.env[index], R.Expr):
            # x[indices] with an integer tensor: v0.20's take(x, indices, axis=0) (its strided_slice
            # over whole axes and the reshape that follow are no-ops, left out)
            indices = self.env[index]
            if indices.sinfo.dtype not in ("int32", "int64"):
                raise ExportError(f"indexing with a {indices.sinfo.dtype} tensor is not supported (only integer)")
            return self.emit("relax.take", [x, indices], axis=0)
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
        return self._index_tensor(x, index)

    def _index_tensor(self, x: R.Expr, index: PyTuple[Any, ...]) -> Any:
        """``x[index]`` with ints, slices, ``None`` and ``...``: ``strided_slice`` then ``reshape``;
        one list of ints (``x[..., [-2], :]``, torch's advanced indexing on one dim: that dim keeps
        its place with the listed entries) is a slice when the entries are consecutive, else
        ``take`` along that dim of the result."""
        shape = self._shape(x)
        n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
        picks = [k for k, item in enumerate(index) if isinstance(item, (list, tuple))]
        if picks:
            if len(picks) > 1:
                raise ExportError("indexing with several index lists is not supported")
            k = picks[0]
            dim = out_axis = 0
            for item in index[:k]:
                span = len(shape) - n_real if item is Ellipsis else (0 if item is None else 1)
                dim += span
                out_axis += 0 if isinstance(item, int) else (1 if item is None else span)
            if dim >= len(shape):
                raise ExportError(f"index list {index[k]!r} at dimension {dim} of a {len(shape)}-d tensor")
            values = []
            for v in index[k]:
                if not isinstance(v, int) or isinstance(v, bool) or not -shape[dim] <= v < shape[dim]:
                    raise ExportError(f"index list {index[k]!r}: {v!r} is not an int in range for dimension "
                                      f"{dim} of size {shape[dim]}")
                values.append(v + shape[dim] if v < 0 else v)
            if values and values == list(range(values[0], values[0] + len(values))):
                whole = index[:k] + (slice(values[0], values[0] + len(values)),) + index[k + 1:]
                return self._index_tensor(x, whole)
            kept = self._index_tensor(x, index[:k] + (slice(None),) + index[k + 1:])
            return self.emit("relax.take", [kept, R.Constant(np.asarray(values, dtype=np.int64))], axis=out_axis)
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

    # ------------------------------------------------------------------ comparisons, casts, creation

    def _assert(self, node: fx.Node) -> Any:
        """``torch._assert(cond, msg)``: checked now when ``cond`` is a Python value, else dropped."""
        cond = self._retrieve(_arg(node, 0, "condition"))
        if not isinstance(cond, R.Expr) and not cond:
            raise ExportError(f"torch._assert failed at export time: {self._retrieve(_arg(node, 1, 'message'))}")
        return None

    def _compare(self, op: str, py_op: Callable[[Any, Any], Any]) -> Callable[[fx.Node], Any]:
        """``==, !=, <, <=, >, >=``: Python values compare now; tensors -> ``relax.<op>`` (bool)."""
        return self._binary(op, py_op)

    def _invert(self, node: fx.Node) -> Any:
        """``~x``: ``logical_not`` of a bool tensor, ``bitwise_not`` of an integer one."""
        x = self._retrieve(node.args[0])
        if not isinstance(x, R.Expr):
            return ~x
        if x.sinfo.dtype != "bool":
            if "int" not in x.sinfo.dtype:
                raise ExportError(f"~ of a {x.sinfo.dtype} tensor is not supported (bool or integer)")
            return self.emit("relax.bitwise_not", [x])
        return self.emit("relax.logical_not", [x])

    def _dim(self, node: fx.Node) -> Any:
        return self._x(node).sinfo.ndim

    def _astype(self, x: R.Expr, dtype: Any) -> Any:
        """``relax.astype``; emitted even when the dtype does not change (as v0.20's ``_to``)."""
        if not isinstance(dtype, (torch.dtype, str)):
            raise ExportError(f"a cast to {dtype!r} ({type(dtype).__name__}), not a dtype")
        name = torch_dtype_name(dtype) if isinstance(dtype, torch.dtype) else dtype
        return self.emit("relax.astype", [x], dtype=name)

    def _astype_to(self, dtype: str) -> Callable[[fx.Node], Any]:
        def convert(node: fx.Node) -> Any:
            return self._astype(self._x(node), dtype)
        return convert

    def _to(self, node: fx.Node) -> Any:
        """``x.to(dtype)``, ``x.to(other)``, ``x.to(device)``, ``x.type(dtype)``: a cast or nothing."""
        x = self._x(node)
        dtype = self._dtype_kwarg(node)
        for a in node.args[1:]:
            a = self._retrieve(a)
            if isinstance(a, torch.dtype):
                dtype = a
            elif isinstance(a, R.Expr) and isinstance(a.sinfo, R.TensorSI):
                dtype = a.sinfo.dtype
            elif isinstance(a, str) and a in _TENSOR_TYPE_NAMES:  # x.type("torch.FloatTensor")
                dtype = _TENSOR_TYPE_NAMES[a]
            elif not (isinstance(a, (torch.device, bool))
                      or (isinstance(a, str) and a.split(":")[0] in ("cpu", "cuda"))):
                raise ExportError(f"{node.target}({a!r}) is not supported")
        return x if dtype is None else self._astype(x, dtype)

    def _scalar_like(self, value: Any, x: R.Expr) -> R.Constant:
        return R.const(value, x.sinfo.dtype)

    def _where(self, node: fx.Node) -> Any:
        cond = self._x(node, 0, "condition")
        a, b = self._retrieve(_arg(node, 1, "input")), self._retrieve(_arg(node, 2, "other"))
        if not isinstance(a, R.Expr) and not isinstance(b, R.Expr):
            raise ExportError("torch.where with two Python scalars is not supported")
        a = a if isinstance(a, R.Expr) else self._scalar_like(a, b)
        b = b if isinstance(b, R.Expr) else self._scalar_like(b, a)
        return self.emit("relax.where", [cond, a, b])

    def _masked_fill(self, node: fx.Node) -> Any:
        """``x.masked_fill(mask, v)`` -> ``where(mask, v, x)`` with ``v`` a 0-d constant.

        v0.20 emitted ``where(mask, full_like(x, v), x)``; ``full_like`` is not an MSC optype
        here and ``where`` broadcasts the 0-d value to the same result."""
        x, mask = self._x(node), self._x(node, 1, "mask")
        value = self._retrieve(_arg(node, 2, "value"))
        if isinstance(value, R.Expr):
            if value.sinfo.ndim != 0:
                raise ExportError("masked_fill with a non-0-d tensor value is not supported")
        else:
            value = self._scalar_like(value, x)
        out = self.emit("relax.where", [mask, value, x])
        if isinstance(node.target, str) and node.target.endswith("_"):  # in place: later uses see the result
            self.env[node.args[0]] = out
        return out

    def _trilu(self, op: str) -> Callable[[fx.Node], Any]:
        def convert(node: fx.Node) -> Any:
            k = self._retrieve(_arg(node, 1, "diagonal", 0))
            if not isinstance(k, int):
                raise ExportError(f"{op[6:]} diagonal must be an int, got {type(k).__name__}")
            return self.emit(op, [self._x(node), R.PrimValue(int(k))])
        return convert

    def _sum(self, node: fx.Node) -> Any:
        x = self._x(node)
        dim = self._retrieve(_arg(node, 1, "dim"))
        keepdim = bool(_arg(node, 2, "keepdim", False))
        if self._dtype_kwarg(node) is not None:
            raise ExportError("sum with dtype= is not supported")
        axis = _reduce_axes(dim)
        return self.emit("relax.sum", [x], axis=axis, keepdims=keepdim)

    def _creation_dtype(self, node: fx.Node, default: str = "float32") -> str:
        dtype = self._dtype_kwarg(node)
        return default if dtype is None else torch_dtype_name(dtype)

    def _size_args(self, node: fx.Node, start: int = 0) -> List[int]:
        sizes = [self._retrieve(a) for a in node.args[start:]] or [self._retrieve(node.kwargs.get("size"))]
        if len(sizes) == 1 and isinstance(sizes[0], (list, tuple, torch.Size)):
            sizes = list(sizes[0])
        if any(not isinstance(v, int) for v in sizes):
            raise ExportError("sizes computed from tensors are not supported")
        return [int(v) for v in sizes]

    def _full_like(self, value: Any = None) -> Callable[[fx.Node], Any]:
        """``torch.ones_like/zeros_like/full_like(x)``: a constant of x's shape (v0.20 emitted
        ``full``/``full_like`` ops; the value never depends on x's data).  ``torch.ones(...)`` and
        friends with Python sizes never reach the FX graph: tracing evaluates them."""
        def convert(node: fx.Node) -> Any:
            x = self._x(node)
            fill = value if value is not None else self._retrieve(_arg(node, 1, "fill_value"))
            if isinstance(fill, R.Expr):
                raise ExportError("full_like with a tensor fill value is not supported")
            dtype = self._creation_dtype(node, x.sinfo.dtype)
            return R.Constant(np.full(x.sinfo.shape, fill, dtype=np.dtype(dtype)))
        return convert

    def _expand(self, node: fx.Node) -> Any:
        """``x.expand(*sizes)`` -> ``broadcast_to`` (``-1`` keeps the input's size)."""
        x = self._x(node)
        sizes = self._size_args(node, 1)
        shape = list(self._shape(x))
        lead = len(sizes) - len(shape)
        if lead < 0:
            raise ExportError(f"expand to {sizes}: fewer dims than the input {shape}")
        out = [shape[i - lead] if s == -1 else s for i, s in enumerate(sizes)]
        return self.emit("relax.broadcast_to", [x, R.ShapeExpr(out)])

    def _expand_as(self, node: fx.Node) -> Any:
        x, other = self._x(node), self._x(node, 1, "other")
        return self.emit("relax.broadcast_to", [x, R.ShapeExpr(self._shape(other))])

    def _stack(self, node: fx.Node) -> Any:
        """``torch.stack``: ``concat`` then ``reshape`` (v0.20's ``_stack``)."""
        tensors = self._retrieve(_arg(node, 0, "tensors"))
        axis = int(_arg(node, 1, "dim", 0))
        if any(not isinstance(t, R.Expr) for t in tensors):
            raise ExportError("stack of non-tensors is not supported")
        shape = list(self._shape(tensors[0]))
        axis = axis % (len(shape) + 1)
        cat = self.emit("relax.concat", [R.Tuple(list(tensors))], axis=min(axis, len(shape) - 1))
        out = shape[:axis] + [len(tensors)] + shape[axis:]
        return self.emit("relax.reshape", [cat, R.ShapeExpr(out)])

    def _slice_axis(self, x: R.Expr, axis: int, begin: int, end: int, step: int = 1) -> Any:
        """``strided_slice`` of one axis (the other axes whole, listed as v0.20's ``_getitem`` does)."""
        shape = self._shape(x)
        axes = list(range(len(shape)))
        begins = [begin if i == axis else 0 for i in axes]
        ends = [end if i == axis else shape[i] for i in axes]
        steps = [step if i == axis else 1 for i in axes]
        tup = lambda vals: R.Tuple([R.PrimValue(int(v)) for v in vals])  # noqa: E731
        return self.emit("relax.strided_slice", [x, tup(axes), tup(begins), tup(ends), tup(steps)],
                         assume_inbound=False)

    def _roll_impl(self, x: R.Expr, shifts: Sequence[int], dims: Sequence[int]) -> Any:
        """``torch.roll``: per dim, ``concat([x[n-s:], x[:n-s]])`` (relax v0.20 has no roll op)."""
        for s, d in zip(shifts, dims):
            n = self._shape(x)[d]
            s = int(s) % n
            if s == 0:
                continue
            d = int(d) % x.sinfo.ndim
            tail, head = self._slice_axis(x, d, n - s, n), self._slice_axis(x, d, 0, n - s)
            x = self.emit("relax.concat", [R.Tuple([tail, head])], axis=d)
        return x

    def _roll(self, node: fx.Node) -> Any:
        x = self._x(node)
        shifts = self._retrieve(_arg(node, 1, "shifts"))
        dims = self._retrieve(_arg(node, 2, "dims"))
        shifts = [shifts] if isinstance(shifts, int) else list(shifts)
        if dims is None:  # roll of the flattened tensor
            shape = self._shape(x)
            flat = self._reshape_to(x, [-1])
            return self._reshape_to(self._roll_impl(flat, shifts, [0]), shape)
        dims = [dims] if isinstance(dims, int) else list(dims)
        if len(dims) != len(shifts):
            raise ExportError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
        return self._roll_impl(x, shifts, dims)

    def _pad_impl(self, x: R.Expr, pad: Sequence[int], value: float, mode: str = "constant") -> Any:
        """``F.pad(x, pad)`` (pairs from the LAST dim backwards) -> ``nn.pad`` (pairs per axis in
        order) with relax's ``pad_mode`` ("constant", "reflect", "edge")."""
        pad = [int(p) for p in pad]
        ndim = x.sinfo.ndim
        if len(pad) % 2 or len(pad) // 2 > ndim:
            raise ExportError(f"pad {pad} does not fit a {ndim}-d tensor")
        if any(p < 0 for p in pad):
            raise ExportError(f"negative padding {pad} is not supported")
        if not any(pad):
            return x
        width = [0] * (2 * ndim)
        for i in range(len(pad) // 2):
            axis = ndim - 1 - i
            width[2 * axis], width[2 * axis + 1] = pad[2 * i], pad[2 * i + 1]
        return self.emit("relax.nn.pad", [x], pad_width=width, pad_value=float(value), pad_mode=mode)

    def _pad(self, node: fx.Node) -> Any:
        mode = _arg(node, 2, "mode", "constant")
        if mode != "constant":
            raise ExportError(f"pad mode {mode!r} is not supported (only 'constant')")
        value = _arg(node, 3, "value", None)
        return self._pad_impl(self._x(node), self._retrieve(_arg(node, 1, "pad")), 0.0 if value is None else value)

    # ------------------------------------------------------------------ TVM from_fx coverage
    # The converters below cover the rest of TVM's ``from_fx`` convert map (v0.20 and 0.27;
    # docs/torch-fx.md lists every key).  Each one reads the torch-function signature (tensor
    # methods are the same call with ``self`` first); those the torch.export path shares read
    # the ATen signature too (``_arg`` by position or name).

    def _inplace(self, node: fx.Node, out: Any) -> Any:
        """An in-place method (``x.fill_(v)``, ``x.copy_(y)``...): later uses of ``x`` see ``out``."""
        if isinstance(node.target, str) and node.target.endswith("_") and isinstance(node.args[0], fx.Node):
            self.env[node.args[0]] = out
        return out

    def _scalar_or_tensor(self, v: Any, like: R.Expr) -> R.Expr:
        return v if isinstance(v, R.Expr) else R.const(v, like.sinfo.dtype)

    def _axes(self, dim: Any, ndim: int) -> Optional[List[int]]:
        """A reduction's ``dim`` (None, an int or a list) -> relax ``axis`` (None: every axis)."""
        dim = self._retrieve(dim)
        if dim is None or (isinstance(dim, (list, tuple)) and not dim):
            return None
        return [int(dim) % ndim] if isinstance(dim, int) else [int(d) % ndim for d in dim]

    # ---- elementwise

    def _round(self, node: fx.Node) -> Any:
        """``torch.round(x, decimals=d)``: ``round`` (d = 0) or ``round(x * 10^d) / 10^d``."""
        x = self._x(node)
        d = int(node.kwargs.get("decimals", 0))
        if d == 0:
            return self.emit("relax.round", [x])
        scale = R.const(10.0 ** d, x.sinfo.dtype)
        return self.emit("relax.divide", [self.emit("relax.round", [self.emit("relax.multiply", [x, scale])]), scale])

    def _trunc_of(self, x: R.Expr) -> R.Expr:
        """trunc(x) = sign(x) * floor(|x|) (no MSC trunc optype)."""
        if "float" not in x.sinfo.dtype:
            return x
        return self.emit("relax.multiply", [self.emit("relax.sign", [x]),
                                            self.emit("relax.floor", [self.emit("relax.abs", [x])])])

    def _trunc(self, node: fx.Node) -> Any:
        """``torch.trunc(x)`` / ``aten.trunc``: ``sign(x) * floor(abs(x))``."""
        return self._trunc_of(self._x(node))

    def _fmod(self, node: fx.Node) -> Any:
        """``fmod(x, y)`` = x - trunc(x / y) * y (C's fmod: the sign of x); integers through
        ``floor_mod``."""
        x, y = self._x(node), self._retrieve(_arg(node, 1, "other"))
        if not isinstance(y, R.Expr):
            y = R.const(y, x.sinfo.dtype)
        if "float" in x.sinfo.dtype:
            q = self._trunc_of(self.emit("relax.divide", [x, y]))
            return self.emit("relax.subtract", [x, self.emit("relax.multiply", [q, y])])
        # integers: floor_mod r, moved by y where r != 0 and x, y differ in sign
        zero = R.const(0, x.sinfo.dtype)
        r = self.emit("relax.floor_mod", [x, y])
        signs = self.emit("relax.not_equal", [self.emit("relax.less", [x, zero]), self.emit("relax.less", [y, zero])])
        move = self.emit("relax.logical_and", [self.emit("relax.not_equal", [r, zero]), signs])
        return self.emit("relax.where", [move, self.emit("relax.subtract", [r, y]), r])

    def _rsub(self, node: fx.Node) -> Any:
        """``rsub(x, other)`` = ``other - x``."""
        x, other = self._x(node), self._retrieve(_arg(node, 1, "other"))
        if node.kwargs.get("alpha", 1) != 1:
            raise ExportError("rsub with alpha != 1 is not supported")
        return self.emit("relax.subtract", [self._scalar_or_tensor(other, x), x])

    def _reciprocal(self, node: fx.Node) -> Any:
        """``reciprocal(x)``: ``divide(1, x)``."""
        x = self._x(node)
        return self.emit("relax.divide", [R.const(1.0, x.sinfo.dtype), x])

    def _log_base(self, base: float) -> Callable[[fx.Node], Any]:
        """``log2`` / ``log10``: ``log(x) / log(base)`` (TVM's frontend does the same)."""
        def convert(node: fx.Node) -> Any:
            x = self._x(node)
            return self.emit("relax.divide", [self.emit("relax.log", [x]), R.const(math.log(base), x.sinfo.dtype)])
        return convert

    def _log1p(self, node: fx.Node) -> Any:
        """``log1p(x)``: ``log(x + 1)``."""
        x = self._x(node)
        return self.emit("relax.log", [self.emit("relax.add", [x, R.const(1.0, x.sinfo.dtype)])])

    def _atan2(self, node: fx.Node) -> Any:
        """``atan2(y, x)``: ``atan(y / x)`` moved by +-pi where x < 0, and +-pi/2 or 0 where x = 0
        (no MSC atan2 optype)."""
        y, x = self._x(node), self._x(node, 1, "other")
        dt = y.sinfo.dtype
        c = lambda v: R.const(v, dt)  # noqa: E731
        q = self.emit("relax.atan", [self.emit("relax.divide", [y, x])])
        y_pos = self.emit("relax.greater_equal", [y, c(0.0)])
        left = self.emit("relax.where", [y_pos, self.emit("relax.add", [q, c(math.pi)]),
                                         self.emit("relax.subtract", [q, c(math.pi)])])
        r = self.emit("relax.where", [self.emit("relax.less", [x, c(0.0)]), left, q])
        on_axis = self.emit("relax.where", [self.emit("relax.greater", [y, c(0.0)]), c(math.pi / 2),
                                            self.emit("relax.where", [self.emit("relax.less", [y, c(0.0)]),
                                                                      c(-math.pi / 2), c(0.0)])])
        return self.emit("relax.where", [self.emit("relax.equal", [x, c(0.0)]), on_axis, r])

    def _lerp(self, node: fx.Node) -> Any:
        """``lerp(start, end, weight)``: ``start + weight * (end - start)``."""
        x, end = self._x(node), self._x(node, 1, "end")
        w = self._scalar_or_tensor(self._retrieve(_arg(node, 2, "weight")), x)
        return self.emit("relax.add", [x, self.emit("relax.multiply", [w, self.emit("relax.subtract", [end, x])])])

    def _shift(self, left: bool) -> Callable[[fx.Node], Any]:
        """``x << n`` / ``x >> n`` with a Python int ``n``: ``multiply`` / ``floor_divide`` by
        2**n (an arithmetic shift; MSC has no shift optype, so a tensor shift amount is an error)."""
        py_op = operator.lshift if left else operator.rshift

        def convert(node: fx.Node) -> Any:
            x, n = self._retrieve(node.args[0]), self._retrieve(_arg(node, 1, "other"))
            if not isinstance(x, R.Expr) and not isinstance(n, R.Expr):
                return py_op(x, n)
            if isinstance(n, R.Expr) or not isinstance(x, R.Expr):
                raise ExportError("a shift by a tensor amount has no MSC optype (only tensor << int)")
            if "int" not in x.sinfo.dtype:
                raise ExportError(f"shift of a {x.sinfo.dtype} tensor")
            return self.emit("relax.multiply" if left else "relax.floor_divide", [x, R.const(2 ** int(n), x.sinfo.dtype)])
        return convert

    def _elu_impl(self, x: R.Expr, alpha: float, input_scale: float = 1.0) -> R.Expr:
        """``where(x > 0, x, alpha * (exp(x * input_scale) - 1))`` (TVM's frontend composes it so)."""
        dt = x.sinfo.dtype
        e = x if input_scale == 1.0 else self.emit("relax.multiply", [x, R.const(input_scale, dt)])
        neg = self.emit("relax.multiply", [R.const(alpha, dt), self.emit("relax.subtract", [
            self.emit("relax.exp", [e]), R.const(1.0, dt)])])
        return self.emit("relax.where", [self.emit("relax.greater", [x, R.const(0.0, dt)]), x, neg])

    def _elu(self, node: fx.Node) -> Any:
        """``F.elu(x, alpha, inplace)`` / ``aten.elu(x, alpha, scale, input_scale)`` (scale = 1 and
        input_scale = 1 only): :meth:`_elu_impl`."""
        x = self._x(node)
        alpha = float(_arg(node, 1, "alpha", 1.0))
        if node.target is not F.elu:  # aten.elu(x, alpha, scale, input_scale)
            if float(_arg(node, 2, "scale", 1)) != 1 or float(_arg(node, 3, "input_scale", 1)) != 1:
                raise ExportError("elu with scale or input_scale != 1 is not supported")
        return self._elu_impl(x, alpha)

    def _celu(self, node: fx.Node) -> Any:
        """``F.celu(x, alpha)``: ``where(x > 0, x, alpha * (exp(x / alpha) - 1))``."""
        alpha = float(_arg(node, 1, "alpha", 1.0))
        return self._elu_impl(self._x(node), alpha, 1.0 / alpha)

    def _leaky_relu(self, node: fx.Node) -> Any:
        """``F.leaky_relu(x, negative_slope)`` -> ``nn.leakyrelu(alpha)``."""
        return self.emit("relax.nn.leakyrelu", [self._x(node)], alpha=float(_arg(node, 1, "negative_slope", 0.01)))

    def _softplus_impl(self, x: R.Expr, beta: float, threshold: float) -> Any:
        return self.emit("relax.nn.softplus", [x], beta=float(beta), threshold=float(threshold))

    def _softplus(self, node: fx.Node) -> Any:
        """``F.softplus(x, beta=1, threshold=20)`` -> ``nn.softplus``."""
        return self._softplus_impl(self._x(node), _arg(node, 1, "beta", 1.0), _arg(node, 2, "threshold", 20.0))

    def _log_softmax(self, node: fx.Node) -> Any:
        return self._softmax_node(node, "log_softmax")

    def _prelu_impl(self, x: R.Expr, weight: R.Expr) -> Any:
        """``prelu``: ``where(x > 0, x, w * x)``, w (one value or one per channel) reshaped to
        broadcast on axis 1."""
        n = int(np.prod(weight.sinfo.shape, dtype=np.int64))
        if n > 1:
            weight = self._reshape_to(weight, [1, n] + [1] * (x.sinfo.ndim - 2))
        neg = self.emit("relax.multiply", [weight, x])
        return self.emit("relax.where", [self.emit("relax.greater", [x, R.const(0.0, x.sinfo.dtype)]), x, neg])

    def _prelu(self, node: fx.Node) -> Any:
        return self._prelu_impl(self._x(node), self._x(node, 1, "weight"))

    def _isin(self, node: fx.Node) -> Any:
        """``torch.isin(x, test)``: ``max(astype(equal(expand_dims(x, -1), flat(test)), int32), -1) > 0``."""
        x, test = self._x(node, 0, "elements"), self._retrieve(_arg(node, 1, "test_elements"))
        if not isinstance(test, R.Expr):
            hit = self.emit("relax.equal", [x, R.const(test, x.sinfo.dtype)])
        else:
            flat = self._reshape_to(test, [-1])
            eq = self.emit("relax.equal", [self.emit("relax.expand_dims", [x], axis=[-1]), flat])
            top = self.emit("relax.max", [self.emit("relax.astype", [eq], dtype="int32")], axis=[-1], keepdims=False)
            hit = self.emit("relax.greater", [top, R.const(0, "int32")])
        return self.emit("relax.logical_not", [hit]) if node.kwargs.get("invert") else hit

    def _bucketize(self, node: fx.Node) -> Any:
        """``torch.bucketize(x, boundaries, right=False)``: the number of boundaries below x
        (``<= x`` with right=True): ``sum(astype(greater(expand_dims(x, -1), b)))``."""
        x, b = self._x(node), self._x(node, 1, "boundaries")
        cmp = "relax.greater_equal" if node.kwargs.get("right", False) else "relax.greater"
        hit = self.emit(cmp, [self.emit("relax.expand_dims", [x], axis=[-1]), b])
        dtype = "int32" if node.kwargs.get("out_int32", False) else "int64"
        return self.emit("relax.sum", [self.emit("relax.astype", [hit], dtype=dtype)], axis=[-1], keepdims=False)

    # ---- reductions

    def _arg_reduce(self, op: str) -> Callable[[fx.Node], Any]:
        """``argmax`` / ``argmin(x, dim=None, keepdim=False)``."""
        def convert(node: fx.Node) -> Any:
            dim = _arg(node, 1, "dim")
            return self.emit(op, [self._x(node)], axis=None if dim is None else int(dim),
                             keepdims=bool(_arg(node, 2, "keepdim", False)))
        return convert

    def _max_min_dim(self, op: str, arg_op: str) -> Callable[[fx.Node], Any]:
        """``max.dim`` / ``min.dim(x, dim, keepdim)`` -> (values: ``max`` / ``min``, indices:
        ``argmax`` / ``argmin``, emitted only when something reads them)."""
        def convert(node: fx.Node) -> Any:
            x, dim, keep = self._x(node), int(_arg(node, 1, "dim")), bool(_arg(node, 2, "keepdim", False))
            values = self.emit(op, [x], axis=[dim], keepdims=keep)
            need = any(not (u.target is operator.getitem and u.args[1] == 0) for u in node.users)
            indices = self.emit(arg_op, [x], axis=dim, keepdims=keep) if need else None
            return (values, indices)
        return convert

    def _max_min(self, op: str, arg_op: str, binary: str) -> Callable[[fx.Node], Any]:
        """``torch.max/min(x)`` (all: ``max``), ``(x, dim, keepdim)`` (values, indices) or
        ``(x, other)`` (``maximum`` / ``minimum``)."""
        by_dim = self._max_min_dim(op, arg_op)

        def convert(node: fx.Node) -> Any:
            x = self._x(node)
            other = self._retrieve(_arg(node, 1, "dim", node.kwargs.get("other")))
            if other is None:
                return self.emit(op, [x], axis=None, keepdims=False)
            if isinstance(other, R.Expr):
                return self.emit(binary, [x, other])
            return by_dim(node)
        return convert

    def _prod(self, node: fx.Node) -> Any:
        """``prod(x, dim=None, keepdim=False)`` -> ``prod``."""
        if self._dtype_kwarg(node) is not None:
            raise ExportError("prod with dtype= is not supported")
        dim = _arg(node, 1, "dim")
        return self.emit("relax.prod", [self._x(node)], axis=None if dim is None else [int(dim)],
                         keepdims=bool(_arg(node, 2, "keepdim", False)))

    def _var_impl(self, x: R.Expr, axes: Optional[List[int]], correction: float, keepdim: bool) -> Any:
        """relax's ``variance`` (the mean squared deviation) times n / (n - correction)."""
        axes = list(range(x.sinfo.ndim)) if axes is None else axes
        n = int(np.prod([x.sinfo.shape[a] for a in axes]))
        out = self.emit("relax.variance", [x], axis=axes, keepdims=keepdim)
        if correction:
            factor = n / (n - correction) if n > correction else math.inf
            out = self.emit("relax.multiply", [out, R.const(factor, x.sinfo.dtype)])
        return out

    def _var_args(self, node: fx.Node) -> PyTuple[R.Expr, Optional[List[int]], float, bool]:
        """``torch.var/std(x, dim=None, unbiased=True, keepdim=False, *, correction=None)`` or
        ``(x, unbiased)``."""
        x = self._x(node)
        dim, unbiased, keepdim = _arg(node, 1, "dim"), _arg(node, 2, "unbiased", True), _arg(node, 3, "keepdim", False)
        if isinstance(dim, bool):  # var(x, unbiased)
            dim, unbiased = None, dim
        c = node.kwargs.get("correction")
        correction = (1.0 if unbiased else 0.0) if c is None else float(c)
        return x, self._axes(dim, x.sinfo.ndim), correction, bool(keepdim)

    def _var(self, node: fx.Node) -> Any:
        """``var``: :meth:`_var_impl`."""
        return self._var_impl(*self._var_args(node))

    def _std(self, node: fx.Node) -> Any:
        """``std``: ``sqrt`` of :meth:`_var_impl`."""
        return self.emit("relax.sqrt", [self._var_impl(*self._var_args(node))])

    def _norm(self, node: fx.Node) -> Any:
        """``torch.norm(x, p="fro", dim=None, keepdim=False)``: p = 2 / "fro": ``sqrt(sum(x * x))``;
        inf / -inf: ``max`` / ``min`` of ``abs``; 0: the count of non-zeros; other p:
        ``sum(abs(x) ** p) ** (1 / p)``."""
        x = self._x(node)
        p = self._retrieve(_arg(node, 1, "p", "fro"))
        axes = self._axes(_arg(node, 2, "dim"), x.sinfo.ndim)
        keep = bool(_arg(node, 3, "keepdim", False))
        if self._dtype_kwarg(node) is not None:
            raise ExportError("norm with dtype= is not supported")
        dt = x.sinfo.dtype
        p = 2.0 if p in ("fro", None) else p
        if isinstance(p, str):
            raise ExportError(f"norm p={p!r} is not supported")
        p = float(p)
        ax = self.emit("relax.abs", [x])
        if math.isinf(p):
            return self.emit("relax.max" if p > 0 else "relax.min", [ax], axis=axes, keepdims=keep)
        if p == 0:
            nz = self.emit("relax.astype", [self.emit("relax.not_equal", [x, R.const(0, dt)])], dtype=dt)
            return self.emit("relax.sum", [nz], axis=axes, keepdims=keep)
        if p == 2:
            return self.emit("relax.sqrt", [self.emit("relax.sum", [self.emit("relax.multiply", [x, x])],
                                                      axis=axes, keepdims=keep)])
        if p == 1:
            return self.emit("relax.sum", [ax], axis=axes, keepdims=keep)
        s = self.emit("relax.sum", [self.emit("relax.power", [ax, R.const(p, dt)])], axis=axes, keepdims=keep)
        return self.emit("relax.power", [s, R.const(1.0 / p, dt)])

    def _cumsum(self, node: fx.Node) -> Any:
        """``cumsum(x, dim, dtype=None)`` -> ``cumsum``."""
        x = self._x(node)
        dtype = self._dtype_kwarg(node)
        return self.emit("relax.cumsum", [x], axis=int(_arg(node, 1, "dim")) % x.sinfo.ndim,
                         dtype=None if dtype is None else torch_dtype_name(dtype), exclusive=False)

    #: cumprod is lowered to one multiply per element of its axis; longer axes are rejected
    CUMPROD_MAX_AXIS = 64

    def _cumprod(self, node: fx.Node) -> Any:
        """``cumprod(x, dim)``: no MSC optype; ``concat`` of the running products of the
        ``strided_slice`` rows along ``dim`` (n - 1 multiplies; axes up to 64 long)."""
        x = self._x(node)
        if self._dtype_kwarg(node) is not None:
            raise ExportError("cumprod with dtype= is not supported")
        dim = int(_arg(node, 1, "dim")) % x.sinfo.ndim
        n = x.sinfo.shape[dim]
        if n > self.CUMPROD_MAX_AXIS:
            raise ExportError(f"cumprod over an axis of {n} > {self.CUMPROD_MAX_AXIS} elements (unrolled) "
                              "is not supported")
        rows = [self._slice_axis(x, dim, 0, 1)]
        for i in range(1, n):
            rows.append(self.emit("relax.multiply", [rows[-1], self._slice_axis(x, dim, i, i + 1)]))
        return rows[0] if n == 1 else self.emit("relax.concat", [R.Tuple(rows)], axis=dim)

    def _topk(self, node: fx.Node) -> Any:
        """``topk(x, k, dim=-1, largest=True, sorted=True)`` -> ``topk`` (values, int64 indices)."""
        x = self._x(node)
        k, dim = int(_arg(node, 1, "k")), int(_arg(node, 2, "dim", -1))
        largest = bool(_arg(node, 3, "largest", True))
        pair = self.emit("relax.topk", [x], k=k, axis=dim, ret_type="both", largest=largest, dtype="int64")
        return (self.bb.emit(R.TupleGetItem(pair, 0)), self.bb.emit(R.TupleGetItem(pair, 1)))

    def _sort_pair(self, node: fx.Node) -> PyTuple[R.Expr, R.Expr]:
        """``sort(x, dim=-1, descending=False)``: ``topk`` with k = the axis length (stable order
        of ties, as ``torch.sort(stable=True)``)."""
        x = self._x(node)
        dim = int(_arg(node, 1, "dim", -1))
        desc = bool(_arg(node, 2, "descending", False))
        k = x.sinfo.shape[dim % x.sinfo.ndim]
        pair = self.emit("relax.topk", [x], k=k, axis=dim, ret_type="both", largest=desc, dtype="int64")
        return self.bb.emit(R.TupleGetItem(pair, 0)), self.bb.emit(R.TupleGetItem(pair, 1))

    def _sort(self, node: fx.Node) -> Any:
        return self._sort_pair(node)

    def _argsort(self, node: fx.Node) -> Any:
        return self._sort_pair(node)[1]

    # ---- nn

    def _conv1d_impl(self, x, weight, bias, strides, padding, dilation, groups) -> Any:
        """``nn.conv1d`` (NCW / OIW) + ``add(conv, reshape(b, (1, -1, 1)))`` (MSC: msc.conv1d_bias)."""
        if isinstance(padding, str):
            if padding != "valid":
                raise ExportError(f"padding={padding!r} is not supported")
            padding = 0
        (p,) = _pair(padding, 1)
        conv = self.emit("relax.nn.conv1d", [x, weight], strides=_pair(strides, 1), padding=[p, p],
                         dilation=_pair(dilation, 1), groups=int(groups), data_layout="NCW", kernel_layout="OIW",
                         out_layout="NCW", out_dtype=_out_dtype(x))
        if bias is None:
            return conv
        b = R.make_call("relax.reshape", [bias, R.ShapeExpr((1, bias.sinfo.shape[0], 1))])
        return self.emit("relax.add", [conv, b])

    def _conv1d(self, node: fx.Node) -> Any:
        """``F.conv1d(x, w, b, stride, padding, dilation, groups)``."""
        return self._conv1d_impl(self._x(node), self._x(node, 1, "weight"), self._retrieve(_arg(node, 2, "bias")),
                                 _arg(node, 3, "stride", 1), _arg(node, 4, "padding", 0),
                                 _arg(node, 5, "dilation", 1), _arg(node, 6, "groups", 1))

    def _conv_transpose_impl(self, dims: int, x, weight, bias, strides, padding, output_padding, groups,
                             dilation) -> Any:
        """``nn.conv{1,2}d_transpose`` (data NC[H]W, weight I O/g [kH] kW as torch stores it), then
        ``add`` of the bias reshaped to (1, -1, 1[, 1])."""
        pad = _pair(padding, dims)
        attrs = dict(strides=_pair(strides, dims), output_padding=_pair(output_padding, dims),
                     dilation=_pair(dilation, dims), groups=int(groups), out_dtype=_out_dtype(x))
        if dims == 1:
            conv = self.emit("relax.nn.conv1d_transpose", [x, weight], padding=[pad[0], pad[0]], data_layout="NCW",
                             kernel_layout="IOW", out_layout="NCW", **attrs)
        else:
            conv = self.emit("relax.nn.conv2d_transpose", [x, weight], padding=_pad4(pad), data_layout="NCHW",
                             kernel_layout="IOHW", out_layout="NCHW", **attrs)
        if bias is None:
            return conv
        b = R.make_call("relax.reshape", [bias, R.ShapeExpr((1, bias.sinfo.shape[0]) + (1,) * dims)])
        return self.emit("relax.add", [conv, b])

    def _conv_transpose(self, dims: int) -> Callable[[fx.Node], Any]:
        """``F.conv_transpose{1,2}d(x, w, b, stride, padding, output_padding, groups, dilation)``."""
        def convert(node: fx.Node) -> Any:
            return self._conv_transpose_impl(
                dims, self._x(node), self._x(node, 1, "weight"), self._retrieve(_arg(node, 2, "bias")),
                _arg(node, 3, "stride", 1), _arg(node, 4, "padding", 0), _arg(node, 5, "output_padding", 0),
                _arg(node, 6, "groups", 1), _arg(node, 7, "dilation", 1))
        return convert

    def _conv_transpose_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        if mod.padding_mode != "zeros":
            raise ExportError(f"padding_mode={mod.padding_mode!r} is not supported")
        if len(node.args) > 1 or node.kwargs.get("output_size") is not None:
            raise ExportError("ConvTranspose with output_size is not supported")
        return self._conv_transpose_impl(len(mod.kernel_size), self._x(node), self._param(mod.weight),
                                         self._param(mod.bias), mod.stride, mod.padding, mod.output_padding,
                                         mod.groups, mod.dilation)

    def _addmm(self, node: fx.Node) -> Any:
        """``addmm(bias, a, b, beta=1, alpha=1)`` = ``beta * bias + alpha * (a @ b)``;
        ``baddbmm`` the same on batches."""
        bias = self._x(node)
        a, b = (self._retrieve(node.args[i] if len(node.args) > i else
                               node.kwargs.get(f"mat{i}", node.kwargs.get(f"batch{i}"))) for i in (1, 2))
        beta, alpha = node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1)
        mm = self.emit("relax.matmul", [a, b], out_dtype=_out_dtype(a))
        if alpha != 1:
            mm = self.emit("relax.multiply", [mm, R.const(alpha, mm.sinfo.dtype)])
        if beta == 0:
            return mm
        if beta != 1:
            bias = self.emit("relax.multiply", [bias, R.const(beta, bias.sinfo.dtype)])
        return self.emit("relax.add", [mm, bias])

    def _outer(self, node: fx.Node) -> Any:
        """``outer(a, b)``: ``multiply(reshape(a, [n, 1]), b)``."""
        a, b = self._x(node), self._x(node, 1, "vec2")
        return self.emit("relax.multiply", [self._reshape_to(a, [-1, 1]), b])

    def _einsum(self, node: fx.Node) -> Any:
        """``torch.einsum(equation, *operands)`` (or a list of operands) -> ``einsum``."""
        eq = node.args[0]
        ops = [self._retrieve(a) for a in node.args[1:]]
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
        return self.emit("relax.einsum", [R.Tuple(ops)], subscripts=str(eq).replace(" ", ""))

    def _group_norm_impl(self, x: R.Expr, groups: int, gamma: Any, beta: Any, eps: float) -> Any:
        """``nn.group_norm`` over axes 2.. with channel axis 1 (gamma / beta ones / zeros when absent)."""
        c = x.sinfo.shape[1]
        gamma = R.const(np.ones(c), x.sinfo.dtype) if gamma is None else gamma
        beta = R.const(np.zeros(c), x.sinfo.dtype) if beta is None else beta
        return self.emit("relax.nn.group_norm", [x, gamma, beta], num_groups=int(groups), channel_axis=1,
                         axes=list(range(2, x.sinfo.ndim)), epsilon=float(eps), center=True, scale=True)

    def _group_norm_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        return self._group_norm_impl(self._x(node), mod.num_groups, self._param(mod.weight) if mod.affine else None,
                                     self._param(mod.bias) if mod.affine else None, mod.eps)

    def _group_norm(self, node: fx.Node) -> Any:
        """``F.group_norm(x, num_groups, weight, bias, eps)``."""
        return self._group_norm_impl(self._x(node), int(_arg(node, 1, "num_groups")),
                                     self._retrieve(_arg(node, 2, "weight")), self._retrieve(_arg(node, 3, "bias")),
                                     float(_arg(node, 4, "eps", 1e-5)))

    def _instance_norm_module(self, node: fx.Node) -> Any:
        """``nn.InstanceNorm{1,2,3}d``: ``nn.group_norm`` with one group per channel; with
        ``track_running_stats`` (eval) ``nn.batch_norm`` with the running statistics (what torch
        computes then)."""
        mod = self.named_modules[node.target]
        x = self._x(node)
        c = x.sinfo.shape[1]
        gamma = self._param(mod.weight) if mod.affine else None
        beta = self._param(mod.bias) if mod.affine else None
        if mod.track_running_stats and not mod.training:
            gamma = R.const(np.ones(c), x.sinfo.dtype) if gamma is None else gamma
            beta = R.const(np.zeros(c), x.sinfo.dtype) if beta is None else beta
            bn = self.emit("relax.nn.batch_norm", [x, gamma, beta, self._tensor_const(mod.running_mean),
                                                   self._tensor_const(mod.running_var)], axis=1,
                           epsilon=float(mod.eps))
            return self.bb.emit(R.TupleGetItem(bn, 0))
        return self._group_norm_impl(x, c, gamma, beta, mod.eps)

    def _pool1d_impl(self, op: str, x: R.Expr, kernel, stride, padding, dilation, ceil_mode, count_include_pad):
        kernel = _pair(kernel, 1)
        stride = kernel if stride is None or stride == [] or stride == () else _pair(stride, 1)
        (pad,) = _pair(padding, 1)
        return self.emit(op, [x], pool_size=kernel, strides=stride, padding=[pad, pad], dilation=_pair(dilation, 1),
                         ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad), layout="NCW",
                         out_layout="NCW")

    def _avg_pool1d(self, node: fx.Node) -> Any:
        """``avg_pool1d(x, kernel, stride, padding, ceil_mode, count_include_pad)`` -> ``nn.avg_pool1d``."""
        return self._pool1d_impl("relax.nn.avg_pool1d", self._x(node), self._retrieve(_arg(node, 1, "kernel_size")),
                                 self._retrieve(_arg(node, 2, "stride")), _arg(node, 3, "padding", 0), 1,
                                 _arg(node, 4, "ceil_mode", False), _arg(node, 5, "count_include_pad", True))

    def _avg_pool1d_module(self, node: fx.Node) -> Any:
        m = self.named_modules[node.target]
        return self._pool1d_impl("relax.nn.avg_pool1d", self._x(node), m.kernel_size, m.stride, m.padding, 1,
                                 m.ceil_mode, m.count_include_pad)

    def _max_pool1d(self, node: fx.Node) -> Any:
        """``max_pool1d(x, kernel, stride, padding, dilation, ceil_mode)`` -> ``nn.max_pool1d``."""
        if _arg(node, 6, "return_indices", False):
            raise ExportError("return_indices=True is not supported")
        return self._pool1d_impl("relax.nn.max_pool1d", self._x(node), _arg(node, 1, "kernel_size"),
                                 _arg(node, 2, "stride"), _arg(node, 3, "padding", 0), _arg(node, 4, "dilation", 1),
                                 _arg(node, 5, "ceil_mode", False), False)

    def _max_pool1d_module(self, node: fx.Node) -> Any:
        m = self.named_modules[node.target]
        if m.return_indices:
            raise ExportError("return_indices=True is not supported")
        return self._pool1d_impl("relax.nn.max_pool1d", self._x(node), m.kernel_size, m.stride, m.padding,
                                 m.dilation, m.ceil_mode, False)

    def _adaptive_avg_pool1d_impl(self, x: R.Expr, size: Any) -> Any:
        return self.emit("relax.nn.adaptive_avg_pool1d", [x], output_size=_pair(size, 1), layout="NCW",
                         out_layout="NCW")

    def _adaptive_avg_pool1d(self, node: fx.Node) -> Any:
        """``adaptive_avg_pool1d(x, output_size)`` -> ``nn.adaptive_avg_pool1d``."""
        return self._adaptive_avg_pool1d_impl(self._x(node), self._retrieve(_arg(node, 1, "output_size")))

    def _adaptive_avg_pool1d_module(self, node: fx.Node) -> Any:
        return self._adaptive_avg_pool1d_impl(self._x(node), self.named_modules[node.target].output_size)

    def _pixel_shuffle_impl(self, x: R.Expr, r: int) -> Any:
        """``reshape [N, C/r², r, r, H, W]``, ``permute_dims [0, 1, 4, 2, 5, 3]``, ``reshape
        [N, C/r², H r, W r]``."""
        n, c, h, w = self._shape(x)
        y = self._reshape_to(x, [n, c // (r * r), r, r, h, w])
        y = self.emit("relax.permute_dims", [y], axes=[0, 1, 4, 2, 5, 3])
        return self._reshape_to(y, [n, c // (r * r), h * r, w * r])

    def _pixel_shuffle(self, node: fx.Node) -> Any:
        return self._pixel_shuffle_impl(self._x(node), int(_arg(node, 1, "upscale_factor")))

    def _resize2d_impl(self, x: R.Expr, size: Sequence[int], method: str, align_corners: bool) -> Any:
        """``image.resize2d`` as TVM's frontends map torch's upsampling: nearest -> asymmetric +
        floor; (bi)linear / cubic -> align_corners or half_pixel (cubic alpha -0.75)."""
        if method == "nearest_neighbor":
            mode, rounding = "asymmetric", "floor"
        else:
            mode, rounding = ("align_corners" if align_corners else "half_pixel"), ""
        return self.emit("relax.image.resize2d", [x], size=[int(v) for v in size], roi=[0.0] * 4, layout="NCHW",
                         method=method, coordinate_transformation_mode=mode, rounding_method=rounding,
                         cubic_alpha=-0.75, cubic_exclude=0, extrapolation_value=0.0, out_dtype="")

    _INTERPOLATE_MODES = {"nearest": "nearest_neighbor", "bilinear": "linear", "bicubic": "cubic"}

    def _interpolate(self, node: fx.Node) -> Any:
        """``F.interpolate(x, size, scale_factor, mode, align_corners)`` on 4-d NCHW ->
        ``image.resize2d`` (modes nearest, bilinear, bicubic)."""
        x = self._x(node)
        size, scale = self._retrieve(_arg(node, 1, "size")), self._retrieve(_arg(node, 2, "scale_factor"))
        mode = _arg(node, 3, "mode", "nearest")
        if x.sinfo.ndim != 4 or mode not in self._INTERPOLATE_MODES:
            raise ExportError(f"interpolate of a {x.sinfo.ndim}-d tensor with mode={mode!r} is not supported "
                              "(4-d nearest, bilinear, bicubic)")
        if _arg(node, 6, "antialias", False):
            raise ExportError("interpolate with antialias=True is not supported")
        if size is None:
            scale = list(scale) if isinstance(scale, (list, tuple)) else [scale, scale]
            size = [int(math.floor(x.sinfo.shape[2 + i] * float(scale[i]))) for i in range(2)]
        size = [int(size)] * 2 if isinstance(size, int) else [int(s) for s in size]
        return self._resize2d_impl(x, size, self._INTERPOLATE_MODES[mode], bool(_arg(node, 4, "align_corners", False)))

    def _cross_entropy_impl(self, x: R.Expr, target: R.Expr, weight: Optional[R.Expr], ignore_index: int,
                            reduction: str, label_smoothing: float) -> Any:
        """``F.cross_entropy`` in inference terms (``nn.nll_loss`` is a training-only MSC optype):
        ``ls = log_softmax(x, 1)``; class-index targets: ``-gather_elements(ls, t, 1)`` times the
        class weight (0 at ``ignore_index``), summed or averaged over the weights; probability
        targets: ``-sum(t * ls * w, 1)``, averaged over the batch."""
        if label_smoothing:
            raise ExportError("cross_entropy with label_smoothing is not supported")
        if reduction not in ("mean", "sum", "none"):
            raise ExportError(f"cross_entropy reduction={reduction!r}")
        if x.sinfo.ndim < 2:
            raise ExportError("cross_entropy of an unbatched input is not supported")
        dt = x.sinfo.dtype
        ls = self._softmax_impl(x, 1, "log_softmax")
        if "float" in target.sinfo.dtype:  # class probabilities
            prod = self.emit("relax.multiply", [target, ls])
            if weight is not None:
                prod = self.emit("relax.multiply", [prod, self._reshape_to(weight, [1, -1] + [1] * (x.sinfo.ndim - 2))])
            loss = self.emit("relax.negative", [self.emit("relax.sum", [prod], axis=[1], keepdims=False)])
            if reduction == "none":
                return loss
            total = self.emit("relax.sum", [loss], axis=None, keepdims=False)
            if reduction == "sum":
                return total
            n = int(np.prod(loss.sinfo.shape, dtype=np.int64))
            return self.emit("relax.divide", [total, R.const(float(n), dt)])
        valid = self.emit("relax.not_equal", [target, R.const(ignore_index, target.sinfo.dtype)])
        safe = self.emit("relax.where", [valid, target, R.const(0, target.sinfo.dtype)])
        picked = self.emit("relax.gather_elements", [ls, self.emit("relax.expand_dims", [safe], axis=[1])], axis=1)
        picked = self.emit("relax.squeeze", [picked], axis=[1])
        w = self.emit("relax.astype", [valid], dtype=dt)
        if weight is not None:
            w = self.emit("relax.multiply", [w, self.emit("relax.take", [weight, safe], axis=0)])
        loss = self.emit("relax.multiply", [self.emit("relax.negative", [picked]), w])
        if reduction == "none":
            return loss
        total = self.emit("relax.sum", [loss], axis=None, keepdims=False)
        if reduction == "sum":
            return total
        return self.emit("relax.divide", [total, self.emit("relax.sum", [w], axis=None, keepdims=False)])

    def _cross_entropy(self, node: fx.Node) -> Any:
        """``F.cross_entropy(x, target, weight, size_average, ignore_index, reduce, reduction,
        label_smoothing)``."""
        if _arg(node, 3, "size_average") is not None or _arg(node, 5, "reduce") is not None:
            raise ExportError("cross_entropy's deprecated size_average / reduce are not supported")
        return self._cross_entropy_impl(self._x(node), self._x(node, 1, "target"),
                                        self._retrieve(_arg(node, 2, "weight")), int(_arg(node, 4, "ignore_index", -100)),
                                        _arg(node, 6, "reduction", "mean"), float(_arg(node, 7, "label_smoothing", 0.0)))

    def _cross_entropy_module(self, node: fx.Node) -> Any:
        m = self.named_modules[node.target]
        return self._cross_entropy_impl(self._x(node), self._x(node, 1, "target"), self._param(m.weight),
                                        m.ignore_index, m.reduction, float(getattr(m, "label_smoothing", 0.0)))

    # ---- shapes, indexing, copies

    def _broadcast_to(self, node: fx.Node) -> Any:
        """``torch.broadcast_to(x, shape)`` -> ``broadcast_to`` (-1 keeps the input's size)."""
        return self._expand(node)

    def _flip(self, node: fx.Node) -> Any:
        """``flip(x, dims)`` / ``x.flip(*dims)``: one ``flip`` per axis."""
        x = self._x(node)
        for d in self._dims_arg(node):
            x = self.emit("relax.flip", [x], axis=int(d) % x.sinfo.ndim)
        return x

    def _tile(self, node: fx.Node) -> Any:
        """``x.repeat(*sizes)`` / ``torch.tile(x, dims)`` (numpy's tile) -> ``tile``."""
        reps = [self._retrieve(a) for a in node.args[1:]] or [self._retrieve(
            node.kwargs.get("repeats", node.kwargs.get("dims", node.kwargs.get("sizes"))))]
        if len(reps) == 1 and isinstance(reps[0], (list, tuple, torch.Size)):
            reps = list(reps[0])
        return self.emit("relax.tile", [self._x(node)], repeats=[int(r) for r in reps])

    def _gather(self, node: fx.Node) -> Any:
        """``gather(x, dim, index)`` -> ``gather_elements`` (same shapes and meaning)."""
        if node.kwargs.get("sparse_grad"):
            raise ExportError("gather with sparse_grad=True is not supported")
        x, index = self._x(node), self._x(node, 2, "index")
        return self.emit("relax.gather_elements", [x, index], axis=int(_arg(node, 1, "dim")) % x.sinfo.ndim)

    def _index_select(self, node: fx.Node) -> Any:
        """``index_select(x, dim, index)`` -> ``take(x, index, dim)``."""
        x, index = self._x(node), self._x(node, 2, "index")
        return self.emit("relax.take", [x, index], axis=int(_arg(node, 1, "dim")) % x.sinfo.ndim)

    def _take_flat(self, node: fx.Node) -> Any:
        """``torch.take(x, index)`` (x as 1-d): ``take(reshape(x, [-1]), index, 0)``."""
        return self.emit("relax.take", [self._reshape_to(self._x(node), [-1]), self._x(node, 1, "index")], axis=0)

    def _scatter(self, reduction: str) -> Callable[[fx.Node], Any]:
        """``scatter(x, dim, index, src | value)`` / ``scatter_add`` -> ``scatter_elements``."""
        def convert(node: fx.Node) -> Any:
            if node.kwargs.get("reduce") is not None or (len(node.args) > 4 and node.args[4] is not None):
                raise ExportError("scatter with reduce= is not supported")
            x, index = self._x(node), self._x(node, 2, "index")
            src = self._retrieve(_arg(node, 3, "src", node.kwargs.get("value")))
            if not isinstance(src, R.Expr):
                src = R.Constant(np.full(index.sinfo.shape, src, dtype=np.dtype(x.sinfo.dtype)))
            out = self.emit("relax.scatter_elements", [x, index, src],
                            axis=int(_arg(node, 1, "dim")) % x.sinfo.ndim, reduction=reduction)
            return self._inplace(node, out)
        return convert

    def _slice_scatter(self, node: fx.Node) -> Any:
        """``slice_scatter(x, src, dim, start, end, step=1)``: ``concat`` of x before the slice,
        src and x after it (step 1 only)."""
        x, src = self._x(node), self._x(node, 1, "src")
        dim = int(_arg(node, 2, "dim", 0)) % x.sinfo.ndim
        n = x.sinfo.shape[dim]
        start, end = _arg(node, 3, "start", None), _arg(node, 4, "end", None)
        if int(_arg(node, 5, "step", 1)) != 1:
            raise ExportError("slice_scatter with step != 1 is not supported")
        start = 0 if start is None else int(start)
        end = n if end is None or end >= _INT64_MAX else int(end)
        start, end = (min(max(v + n if v < 0 else v, 0), n) for v in (start, end))
        parts = ([self._slice_axis(x, dim, 0, start)] if start > 0 else []) + [src] + \
            ([self._slice_axis(x, dim, end, n)] if end < n else [])
        return parts[0] if len(parts) == 1 else self.emit("relax.concat", [R.Tuple(parts)], axis=dim)

    def _select(self, node: fx.Node) -> Any:
        """``select(x, dim, index)`` = ``x[..., index]`` on ``dim``: ``strided_slice`` + ``reshape``."""
        x = self._x(node)
        dim = int(_arg(node, 1, "dim")) % x.sinfo.ndim
        return self._index_tensor(x, (slice(None),) * dim + (int(self._retrieve(_arg(node, 2, "index"))),))

    def _narrow(self, node: fx.Node) -> Any:
        """``narrow(x, dim, start, length)``: ``strided_slice`` of one axis."""
        x = self._x(node)
        dim = int(_arg(node, 1, "dim")) % x.sinfo.ndim
        start = int(self._retrieve(_arg(node, 2, "start")))
        start = start + x.sinfo.shape[dim] if start < 0 else start
        return self._slice_axis(x, dim, start, start + int(self._retrieve(_arg(node, 3, "length"))))

    def _unbind(self, node: fx.Node) -> Any:
        """``unbind(x, dim=0)``: one ``strided_slice`` + ``reshape`` per index (a Python tuple)."""
        x = self._x(node)
        dim = int(_arg(node, 1, "dim", 0)) % x.sinfo.ndim
        return tuple(self._index_tensor(x, (slice(None),) * dim + (i,)) for i in range(x.sinfo.shape[dim]))

    def _diagonal(self, node: fx.Node) -> Any:
        """``diagonal(x, offset=0, dim1=0, dim2=1)``: dim1, dim2 moved last (``permute_dims``),
        merged (``reshape``) and the diagonal's flat positions picked (``take`` of a constant)."""
        x = self._x(node)
        nd = x.sinfo.ndim
        offset = int(_arg(node, 1, "offset", 0))
        d1, d2 = int(_arg(node, 2, "dim1", 0)) % nd, int(_arg(node, 3, "dim2", 1)) % nd
        n1, n2 = x.sinfo.shape[d1], x.sinfo.shape[d2]
        rest = [i for i in range(nd) if i not in (d1, d2)]
        y = self.emit("relax.permute_dims", [x], axes=rest + [d1, d2]) if rest + [d1, d2] != list(range(nd)) else x
        y = self._reshape_to(y, [x.sinfo.shape[i] for i in rest] + [n1 * n2])
        rows = range(max(0, -offset), min(n1, n2 - offset)) if offset < n2 else range(0)
        flat = np.array([r * n2 + r + offset for r in rows], dtype=np.int64)
        if flat.size == 0:
            raise ExportError("diagonal with an offset outside the matrix (empty result) is not supported")
        return self.emit("relax.take", [y, R.Constant(flat)], axis=len(rest))

    def _meshgrid(self, node: fx.Node) -> Any:
        """``torch.meshgrid(*tensors, indexing="ij")``: each 1-d tensor ``reshape``-d onto its axis
        and ``broadcast_to`` the grid (``"xy"`` swaps the first two axes)."""
        ts = [self._retrieve(a) for a in node.args]
        if len(ts) == 1 and isinstance(ts[0], (list, tuple)):
            ts = list(ts[0])
        indexing = node.kwargs.get("indexing", "ij")
        sizes = [int(np.prod(t.sinfo.shape, dtype=np.int64)) for t in ts]
        axes = list(range(len(ts)))
        if indexing == "xy" and len(ts) >= 2:
            axes[0], axes[1] = 1, 0
        grid = [0] * len(ts)
        for a, s in zip(axes, sizes):
            grid[a] = s
        out = []
        for t, a in zip(ts, axes):
            shape = [1] * len(ts)
            shape[a] = grid[a]
            out.append(self.emit("relax.broadcast_to", [self._reshape_to(t, shape), R.ShapeExpr(grid)]))
        return tuple(out)

    def _flat_index(self, x: R.Expr, indices: Sequence[Any]) -> PyTuple[R.Expr, int]:
        """The flat position of ``x[i0, i1, ...]`` over the first k axes (indices normalized with
        ``floor_mod``, combined with multiply / add): (position tensor, k)."""
        shape = self._shape(x)
        flat = None
        for axis, idx in enumerate(indices):
            if not isinstance(idx, R.Expr) or "int" not in idx.sinfo.dtype:
                raise ExportError("index_put_ takes integer index tensors only")
            idx = self.emit("relax.floor_mod", [self.emit("relax.astype", [idx], dtype="int64"),
                                                R.const(shape[axis], "int64")])
            stride = int(np.prod(shape[axis + 1:len(indices)], dtype=np.int64))
            term = idx if stride == 1 else self.emit("relax.multiply", [idx, R.const(stride, "int64")])
            flat = term if flat is None else self.emit("relax.add", [flat, term])
        return flat, len(indices)

    def _index_put(self, node: fx.Node) -> Any:
        """``x.index_put_((i0, i1, ...), values, accumulate=False)``: the first k axes merged
        (``reshape``), the flat row position of each index, broadcast over the remaining axes and
        ``scatter_elements`` on axis 0 (reduction "update" or "add"), then reshaped back."""
        x = self._x(node)
        indices = [self._retrieve(i) for i in self._retrieve(_arg(node, 1, "indices"))]
        if any(i is None for i in indices) or any(i.sinfo.dtype == "bool" for i in indices):
            raise ExportError("index_put_ with None or bool indices is not supported")
        values = self._scalar_or_tensor(self._retrieve(_arg(node, 2, "values")), x)
        accumulate = bool(_arg(node, 3, "accumulate", False))
        shape = list(self._shape(x))
        flat, k = self._flat_index(x, indices)
        rows = int(np.prod(shape[:k], dtype=np.int64))
        rest = shape[k:]
        idx_shape = list(flat.sinfo.shape)
        upd_shape = idx_shape + rest
        xm = self._reshape_to(x, [rows] + rest)
        if values.sinfo.dtype != x.sinfo.dtype:
            values = self._astype(values, x.sinfo.dtype)
        upd = self.emit("relax.broadcast_to", [values, R.ShapeExpr(upd_shape)])
        m = int(np.prod(idx_shape, dtype=np.int64))
        upd = self._reshape_to(upd, [m] + rest)
        pos = self._reshape_to(flat, [m] + [1] * len(rest))
        pos = self.emit("relax.broadcast_to", [pos, R.ShapeExpr([m] + rest)])
        out = self.emit("relax.scatter_elements", [xm, pos, upd], axis=0, reduction="add" if accumulate else "update")
        return self._inplace(node, self._reshape_to(out, shape))

    def _masked_scatter(self, node: fx.Node) -> Any:
        """``x.masked_scatter(mask, source)``: the k-th True position of the (broadcast, flat) mask
        takes source's k-th element: ``cumsum`` of the mask - 1 as ``take`` positions into the
        flat source, then ``where(mask, taken, x)``."""
        x, mask, src = self._x(node), self._x(node, 1, "mask"), self._x(node, 2, "source")
        shape = list(self._shape(x))
        if list(mask.sinfo.shape) != shape:
            mask = self.emit("relax.broadcast_to", [mask, R.ShapeExpr(shape)])
        flat_mask = self._reshape_to(mask, [-1])
        pos = self.emit("relax.cumsum", [self.emit("relax.astype", [flat_mask], dtype="int64")], axis=0, dtype=None,
                        exclusive=False)
        n_src = int(np.prod(src.sinfo.shape, dtype=np.int64))
        pos = self._clip(self.emit("relax.subtract", [pos, R.const(1, "int64")]), 0, n_src - 1)
        taken = self._reshape_to(self.emit("relax.take", [self._reshape_to(src, [-1]), pos], axis=0), shape)
        return self._inplace(node, self.emit("relax.where", [mask, taken, x]))

    def _fill_with(self, value: Any = None) -> Callable[[fx.Node], Any]:
        """``torch.fill(x, v)`` / ``x.fill_(v)`` / ``x.zero_()``: a constant of x's shape and dtype
        (``x`` rebound for the in-place forms)."""
        def convert(node: fx.Node) -> Any:
            x = self._x(node)
            v = value if value is not None else self._retrieve(_arg(node, 1, "value"))
            if isinstance(v, R.Expr):
                if v.sinfo.ndim != 0:
                    raise ExportError("fill with a non-0-d tensor value is not supported")
                v = v if v.sinfo.dtype == x.sinfo.dtype else self._astype(v, x.sinfo.dtype)
                out = self.emit("relax.broadcast_to", [v, R.ShapeExpr(self._shape(x))])
            else:
                out = R.Constant(np.full(self._shape(x), v, dtype=np.dtype(x.sinfo.dtype)))
            return self._inplace(node, out)
        return convert

    def _copy(self, node: fx.Node) -> Any:
        """``copy(dst, src)`` / ``dst.copy_(src)``: src broadcast to dst's shape, in dst's dtype."""
        dst, src = self._x(node), self._x(node, 1, "src")
        if src.sinfo.dtype != dst.sinfo.dtype:
            src = self._astype(src, dst.sinfo.dtype)
        if tuple(src.sinfo.shape) != tuple(dst.sinfo.shape):
            src = self.emit("relax.broadcast_to", [src, R.ShapeExpr(dst.sinfo.shape)])
        return self._inplace(node, src)

    def _trilu_inplace(self, op: str) -> Callable[[fx.Node], Any]:
        """``x.tril_(k)`` / ``x.triu_(k)``: :meth:`_trilu`, x rebound."""
        trilu = self._trilu(op)

        def convert(node: fx.Node) -> Any:
            return self._inplace(node, trilu(node))
        return convert

    def _binary_inplace(self, op: str, py_op: Callable[[Any, Any], Any]) -> Callable[[fx.Node], Any]:
        binary = self._binary(op, py_op)

        def convert(node: fx.Node) -> Any:
            return self._inplace(node, binary(node))
        return convert

    def _one_hot(self, node: fx.Node) -> Any:
        """``F.one_hot(x, num_classes)``: ``astype(equal(expand_dims(x, -1), arange(n)), int64)``
        (num_classes=-1 depends on the data: rejected)."""
        x = self._x(node)
        n = int(_arg(node, 1, "num_classes", -1))
        if n < 0:
            raise ExportError("one_hot needs num_classes (the default -1 depends on the data)")
        classes = R.Constant(np.arange(n, dtype=np.dtype(x.sinfo.dtype)))
        eq = self.emit("relax.equal", [self.emit("relax.expand_dims", [x], axis=[-1]), classes])
        return self.emit("relax.astype", [eq], dtype="int64")

    def _type_as(self, node: fx.Node) -> Any:
        """``x.type_as(other)``: ``astype`` to other's dtype."""
        return self._astype(self._x(node), self._x(node, 1, "other").sinfo.dtype)

    def _item(self, node: fx.Node) -> Any:
        """``x.item()``: the one element as a 0-d tensor (``reshape []``), as TVM does."""
        x = self._x(node)
        if int(np.prod(x.sinfo.shape, dtype=np.int64)) != 1:
            raise ExportError(f"item() of a tensor of shape {list(x.sinfo.shape)}")
        return x if x.sinfo.ndim == 0 else self.emit("relax.reshape", [x, R.ShapeExpr([])])

    def _numel(self, node: fx.Node) -> Any:
        """``x.numel()``: a Python int (static shapes)."""
        return int(np.prod(self._shape(self._x(node)), dtype=np.int64))

    def _is_floating_point(self, node: fx.Node) -> Any:
        """``x.is_floating_point()``: a Python bool."""
        return "float" in self._x(node).sinfo.dtype

    def _sym_size(self, node: fx.Node) -> Any:
        """``aten.sym_size.int(x, dim)``: the static size."""
        return self._shape(self._x(node))[int(node.args[1])]

    def _clone(self, node: fx.Node) -> Any:
        return self._x(node)

    # ---- creation (values known at export time: constants)

    def _creation_value(self, node: fx.Node, value: Any, shape: Sequence[int], default_dtype: str) -> R.Constant:
        if isinstance(value, R.Expr):
            raise ExportError("a fill value computed from tensors is not supported")
        dtype = self._dtype_kwarg(node)
        dtype = default_dtype if dtype is None else torch_dtype_name(dtype)
        return R.Constant(np.full([int(s) for s in shape], value, dtype=np.dtype(dtype)))

    @staticmethod
    def _default_dtype(value: Any) -> str:
        return "bool" if isinstance(value, bool) else "int64" if isinstance(value, int) else "float32"

    def _full(self, node: fx.Node) -> Any:
        """``full(size, fill_value, dtype=)``: a constant (dtype from the value when not given)."""
        value = self._retrieve(_arg(node, 1, "fill_value"))
        size = self._retrieve(_arg(node, 0, "size"))
        return self._creation_value(node, value, list(size), self._default_dtype(value))

    def _constant_of(self, value: Any) -> Callable[[fx.Node], Any]:
        """``torch.ones/zeros/empty(*size, dtype=)`` (empty: zeros, its values are unspecified)."""
        def convert(node: fx.Node) -> Any:
            return self._creation_value(node, value, self._size_args(node), "float32")
        return convert

    def _new_constant(self, value: Any) -> Callable[[fx.Node], Any]:
        """``x.new_ones/new_zeros(*size, dtype=)``: a constant in x's dtype by default."""
        def convert(node: fx.Node) -> Any:
            x = self._x(node)
            return self._creation_value(node, value, self._size_args(node, 1), x.sinfo.dtype)
        return convert

    def _eye(self, node: fx.Node) -> Any:
        """``torch.eye(n, m=None, dtype=)``: a constant."""
        n = int(self._retrieve(_arg(node, 0, "n")))
        m = self._retrieve(_arg(node, 1, "m"))
        dtype = self._creation_dtype(node)
        return R.Constant(np.eye(n, n if m is None else int(m), dtype=np.dtype(dtype)))

    def _linspace(self, node: fx.Node) -> Any:
        """``torch.linspace(start, end, steps, dtype=)``: a constant (computed by torch)."""
        args = [self._retrieve(_arg(node, i, n)) for i, n in enumerate(("start", "end", "steps"))]
        if any(isinstance(a, R.Expr) for a in args):
            raise ExportError("linspace bounds computed from tensors are not supported")
        dtype = self._dtype_kwarg(node) or torch.float32
        return R.Constant(torch.linspace(args[0], args[1], int(args[2]), dtype=dtype).numpy())

    def _tensor(self, node: fx.Node) -> Any:
        """``torch.tensor(data, dtype=)`` of trace-time Python values: a constant (dtype as torch
        infers it)."""
        data = self._retrieve(_arg(node, 0, "data"))

        def has_expr(v: Any) -> bool:
            return isinstance(v, R.Expr) or (isinstance(v, (list, tuple)) and any(has_expr(i) for i in v))
        if has_expr(data):
            raise ExportError("torch.tensor of tensors is not supported")
        dtype = self._dtype_kwarg(node)
        t = torch.tensor(data, dtype=dtype)
        return self._tensor_const(t)

    def _arange(self, node: fx.Node) -> Any:
        """``arange(end)`` / ``(start, end[, step])``, dtype int64 for int bounds, else float32: a constant."""
        args = [self._retrieve(a) for a in node.args]
        for key in ("start", "end", "step"):
            if key in node.kwargs:
                raise ExportError(f"arange with {key}= as a keyword is not supported")
        start, end, step = (0, args[0], 1) if len(args) == 1 else (args + [1])[:3]
        if any(isinstance(v, R.Expr) for v in (start, end, step)):
            raise ExportError("arange bounds computed from tensors are not supported")
        dtype = self._dtype_kwarg(node)
        if dtype is None:
            dtype = torch.int64 if all(isinstance(v, int) for v in (start, end, step)) else torch.float32
        return R.Constant(torch.arange(start, end, step, dtype=dtype).numpy())

    # ------------------------------------------------------------------ embedding

    def _embedding_impl(self, x: R.Expr, weight: R.Expr) -> Any:
        """v0.20 ``_embedding_impl``: ``astype(x, int32)``; 1-d: ``take(W, x, axis=0)``; else
        ``reshape(x, [-1])``, ``take``, ``reshape(.., x.shape + [dim])`` (MSC fuses: msc.embedding)."""
        x = self.emit("relax.astype", [x], dtype="int32")
        if x.sinfo.ndim == 1:
            return self.emit("relax.take", [weight, x], axis=0)
        shape = list(self._shape(x))
        flat = self._reshape_to(x, [-1])
        emb = self.emit("relax.take", [weight, flat], axis=0)
        return self._reshape_to(emb, shape + [weight.sinfo.shape[-1]])

    def _embedding_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        if mod.max_norm is not None:
            raise ExportError("nn.Embedding with max_norm renormalizes its weight in forward; not supported")
        return self._embedding_impl(self._x(node), self._param(mod.weight))

    def _embedding(self, node: fx.Node) -> Any:
        if _arg(node, 3, "max_norm") is not None:
            raise ExportError("F.embedding with max_norm is not supported")
        weight = self._retrieve(_arg(node, 1, "weight"))
        return self._embedding_impl(self._x(node), weight)

    # ------------------------------------------------------------------ attention

    def _attention_core(self, q: R.Expr, k: R.Expr, v: R.Expr, bias: Optional[R.Expr] = None,
                        scale: Optional[float] = None, causal: bool = False) -> Any:
        """v0.20 ``_scaled_dot_product_attention``: q/k/v in torch's [B, N, S, H] are permuted to
        relax's [B, S, N, H], ``nn.attention(_bias)``, permuted back (MSC fuses: msc.attention)."""
        perm = [0, 2, 1, 3]
        qt, kt, vt = (R.make_call("relax.permute_dims", [t], axes=perm) for t in (q, k, v))
        if bias is not None and "float" not in bias.sinfo.dtype:
            raise ExportError("only a float (additive) attention mask is supported here")
        op = "relax.nn.attention" if bias is None else "relax.nn.attention_bias"
        args = [qt, kt, vt] + ([] if bias is None else [bias])
        try:
            att = R.make_call(op, args, scale=scale, causal_mask="TopLeft" if causal else None)
            return self.bb.emit(R.make_call("relax.permute_dims", [att], axes=perm))
        except (ValueError, TypeError) as err:
            raise ExportError(f"attention: {err}") from None

    def _sdpa(self, node: fx.Node) -> Any:  # pragma: no cover - needs torch >= 2.0
        q, k, v = self._x(node, 0, "query"), self._x(node, 1, "key"), self._x(node, 2, "value")
        mask = self._retrieve(_arg(node, 3, "attn_mask"))
        if _arg(node, 4, "dropout_p", 0.0) != 0.0:
            raise ExportError("scaled_dot_product_attention with dropout_p != 0 is random; not supported")
        causal = bool(_arg(node, 5, "is_causal", False))
        if mask is not None and mask.sinfo.dtype == "bool":
            # scaled_dot_product_attention's bool mask marks the positions that TAKE PART (True:
            # attend), the opposite of nn.MultiheadAttention's masks (_additive_mask)
            ninf, zero = R.const(-math.inf, q.sinfo.dtype), R.const(0.0, q.sinfo.dtype)
            mask = self.emit("relax.where", [mask, zero, ninf])
        if mask is not None and mask.sinfo.ndim < 4:  # torch broadcasts the mask; relax wants 4-d
            mask = self._reshape_to(mask, [1] * (4 - mask.sinfo.ndim) + list(mask.sinfo.shape))
        gqa = bool(node.kwargs.get("enable_gqa", False))
        k, v = self._sdpa_kv(q, k, "key", gqa), self._sdpa_kv(q, v, "value", gqa)
        return self._attention_core(q, k, v, mask, node.kwargs.get("scale"), causal)

    def _sdpa_kv(self, q: R.Expr, t: R.Expr, name: str, enable_gqa: bool) -> R.Expr:
        """The key or value ``t`` [B', N', S_kv, H] with the query's batch B and heads N, as
        ``nn.attention`` takes them (one batch size and head count for q, k, v: relax's
        InferStructInfoAttention). torch's SDPA broadcasts B' = 1 and N' = 1 over the query's, and
        with ``enable_gqa`` lets N = g * N' query heads share each key / value head (query head n
        reads head n // g: ``repeat_interleave``, the grouped-query attention of LLaMA 2 / Mistral);
        both are ``repeat`` along that axis here. Raises ExportError for any other mismatch."""
        qs, ts = self._shape(q), self._shape(t)
        if len(qs) != 4 or len(ts) != 4:
            return t
        for axis, what in ((0, "batch size"), (1, "head count")):
            if ts[axis] == qs[axis]:
                continue
            grouped = axis == 1 and enable_gqa and 0 < ts[axis] and qs[axis] % ts[axis] == 0
            if ts[axis] != 1 and not grouped:
                raise ExportError(f"scaled_dot_product_attention: the {name}'s {what} {ts[axis]} does not broadcast "
                                  f"to the query's {qs[axis]}" + ("" if axis == 0 or enable_gqa else
                                                                  " (grouped-query heads need enable_gqa=True)"))
            t = self.emit("relax.repeat", [t], repeats=qs[axis] // ts[axis], axis=axis)
        return t

    def _additive_mask(self, mask: R.Expr) -> R.Expr:
        """A bool mask (True = masked out) -> ``where(mask, -inf, 0.0)``; a float mask as is."""
        if mask.sinfo.dtype == "bool":
            ninf, zero = R.const(-math.inf, "float32"), R.const(0.0, "float32")
            return self.emit("relax.where", [mask, ninf, zero])
        return mask

    def _mha(self, mod: nn.MultiheadAttention, query: R.Expr, key: R.Expr, value: R.Expr,
             key_padding_mask: Optional[R.Expr], attn_mask: Optional[R.Expr]) -> Any:
        """``nn.MultiheadAttention`` in eval mode, as ``F.multi_head_attention_forward`` computes it.

        TVM v0.20's ``from_fx`` had no converter for it (a leaf module in FX).  Decomposition (the
        attention core is v0.20's ``scaled_dot_product_attention`` lowering, which MSC fuses into
        ``msc.attention``; torch >= 2.0 computes MHA through the same SDPA):

        * batch_first=False inputs [S, B, E] are permuted to [B, S, E] (and the output back);
        * packed projection (``_in_projection_packed``): self-attention ``linear(x, W_in, b_in)``
          then ``split`` in 3 on the last axis; otherwise per-input linears with the matching
          rows of ``in_proj_weight`` (or ``q/k/v_proj_weight``);
        * heads: ``reshape [B, S, N, H]`` + ``permute_dims [0, 2, 1, 3]`` -> [B, N, S, H];
        * mask: ``attn_mask`` ([S_q, S_kv] -> [1, 1, S_q, S_kv]; [B*N, S_q, S_kv] -> [B, N, S_q,
          S_kv]) and ``key_padding_mask`` ([B, S_kv] -> [B, 1, 1, S_kv]) as additive float masks
          (bool True -> ``-inf``), summed; softmax(q k^T / sqrt(H) + mask) v;
        * merge: ``permute_dims [0, 2, 1, 3]``, ``reshape [B, S, E]``, ``out_proj`` linear.
        """
        if mod.bias_k is not None or mod.bias_v is not None or mod.add_zero_attn:
            raise ExportError("nn.MultiheadAttention with add_bias_kv or add_zero_attn is not supported")
        if mod.dropout and mod.training:
            raise ExportError("nn.MultiheadAttention in training mode with dropout is random")
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.sinfo.ndim != 3:
                raise ExportError(f"nn.MultiheadAttention: the {name} must be batched (3-d), got "
                                  f"{list(t.sinfo.shape)}")
        same_kv, same_qk = key is value, query is key
        if not mod.batch_first:
            perm = [1, 0, 2]
            query = self.emit("relax.permute_dims", [query], axes=perm)
            key = query if same_qk else self.emit("relax.permute_dims", [key], axes=perm)
            value = key if same_kv else self.emit("relax.permute_dims", [value], axes=perm)
        e, heads = mod.embed_dim, mod.num_heads
        hd = e // heads
        bsz, s_q, _ = self._shape(query)
        s_kv = self._shape(key)[1]

        def const_rows(t: Optional[torch.Tensor], lo: int, hi: int) -> Optional[R.Constant]:
            return None if t is None else R.Constant(to_numpy(t)[lo:hi].copy())

        if mod._qkv_same_embed_dim and same_qk and same_kv:
            qkv = self._linear_impl(query, self._param(mod.in_proj_weight), self._param(mod.in_proj_bias))
            parts = self._split_impl(qkv, 3, -1)
            q, k, v = (self.bb.emit(R.TupleGetItem(parts, i)) for i in range(3))
        else:
            if mod._qkv_same_embed_dim:
                w = mod.in_proj_weight
                ws = [const_rows(w, 0, e), const_rows(w, e, 2 * e), const_rows(w, 2 * e, 3 * e)]
            else:
                ws = [self._param(mod.q_proj_weight), self._param(mod.k_proj_weight), self._param(mod.v_proj_weight)]
            b = mod.in_proj_bias
            bs = [const_rows(b, 0, e), const_rows(b, e, 2 * e), const_rows(b, 2 * e, 3 * e)]
            q = self._linear_impl(query, ws[0], bs[0])
            k = self._linear_impl(key, ws[1], bs[1])
            v = self._linear_impl(value, ws[2], bs[2])

        def heads_first(t: R.Expr, s: int) -> R.Expr:
            t = self._reshape_to(t, [bsz, s, heads, hd])
            return self.emit("relax.permute_dims", [t], axes=[0, 2, 1, 3])

        q, k, v = heads_first(q, s_q), heads_first(k, s_kv), heads_first(v, s_kv)
        bias = None
        if attn_mask is not None:
            bias = self._additive_mask(attn_mask)
            if bias.sinfo.ndim == 2:
                bias = self._reshape_to(bias, [1, 1, s_q, s_kv])
            elif bias.sinfo.ndim == 3:
                bias = self._reshape_to(bias, [bsz, heads, s_q, s_kv])
            else:
                raise ExportError(f"attn_mask must be 2-d or 3-d, got {list(bias.sinfo.shape)}")
        if key_padding_mask is not None:
            if list(key_padding_mask.sinfo.shape) != [bsz, s_kv]:
                raise ExportError(f"key_padding_mask must be [{bsz}, {s_kv}], got {list(key_padding_mask.sinfo.shape)}")
            kpm = self._reshape_to(self._additive_mask(key_padding_mask), [bsz, 1, 1, s_kv])
            bias = kpm if bias is None else self.emit("relax.add", [bias, kpm])
        out = self._attention_core(q, k, v, bias)
        out = self.emit("relax.permute_dims", [out], axes=[0, 2, 1, 3])
        out = self._reshape_to(out, [bsz, s_q, e])
        out = self._linear_impl(out, self._param(mod.out_proj.weight), self._param(mod.out_proj.bias))
        if not mod.batch_first:
            out = self.emit("relax.permute_dims", [out], axes=[1, 0, 2])
        return out

    def _optional_tensor(self, node: fx.Node, idx: int, name: str) -> Optional[R.Expr]:
        v = self._retrieve(_arg(node, idx, name))
        if v is not None and not (isinstance(v, R.Expr) and isinstance(v.sinfo, R.TensorSI)):
            raise ExportError(f"{name} must be a tensor or None, got {type(v).__name__}")
        return v

    def _mha_module(self, node: fx.Node) -> Any:
        mod = self.named_modules[node.target]
        for user in node.users:  # the averaged attention weights (output 1) are not computed
            if user.op == "call_function" and user.target is operator.getitem and user.args[1] != 0 and user.users:
                raise ExportError("the attention-weights output of nn.MultiheadAttention is not supported "
                                  "(call it with need_weights=False and use output 0 only)")
        q, k, v = self._x(node, 0, "query"), self._x(node, 1, "key"), self._x(node, 2, "value")
        out = self._mha(mod, q, k, v, self._optional_tensor(node, 3, "key_padding_mask"),
                        self._optional_tensor(node, 5, "attn_mask"))
        return (out, None)

    def _activation(self, act: Any, x: R.Expr) -> Any:
        if act is F.relu or isinstance(act, nn.ReLU):
            return self.emit("relax.nn.relu", [x])
        if act is F.gelu or (isinstance(act, nn.GELU) and act.approximate == "none"):
            return self.emit("relax.nn.gelu", [x])
        if isinstance(act, nn.GELU) and act.approximate == "tanh":
            return self.emit("relax.nn.gelu_tanh", [x])
        raise ExportError(f"transformer activation {act!r} is not supported (relu, gelu)")

    def _layer_norm_of(self, mod: nn.LayerNorm, x: R.Expr) -> Any:
        affine = mod.elementwise_affine
        return self._layer_norm_impl(x, mod.normalized_shape, self._param(mod.weight) if affine else None,
                                     self._param(mod.bias) if affine else None, mod.eps)

    def _encoder_layer(self, layer: nn.TransformerEncoderLayer, x: R.Expr, mask: Optional[R.Expr],
                       kpm: Optional[R.Expr]) -> Any:
        """``nn.TransformerEncoderLayer.forward`` (eval): post-norm ``x = norm1(x + sa(x)); x =
        norm2(x + ff(x))`` or pre-norm ``x = x + sa(norm1(x)); x = x + ff(norm2(x))``, with
        ``ff = linear2(activation(linear1(x)))``; dropouts are the identity."""
        def sa(y: R.Expr) -> Any:
            return self._mha(layer.self_attn, y, y, y, kpm, mask)

        def ff(y: R.Expr) -> Any:
            h = self._linear_impl(y, self._param(layer.linear1.weight), self._param(layer.linear1.bias))
            h = self._activation(layer.activation, h)
            return self._linear_impl(h, self._param(layer.linear2.weight), self._param(layer.linear2.bias))

        if layer.norm_first:
            x = self.emit("relax.add", [x, sa(self._layer_norm_of(layer.norm1, x))])
            return self.emit("relax.add", [x, ff(self._layer_norm_of(layer.norm2, x))])
        x = self._layer_norm_of(layer.norm1, self.emit("relax.add", [x, sa(x)]))
        return self._layer_norm_of(layer.norm2, self.emit("relax.add", [x, ff(x)]))

    def _encoder_layer_module(self, node: fx.Node) -> Any:
        layer = self.named_modules[node.target]
        return self._encoder_layer(layer, self._x(node, 0, "src"), self._optional_tensor(node, 1, "src_mask"),
                                   self._optional_tensor(node, 2, "src_key_padding_mask"))

    def _encoder_module(self, node: fx.Node) -> Any:
        """``nn.TransformerEncoder``: the layers in turn, then ``norm`` (the dense computation).

        torch 1.13's nested-tensor fast path (eval, batch_first, a key padding mask, ...) returns
        zeros at padded positions and trims the sequence to the longest unpadded one -- a
        data-dependent shape no static graph has; :func:`msc_export.exporter.golden_data`
        therefore computes golden outputs with ``enable_nested_tensor=False`` (same values at
        every unpadded position)."""
        mod = self.named_modules[node.target]
        x = self._x(node, 0, "src")
        mask = self._optional_tensor(node, 1, "mask")
        kpm = self._optional_tensor(node, 2, "src_key_padding_mask")
        for layer in mod.layers:
            if not isinstance(layer, nn.TransformerEncoderLayer):
                raise ExportError(f"nn.TransformerEncoder of {type(layer).__name__} layers is not supported")
            x = self._encoder_layer(layer, x, mask, kpm)
        if mod.norm is not None:
            if not isinstance(mod.norm, nn.LayerNorm):
                raise ExportError(f"nn.TransformerEncoder norm {type(mod.norm).__name__} is not supported")
            x = self._layer_norm_of(mod.norm, x)
        return x

    # ------------------------------------------------------------------ torchvision Swin Transformer

    def _relative_position_bias(self, node: fx.Node) -> Any:
        """``_get_relative_position_bias(table, index, window_size)``: ``take(table, index, 0)``,
        ``reshape [N, N, -1]``, ``permute_dims [2, 0, 1]``, ``expand_dims 0`` (all constants: folded)."""
        table = self._x(node, 0, "relative_position_bias_table")
        index = self._x(node, 1, "relative_position_index")
        ws = self._retrieve(_arg(node, 2, "window_size"))
        n = int(ws[0]) * int(ws[1])
        bias = self.emit("relax.take", [table, index], axis=0)
        bias = self._reshape_to(bias, [n, n, -1])
        bias = self.emit("relax.permute_dims", [bias], axes=[2, 0, 1])
        return self.emit("relax.expand_dims", [bias], axis=[0])

    def _patch_merging_pad(self, node: fx.Node) -> Any:
        """``_patch_merging_pad(x)``: pad H, W to even, then ``cat`` of the four 2x2 phases."""
        x = self._x(node)
        shape = self._shape(x)
        h, w = shape[-3], shape[-2]
        x = self._pad_impl(x, [0, 0, 0, w % 2, 0, h % 2], 0.0)
        parts = [self._index_tensor(x, (Ellipsis, slice(hb, None, 2), slice(wb, None, 2), slice(None)))
                 for hb, wb in ((0, 0), (1, 0), (0, 1), (1, 1))]
        return self.emit("relax.concat", [R.Tuple(parts)], axis=-1)

    def _shifted_window_attention(self, node: fx.Node) -> Any:
        """torchvision's ``shifted_window_attention`` (Swin v1), following its body line by line.

        Window partition/merge are 6-d ``reshape``/``permute_dims``; the cyclic shift is
        :meth:`_roll_impl`; the shifted-window mask depends only on shapes, so it is computed here
        (numpy, exactly as the function builds it) and added as a constant; softmax(q k^T + bias
        (+ mask)) v with ``q`` pre-scaled by head_dim^-0.5 as torch does."""
        names = ["input", "qkv_weight", "proj_weight", "relative_position_bias", "window_size", "num_heads",
                 "shift_size", "attention_dropout", "dropout", "qkv_bias", "proj_bias", "logit_scale"]
        a = {n: self._retrieve(_arg(node, i, n)) for i, n in enumerate(names)}
        if a["logit_scale"] is not None:
            raise ExportError("Swin V2 cosine attention (logit_scale) is not supported")
        for key in ("attention_dropout", "dropout"):
            if a[key]:
                raise ExportError(f"shifted_window_attention with {key}={a[key]} is random (torchvision "
                                  "applies F.dropout with training=True)")
        x = a["input"]
        ws = [int(v) for v in a["window_size"]]
        heads = int(a["num_heads"])
        bsz, h, w, c = self._shape(x)
        pad_r = (ws[1] - w % ws[1]) % ws[1]
        pad_b = (ws[0] - h % ws[0]) % ws[0]
        x = self._pad_impl(x, [0, 0, 0, pad_r, 0, pad_b], 0.0)
        _, ph, pw, _ = self._shape(x)
        shift = [int(v) for v in a["shift_size"]]
        if ws[0] >= ph:
            shift[0] = 0
        if ws[1] >= pw:
            shift[1] = 0
        if sum(shift) > 0:
            x = self._roll_impl(x, [-shift[0], -shift[1]], [1, 2])
        nw = (ph // ws[0]) * (pw // ws[1])
        n = ws[0] * ws[1]
        x = self._reshape_to(x, [bsz, ph // ws[0], ws[0], pw // ws[1], ws[1], c])
        x = self.emit("relax.permute_dims", [x], axes=[0, 1, 3, 2, 4, 5])
        x = self._reshape_to(x, [bsz * nw, n, c])
        qkv = self._linear_impl(x, a["qkv_weight"], a["qkv_bias"])
        qkv = self._reshape_to(qkv, [bsz * nw, n, 3, heads, c // heads])
        qkv = self.emit("relax.permute_dims", [qkv], axes=[2, 0, 3, 1, 4])
        q, k, v = (self._index_tensor(qkv, (i,)) for i in range(3))
        q = self.emit("relax.multiply", [q, R.const((c // heads) ** -0.5, q.sinfo.dtype)])
        attn = self.emit("relax.matmul", [q, self.emit("relax.permute_dims", [k], axes=[0, 1, 3, 2])],
                         out_dtype=_out_dtype(q))
        attn = self.emit("relax.add", [attn, a["relative_position_bias"]])
        if sum(shift) > 0:
            mask = np.zeros((ph, pw), dtype=np.float32)
            h_slices = ((0, -ws[0]), (-ws[0], -shift[0]), (-shift[0], None))
            w_slices = ((0, -ws[1]), (-ws[1], -shift[1]), (-shift[1], None))
            count = 0
            for hs in h_slices:
                for wsl in w_slices:
                    mask[hs[0]:hs[1], wsl[0]:wsl[1]] = count
                    count += 1
            mask = mask.reshape(ph // ws[0], ws[0], pw // ws[1], ws[1]).transpose(0, 2, 1, 3).reshape(nw, n)
            mask = mask[:, None, :] - mask[:, :, None]
            mask = np.where(mask != 0, np.float32(-100.0), np.float32(0.0)).astype(np.float32)
            attn = self._reshape_to(attn, [bsz, nw, heads, n, n])
            attn = self.emit("relax.add", [attn, R.Constant(mask[None, :, None])])
            attn = self._reshape_to(attn, [-1, heads, n, n])
        attn = self.emit("relax.nn.softmax", [attn], axis=-1)
        x = self.emit("relax.matmul", [attn, v], out_dtype=_out_dtype(attn))
        x = self.emit("relax.permute_dims", [x], axes=[0, 2, 1, 3])
        x = self._reshape_to(x, [bsz * nw, n, c])
        x = self._linear_impl(x, a["proj_weight"], a["proj_bias"])
        x = self._reshape_to(x, [bsz, ph // ws[0], pw // ws[1], ws[0], ws[1], c])
        x = self.emit("relax.permute_dims", [x], axes=[0, 1, 3, 2, 4, 5])
        x = self._reshape_to(x, [bsz, ph, pw, c])
        if sum(shift) > 0:
            x = self._roll_impl(x, [shift[0], shift[1]], [1, 2])
        if pad_r or pad_b:
            x = self._index_tensor(x, (slice(None), slice(None, h), slice(None, w), slice(None)))
        return x


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
