"""msc_export: PyTorch -> MSCGraph (TVM MSC's DAG IR) + weights + golden data, without TVM.

Reproduces what TVM v0.20 MSC's torch path (torch.fx -> relax ``from_fx`` -> MSC graph builder)
writes, see :mod:`msc_export.exporter`.  Public API::

    from msc_export import export_torch, translate_torch
    result = export_torch(model, [[1, 3, 224, 224]], out_dir="out/resnet18", seed=0)
    result.graph      # MSCGraph (msc_export.mscgraph)
    result.weights    # {"const": np.ndarray, ...}
    result.inputs     # {"inp_0:0": ...}   golden inputs
    result.outputs    # {"<node>:0": ...}  outputs of the original torch model
    export_torch(model, [[1, 3, 224, 224]], via="export")   # torch.export (torch 2.x) instead of fx
    import_pt2("model.pt2", out_dir="out/m")                  # a torch.export.save file

CLI: ``/usr/bin/python3 -m msc_export --help`` (with ``PYTHONPATH=<repo>/python``).
"""

from .exporter import (ExportResult, export_torch, golden_data, import_pt2, translate_exported_program, translate_torch,
                       write_export)
from .fx_importer import ExportError, UnsupportedOpsError
from .mscgraph import GraphError, MSCGraph, MSCJoint, MSCTensor, validate

__all__ = [
    "ExportResult", "export_torch", "golden_data", "import_pt2", "translate_exported_program", "translate_torch",
    "write_export",
    "ExportError", "UnsupportedOpsError", "GraphError", "MSCGraph", "MSCJoint", "MSCTensor", "validate",
]
