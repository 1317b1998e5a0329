#!/usr/bin/python3
"""Vulkan backend benchmark: generated binary vs PyTorch on this machine's CPU, in one run.

    /usr/bin/python3 scripts/bench_vulkan.py [--examples conv_relu fashion_mnist_mlp resnet18] [--runs 50]

For each example: export (examples/<name>/export.py), generate the vulkan and torch projects,
build the vulkan one, then measure p50 latency of `model --bench N` (warm-up 5) and of the
generated torch module (the same graph; torch.set_num_threads(2), no_grad, warm-up 5, N runs)
back to back. Also prints the memory plan (planned arena peak vs the sum of all activations) and
the GEMM shader's GFLOP/s at 1024^3 (build/tests/bench_gemm). Use with Debian's
libopenblas0-openmp installed (scripts/install_deps.sh does) so torch is not on the reference BLAS.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"

TORCH_BENCH = r"""
import sys, time, statistics
import numpy as np, torch
torch.set_num_threads(2)
sys.path.insert(0, sys.argv[1])
from model import load_model, load_safetensors
import test_model
model = load_model()
inputs = load_safetensors(sys.argv[1] + "/golden/inputs.safetensors")
args = [torch.from_numpy(np.array(inputs[name])) for name, _ in test_model.INPUTS]
times = []
with torch.no_grad():
    for i in range(5 + int(sys.argv[2])):
        t0 = time.perf_counter(); model(*args); dt = time.perf_counter() - t0
        if i >= 5: times.append(dt * 1e3)
print("p50 %.4f" % statistics.median(times))
"""


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise SystemExit("failed: %s\n%s%s" % (" ".join(cmd), proc.stdout, proc.stderr))
    return proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "msc-codegen"))
    ap.add_argument("--examples", nargs="+", default=["conv_relu", "fashion_mnist_mlp", "resnet18"])
    ap.add_argument("--runs", type=int, default=50)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.examples:
            exp = os.path.join(tmp, name)
            run([PY, os.path.join(ROOT, "examples", name, "export.py"), "--out", exp])
            projects = {}
            for backend in ("vulkan", "torch"):
                projects[backend] = os.path.join(tmp, name + "-" + backend)
                run([args.binary, "generate", "--graph", exp + "/graph.json", "--weights", exp + "/weights.safetensors",
                     "--golden", exp + "/golden", "--backend", backend, "--out", projects[backend]])
            vk = projects["vulkan"]
            run(["cmake", "-S", vk, "-B", vk + "/build", "-DCMAKE_BUILD_TYPE=Release"])
            run(["cmake", "--build", vk + "/build", "-j2"])
            out = run([vk + "/build/model", "--bench", str(args.runs)])
            vk_p50 = float(re.search(r"p50 ([0-9.]+) ms", out).group(1))
            peak, naive = map(int, re.search(r"arena peak (\d+) bytes, sum of all activations (\d+)", out).groups())
            torch_out = run([PY, "-c", TORCH_BENCH, projects["torch"], str(args.runs)], cwd=projects["torch"])
            torch_p50 = float(re.search(r"p50 ([0-9.]+)", torch_out).group(1))
            rows.append((name, vk_p50, torch_p50, peak, naive))
    print("%-20s %14s %14s %10s %14s %14s" % ("example", "vulkan p50 ms", "torch p50 ms", "vk/torch", "arena peak B", "naive sum B"))
    for name, vk_p50, torch_p50, peak, naive in rows:
        print("%-20s %14.3f %14.3f %10.2f %14d %14d" % (name, vk_p50, torch_p50, vk_p50 / torch_p50, peak, naive))
    gemm = os.path.join(ROOT, "build", "tests", "bench_gemm")
    if os.path.exists(gemm):
        print("GEMM 1024^3:", run([gemm, "1024", "10"]).strip().splitlines()[-1])
    else:
        print("GEMM 1024^3: build/tests/bench_gemm not built (cmake --build build --target bench_gemm)")


if __name__ == "__main__":
    main()
