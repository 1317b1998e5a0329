"""Tiny models for the torch.fx path's coverage of TVM's ``from_fx`` convert map
(tests/python/test_fx_coverage.py): one model per family, each exercising the modules, functions
and Tensor methods of that family. ``CASES``: name -> (model factory, input shapes, input dtypes).
Works on torch 1.13 (Debian) and torch 2.x (the venv)."""

import operator

import torch
import torch.fx
import torch.nn.functional as F
from torch import nn


class Unary(nn.Module):
    """abs, trig and hyperbolic functions, erf, sign, square, round, trunc, reciprocal, log2/10/1p."""

    def forward(self, x):
        a = torch.abs(x) + x.abs() + torch.sin(x) + x.cos() + torch.tan(x * 0.3) + torch.atan(x) + x.erf()
        b = torch.asin(torch.tanh(x)) + torch.acos(torch.tanh(x) * 0.9) + torch.asinh(x) + torch.sinh(x)
        c = torch.cosh(x * 0.5) + torch.acosh(x.abs() + 1.5) + torch.atanh(torch.tanh(x) * 0.5)
        d = torch.sign(x) + torch.square(x) + torch.round(x * 3) + torch.trunc(x * 3) + x.ceil() + torch.floor(x)
        e = torch.reciprocal(x.abs() + 1) + torch.log2(x.abs() + 1) + (x.abs() + 1).log10() + torch.log1p(x.abs())
        f = torch.round(x, decimals=1) + torch.log(x.abs() + 2)
        return a, b, c, d, e, f


class Activations(nn.Module):
    """ELU, CELU, SELU, LeakyReLU, Softplus, LogSoftmax, PReLU modules and their functions."""

    def __init__(self):
        super().__init__()
        self.elu, self.celu, self.selu = nn.ELU(0.7), nn.CELU(1.3), nn.SELU()
        self.leaky, self.softplus, self.logsm = nn.LeakyReLU(0.2), nn.Softplus(2.0, 3.0), nn.LogSoftmax(1)
        self.prelu, self.prelu1 = nn.PReLU(4), nn.PReLU()
        with torch.no_grad():
            self.prelu.weight.copy_(torch.tensor([0.1, 0.2, 0.3, 0.4]))

    def forward(self, x):
        m = self.elu(x) + self.celu(x) + self.selu(x) + self.leaky(x) + self.softplus(x) + self.logsm(x)
        m = m + self.prelu(x) + self.prelu1(x)
        f = F.elu(x, 0.5) + F.celu(x, 2.0) + F.selu(x) + F.leaky_relu(x, 0.3) + F.softplus(x) + torch.selu(x)
        f = f + F.log_softmax(x, dim=-1) + x.log_softmax(1) + F.prelu(x, torch.tensor([0.25]))
        return m, f


class Binary(nn.Module):
    """atan2, fmod, rsub, lerp, max/min (binary, reduce, dim), outer, logical and bitwise ops, shifts."""

    def forward(self, x, y, i, j):
        a = torch.atan2(x, y) + torch.fmod(x * 4, 1.5) + torch.rsub(x, 2.0) + torch.lerp(x, y, 0.3)
        b = torch.max(x, y) - torch.min(x, y) + x.max(y)
        mx, arg = torch.max(x, 1)
        mn = x.min(dim=0, keepdim=True).values
        c = torch.max(x) + torch.min(y) + mx.sum() + mn.sum()
        o = torch.outer(x[0], y[1]) + x[1].outer(y[0])
        bits = (i & j) + (i | j) + (i ^ j) + torch.bitwise_or(i, 3) + (i << 2) + (j >> 1) + torch.fmod(i - 5, 3)
        bits = bits + ~torch.bitwise_not(i)
        logic = torch.logical_and(x > 0, y > 0) | torch.logical_or(x > 1, y < -1)
        logic = torch.logical_xor(logic, x < y)
        return a, b, c, arg, o, bits, logic


class Reductions(nn.Module):
    """argmax/argmin, prod, var, std, norm, cumsum, cumprod, topk, sort, argsort, numel."""

    def forward(self, x):
        a = torch.argmax(x, 1) + x.argmin(-1, keepdim=True).squeeze(-1)
        b = torch.prod(x, 1) + x.prod(0).sum() + torch.var(x, 1) + x.std(0, unbiased=False).sum() + torch.std(x)
        c = torch.norm(x) + x.norm(dim=1).sum() + torch.norm(x, 1, dim=0).sum() + torch.norm(x, float("inf"))
        d = torch.cumsum(x, 1) + x.cumprod(0)
        v, k = torch.topk(x, 2, dim=1)
        s, si = torch.sort(x, dim=1, descending=True)
        asort = torch.argsort(x, dim=0)
        n = x.numel() + x.shape[0]
        return a, b, c, d * n, v, k, s, si, asort


class NN(nn.Module):
    """Conv1d as F.conv1d, ConvTranspose1d/2d and their functions, GroupNorm, InstanceNorm1d/2d,
    AvgPool1d, MaxPool1d, AdaptiveAvgPool1d, PixelShuffle, addmm, baddbmm, einsum, interpolate."""

    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(6, 4, 3) * 0.3)
        self.ct1 = nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1)
        self.ct2 = nn.ConvTranspose2d(4, 8, 3, stride=2, padding=1, groups=2)
        self.wt2 = nn.Parameter(torch.randn(4, 3, 2, 2) * 0.3)
        self.gn = nn.GroupNorm(2, 4)
        self.in1, self.in2 = nn.InstanceNorm1d(4, affine=True), nn.InstanceNorm2d(4)
        self.ap, self.mp = nn.AvgPool1d(3, 2, padding=1), nn.MaxPool1d(2)
        self.aap = nn.AdaptiveAvgPool1d(3)
        self.ps = nn.PixelShuffle(2)
        self.m = nn.Parameter(torch.randn(8, 8))

    def forward(self, x, s):
        y = F.conv1d(s, self.w1, None, 1, 1) + torch.conv1d(s, self.w1, padding=1)
        t1 = self.ct1(s) + F.conv_transpose1d(s, self.ct1.weight, stride=2, padding=1, output_padding=1)
        t2 = self.ct2(x) + F.conv_transpose2d(x, self.ct2.weight, None, 2, 1, 0, 2)[:, :, :, :]
        t3 = F.conv_transpose2d(x, self.wt2)
        g = self.gn(x) + self.in2(x) + F.group_norm(x, 4)
        p = self.ap(self.in1(s)) + F.avg_pool1d(s, 3, 2, 1) + F.max_pool1d(s, 3, 2, 1)
        a = self.aap(s) + F.adaptive_avg_pool1d(s, 3)
        ps = self.ps(x) + F.pixel_shuffle(x, 2)
        flat = x.flatten(1)[:, :8]
        mm = torch.addmm(flat[0], flat, self.m, beta=0.5, alpha=2.0) + flat.addmm(flat, self.m)
        bm = torch.baddbmm(x[:, 0], x[:, 1], x[:, 2])
        es = torch.einsum("bchw,bdhw->bcd", x, x) + torch.einsum("ij->ji", x[0, 0])[0, 0]
        up = F.interpolate(x, scale_factor=2, mode="nearest") + F.interpolate(x, size=(8, 8), mode="bilinear",
                                                                               align_corners=False)
        up2 = F.interpolate(x, size=(6, 7), mode="bilinear", align_corners=True)
        return y, t1, t2, t3, g, p, self.mp(s), a, ps, mm, bm, es, up, up2


class Indexing(nn.Module):
    """broadcast_to, clone, flip, repeat, tile, gather, index_select, take, scatter, slice_scatter,
    select, narrow, unbind, diagonal, meshgrid, masked_scatter, one_hot, type_as, item, isin,
    bucketize, is_floating_point, sym sizes."""

    def forward(self, x, idx):
        idx = idx % 3
        a = torch.broadcast_to(x[:, :1], (3, 4)) + x.clone() + torch.flip(x, [0, 1]) + x.flip(1)
        b = x.repeat(2, 1)[:3] + torch.tile(x, (1, 2))[:, :4]
        g = torch.gather(x, 1, idx) + x.gather(0, idx[:, :4] % 3)
        sel = torch.index_select(x, 1, idx[0]) + x.index_select(0, idx[:, 0] % 3)[:, :4]
        tk = torch.take(x, idx) + x.take(idx + 1)
        sc = torch.scatter(x, 1, idx[:, :1], 5.0) + x.scatter(1, idx[:, :1] % 4, torch.ones(3, 1))
        ss = torch.slice_scatter(x, torch.zeros(3, 2), dim=1, start=1, end=3, step=1)
        se = torch.select(x, 1, 2) + x.select(0, -1)[:3] + torch.narrow(x, 1, 1, 3)[:, 0] + x.narrow(0, 0, 1)[0, :3]
        u0, u1, u2 = torch.unbind(x)
        un = u0 + u1 * 2 + x.unbind(1)[3][0] * u2
        dg = torch.diagonal(x) + x.diagonal(1) + torch.diagonal(x.reshape(1, 3, 4), 0, 1, 2)[0]
        gx, gy = torch.meshgrid(x[0], x[:, 0], indexing="ij")
        mx, my = torch.meshgrid(x[0], x[:, 0], indexing="xy")
        ms = x.masked_scatter(x > 0, torch.arange(12, dtype=torch.float32).reshape(3, 4) * 0.5)
        oh = F.one_hot(idx % 4, 4).type_as(x).sum(1)
        it = x[0, :1].item() * x
        isin = torch.isin(idx, idx[0])
        bk = torch.bucketize(x, torch.tensor([-1.0, 0.0, 0.5]))
        bk2 = torch.bucketize(x, torch.tensor([-1.0, 0.0, 0.5]), right=True, out_int32=True)
        fp = x * x.is_floating_point()
        return a, b, g, sel, tk, sc, ss, se, un, dg, gx + gy, mx * my, ms, oh, it, isin, bk, bk2, fp


class InPlace(nn.Module):
    """fill_, zero_, copy_, tril_, triu_, index_put_, bitwise_or_, fill, masked_fill_ on tensors
    made in the graph (the result is what later uses see)."""

    def forward(self, x, i):
        a = x * 1.0
        a.tril_(1)
        b = x + 1.0
        b.triu_()
        c = x * 2
        c.fill_(3.0)
        d = x + 0
        d.zero_()
        e = x - 1
        e.copy_(x[0])
        f = x * 1
        f.index_put_((i[:2, 0] % 3,), torch.tensor(7.0))
        h = x * 1
        h.index_put_((i[:2, 0] % 3, i[:2, 1] % 4), x[0, :2], accumulate=True)
        k = i + 0
        k.bitwise_or_(1)
        return a, b, c, d + x, e, f, h, k, torch.fill(x, 2.0) + x


def creation_graph():
    """A hand-built FX graph (torch's factory functions run eagerly under fx.symbolic_trace: they
    take no tensor, so only a dynamo-captured or hand-built graph holds them) calling arange, full,
    ones, zeros, empty, empty_like, new_ones, new_zeros, eye, linspace and tensor with sizes taken
    from the input's shape."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    n, m = g.call_method("size", (x, 0)), g.call_method("size", (x, 1))
    f = g.call_function
    a = f(operator.add, (x, f(torch.arange, (m,))))
    a = f(operator.add, (a, f(torch.arange, (1, f(operator.add, (m, 1))), {"dtype": torch.float32})))
    a = f(operator.add, (a, f(torch.full, ((n, m), 0.5))))
    b = f(operator.add, (f(torch.ones, (n, m)), f(torch.zeros, ((n, m),))))
    b = f(operator.add, (b, f(operator.mul, (g.call_method("zero_", (f(torch.empty, (n, m)),)), 0))))
    b = f(operator.add, (b, f(operator.mul, (f(torch.empty_like, (x,)), 0))))
    c = f(operator.add, (g.call_method("new_ones", (x, n, m)), g.call_method("new_zeros", (x, (n, m)))))
    c = f(operator.add, (c, f(operator.add, (f(torch.eye, (n, m)), f(torch.linspace, (0, 1, m))))))
    d = f(operator.mul, (x, f(torch.tensor, (m,))))
    d = f(operator.add, (d, g.call_method("sum", (f(torch.tensor, ([n, m],), {"dtype": torch.float32}),))))
    g.output((a, b, c, d))
    return torch.fx.GraphModule(nn.Module(), g)


class Losses(nn.Module):
    """CrossEntropyLoss (mean / sum / none, class weights, ignore_index) and F.cross_entropy with
    class-probability targets."""

    def __init__(self):
        super().__init__()
        self.ce = nn.CrossEntropyLoss()
        self.ce_w = nn.CrossEntropyLoss(weight=torch.linspace(0.5, 2.0, 10), ignore_index=3, reduction="sum")

    def forward(self, x, t):
        return (self.ce(x, t), self.ce_w(x, t), F.cross_entropy(x, t, reduction="none"),
                F.cross_entropy(x, torch.softmax(x * 0.5, 1)))


#: name -> (factory, input shapes, input dtypes)
CASES = {
    "unary": (Unary, [[3, 5]], None),
    "activations": (Activations, [[2, 4, 5]], None),
    "binary": (Binary, [[3, 4], [3, 4], [3, 4], [3, 4]], ["float32", "float32", "int64", "int64"]),
    "reductions": (Reductions, [[3, 4]], None),
    "nn": (NN, [[2, 4, 4, 4], [2, 4, 9]], None),
    "indexing": (Indexing, [[3, 4], [3, 4]], ["float32", "int64"]),
    "inplace": (InPlace, [[3, 4], [3, 4]], ["float32", "int64"]),
    "creation": (creation_graph, [[3, 4]], None),
    "losses": (Losses, [[6, 10], [6]], ["float32", "int64"]),
}
