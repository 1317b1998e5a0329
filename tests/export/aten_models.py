"""Models that exercise the ATen ops the torch.export importer maps, one family per model, with
their example inputs; shared by test_export_path.py and scripts/check_models.py (which also
generates them for every backend). Each entry of MODELS: name -> (module factory, input shapes,
input dtypes, inputs)."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class AtenFamilies(nn.Module):
    """One model touching the ATen ops the importer maps beyond the CNN and attention above."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.register_buffer("scale", torch.linspace(0.5, 1.5, 6))

    def forward(self, ids, x):
        e = self.emb(ids) * self.scale                       # embedding, mul.Tensor (buffer)
        h = torch.cat([e, x], dim=1)                         # cat
        h = torch.where(h > 0, h, 0.1 * h)                   # gt.Scalar, mul.Scalar, where.self
        a, b = torch.split(h, [2, 4], dim=2)                 # split_with_sizes
        m = torch.amax(a, dim=-1, keepdim=True) - b.mean(-1, keepdim=True)  # amax, mean.dim, sub
        s = torch.softmax(h[:, 1:, :], dim=-1)               # slice.Tensor, _softmax
        t = h.select(1, 0).unsqueeze(1).expand(-1, 3, -1)     # select.int, unsqueeze, expand
        u = torch.tril(torch.ones(6, 6)) @ h.transpose(1, 2)  # full (folded), tril, bmm / matmul
        p = F.pad(h, (1, 1), value=0.5).sum(-1)               # constant_pad_nd, sum.dim_IntList
        r = torch.rsqrt(h.abs() + 1) + torch.erf(h).exp() - torch.sigmoid(-h).pow(2)  # unary ops
        return m, s, t.clamp(-1, 1), u, p, r, torch.index_select(h, 1, torch.tensor([2, 0]))



class AtenMore(nn.Module):
    """The core ATen ops with an MSC optype beyond AtenFamilies: unary / binary math, bit ops,
    reductions with indices, cumsum, flip, topk, group_norm, upsampling, padding modes, scatter."""

    def __init__(self):
        super().__init__()
        self.gn = torch.nn.GroupNorm(2, 4)
    def forward(self, x, i):
        a = torch.acosh(x.abs() + 1.5) + torch.asinh(x) + torch.atanh(x.tanh() * 0.5) + torch.round(x * 3)
        b = torch.log2(x.abs() + 1) + torch.log10(x.abs() + 1) + torch.log1p(x.abs()) + torch.expm1(x) + torch.reciprocal(x.abs() + 1)
        c = torch.remainder(x, 0.7) + torch.div(x, 0.3, rounding_mode="floor") + torch.pow(2.0, x)
        d = F.leaky_relu(x, 0.2) + F.log_softmax(x, -1) + torch.cumsum(x, 2) + torch.flip(x, [1, 3])
        v, ix = x.max(dim=3)
        m, _ = x.min(dim=2, keepdim=True)
        e = torch.var(x, dim=[2, 3], keepdim=True) + x.std(3, keepdim=True) + x.prod(1, keepdim=True) + m + x.mean() + x.amin(1, keepdim=True)
        t, ti = torch.topk(x, 2, dim=-1)
        g = self.gn(x) + F.interpolate(x, scale_factor=2)[..., ::2, ::2] + F.interpolate(x, size=(5, 5), mode="bilinear")[..., :4, :5].mean()
        r = x.repeat(1, 2, 1, 1)[:, :4] + F.pad(x, (1, 1, 1, 1), mode="reflect")[..., 1:-1, 1:-1] + F.pad(x, (1, 1, 1, 1), mode="replicate")[..., 1:-1, 1:-1]
        s = torch.scatter(x, 3, i, 0.5) + torch.scatter_add(x, 3, i, x[..., :2])
        bits = torch.bitwise_and(i, 3) | (i ^ 1) | ~i
        nan = torch.isnan(x) | torch.isinf(x) | torch.logical_xor(x > 0, x < 0.5)
        return a + b + c + d + e + g + r + s, v, ix, t, ti, bits, nan, torch.argmax(x, 1), x.argmin(-1, keepdim=True)


class AtenComposed(nn.Module):
    """The core ATen ops without an MSC optype of their own, composed of others: elu, trunc, fmod
    (float and int), any, slice_scatter, select_scatter, index with one index tensor; and the 1-D
    average pools."""

    def forward(self, x, i):
        a = F.elu(x, 0.7) + torch.trunc(x * 3) + torch.fmod(x * 5, 1.5)
        b = torch.fmod(i - 4, 3) + torch.fmod(i, -2)
        c = x.clone()
        c[:, 1:3] = 2.0                                   # slice_scatter
        c[:, :, 0] = x[:, :, 1]                           # select_scatter
        d = x[:, i[0, :2]]                                # index.Tensor (one index tensor)
        p = F.avg_pool1d(x, 3, 2, 1) + F.adaptive_avg_pool1d(x, 3)  # 1-D pools: [2, 4, 3]
        return a + c, b, torch.any(x > 1.5, dim=2), torch.any(x > 0), d, p


def _families():
    torch.manual_seed(0)
    ids = np.array([[1, 4, 7]], dtype=np.int64)
    x = np.random.default_rng(0).standard_normal((1, 2, 6)).astype(np.float32)
    return AtenFamilies().eval(), [[1, 3], [1, 2, 6]], ["int64", "float32"], [ids, x]


def _more():
    torch.manual_seed(0)
    x = np.random.default_rng(0).standard_normal((1, 4, 4, 5)).astype(np.float32)
    i = np.random.default_rng(1).integers(0, 5, (1, 4, 4, 2)).astype(np.int64)
    return AtenMore().eval(), [[1, 4, 4, 5], [1, 4, 4, 2]], ["float32", "int64"], [x, i]


def _composed():
    torch.manual_seed(0)
    x = np.random.default_rng(2).standard_normal((2, 4, 5)).astype(np.float32)
    i = np.random.default_rng(3).integers(0, 4, (2, 5)).astype(np.int64)
    return AtenComposed().eval(), [[2, 4, 5], [2, 5]], ["float32", "int64"], [x, i]


MODELS = {"aten_families": _families, "aten_more": _more, "aten_composed": _composed}
