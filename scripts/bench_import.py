#!/usr/bin/python3
"""Wall time of `msc-codegen import` on real ONNX models (torch.onnx exports of torchvision models).

    /usr/bin/python3 scripts/bench_import.py [--binary build/msc-codegen] [--models resnet18 ...]
        [--opset 17] [--repeat 10]

Each model is exported once with python/msc_export/onnx_models.py (seeded weights), then imported
--repeat times (process start to exit: protobuf parse, ONNX checker, shape inference, folding,
conversion, validation against the opdefs, graph.json + weights.safetensors written); the script
prints the best and the median time per model, the model size, and the node/weight counts.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "msc-codegen"))
    ap.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2", "efficientnet_b0", "text_transformer"])
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    with tempfile.TemporaryDirectory() as tmp:
        print("%-18s %10s %7s %8s %10s %10s" % ("model", "onnx MB", "nodes", "weights", "best s", "median s"))
        for model in args.models:
            src = os.path.join(tmp, model)
            subprocess.run([sys.executable, "-m", "msc_export.onnx_models", model, "--opset", str(args.opset),
                            "--out", src], check=True, env=env, cwd="/", capture_output=True)
            onnx_path = os.path.join(src, "model.onnx")
            times = []
            for _ in range(args.repeat):
                out = os.path.join(tmp, model + "_import")
                t0 = time.perf_counter()
                subprocess.run([args.binary, "import", onnx_path, "--out", out, "--force"], check=True,
                               capture_output=True)
                times.append(time.perf_counter() - t0)
            with open(os.path.join(out, "graph.json")) as f:
                g = json.load(f)
            n_weights = sum(len(n["weights"]) for n in g["nodes"])
            print("%-18s %10.1f %7d %8d %10.3f %10.3f" % (model, os.path.getsize(onnx_path) / 1e6, len(g["nodes"]),
                                                          n_weights, min(times), statistics.median(times)))


if __name__ == "__main__":
    main()
