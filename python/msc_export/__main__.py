"""Command line: ``/usr/bin/python3 -m msc_export <command> ...`` (with ``PYTHONPATH=<repo>/python``).

Commands::

    export   --model MODULE:CALLABLE | FILE.py:CALLABLE  [--kwargs JSON] [--state-dict FILE]
             --input-shape 1,3,224,224 [--input-shape ...] [--input-dtype float32 ...]
             --out DIR [--seed 0] [--no-golden] [--graph-name main] [--via fx|export]
        Build the model (``torch.manual_seed(seed)`` first), export graph.json,
        weights.safetensors and golden/{inputs,outputs}.safetensors into DIR. ``--via``: the
        frontend, torch.fx (default, MSC's) or torch.export (torch >= 2.1, core ATen).
    import-pt2 MODEL.pt2 --out DIR [--seed 0] [--no-golden] [--graph-name main]
        A file written by ``torch.export.save`` -> the same files (golden outputs from the
        program itself, on seeded inputs of its input shapes and dtypes).
    aten-ops
        The core ATen ops (this torch's ``torch.Tag.core`` overloads) the export path converts and
        those it does not.
    hostile  --out DIR [--seed 0]
        Write the hostile-names test graph (see msc_export.hostile).
    validate GRAPH.json [--weights W.safetensors] [--golden DIR]
        Structural checks; with weights (+ golden) also run the reference interpreter.

Exit status: 0 ok, 1 export/validation error (one message on stderr listing every problem),
2 usage error.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
from typing import List, Optional


def _load_callable(spec: str):
    if ":" not in spec:
        raise SystemExit(f"error: --model must be MODULE:CALLABLE or FILE.py:CALLABLE, got {spec!r}")
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py"):
        mod_spec = importlib.util.spec_from_file_location("msc_export_user_model", where)
        if mod_spec is None or mod_spec.loader is None:
            raise SystemExit(f"error: cannot load {where}")
        module = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    obj = module
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _shape(text: str) -> List[int]:
    try:
        return [int(s) for s in text.replace("x", ",").split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad shape {text!r}; expected e.g. 1,3,224,224") from None


def cmd_export(args: argparse.Namespace) -> int:
    import torch

    from .exporter import export_torch

    torch.manual_seed(args.seed)
    factory = _load_callable(args.model)
    model = factory(**json.loads(args.kwargs)) if args.kwargs else factory()
    if args.state_dict:
        model.load_state_dict(torch.load(args.state_dict, map_location="cpu"))
    dynamic = None
    if args.dynamic:
        from .export_importer import DynamicDim
        dynamic = dict(DynamicDim.parse(text) for text in args.dynamic)
    result = export_torch(model, args.input_shape, None, args.input_dtype, seed=args.seed,
                          golden=not args.no_golden, graph_name=args.graph_name, via=args.via, dynamic=dynamic)
    return _write(result, args.out, "exported")


def cmd_import_pt2(args: argparse.Namespace) -> int:
    from .exporter import import_pt2

    result = import_pt2(args.model, None, seed=args.seed, golden=not args.no_golden, graph_name=args.graph_name)
    return _write(result, args.out, "imported")


def _write(result, out: str, verb: str) -> int:
    """Writes an ExportResult into `out` and lists the files."""
    from .exporter import write_export

    paths = write_export(result, out)
    print(f"{verb} {len(result.graph.nodes)} nodes, {len(result.weights)} weights -> {out}")
    for key in sorted(paths):
        print(f"  {key}: {paths[key]}")
    return 0


def cmd_aten_ops(args: argparse.Namespace) -> int:
    import torch

    from .export_importer import core_aten_coverage, require_torch_export

    require_torch_export()
    covered, missing = core_aten_coverage()
    print(f"torch {torch.__version__}: {len(covered) + len(missing)} core ATen overloads, "
          f"{len(covered)} converted, {len(missing)} not")
    print("converted: " + " ".join(covered))
    print("not converted: " + " ".join(missing))
    return 0


def cmd_hostile(args: argparse.Namespace) -> int:
    from .hostile import write_hostile

    paths = write_hostile(args.out, seed=args.seed)
    print(f"hostile graph -> {args.out}")
    for key in sorted(paths):
        print(f"  {key}: {paths[key]}")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    import numpy as np

    from .interp import run_graph
    from .mscgraph import MSCGraph, validate
    from .safetensors_np import load_file

    graph = MSCGraph.load(args.graph)
    validate(graph)
    print(f"{args.graph}: {len(graph.nodes)} nodes, structure ok")
    if args.weights:
        weights = load_file(args.weights)
        missing = [t for t in graph.weight_tensors() if t not in weights]
        if missing:
            print(f"error: weights missing from {args.weights}: {missing}", file=sys.stderr)
            return 1
        if args.golden:
            inputs = load_file(os.path.join(args.golden, "inputs.safetensors"))
            expected = load_file(os.path.join(args.golden, "outputs.safetensors"))
            got = run_graph(graph, weights, inputs)
            worst = max(float(np.max(np.abs(got[k].astype(np.float64) - expected[k]))) if got[k].size else 0.0
                        for k in graph.outputs)
            print(f"reference interpreter vs golden: max abs error {worst:.3g}")
            if worst > args.atol:
                print(f"error: outputs differ from golden by {worst:.3g} > {args.atol}", file=sys.stderr)
                return 1
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0].startswith("--") and argv[0] not in ("-h", "--help"):
        argv.insert(0, "export")  # `python -m msc_export --model ...` means export
    parser = argparse.ArgumentParser(prog="msc_export", description="PyTorch -> MSCGraph + weights + golden data")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("export", help="export a PyTorch model")
    p.add_argument("--model", required=True, help="MODULE:CALLABLE or FILE.py:CALLABLE returning an nn.Module")
    p.add_argument("--kwargs", default="", help="JSON object of keyword arguments for the callable")
    p.add_argument("--state-dict", default="", help="torch.save'd state dict to load")
    p.add_argument("--input-shape", type=_shape, action="append", required=True, help="e.g. 1,3,224,224; repeat per input")
    p.add_argument("--input-dtype", action="append", default=None, help="dtype per input (default float32)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-golden", action="store_true")
    p.add_argument("--graph-name", default="main")
    p.add_argument("--via", choices=["fx", "export"], default="fx",
                   help="frontend: torch.fx symbolic tracing (MSC's) or torch.export (torch >= 2.1)")
    p.add_argument("--dynamic", action="append", default=[], metavar="INPUT:DIM=NAME[:MIN:MAX]",
                   help="with --via export: make dim DIM of input INPUT (0-based) the dynamic dim NAME "
                        "(torch.export.Dim, range MIN..MAX, default 2..), written as an MSC prim; repeatable, "
                        "one NAME for dims that must be equal; golden data at --input-shape")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import-pt2", help="import a torch.export.save file")
    p.add_argument("model", help="MODEL.pt2 written by torch.export.save")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-golden", action="store_true")
    p.add_argument("--graph-name", default="main")
    p.set_defaults(func=cmd_import_pt2)

    p = sub.add_parser("aten-ops", help="the core ATen ops the export path converts, and those it does not")
    p.set_defaults(func=cmd_aten_ops)

    p = sub.add_parser("hostile", help="write the hostile-names test graph")
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_hostile)

    p = sub.add_parser("validate", help="check a graph (and run it against golden data)")
    p.add_argument("graph")
    p.add_argument("--weights", default="")
    p.add_argument("--golden", default="")
    p.add_argument("--atol", type=float, default=1e-4)
    p.set_defaults(func=cmd_validate)

    args = parser.parse_args(argv)
    from .fx_importer import ExportError
    from .mscgraph import GraphError
    try:
        return args.func(args)
    except (ExportError, GraphError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
