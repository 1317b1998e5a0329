#!/usr/bin/python3
"""Runs a generated torch or numpy project on a safetensors file of inputs and writes its outputs
(tests/difftest/difftest.py's runner for the Python backends).

    pyrun.py torch|numpy PROJECT GRAPH.json INPUTS.safetensors OUTPUTS.safetensors

Inputs are passed in the graph's input order; output i is written under the graph's output
name i, as the model returned it (no dtype conversion: a wrong dtype is the backend's bug).
"""
import json
import os
import sys

import numpy as np


def main():
    backend, project, graph_path, inputs_path, outputs_path = sys.argv[1:6]
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(here)), "python"))
    from msc_export.safetensors_np import load_file, save_file
    with open(graph_path) as f:
        graph = json.load(f)
    inputs = load_file(inputs_path)
    arrays = [inputs[name] for name in graph["inputs"]]
    sys.path.insert(0, project)
    import model  # noqa: E402  the generated model.py
    if backend == "torch":
        import torch
        with torch.no_grad():
            result = model.load_model()(*[torch.from_numpy(np.array(a)) for a in arrays])
        result = result if isinstance(result, (tuple, list)) else (result,)
        result = [r.detach().cpu().numpy() for r in result]
    else:
        result = model.run(*arrays)
        result = result if isinstance(result, (tuple, list)) else (result,)
        result = [np.asarray(r) for r in result]
    if len(result) != len(graph["outputs"]):
        sys.exit("error: the model returned %d outputs, the graph has %d" % (len(result), len(graph["outputs"])))
    save_file({name: np.array(r, order="C") for name, r in zip(graph["outputs"], result)}, outputs_path)  # 0-d stays 0-d


if __name__ == "__main__":
    main()
