#!/usr/bin/env python3
"""Write MSCGraphs with TVM v0.20's own MSC, for msc-codegen's tests (tests/msc_real/cases/).

Each case is a small PyTorch module (translated by MSC's ``translate.from_torch``: torch.fx ->
``relax.frontend.torch.from_fx`` -> MSC's fusion patterns -> ``MSCGraph``) or a relax function
built directly (for ops torch 1.13 cannot trace, e.g. ``relax.op.nn.attention``, which MSC fuses
into ``msc.attention``), translated by ``translate.from_relax``. For every case it writes

    <out>/<case>/graph.json            graph.to_json(), exactly as MSC wrote it
    <out>/<case>/weights.safetensors   MSC's weights (keys = weight tensor names)
    <out>/<case>/golden/inputs.safetensors, outputs.safetensors   keyed by MSC tensor name
    <out>/<case>/meta.json             source, optypes, reference used for the golden outputs

Golden outputs come from TVM itself (DecomposeOpsForInference -> LegalizeOps -> build "llvm" ->
VirtualMachine on the relax module MSC translated): the graph means what relax means. For torch
cases meta.json also records the largest difference from PyTorch's own outputs (non-zero where
TVM v0.20's torch frontend changed the model, e.g. convnext's LayerNorm2d epsilon). This needs a TVM v0.20 build with USE_MSC (see
../shared/reference/tvm.md) and is NOT run by the tests; its output is committed.

    MSC_TVM_HOME=/path/to/tvm /usr/bin/python3 scripts/msc_real_cases.py --out tests/msc_real/cases
"""
import argparse
import json
import os
import sys
import time
import types

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
from msc_export.safetensors_np import save_file  # noqa: E402


def _load_tvm():
    home = os.environ.get("MSC_TVM_HOME")
    if not home:
        sys.exit("error: set MSC_TVM_HOME to a TVM v0.20 source tree with a build/ (USE_MSC ON)")
    sys.path.insert(0, os.path.join(home, "python"))
    os.environ.setdefault("TVM_LIBRARY_PATH", os.path.join(home, "build"))
    if not hasattr(torch, "export"):  # torch 1.13: tvm.relax.frontend.torch imports torch.export
        torch.export = types.SimpleNamespace(ExportedProgram=object)
    import tvm  # noqa: F401
    return tvm


# ---- torch cases: (module, [(shape, dtype, kind)]) -------------------------------------------

class Fn(nn.Module):
    """A module around fn(self, x[, y]); torch.fx (1.13, Python 3.11) cannot trace *args forwards."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn


class Fn1(Fn):
    def forward(self, x):
        return self.fn(self, x)


class Fn2(Fn):
    def forward(self, x, y):
        return self.fn(self, x, y)


def F1(fn):  # noqa: N802
    return Fn1(fn)


def F2(fn):  # noqa: N802
    return Fn2(fn)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def torch_cases():
    cases = {
        "layer_norm": (nn.LayerNorm(8), [([2, 5, 8], "float32")]),
        "silu_gelu_tanh": (F1(lambda m, x: F.gelu(F.silu(x), approximate="tanh")), [([2, 3, 4], "float32")]),
        "leaky_softplus_selu": (F1(lambda m, x: F.selu(F.softplus(F.leaky_relu(x, 0.2), beta=2.0))),
                                [([2, 3, 4], "float32")]),
        "log_softmax": (nn.LogSoftmax(dim=1), [([2, 5, 3], "float32")]),
        "split_sections": (F1(lambda m, x: torch.split(x, 3, dim=1)[0] * 2 + torch.split(x, 3, dim=1)[2]),
                           [([2, 9, 3], "float32")]),
        "split_sizes": (F1(lambda m, x: torch.split(x, [2, 3, 4], dim=1)[1] + 1), [([2, 9, 3], "float32")]),
        "chunk": (F1(lambda m, x: torch.chunk(x, 2, dim=-1)[0]), [([2, 3, 8], "float32")]),
        "interpolate_nearest": (F1(lambda m, x: F.interpolate(x, size=(7, 9), mode="nearest")), [([1, 2, 4, 5], "float32")]),
        "interpolate_bilinear": (F1(lambda m, x: F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)),
                                 [([1, 2, 4, 5], "float32")]),
        "interpolate_bilinear_ac": (F1(lambda m, x: F.interpolate(x, size=(6, 7), mode="bilinear", align_corners=True)),
                                    [([1, 2, 4, 5], "float32")]),
        "conv1d": (nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=1, groups=2), [([2, 4, 11], "float32")]),
        # relax's std/var divide by N (v0.20's from_fx drops `unbiased`): the reference uses N too.
        "reductions": (F1(lambda m, x: torch.sum(x, 1) + torch.prod(x, 1, keepdim=False)
                          + torch.std(x, 1, unbiased=False) + torch.var(x, 1, unbiased=False)),
                       [([2, 3, 4], "float32")]),
        "argmax_argmin": (F1(lambda m, x: (torch.argmax(x, 1), torch.argmin(x, -1, keepdim=True))), [([2, 5, 4], "float32")]),
        "cumsum": (F1(lambda m, x: torch.cumsum(x, dim=1)), [([2, 5, 3], "float32")]),
        "einsum": (F2(lambda m, a, b: torch.einsum("bij,bjk->bik", a, b)), [([2, 3, 4], "float32"), ([2, 4, 5], "float32")]),
        "topk": (F1(lambda m, x: torch.topk(x, 2, dim=-1)), [([2, 3, 6], "float32")]),
        "where_compare": (F2(lambda m, x, y: torch.where(x > y, x, y * 2)), [([2, 3, 4], "float32"), ([2, 3, 4], "float32")]),
        "masked_fill": (F1(lambda m, x: x.masked_fill(x < 0, -1.5)), [([2, 3, 4], "float32")]),
        "tril_triu": (F1(lambda m, x: torch.tril(x, 1) + torch.triu(x, -1)), [([2, 5, 5], "float32")]),
        "unary_math": (F1(lambda m, x: torch.exp(torch.sin(x)) + torch.cos(x).abs() + torch.erf(x) + torch.floor(x)
                          + torch.ceil(x) + torch.round(x) + torch.sign(x) + torch.sqrt(x.abs() + 1)
                          + torch.rsqrt(x.abs() + 1) + torch.log(x.abs() + 1) + torch.tanh(x) + torch.atan(x)),
                       [([2, 3, 4], "float32")]),
        "binary_math": (F2(lambda m, x, y: torch.pow(x.abs() + 0.5, y)
                          ), [([2, 3, 4], "float32"), ([3, 4], "float32")]),
        "shape_ops": (F1(lambda m, x: torch.flip(x, [1]).repeat(1, 2, 1) + x.tile(1, 2, 1)), [([2, 3, 4], "float32")]),
        "expand_stack": (F2(lambda m, x, y: torch.stack([x, y], dim=1).expand(2, 2, 3, 4) * 1.0),
                         [([2, 3, 4], "float32"), ([2, 3, 4], "float32")]),
        "gather_take": (F2(lambda m, x, i: torch.gather(x, 1, i) + torch.index_select(x, 1, i[0, :, 0].reshape(-1))[:, :2]),
                        [([2, 5, 3], "float32"), ([2, 2, 3], "int64", 5)]),
        "full_ones_arange": (F1(lambda m, x: x + torch.ones(3, 4) + torch.full((3, 4), 2.5) + torch.arange(4).float()),
                             [([2, 3, 4], "float32")]),
        "astype_logical": (F1(lambda m, x: ((x > 0) & (x < 1)).float() + (x.to(torch.int32) * 2).to(torch.float32)), [([2, 3, 4], "float32")]),
        "avg_pool_ceil": (F1(lambda m, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                     count_include_pad=False)), [([1, 2, 7, 7], "float32")]),
        # TVM v0.20's adaptive_avg_pool2d is wrong when W is not a multiple of the output width
        # (4x7 -> 1x3 averages the wrong columns): the golden data here is PyTorch's.
        "adaptive_pool_hardswish": (F1(lambda m, x: F.hardswish(F.adaptive_avg_pool2d(x, (2, 3)))), [([1, 3, 6, 7], "float32")],
                                    "torch"),
    }
    # Whole torchvision architectures at reduced width/depth (the real block structure, weights
    # small enough to commit), 64x64 inputs; BN statistics calibrated in train mode first.
    from torchvision.models import convnext, efficientnet, mobilenetv2
    setting, last = efficientnet._efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.34)
    models = {
        "mobilenet_v2": mobilenetv2.MobileNetV2(width_mult=0.25, num_classes=10),
        "efficientnet_b0": efficientnet.EfficientNet(setting, 0.2, num_classes=10, last_channel=last),
        "convnext": convnext.ConvNeXt([convnext.CNBlockConfig(16, 32, 1), convnext.CNBlockConfig(32, 64, 1),
                                       convnext.CNBlockConfig(64, None, 1)], num_classes=10),
    }
    for name, model in models.items():
        torch.manual_seed(0)
        model.train()
        with torch.no_grad():
            for _ in range(3):
                model(torch.randn(4, 3, 64, 64))
        cases["model_" + name] = (model, [([1, 3, 64, 64], "float32")])
    return cases


def make_inputs(specs, seed):
    g = _gen(seed)
    arrays = []
    for spec in specs:
        shape, dtype = spec[0], spec[1]
        if dtype.startswith("int"):
            arrays.append(torch.randint(0, spec[2], shape, generator=g, dtype=getattr(torch, dtype)))
        else:
            arrays.append(torch.randn(*shape, generator=g))
    return arrays


# ---- relax cases (ops torch 1.13 cannot trace) -----------------------------------------------

def relax_cases(tvm):
    from tvm import relax

    def attention(with_bias, causal, scale):
        def build():
            bb = relax.BlockBuilder()
            shape = [2, 4, 5, 8]  # B, N, S, H (torch layout); relax attention wants B, S, N, H
            q = relax.Var("inp_0", relax.TensorStructInfo(shape, "float32"))
            k = relax.Var("inp_1", relax.TensorStructInfo(shape, "float32"))
            v = relax.Var("inp_2", relax.TensorStructInfo(shape, "float32"))
            params = [q, k, v]
            if with_bias:
                bias = relax.Var("inp_3", relax.TensorStructInfo([2, 4, 5, 5], "float32"))
                params.append(bias)
            with bb.function("main", params):
                with bb.dataflow():
                    t = [bb.emit(relax.op.permute_dims(x, [0, 2, 1, 3])) for x in (q, k, v)]
                    att = bb.emit(relax.op.nn.attention(t[0], t[1], t[2], bias=params[3] if with_bias else None,
                                                        scale=scale, causal_mask=causal))
                    out = bb.emit_output(bb.emit(relax.op.permute_dims(att, [0, 2, 1, 3])))
                bb.emit_func_output(out)
            return bb.finalize()
        return build

    def single(name, make_args, op, out_dtype="float32"):
        """main(inputs) = op(bb, *inputs, *constants); make_args -> (input shapes/dtypes, constants)."""
        def build():
            specs, consts = make_args()
            bb = relax.BlockBuilder()
            params = [relax.Var("inp_%d" % i, relax.TensorStructInfo(shape, dtype)) for i, (shape, dtype) in enumerate(specs)]
            with bb.function("main", params):
                with bb.dataflow():
                    out = bb.emit_output(bb.emit(op(bb, *params, *[relax.const(c) for c in consts])))
                bb.emit_func_output(out)
            return bb.finalize()
        return build

    rng = np.random.default_rng(3)
    f32 = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731

    def embedding(bb, x, w):  # MSC's msc.embedding pattern: astype(int32) + reshape + take + reshape
        flat = bb.emit(relax.op.reshape(bb.emit(relax.op.astype(x, "int32")), [-1]))
        return relax.op.reshape(bb.emit(relax.op.take(w, flat, axis=0)), [2, 3, 6])

    return {
        "group_norm": single("group_norm", lambda: ([([2, 6, 4, 4], "float32")], [f32(6), f32(6)]),
                             lambda bb, x, g, b: relax.op.nn.group_norm(x, g, b, 3, 1, [2, 3], 1e-5)),
        "embedding": single("embedding", lambda: ([([2, 3], "int64")], [f32(10, 6)]), embedding),
        "conv2d_transpose": single("conv2d_transpose", lambda: ([([1, 4, 5, 5], "float32")], [f32(4, 3, 3, 3)]),
                                   lambda bb, x, w: relax.op.nn.conv2d_transpose(x, w, strides=[2, 2], padding=[1, 1],
                                                                             output_padding=[1, 1])),
        "pad_constant": single("pad", lambda: ([([1, 2, 3, 4], "float32")], []),
                               lambda bb, x: relax.op.nn.pad(x, [0, 0, 0, 0, 1, 2, 2, 1], "constant", 0.5)),
        "attention": attention(False, None, None),
        "attention_causal": attention(False, "TopLeft", None),
        "attention_bias_scale": attention(True, None, 0.25),
    }


def run_relax(tvm, mod, arrays):
    from tvm import relax
    mod = relax.transform.DecomposeOpsForInference()(mod)
    mod = relax.transform.LegalizeOps()(mod)
    ex = relax.build(mod, "llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    out = vm["main"](*[tvm.nd.array(a) for a in arrays])
    flat = []

    def walk(v):
        if hasattr(v, "numpy"):
            flat.append(v.numpy())
        else:
            for f in v:
                walk(f)
    walk(out)
    return flat


def write_case(out_dir, name, graph, weights, inputs, outputs, meta):
    folder = os.path.join(out_dir, name)
    os.makedirs(os.path.join(folder, "golden"), exist_ok=True)
    with open(os.path.join(folder, "graph.json"), "w") as f:
        f.write(graph.to_json())
    save_file({k: np.array(v.numpy() if hasattr(v, "numpy") else v, copy=True) for k, v in weights.items()},  # 0-d stays 0-d
              os.path.join(folder, "weights.safetensors"))
    save_file(inputs, os.path.join(folder, "golden", "inputs.safetensors"))
    save_file(outputs, os.path.join(folder, "golden", "outputs.safetensors"))
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", nargs="*", help="case names (default: all)")
    args = parser.parse_args()
    tvm = _load_tvm()
    from tvm.contrib.msc.core.frontend import translate
    from tvm.contrib.msc.framework.torch.frontend import translate as torch_translate

    failures = []
    for name, (model, specs, *reference) in torch_cases().items():
        if args.only and name not in args.only:
            continue
        start = time.time()
        try:
            model.eval()
            inputs = make_inputs(specs, seed=1)
            with torch.no_grad():
                result = model(*inputs)
            results = list(result) if isinstance(result, (tuple, list)) else [result]
            info = [(list(s[0]), s[1]) for s in specs]
            graph, weights = torch_translate.from_torch(model, info)
            # The graph means what relax means: the golden outputs are TVM's own run of the relax
            # module MSC translated (where TVM's torch frontend changed the model's meaning, e.g.
            # dropped an epsilon or rounds differently, torch's outputs would be the wrong spec).
            relax_mod, _ = torch_translate.from_torch(model, info, as_msc=False)
            tvm_out = run_relax(tvm, relax_mod, [a.numpy() for a in inputs])
            torch_out = [r.detach().numpy() for r in results]
            torch_diff = max(float(np.max(np.abs(t.astype("float64") - r.astype("float64")))) if t.size else 0.0
                             for t, r in zip(tvm_out, torch_out))
            # reference "torch": a TVM kernel known to be wrong for this case (see torch_cases).
            golden = torch_out if reference == ["torch"] else tvm_out
            ins = {t.name: a.numpy() for t, a in zip(graph.get_inputs(), inputs)}
            outs = {t.name: g for t, g in zip(graph.get_outputs(), golden)}
            optypes = sorted({n.optype for n in graph.get_nodes()})
            write_case(args.out, name, graph, weights, ins, outs,
                       {"source": "translate.from_torch",
                        "reference": "torch" if reference == ["torch"] else "tvm relax (LegalizeOps, llvm)",
                        "max_abs_diff_vs_torch": torch_diff, "optypes": optypes,
                        "tvm": tvm.__version__, "torch": torch.__version__})
            print("%-28s ok   %5.1fs  vs torch %.1e  %s" % (name, time.time() - start, torch_diff, " ".join(optypes)))
        except Exception as e:  # noqa: BLE001  report and go on
            failures.append(name)
            print("%-28s FAIL %s: %s" % (name, type(e).__name__, str(e).splitlines()[0][:200] if str(e) else ""))
    for name, build in relax_cases(tvm).items():
        if args.only and name not in args.only:
            continue
        try:
            mod = build()
            func = mod["main"]
            g = np.random.default_rng(2)
            arrays = [g.integers(0, 10, [int(d) for d in p.struct_info.shape]).astype(p.struct_info.dtype)
                      if "int" in p.struct_info.dtype else
                      g.standard_normal([int(d) for d in p.struct_info.shape]).astype(p.struct_info.dtype)
                      for p in func.params]
            outputs = run_relax(tvm, mod, arrays)
            graph, weights = translate.from_relax(mod)
            ins = {t.name: a for t, a in zip(graph.get_inputs(), arrays)}
            outs = {t.name: o for t, o in zip(graph.get_outputs(), outputs)}
            optypes = sorted({n.optype for n in graph.get_nodes()})
            write_case(args.out, name, graph, weights, ins, outs,
                       {"source": "translate.from_relax", "reference": "tvm relax (LegalizeOps, llvm)",
                        "optypes": optypes, "tvm": tvm.__version__})
            print("%-28s ok   %s" % (name, " ".join(optypes)))
        except Exception as e:  # noqa: BLE001
            failures.append(name)
            print("%-28s FAIL %s: %s" % (name, type(e).__name__, str(e).splitlines()[0][:200] if str(e) else ""))
    print("%d failed: %s" % (len(failures), " ".join(failures)))


if __name__ == "__main__":
    main()
