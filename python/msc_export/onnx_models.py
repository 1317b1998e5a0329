"""Real models as ONNX files with golden data, for the ONNX frontend (``msc-codegen import``).

Command line (``PYTHONPATH=<repo>/python``)::

    /usr/bin/python3 -m msc_export.onnx_models MODEL --opset N --out DIR [--seed 0] [--threads 1]

``MODEL`` is one of :data:`MODELS`; ``N`` an ONNX opset torch 1.13 can export
(:data:`MIN_OPSET`..:data:`MAX_OPSET`; 13 and 17 are the ones the tests use).  Writes, in the
layout of ONNX's own backend tests (``/usr/share/libonnx-testdata/data/node/test_abs``)::

    DIR/model.onnx
    DIR/test_data_set_0/input_0.pb ...    onnx.TensorProto, named after the graph input
    DIR/test_data_set_0/output_0.pb ...   onnx.TensorProto, named after the graph output

Models (weights random but seeded: ``torch.manual_seed(seed)`` before building; nothing is
downloaded):

* ``resnet18``, ``mobilenet_v2``, ``efficientnet_b0``: ``torchvision.models.<name>(weights=None)``
  built as ``examples/models/export.py`` builds them (same weights for the same seed): all-zero
  ``nn.Linear`` weights re-drawn (:func:`msc_export.calibrate.reinit_zero_linears`; none in these
  three), BatchNorm running statistics re-estimated from :data:`CALIB_BATCHES` seeded train-mode
  passes of ``torch.randn`` :data:`CALIB_SHAPE` (:func:`msc_export.calibrate.calibrate_batch_norm`)
  -- with fresh statistics mobilenet_v2's eval logits are ~1e-9 and efficientnet_b0's ~1e-14.
  Input ``input`` float32 [1, 3, 224, 224]: ``torch.manual_seed(seed)`` then ``torch.randn``
  (the golden input :func:`msc_export.exporter.golden_data` draws).  Output ``logits`` float32
  [1, 1000].
* ``text_transformer``: the ``TextTransformer`` of ``examples/text_transformer/export.py``
  (``nn.Embedding(1000, 64, padding_idx=0)`` + a learned position table [1, 16, 64] ->
  ``nn.TransformerEncoder`` of 2 ``nn.TransformerEncoderLayer`` (d_model 64, 4 heads,
  feed-forward 128, ReLU, post-norm, batch_first) with ``src_key_padding_mask = tokens == 0`` ->
  mean over the unpadded tokens -> ``nn.Linear(64, 10)``), random init (untrained), then every
  parameter of the encoder gets seeded N(0, :data:`TEXT_NOISE_STD` ^ 2) noise added
  (:func:`perturb_parameters`): ``nn.TransformerEncoder`` deep-copies ONE initialized layer, so
  untrained layers are identical, and the attention/feed-forward biases start at 0 and the
  LayerNorm scales at 1 -- ``torch.onnx.export`` then deduplicates the equal initializers into
  ``Identity`` aliases, and a golden check would not notice swapped layers or ignored
  biases/scales.  Input ``tokens`` int64 [1, 16]: ``torch.manual_seed(seed)`` then
  ``torch.randint(2, 1000)`` for the first :data:`TEXT_TOKENS` positions, padding (0) after
  them, so the padding-mask path computes something.  Output ``logits`` float32 [1, 10].

Export: ``torch.onnx.export`` in eval mode (``training=TrainingMode.EVAL``, constant folding on,
static shapes: no ``dynamic_axes``), then ``onnx.checker.check_model(full_check=True)``.  Golden
outputs are the torch model's own (eval, ``torch.no_grad()``, TransformerEncoder with nested
tensors off as in :func:`msc_export.exporter.golden_data`) and must pass
:func:`msc_export.exporter.check_golden_outputs` (every float output max |x| > 1e-3).
Exports and golden files are byte-for-byte reproducible for a given seed.

What the exports contain (torch 1.13, seed 0; same op set at opsets 13 and 17 for the CNNs):
eval-mode export folds every BatchNorm into the preceding ``Conv`` (bias added), so the CNNs
have no ``BatchNormalization``; ``Clip`` (ReLU6) takes min/max as ``Constant`` inputs;
efficientnet_b0's zero-initialized squeeze-excite biases are deduplicated into ``Identity``
nodes aliasing one initializer.  text_transformer keeps a static-shape subgraph
(``Shape``/``Gather``/``Add``/``Div``/``Mul`` -> ``Slice`` bounds for the q/k/v split,
``ConstantOfShape``/``Equal``/``Where`` -> ``Expand`` shape for the padding mask) that an
importer has to constant-fold; LayerNorm is ``ReduceMean``/``Sub``/``Pow``/``Sqrt``/``Div``
at opset 13 and ``LayerNormalization`` at opset 17.

Exit status: 0 ok, 1 export/check error (message on stderr), 2 usage error.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import sys
import time
from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["MODELS", "MIN_OPSET", "MAX_OPSET", "ModelSpec", "build_model", "perturb_parameters", "golden_outputs",
           "export_onnx", "write_tensor_protos", "op_histogram", "main"]

#: the models this module exports
MODELS = ("resnet18", "mobilenet_v2", "efficientnet_b0", "text_transformer", "vit_b_16", "gpt2_block")
#: torch.onnx's two exporters: "legacy" (TorchScript, ``dynamo=False``; torch 1.13's only one) and
#: "dynamo" (``torch.export`` + onnxscript, ``dynamo=True``, torch >= 2.5's default)
EXPORTERS = ("legacy", "dynamo")
#: opsets torch 1.13's exporter supports (``torch.onnx._constants.ONNX_MIN_OPSET``/``ONNX_MAX_OPSET``);
#: :func:`opset_range` gives the installed torch's
MIN_OPSET, MAX_OPSET = 7, 17
#: BatchNorm calibration of the CNNs, as ``examples/models/export.py`` (``--calib-batches`` 2)
CALIB_SHAPE, CALIB_BATCHES = (4, 3, 224, 224), 2
#: text_transformer: sequence length, vocabulary, classes, unpadded tokens in the golden input
TEXT_SEQ, TEXT_VOCAB, TEXT_CLASSES, TEXT_TOKENS = 16, 1000, 10, 12
#: text_transformer: std of the seeded noise added to every encoder parameter
TEXT_NOISE_STD = 0.05

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_TEXT_EXAMPLE = os.path.join(_REPO, "examples", "text_transformer", "export.py")
_GPT2_EXAMPLE = os.path.join(_REPO, "examples", "gpt2_block", "export.py")


def opset_range(exporter: str = "legacy") -> Tuple[int, int, int]:
    """``(min, default, max)`` opset of the installed torch's ``exporter`` (one of :data:`EXPORTERS`):
    torch.onnx._constants (torch 2.x: legacy ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET, dynamo
    ONNX_MAX_OPSET; both default to ONNX_DEFAULT_OPSET); torch 1.13: 7..17, default 13 and no
    dynamo exporter (``ValueError``)."""
    import torch
    from torch.onnx import _constants as c

    if exporter not in EXPORTERS:
        raise ValueError(f"unknown exporter {exporter!r}; expected one of {', '.join(EXPORTERS)}")
    if not hasattr(c, "ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET"):  # torch 1.13
        if exporter == "dynamo":
            raise ValueError(f"torch {torch.__version__} has no dynamo ONNX exporter (torch >= 2.5)")
        return MIN_OPSET, c.ONNX_DEFAULT_OPSET, MAX_OPSET
    top = c.ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET if exporter == "legacy" else c.ONNX_MAX_OPSET
    return c.ONNX_MIN_OPSET if exporter == "legacy" else 18, min(c.ONNX_DEFAULT_OPSET, top), top


class ModelSpec:
    """A built model with its golden inputs and the ONNX names of its inputs and outputs."""

    def __init__(self, name: str, model, inputs: Sequence[np.ndarray], input_names: Sequence[str],
                 output_names: Sequence[str]):
        self.name = name
        self.model = model
        self.inputs = list(inputs)
        self.input_names = list(input_names)
        self.output_names = list(output_names)


def _example(name: str, path: str):
    """The module of the example ``path`` (loaded by file path; the model is defined there)."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{name}: {path} not found (the model is defined there)")
    spec = importlib.util.spec_from_file_location("msc_export_%s_example" % name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{name}: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _text_transformer_class():
    """``TextTransformer`` from ``examples/text_transformer/export.py``."""
    module = _example("text_transformer", _TEXT_EXAMPLE)
    if getattr(module, "SEQ", None) != TEXT_SEQ or getattr(module, "PAD", None) != 0:
        raise ImportError(f"text_transformer: {_TEXT_EXAMPLE} no longer has SEQ = {TEXT_SEQ}, PAD = 0")
    return module.TextTransformer


def perturb_parameters(module, std: float, seed: int) -> int:
    """Add seeded N(0, std^2) noise to every parameter of ``module`` (in ``named_parameters``
    order, one ``torch.Generator`` seeded with ``seed``); returns the number of parameters."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    count = 0
    with torch.no_grad():
        for _, p in module.named_parameters():
            p.add_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * std)
            count += 1
    return count


def build_model(name: str, seed: int = 0) -> ModelSpec:
    """The seeded eval-mode model ``name`` (one of :data:`MODELS`) and its seeded golden inputs."""
    import torch
    import torchvision

    from .calibrate import calibrate_batch_norm, reinit_zero_linears

    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; expected one of {', '.join(MODELS)}")
    torch.manual_seed(seed)
    if name == "text_transformer":
        model = _text_transformer_class()(TEXT_VOCAB, TEXT_CLASSES).eval()
        perturb_parameters(model.encoder, TEXT_NOISE_STD, seed)
        torch.manual_seed(seed)
        tokens = torch.zeros(1, TEXT_SEQ, dtype=torch.int64)
        tokens[0, :TEXT_TOKENS] = torch.randint(2, TEXT_VOCAB, (TEXT_TOKENS,))
        return ModelSpec(name, model, [tokens.numpy()], ["tokens"], ["logits"])
    if name == "gpt2_block":
        module = _example("gpt2_block", _GPT2_EXAMPLE)
        model = module.TinyGPT2().eval()
        return ModelSpec(name, model, [module.encode("MSC codegen: GPT")], ["tokens"], ["logits"])
    model = getattr(torchvision.models, name)(weights=None)
    reinit_zero_linears(model, seed=seed)
    calibrate_batch_norm(model, list(CALIB_SHAPE), CALIB_BATCHES, seed)
    model.eval()
    torch.manual_seed(seed)
    image = torch.randn(1, 3, 224, 224)
    return ModelSpec(name, model, [image.numpy()], ["input"], ["logits"])


def golden_outputs(spec: ModelSpec) -> List[np.ndarray]:
    """The torch model's outputs for ``spec.inputs`` (eval, no grad, dense TransformerEncoder)."""
    import torch

    from .exporter import _dense_transformer_encoders, _flatten_outputs, check_golden_outputs

    spec.model.eval()
    with torch.no_grad(), _dense_transformer_encoders(spec.model):
        outs = _flatten_outputs(spec.model(*[torch.from_numpy(x) for x in spec.inputs]))
    if len(outs) != len(spec.output_names):
        raise ValueError(f"{spec.name}: the model returned {len(outs)} tensors, expected {len(spec.output_names)}")
    arrays = [o.detach().contiguous().numpy().copy() for o in outs]
    check_golden_outputs(dict(zip(spec.output_names, arrays)))
    return arrays


def op_histogram(model_proto) -> Dict[str, int]:
    """``{op_type: count}`` over the main graph's nodes (``domain:op_type`` outside the default domain)."""
    counts = Counter((f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type)
                     for n in model_proto.graph.node)
    return dict(sorted(counts.items()))


def write_tensor_protos(arrays: Sequence[np.ndarray], names: Sequence[str], folder: str, prefix: str) -> List[str]:
    """Write ``folder/<prefix>_<i>.pb`` (serialized ``onnx.TensorProto`` named ``names[i]``)."""
    from onnx import numpy_helper

    paths = []
    for i, (arr, name) in enumerate(zip(arrays, names)):
        path = os.path.join(folder, f"{prefix}_{i}.pb")
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(np.ascontiguousarray(arr), name).SerializeToString())
        paths.append(path)
    return paths


def ort_max_abs_diff(model_bytes: bytes, spec: ModelSpec, outputs: Sequence[np.ndarray]) -> object:
    """Max |ONNX Runtime's output - golden| over every output of the exported model (ONNX Runtime
    as a second reference: one CPU thread, all graph optimizations); None when the
    ``onnxruntime`` package is not installed (Debian's Python); the error's text (a str) when ONNX
    Runtime cannot run the model (its Attention kernel, 1.32, refuses a mask that broadcasts over
    the query length, which the ONNX spec allows)."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    try:
        sess = ort.InferenceSession(model_bytes, opts, providers=["CPUExecutionProvider"])
        got = sess.run(spec.output_names, dict(zip(spec.input_names, spec.inputs)))
    except Exception as err:  # noqa: BLE001  onnxruntime's Fail / InvalidArgument / ...
        return "onnxruntime %s cannot run it: %s" % (ort.__version__, str(err).split("\n")[0][:400])
    return max(float(np.max(np.abs(g.astype(np.float64) - o.astype(np.float64)))) for g, o in zip(got, outputs))


def export_onnx(name: str, opset: int, out_dir: str, seed: int = 0, exporter: str = "legacy",
                spec: Optional[ModelSpec] = None) -> Dict[str, object]:
    """Build ``name`` (or take the already built ``spec``: a caller that also exports the same
    model object another way, scripts/bench_peers.py), export it with ``exporter``
    (:data:`EXPORTERS`) at ``opset`` into ``out_dir`` (layout: module docstring), check it.

    Returns ``{"model": path, "inputs": [paths], "outputs": [paths], "ops": {op_type: count},
    "bytes": model size, "seconds": {"build", "export", "golden", "write"}: (wall, cpu),
    "peak": [max |x| per golden output], "opset", "ir_version", "ort_max_abs": see
    :func:`ort_max_abs_diff`}``.
    Raises ``ValueError`` for an opset outside :func:`opset_range`,
    ``onnx.checker.ValidationError`` for an invalid export, ``msc_export.ExportError`` for
    degenerate golden outputs."""
    import onnx
    import torch

    low, _, high = opset_range(exporter)
    if not low <= opset <= high:
        raise ValueError(f"opset {opset}: torch {torch.__version__}'s {exporter} exporter exports opsets {low}..{high}")
    seconds: Dict[str, Tuple[float, float]] = {}

    def _clock() -> Tuple[float, float]:
        return time.perf_counter(), time.process_time()

    def _since(key: str, start: Tuple[float, float]) -> None:
        now = _clock()
        seconds[key] = (now[0] - start[0], now[1] - start[1])

    t = _clock()
    spec = spec if spec is not None else build_model(name, seed)
    _since("build", t)

    t = _clock()
    args = tuple(torch.from_numpy(x) for x in spec.inputs)
    if exporter == "dynamo":
        import warnings

        from .exporter import _dense_transformer_encoders
        with warnings.catch_warnings(), _dense_transformer_encoders(spec.model):
            warnings.simplefilter("ignore")
            program = torch.onnx.export(spec.model, args, dynamo=True, opset_version=opset, verbose=False,
                                        input_names=spec.input_names, output_names=spec.output_names)
        model_bytes = program.model_proto.SerializeToString()
    else:
        buf = io.BytesIO()
        extra = {"dynamo": False} if hasattr(torch.onnx, "ONNXProgram") else {}
        torch.onnx.export(spec.model, args, buf, export_params=True, opset_version=opset,
                          training=torch.onnx.TrainingMode.EVAL, do_constant_folding=True,
                          input_names=spec.input_names, output_names=spec.output_names, **extra)
        model_bytes = buf.getvalue()
    proto = onnx.load_from_string(model_bytes)
    onnx.checker.check_model(proto, full_check=True)
    got_in = [i.name for i in proto.graph.input]
    got_out = [o.name for o in proto.graph.output]
    if got_in != spec.input_names or got_out != spec.output_names:
        raise ValueError(f"{name}: exported graph has inputs {got_in} / outputs {got_out}, "
                         f"expected {spec.input_names} / {spec.output_names}")
    _since("export", t)

    t = _clock()
    outputs = golden_outputs(spec)
    _since("golden", t)
    ort_diff = ort_max_abs_diff(model_bytes, spec, outputs)

    t = _clock()
    data_dir = os.path.join(out_dir, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    model_path = os.path.join(out_dir, "model.onnx")
    with open(model_path, "wb") as f:
        f.write(model_bytes)
    in_paths = write_tensor_protos(spec.inputs, spec.input_names, data_dir, "input")
    out_paths = write_tensor_protos(outputs, spec.output_names, data_dir, "output")
    _since("write", t)
    return {"model": model_path, "inputs": in_paths, "outputs": out_paths, "ops": op_histogram(proto),
            "bytes": len(model_bytes), "seconds": seconds,
            "peak": [float(np.max(np.abs(o))) for o in outputs], "ort_max_abs": ort_diff,
            "opset": next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")),
            "ir_version": proto.ir_version}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="msc_export.onnx_models",
                                 description="Export a seeded model to ONNX with golden data "
                                             "(the layout of ONNX's backend tests).")
    ap.add_argument("model", choices=MODELS)
    ap.add_argument("--opset", type=int, default=0,
                    help="ONNX opset (default: the exporter's default; torch 1.13: 7..17)")
    ap.add_argument("--exporter", choices=EXPORTERS, default="legacy",
                    help="torch.onnx.export(dynamo=False) or (dynamo=True, torch >= 2.5)")
    ap.add_argument("--out", required=True, help="output folder (model.onnx, test_data_set_0/)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    args = ap.parse_args(argv)

    import torch

    from .fx_importer import ExportError

    try:
        low, default, high = opset_range(args.exporter)
    except ValueError as err:
        ap.error(str(err))
    args.opset = args.opset or default
    if not low <= args.opset <= high:
        ap.error(f"--opset {args.opset}: torch {torch.__version__}'s {args.exporter} exporter exports opsets {low}..{high}")
    torch.set_num_threads(args.threads)
    try:
        info = export_onnx(args.model, args.opset, args.out, args.seed, args.exporter)
    except (ExportError, ValueError, OSError) as err:
        print(f"error: {args.model} opset {args.opset}: {err}", file=sys.stderr)
        return 1
    except Exception as err:  # onnx.checker.ValidationError, torch.onnx errors
        print(f"error: {args.model} opset {args.opset}: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    secs = info["seconds"]
    timing = ", ".join(f"{k} {w:.2f}s wall / {c:.2f}s cpu" for k, (w, c) in secs.items())
    print(f"{args.model} opset {args.opset}: {info['model']} ({info['bytes'] / 1e6:.1f} MB), "
          f"{len(info['inputs'])} input(s), {len(info['outputs'])} output(s) (max |x| "
          f"{', '.join(f'{p:.3g}' for p in info['peak'])})")
    print(f"  time: {timing}")
    ort = info["ort_max_abs"]
    if isinstance(ort, float):
        print(f"  ONNX Runtime: max |ort - golden| = {ort:.3g}")
    elif ort is not None:
        print(f"  ONNX Runtime: {ort}")
    ops = info["ops"]
    print(f"  ops ({sum(ops.values())} nodes): " + ", ".join(f"{k} {v}" for k, v in ops.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
