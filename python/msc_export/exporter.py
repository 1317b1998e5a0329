"""PyTorch ``nn.Module`` -> MSCGraph JSON + weights + golden data.

The pipeline reproduces TVM v0.20 MSC's torch path (``tvm.contrib.msc.framework.torch.frontend
.translate.from_torch``):

1. ``torch.fx.symbolic_trace(model)`` (the model is put in eval mode first);
2. :class:`~msc_export.fx_importer.FXImporter` -- ``relax.frontend.torch.from_fx``;
3. :mod:`~msc_export.passes` -- ``FoldConstant``, ``SetExprName``, ``FuseOpsByPattern`` (msc
   patterns), ``SetExprName``, ``SetExprLayout``;
4. :mod:`~msc_export.graph_builder` -- ``RelaxGraphBuilder`` + ``normalize_weights`` +
   ``set_weight_alias``.

Outputs written by :func:`export_torch` into ``out_dir``:

* ``graph.json``: the MSCGraph (graph name ``main``);
* ``weights.safetensors``: ``{weight tensor name ("const", "const_1", ...): array}``; a bias is
  1-D, a linear weight is ``[out, in]`` (OI), 0-d constants stay 0-d;
* ``golden/inputs.safetensors``: seeded inputs keyed by graph input tensor name (``inp_0:0``);
  ``torch.manual_seed(seed)`` then ``torch.randn`` per input in order (or the given arrays);
* ``golden/outputs.safetensors``: the ORIGINAL torch model's outputs (eval mode, no grad) keyed
  by graph output tensor name (``relu:0``); tuple outputs in order.
"""

from __future__ import annotations

import contextlib
import dis
import inspect
import os
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import fx, nn

from . import passes
from .fx_importer import ExportError, FXImporter, from_numpy, to_numpy
from .graph_builder import build_graph
from .mscgraph import MSCGraph, validate
from .relax_ir import is_float
from .safetensors_np import save_file

__all__ = ["ExportResult", "translate_torch", "translate_exported_program", "import_pt2", "golden_data",
           "check_golden_outputs", "export_torch", "write_export"]


class ExportResult:
    """What an export produced: the graph, its weights and (optionally) golden data."""

    def __init__(self, graph: MSCGraph, weights: Dict[str, np.ndarray],
                 inputs: Optional[Dict[str, np.ndarray]] = None, outputs: Optional[Dict[str, np.ndarray]] = None):
        self.graph = graph
        self.weights = weights
        self.inputs = inputs or {}
        self.outputs = outputs or {}


def _input_info(shapes: Sequence[Sequence[int]], dtypes: Optional[Sequence[str]]) -> List[Tuple[List[int], str]]:
    if dtypes is None:
        dtypes = ["float32"] * len(shapes)
    if len(dtypes) != len(shapes):
        raise ExportError(f"{len(shapes)} input shapes but {len(dtypes)} dtypes")
    return [([int(s) for s in shape], str(dt)) for shape, dt in zip(shapes, dtypes)]


@contextlib.contextmanager
def _py311_proxy_unpacking():
    """Let ``a, b = proxy`` trace on Python >= 3.11 with torch 1.13 (Debian 12's pair).

    torch 1.13's ``fx.Proxy.__iter__`` finds the calling instruction as
    ``get_instructions(code)[f_lasti // 2]``, which is wrong once Python 3.11 inserted inline
    cache entries; tuple unpacking of a proxy (``b, c, h, w = x.size()``, ``h0, h1 = chunk(..)``)
    then fails.  While tracing we look the instruction up by its byte offset instead.
    """
    if sys.version_info < (3, 11):
        yield
        return
    original = fx.Proxy.__iter__

    def proxy_iter(self):
        frame = inspect.currentframe().f_back
        for inst in dis.get_instructions(frame.f_code):
            if inst.offset == frame.f_lasti:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
        return self.tracer.iter(self)

    fx.Proxy.__iter__ = proxy_iter
    try:
        yield
    finally:
        fx.Proxy.__iter__ = original


def trace(model: nn.Module) -> fx.GraphModule:
    """``torch.fx.symbolic_trace(model)``; tracing failures become :class:`ExportError`."""
    try:
        with _py311_proxy_unpacking():
            return fx.symbolic_trace(model)
    except Exception as err:  # TraceError, TypeError from data-dependent control flow, ...
        raise ExportError(f"torch.fx.symbolic_trace failed: {type(err).__name__}: {err}") from err


#: the frontends of translate_torch: torch.fx symbolic tracing (MSC's own path, torch 1.13 and
#: 2.x) or torch.export's ExportedProgram decomposed to core ATen (torch 2.x).
VIA = ("fx", "export")


def _example_tensors(info: Sequence[Tuple[List[int], str]]) -> List[torch.Tensor]:
    """Example inputs for torch.export: zeros of each input's shape and dtype (values unused)."""
    return [torch.zeros(shape, dtype=getattr(torch, dt)) for shape, dt in info]


def translate_torch(model: nn.Module, input_shapes: Sequence[Sequence[int]],
                    input_dtypes: Optional[Sequence[str]] = None, graph_name: str = "main", via: str = "fx",
                    dynamic: Optional[dict] = None) -> Tuple[MSCGraph, Dict[str, np.ndarray]]:
    """``from_torch``: trace ``model`` (``via`` "fx": torch.fx, as MSC; "export":
    ``torch.export.export``, see :mod:`msc_export.export_importer`) and return
    ``(MSCGraph, {weight name: array})``. ``dynamic`` (export only): {(input index, dim):
    :class:`~msc_export.export_importer.DynamicDim`}, written as MSC prims
    (:mod:`msc_export.dynamic_dims`). Raises :class:`ExportError`."""
    model.eval()
    info = _input_info(input_shapes, input_dtypes)
    if via == "export":
        from .export_importer import export_program
        return translate_exported_program(export_program(model, _example_tensors(info), dynamic), graph_name)
    if via != "fx":
        raise ExportError(f"via must be one of {', '.join(VIA)}, got {via!r}")
    if dynamic:
        raise ExportError("dynamic dims need --via export (the torch.fx path traces static shapes)")
    gm = trace(model)
    return _msc_passes(FXImporter().from_fx(gm, info), graph_name)


def translate_exported_program(ep: "torch.export.ExportedProgram", graph_name: str = "main"
                               ) -> Tuple[MSCGraph, Dict[str, np.ndarray]]:
    """A ``torch.export`` ExportedProgram -> ``(MSCGraph, {weight name: array})``: decomposed to
    core ATen (:func:`msc_export.export_importer.decompose`), imported as TVM's
    ``from_exported_program``, then MSC's passes. Raises :class:`ExportError`."""
    from .dynamic_dims import program_symbols, translate_dynamic
    from .export_importer import ExportedProgramImporter, decompose
    try:
        ep = decompose(ep)
    except Exception as err:  # torch errors while decomposing
        raise ExportError(f"run_decompositions failed: {type(err).__name__}: {str(err).splitlines()[0]}") from err
    symbols = program_symbols(ep)
    if not symbols:
        return _msc_passes(ExportedProgramImporter().from_exported_program(ep), graph_name)
    return translate_dynamic(
        lambda sizes: _msc_passes(ExportedProgramImporter().from_exported_program(ep, sizes), graph_name), symbols)


def _msc_passes(func, graph_name: str) -> Tuple[MSCGraph, Dict[str, np.ndarray]]:
    """MSC's translation after a frontend: fold, name, fuse (msc patterns), layout, build."""
    func = passes.fold_constant(func)
    func = passes.set_expr_name(func)
    func = passes.fuse_ops_by_pattern(func)
    func = passes.set_expr_name(func)
    func = passes.set_expr_layout(func)
    graph, weights = build_graph(func, graph_name)
    validate(graph)
    return graph, weights


def _flatten_outputs(out: Any) -> List[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        flat: List[torch.Tensor] = []
        for o in out:
            if not isinstance(o, torch.Tensor):
                raise ExportError(f"model output {type(o).__name__} is not a tensor")
            flat.append(o)
        return flat
    raise ExportError(f"model output {type(out).__name__} is not a tensor or a tuple of tensors")


@contextlib.contextmanager
def _dense_transformer_encoders(model: nn.Module):
    """Run ``nn.TransformerEncoder`` modules without their nested-tensor fast path.

    With a key padding mask in eval mode torch 1.13 converts to a nested tensor: padded positions
    come back as 0 and the sequence is trimmed to the longest unpadded one (a data-dependent
    shape).  The exported graph computes the dense result, equal at every unpadded position."""
    # torch 1.13 reads enable_nested_tensor in forward; torch 2.x reads use_nested_tensor (set
    # from it in __init__, after checking the layers can use the fast path).
    flags = ("enable_nested_tensor", "use_nested_tensor")
    encoders = [m for m in model.modules() if isinstance(m, nn.TransformerEncoder)]
    saved = [{f: getattr(m, f) for f in flags if hasattr(m, f)} for m in encoders]
    for m, values in zip(encoders, saved):
        for f in values:
            setattr(m, f, False)
    try:
        yield
    finally:
        for m, values in zip(encoders, saved):
            for f, v in values.items():
                setattr(m, f, v)


def golden_data(model: nn.Module, graph: MSCGraph, input_shapes: Sequence[Sequence[int]],
                input_dtypes: Optional[Sequence[str]] = None, seed: int = 0,
                inputs: Optional[Sequence[np.ndarray]] = None
                ) -> Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray]]:
    """Seeded inputs (``torch.manual_seed(seed)``, ``torch.randn`` per input; ints: ``randint(0, 10)``)
    or the given ``inputs``, and the original model's outputs, keyed by graph tensor names."""
    info = _input_info(input_shapes, input_dtypes)
    if inputs is None:
        torch.manual_seed(seed)
        tensors = []
        for shape, dt in info:
            if is_float(dt):
                tensors.append(torch.randn(shape, dtype=getattr(torch, dt)))
            elif dt == "bool":
                tensors.append(torch.randint(0, 2, shape).to(torch.bool))
            else:
                tensors.append(torch.randint(0, 10, shape, dtype=getattr(torch, dt)))
    else:
        tensors = [from_numpy(np.asarray(x, order="C")) for x in inputs]  # asarray keeps 0-d arrays 0-d
    model.eval()
    with torch.no_grad(), _dense_transformer_encoders(model):
        outs = _flatten_outputs(model(*tensors))
    if len(outs) != len(graph.outputs):
        raise ExportError(f"the model returned {len(outs)} tensors, the graph has {len(graph.outputs)} outputs")
    in_names = [f"inp_{i}:0" for i in range(len(tensors))]
    golden_in = {n: to_numpy(t) for n, t in zip(in_names, tensors) if n in graph.inputs}
    golden_out = {n: to_numpy(o) for n, o in zip(graph.outputs, outs)}
    for name, arr in golden_out.items():
        t = graph.find_tensor(name)
        if len(arr.shape) != len(t.shape) or any(w not in (-1, g) for g, w in zip(arr.shape, t.shape)) \
                or str(arr.dtype) != t.dtype:
            raise ExportError(f"output {name}: the model gives {list(arr.shape)} {arr.dtype}, "
                              f"the graph says {t.shape} {t.dtype}")
    check_golden_outputs(golden_out)
    return golden_in, golden_out


#: a float golden output must have max |x| above this, else comparing against it proves nothing
MIN_GOLDEN_MAX_ABS = 1e-3


def check_golden_outputs(outputs: Mapping[str, np.ndarray]) -> None:
    """Reject degenerate golden data: every non-empty float output needs max |x| > 1e-3.

    E.g. torchvision's mobilenet_v2/efficientnet with default init and fresh BatchNorm statistics
    give eval outputs around 1e-9, and vit_b_16's zero-initialized head gives exactly 0: any
    implementation within an absolute tolerance would "match".  Raises :class:`ExportError`
    naming every such output."""
    bad = []
    for name, arr in outputs.items():
        if arr.dtype.kind == "f" and arr.size:
            peak = float(np.max(np.abs(arr.astype(np.float64))))
            if not peak > MIN_GOLDEN_MAX_ABS:  # also catches NaN
                bad.append(f"{name} (max |x| = {peak:.3g})")
    if bad:
        raise ExportError(f"degenerate golden output(s): {', '.join(bad)} <= {MIN_GOLDEN_MAX_ABS:g}; a golden check "
                          "against them is meaningless (calibrate BatchNorm running statistics, re-initialize "
                          "zero-initialized layers or use trained weights)")


def write_export(result: ExportResult, out_dir: str, extra_golden: Optional[Mapping[str, Mapping[str, np.ndarray]]] = None
                 ) -> Dict[str, str]:
    """Write ``graph.json``, ``weights.safetensors`` and ``golden/*.safetensors`` into ``out_dir``."""
    if result.outputs:
        check_golden_outputs(result.outputs)
    os.makedirs(out_dir, exist_ok=True)
    paths = {"graph": os.path.join(out_dir, "graph.json"), "weights": os.path.join(out_dir, "weights.safetensors")}
    result.graph.save(paths["graph"])
    save_file(result.weights, paths["weights"])
    if result.outputs:
        gdir = os.path.join(out_dir, "golden")
        os.makedirs(gdir, exist_ok=True)
        paths["golden_inputs"] = os.path.join(gdir, "inputs.safetensors")
        paths["golden_outputs"] = os.path.join(gdir, "outputs.safetensors")
        save_file(result.inputs, paths["golden_inputs"])
        save_file(result.outputs, paths["golden_outputs"])
        for fname, tensors in (extra_golden or {}).items():
            paths[fname] = os.path.join(gdir, fname)
            save_file(dict(tensors), paths[fname])
    return paths


def export_torch(model: nn.Module, input_shapes: Sequence[Sequence[int]], out_dir: Optional[str] = None,
                 input_dtypes: Optional[Sequence[str]] = None, seed: int = 0, golden: bool = True,
                 inputs: Optional[Sequence[np.ndarray]] = None, graph_name: str = "main", via: str = "fx",
                 dynamic: Optional[dict] = None) -> ExportResult:
    """Translate ``model`` (``via``, ``dynamic``: see :func:`translate_torch`) and (optionally)
    compute golden data at ``input_shapes``; write everything if ``out_dir``."""
    graph, weights = translate_torch(model, input_shapes, input_dtypes, graph_name, via, dynamic)
    result = ExportResult(graph, weights)
    if golden:
        result.inputs, result.outputs = golden_data(model, graph, input_shapes, input_dtypes, seed, inputs)
    if out_dir is not None:
        write_export(result, out_dir)
    return result


class _ProgramModule(nn.Module):
    """An ExportedProgram's ``module()`` as a plain module for :func:`golden_data` (the unlifted
    module refuses ``eval()``; it is kept out of this module's children)."""

    def __init__(self, ep: "torch.export.ExportedProgram") -> None:
        super().__init__()
        object.__setattr__(self, "_program", ep.module())

    def forward(self, *args: torch.Tensor) -> Any:
        return self._program(*args)


def import_pt2(path: str, out_dir: Optional[str] = None, seed: int = 0, golden: bool = True,
               graph_name: str = "main", inputs: Optional[Sequence[np.ndarray]] = None) -> ExportResult:
    """A file written by ``torch.export.save`` -> MSCGraph + weights (parameters, buffers and
    lifted constants from its graph signature) + golden data: outputs of ``ep.module()`` on
    ``inputs``, or on seeded inputs of the program's input shapes and dtypes (see
    :func:`golden_data`; integer inputs are drawn from [0, 10), so a program that indexes with
    them needs ``inputs``). Raises :class:`ExportError`."""
    from .export_importer import program_input_info, require_torch_export
    require_torch_export()
    try:
        ep = torch.export.load(path)
    except FileNotFoundError:
        raise ExportError(f"{path}: no such file") from None
    except Exception as err:  # not a zip, wrong format version, ...
        raise ExportError(f"{path}: not a torch.export.save file ({type(err).__name__}: "
                          f"{str(err).splitlines()[0] if str(err) else ''})") from err
    info = program_input_info(ep)
    graph, weights = translate_exported_program(ep, graph_name)
    result = ExportResult(graph, weights)
    if golden:
        shapes, dtypes = [s for s, _ in info], [d for _, d in info]
        result.inputs, result.outputs = golden_data(_ProgramModule(ep), graph, shapes, dtypes, seed, inputs)
    if out_dir is not None:
        write_export(result, out_dir)
    return result
