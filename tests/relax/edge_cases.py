"""Edge cases of the relax snippets that the per-op cases (tests/ops/cases/cases_ops.py) do not reach: the
branches each snippet takes for an attr value, a dtype, a missing weight or a dynamic dim, where the
relax backend writes an op differently (see templates/relax/README.md). Same conventions as
graphs/cases.py (cases_base.Builder: seeded inputs, PyTorch as the reference, attrs as MSC wrote
them); conftest generates each as project "edge/<name>" (graph JSON written at test time), so
test_relax_projects.py runs them on the fake TVM and test_real_tvm.py on a real one.
"""
import torch
import torch.nn.functional as F

from cases_base import Builder

CASES = {}


def case(fn):
    CASES[fn.__name__[len("case_"):]] = fn
    return fn


def _scalar(b, name, value, dtype=torch.float32):
    w = b.weight([], value=torch.tensor(value, dtype=dtype))
    text = ("%f" % value) if dtype.is_floating_point else str(int(value))
    return b.node(name, "constant", [], lambda const: const, attrs={"scalar": text}, weights={"const": w})


@case
def case_split_one_section():
    """split into 1 section: relax returns the tensor, the snippet a 1-tuple (get_item follows)."""
    b = Builder()
    x = b.input("x", [2, 4])
    s = b.node("split", "split", [x], lambda v: (v,), attrs={"indices_or_sections": "1", "axis": "1"})
    g = b.node("split.0", "get_item", [s], lambda v: v, attrs={"index": "0"})
    out = b.node("relu", "nn.relu", [g], F.relu)
    return b.finish([out])


@case
def case_take_modes():
    """take with negative indices (fast: from the end), wrap (modulo) and clip (clamped), and a
    null axis (of the flattened x)."""
    b = Builder()
    x = b.input("x", [5, 4])
    idx = b.input("idx", [3], dtype=torch.int64, value=torch.tensor([-1, 0, 3]))
    far = b.input("far", [4], dtype=torch.int32, value=torch.tensor([-7, 9, 2, 4], dtype=torch.int32))
    fast = b.node("take", "take", [x, idx], lambda v, i: v[i % 5], attrs={"axis": "0", "mode": "fast"})
    wrap = b.node("take_1", "take", [x, far], lambda v, i: v[:, (i % 4).long()], attrs={"axis": "1", "mode": "wrap"})
    clip = b.node("take_2", "take", [x, far], lambda v, i: v[i.clamp(0, 4).long()], attrs={"axis": "0", "mode": "clip"})
    flat = b.node("take_3", "take", [x, idx], lambda v, i: v.reshape(-1)[i % 20], attrs={"axis": "", "mode": "fast"})
    return b.finish([fast, wrap, clip, flat])


@case
def case_nan_inf_checks_on_ints():
    """isnan / isinf / isfinite of an integer tensor (no NaN or inf: constant bools)."""
    b = Builder()
    x = b.input("x", [2, 3], dtype=torch.int32, value=torch.arange(6, dtype=torch.int32).reshape(2, 3))
    outs = [b.node(op, op, [x], getattr(torch, op)) for op in ("isnan", "isinf", "isfinite")]
    return b.finish(outs)


@case
def case_nan_inf_checks_on_specials():
    """isnan / isinf / isfinite on NaN, +-inf and ordinary values (float32 and float16)."""
    b = Builder()
    values = torch.tensor([[float("nan"), float("inf"), -float("inf"), 0.0, -2.5, 3e38]])
    x = b.input("x", [1, 6], value=values)
    h = b.input("h", [1, 6], dtype=torch.float16, value=torch.tensor([[float("nan"), float("inf"), -float("inf"), 0.0, -2.5, 6e4]],
                                                                     dtype=torch.float16))
    outs = [b.node(op + "_" + n, op, [t], getattr(torch, op)) for n, t in (("f32", x), ("f16", h))
            for op in ("isnan", "isinf", "isfinite")]
    return b.finish(outs)


@case
def case_round_ties():
    """round: ties to even in float32 and float16, integers unchanged."""
    b = Builder()
    x = b.input("x", [8], value=torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4999, 1e8 + 1]))
    h = b.input("h", [4], dtype=torch.float16, value=torch.tensor([0.5, 1.5, 2.5, -3.5], dtype=torch.float16))
    i = b.input("i", [3], dtype=torch.int32, value=torch.tensor([-3, 0, 7], dtype=torch.int32))
    outs = [b.node("round", "round", [x], torch.round),
            b.node("round_1", "round", [h], lambda v: torch.round(v.float()).half()),
            b.node("round_2", "round", [i], lambda v: v)]
    return b.finish(outs)


@case
def case_attention_bool_and_3d_mask():
    """msc.attention with a bool mask (true = attend) and with a 3-D additive mask."""
    b = Builder()
    q = b.input("q", [1, 2, 3, 4])
    k = b.input("k", [1, 2, 5, 4])
    v = b.input("v", [1, 2, 5, 4])
    keep = torch.rand(1, 2, 3, 5, generator=b.gen) > 0.3
    keep[..., 0] = True  # every row attends to something
    m = b.input("m", [1, 2, 3, 5], dtype=torch.bool, value=keep)
    add = b.input("add", [2, 3, 5])

    def sdpa(qq, kk, vv, mask):
        return F.softmax(qq @ kk.transpose(-1, -2) / 2.0 + mask, -1) @ vv

    attrs = {"axes": "0,2,1,3", "axes_1": "0,2,1,3", "axes_2": "0,2,1,3", "axes_3": "0,2,1,3", "scale": "",
             "causal_mask": ""}
    a = b.node("attention", "msc.attention", [q, k, v, m],
               lambda qq, kk, vv, mm: sdpa(qq, kk, vv, torch.where(mm, 0.0, float("-inf"))), attrs=attrs)
    c = b.node("attention_1", "msc.attention", [q, k, v, add], lambda qq, kk, vv, aa: sdpa(qq, kk, vv, aa), attrs=attrs)
    return b.finish([a, c])


@case
def case_conv1d_transpose_dilated():
    """conv1d_transpose with dilation 2 (written on the zero-inserted kernel) and padding."""
    b = Builder()
    x = b.input("x", [1, 2, 5], "NCW")
    w = b.weight([2, 3, 3], "IOW")
    out = b.node("conv1d_transpose", "nn.conv1d_transpose", [x],
                 lambda v, weight: F.conv_transpose1d(v, weight, None, 2, 1, 1, 1, 2), weights={"weight": w}, layout="NCW",
                 attrs={"strides": "2,", "padding": "1,1", "output_padding": "1,", "dilation": "2,", "groups": "1",
                        "data_layout": "NCW", "kernel_layout": "IOW", "out_layout": "NCW", "out_dtype": ""})
    return b.finish([out])


@case
def case_norms_without_weights():
    """layer_norm without gamma/beta, group_norm without gamma/beta, rms_norm without weight."""
    b = Builder()
    x = b.input("x", [2, 4, 3], "NCW")
    ln = b.node("layer_norm", "nn.layer_norm", [x], lambda v: F.layer_norm(v, [3], eps=1e-5),
                attrs={"axes": "-1,", "epsilon": "0.000010", "center": "1", "scale": "1"})
    gn = b.node("group_norm", "nn.group_norm", [x], lambda v: F.group_norm(v, 2, eps=1e-5),
                attrs={"num_groups": "2", "channel_axis": "1", "axes": "2,", "epsilon": "0.000010", "center": "1", "scale": "1"})
    rms = b.node("rms_norm", "nn.rms_norm", [x], lambda v: v / torch.sqrt((v * v).mean(-1, keepdim=True) + 1e-5),
                 attrs={"axes": "-1,", "epsilon": "0.000010"})
    return b.finish([ln, gn, rms])


@case
def case_bias_add_input_and_stack_last():
    """nn.bias_add with the bias from a `constant` node input; stack at axis = ndim."""
    b = Builder()
    x = b.input("x", [2, 3, 4])
    bias = b.node("const", "constant", [], lambda const: const, weights={"const": b.weight([3])})
    add = b.node("bias_add", "nn.bias_add", [x, bias], lambda v, c: v + c.reshape(1, 3, 1), attrs={"axis": "1"})
    st = b.node("stack", "stack", [add, x], lambda p, q: torch.stack([p, q], -1), attrs={"axis": "3"})
    return b.finish([st])


@case
def case_mixed_dtypes():
    """Operands of different dtypes, as torch promotes them: int32 + int64, float32 * int64,
    a comparison of an int tensor with a float 0-d constant, concat of int32 and int64."""
    b = Builder()
    a = b.input("a", [2, 3], dtype=torch.int32, value=torch.arange(6, dtype=torch.int32).reshape(2, 3))
    c = b.input("c", [3], dtype=torch.int64, value=torch.tensor([1, -2, 3]))
    f = b.input("f", [2, 3])
    s = b.node("add", "add", [a, c], torch.add)
    m = b.node("multiply", "multiply", [f, s], torch.mul)
    half = _scalar(b, "const", 2.5)
    g = b.node("greater", "greater", [a, half], torch.gt)
    cat = b.node("concat", "concat", [a, s], lambda p, q: torch.cat([p, q], 0), attrs={"axis": "0"})
    return b.finish([m, g, cat])


@case
def case_pad_modes_dynamic():
    """nn.pad reflect and edge on a dynamic batch (the slices need no static sizes)."""
    b = Builder()
    b.prim("bz", "shape", producer="x", out_idx=0, dim=0)
    x = b.input("x", [2, 3, 5], dyn={0: "bz"})
    r = b.node("pad", "nn.pad", [x], lambda v: F.pad(v, (2, 1), mode="reflect"), dyn={0: "bz"},
               attrs={"pad_width": "0,0,0,0,2,1", "pad_mode": "reflect", "pad_value": "0.000000"})
    e = b.node("pad_1", "nn.pad", [r], lambda v: F.pad(v.unsqueeze(0), (1, 2, 1, 0), mode="replicate").squeeze(0), dyn={0: "bz"},
               attrs={"pad_width": "0,0,1,0,1,2", "pad_mode": "edge", "pad_value": "0.000000"})
    return b.finish([e])


def build_case(name):
    return CASES[name]()
