#!/usr/bin/python3
"""Vulkan backend benchmark: generated binary vs PyTorch on this machine's CPU, in one run.

    /usr/bin/python3 scripts/bench_vulkan.py [--examples resnet18 mobilenet_v2 squeezenet1_0 text_transformer]
                                             [--runs 50] [--repeat 3] [--compare-direct] [--fp16] [--no-profile]

For each example: export it (examples/<name>/export.py, or examples/models/export.py --model <name>
for the torchvision models without their own folder, e.g. squeezenet1_0), generate the vulkan and
torch projects, build the vulkan one (Release), then measure, back to back and --repeat times
alternating: p50 latency of `model --bench N` (warm-up 5) and of the generated torch module (the
same graph; torch.set_num_threads(2), no_grad, warm-up 5, N runs). The table reports the median of
the --repeat p50s (and the best one), the ratio vulkan / torch, and the memory plan (planned arena
peak vs the largest sum of simultaneously live tensors, from model.cc, and vs the sum of all
activations). --compare-direct also times the same binary with MSC_VK_CONV=direct (the runtime's
original direct convolution kernel for every conv) to show what the convolution algorithms of
runtime/vulkan/ops_gemm.cc (Winograd, 1x1 GEMM, im2col + GEMM, depthwise) buy on this device.
--fp16 also generates and times the `generate --precision fp16` project (conv / linear weights and
the activations between the float kernels stored as float16) in the same alternation, and prints
its golden line (max abs / rel error) and its activation arena.
Unless --no-profile, prints each model's GPU time per op type (`model --profile`: timestamp
queries; conv rows split by algorithm). Finally the GEMM shader's GFLOP/s at 1024^3
(<build>/tests/bench_gemm). The machine's load average is printed before and after: on a shared
machine the numbers move with it; compare runs taken at the same load.
Use with Debian's libopenblas0-openmp installed (scripts/install_deps.sh does) so torch is not on
the reference BLAS.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Debian's torch + the safetensors package the generated projects need (scripts/install_venv.sh debian).
PY = os.environ.get("MSC_PYTHON", "/usr/bin/python3")

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


def run(cmd, env=None, **kw):
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, **kw)
    if proc.returncode != 0:
        raise SystemExit("failed: %s\n%s%s" % (" ".join(cmd), proc.stdout, proc.stderr))
    return proc.stdout


def export(name, out):
    own = os.path.join(ROOT, "examples", name, "export.py")
    if os.path.exists(own):
        run([PY, own, "--out", out])
    else:
        run([PY, os.path.join(ROOT, "examples", "models", "export.py"), "--model", name, "--out", out])


def vk_bench(binary, runs, env=None, warmup=None, extra=()):
    """(p50 ms, p90 ms, stdout) of `binary --bench runs [extra...]` (a generated vulkan project's
    model; extra e.g. ["--profile"])."""
    out = run([binary, "--bench", str(runs)] + (["--warmup", str(warmup)] if warmup is not None else []) + list(extra),
              env=env)
    m = re.search(r"p50 ([0-9.]+) ms, p90 ([0-9.]+) ms", out)
    return float(m.group(1)), float(m.group(2)), out


def vk_p50(binary, runs, env=None):
    p50, _, out = vk_bench(binary, runs, env)
    return p50, out


def generate(binary, exp, backend, out, extra=()):
    """msc-codegen generate of the export folder `exp` (graph.json, weights.safetensors, golden/)."""
    run([binary, "generate", "--graph", exp + "/graph.json", "--weights", exp + "/weights.safetensors",
         "--golden", exp + "/golden", "--backend", backend, "--out", out] + list(extra))


def build_vulkan(project, env=None):
    """Release build of a generated vulkan project into <project>/build (cmake honours
    CMAKE_CXX_COMPILER_LAUNCHER=ccache from the environment)."""
    run(["cmake", "-S", project, "-B", project + "/build", "-DCMAKE_BUILD_TYPE=Release"], env=env)
    run(["cmake", "--build", project + "/build", "-j2"], env=env)
    return project + "/build/model"


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "msc-codegen"))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"),
                    help="where tests/bench_gemm is (default: <repo>/build)")
    ap.add_argument("--examples", nargs="+",
                    default=["resnet18", "mobilenet_v2", "squeezenet1_0", "text_transformer"])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3, help="alternating vulkan/torch measurements")
    ap.add_argument("--compare-direct", action="store_true",
                    help="also time the vulkan binary with MSC_VK_CONV=direct")
    ap.add_argument("--fp16", action="store_true",
                    help="also time the vulkan project generated with --precision fp16")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--keep", default="", help="keep the exported/generated projects in this folder")
    args = ap.parse_args()
    print("load average at start: %s (%d CPUs)" % (load(), os.cpu_count()))
    rows, profiles, fp16_rows = [], [], []
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = args.keep or tmp_dir
        for name in args.examples:
            exp = os.path.join(tmp, name)
            export(name, exp)
            projects = {}
            for backend in ("vulkan", "torch"):
                projects[backend] = os.path.join(tmp, name + "-" + backend)
                generate(args.binary, exp, backend, projects[backend])
            if args.fp16:
                projects["fp16"] = os.path.join(tmp, name + "-vulkan-fp16")
                generate(args.binary, exp, "vulkan", projects["fp16"], ["--precision", "fp16"])
            for key in ("vulkan", "fp16") if args.fp16 else ("vulkan",):
                build_vulkan(projects[key])
            vk = projects["vulkan"]
            model = vk + "/build/model"
            golden = run([model]).strip().splitlines()[-1]
            fp16_model = projects["fp16"] + "/build/model" if args.fp16 else None
            if fp16_model:
                fp16_out = run([fp16_model])
                fp16_golden = [l for l in fp16_out.splitlines() if l.startswith("output ")]
                fp16_peak = int(re.search(r"arena peak (\d+) bytes", fp16_out).group(1))
            vk_times, torch_times, direct_times, fp16_times = [], [], [], []
            out = ""
            for _ in range(args.repeat):
                p50, out = vk_p50(model, args.runs)
                vk_times.append(p50)
                if fp16_model:
                    fp16_times.append(vk_p50(fp16_model, args.runs)[0])
                torch_out = run([PY, "-c", TORCH_BENCH, projects["torch"], str(args.runs)], cwd=projects["torch"])
                torch_times.append(float(re.search(r"p50 ([0-9.]+)", torch_out).group(1)))
                if args.compare_direct:
                    direct_times.append(vk_p50(model, args.runs, {"MSC_VK_CONV": "direct"})[0])
            peak, naive = map(int, re.search(r"arena peak (\d+) bytes, sum of all activations (\d+)", out).groups())
            with open(os.path.join(vk, "model.cc")) as f:
                m = re.search(r"lower bound: (\d+) bytes", f.read())
            bound = int(m.group(1)) if m else 0
            rows.append((name, statistics.median(vk_times), min(vk_times), statistics.median(torch_times),
                         statistics.median(direct_times) if direct_times else None, peak, bound, naive, golden))
            if fp16_model:
                fp16_rows.append((name, statistics.median(fp16_times), min(fp16_times), statistics.median(vk_times),
                                  fp16_peak, fp16_golden))
            if not args.no_profile:
                prof = run([model, "--bench", str(args.runs), "--profile"])
                profiles.append((name, prof[prof.index("profile:"):] if "profile:" in prof else prof))
    print("%-18s %12s %12s %12s %9s %14s %12s %12s %12s  %s" % (
        "example", "vk p50 ms", "vk best ms", "torch p50", "vk/torch", "direct-conv ms", "arena peak B",
        "lower bnd B", "naive sum B", "golden"))
    for name, vk_med, vk_best, torch_med, direct, peak, bound, naive, golden in rows:
        print("%-18s %12.2f %12.2f %12.2f %9.2f %14s %12d %12d %12d  %s" % (
            name, vk_med, vk_best, torch_med, vk_med / torch_med, "%.2f" % direct if direct else "-", peak, bound,
            naive, golden))
    if fp16_rows:
        print("\n--precision fp16 (conv / linear weights and activations float16):")
        print("%-18s %12s %12s %12s %9s %12s  %s" % ("example", "fp16 p50 ms", "fp16 best", "fp32 p50", "fp16/fp32",
                                                    "arena peak B", "golden (fp16 tolerance)"))
        for name, med, best, fp32, peak16, golden16 in fp16_rows:
            print("%-18s %12.2f %12.2f %12.2f %9.2f %12d  %s" % (name, med, best, fp32, med / fp32, peak16,
                                                               "; ".join(golden16)))
    for name, prof in profiles:
        print("\n[%s] %s" % (name, prof.strip()))
    gemm = os.path.join(args.build_dir, "tests", "bench_gemm")
    if os.path.exists(gemm):
        print("\nGEMM 1024^3:", run([gemm, "1024", "10"]).strip().splitlines()[-1])
    else:
        print("\nGEMM 1024^3: %s not built (cmake --build %s --target bench_gemm)" % (gemm, args.build_dir))
    print("load average at end: %s" % load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
