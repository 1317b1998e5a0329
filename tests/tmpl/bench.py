#!/usr/bin/python3
"""Benchmark: one large realistic render (a 5,000-op graph emitted as Python code through
macros, filters, an include per op), WHOLE PROCESS against WHOLE PROCESS:

  jinja2: `python3 jinja_render.py bench/model.py.j2 data.json` (interpreter start-up, import
          jinja2, json.load, template compile, render, write)
  msc:    `msc_tmpl_render bench/model.py.j2 data.json` (process start-up, JSON parse, template
          parse, render, write)

usage: bench.py MSC_TMPL_RENDER [--nodes N] [--repeat R] [--render-only]

Both commands get the same template and data file; every run's output must be byte-identical
to jinja2's (exit 1 otherwise). The runs alternate between the two programs (so that load from
other processes on a shared machine hits both alike) and the script prints, for each program,
the best and the median over R runs of the wall time and of the CPU time (user + system of the
child process; the steadier figure on a busy machine), and the jinja2/msc ratios of each.
--render-only also prints the in-process render times: jinja2's Template.render() of the
compiled template vs msc's Environment::Render() of the cached template (MSC_TMPL_BENCH_REPEAT).
"""
import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "bench")
TEMPLATE = os.path.join(BENCH, "model.py.j2")
JINJA_RENDER = os.path.join(HERE, "jinja_render.py")
OPS = ["conv2d", "relu", "add", "matmul", "sigmoid", "Concat", "reshape", "tanh", "batch_norm"]


def make_graph(n, seed=7):
    r = random.Random(seed)
    nodes = []
    for i in range(n):
        op = r.choice(OPS)
        inputs = ["x"] if i == 0 else [nodes[r.randrange(max(0, i - 8), i)]["name"] for _ in range(r.randint(1, 3))]
        attrs = {}
        if op in ("conv2d", "matmul", "batch_norm"):
            attrs = {"stride": r.randint(1, 2), "padding": r.choice(["same", "valid"]), "eps": r.choice([1e-05, 0.001]),
                     "groups": r.randint(1, 4)}
        nodes.append({"name": f"t{i}", "op": op, "inputs": inputs, "attrs": attrs,
                      "shape": [1, r.choice([16, 32, 64]), r.choice([7, 14, 28]), r.choice([7, 14, 28])],
                      "flops": r.randint(1000, 50_000_000)})
    weights = [{"name": f"w{i}", "shape": [r.choice([16, 32])] * r.randint(1, 3), "dtype": r.choice(["float32", "int8"])}
               for i in range(n // 10)]
    return {"graph": {"name": "bench_graph", "doc": "  Synthetic benchmark graph.\nSecond line.\n",
                      "inputs": [{"name": "x"}], "outputs": [nodes[-1]["name"]], "nodes": nodes, "weights": weights}}


def run_timed(cmd, env=None):
    """Runs cmd; returns (stdout bytes, stderr bytes, returncode, wall s, cpu s)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, env=env)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return p.stdout, p.stderr, p.returncode, wall, cpu


def first_difference(expected, got):
    for i, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            return i
    return min(len(expected), len(got))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--render-only", action="store_true")
    args = ap.parse_args()
    data = make_graph(args.nodes)
    jinja_cmd = [sys.executable, JINJA_RENDER, TEMPLATE]
    msc_cmd = [args.binary, TEMPLATE]
    times = {"jinja2": ([], []), "msc": ([], [])}
    with tempfile.TemporaryDirectory() as tmp:
        data_path = os.path.join(tmp, "data.json")
        with open(data_path, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        expected = None
        for _ in range(args.repeat):
            for name, cmd in (("jinja2", jinja_cmd), ("msc", msc_cmd)):
                out, err, rc, wall, cpu = run_timed(cmd + [data_path])
                if rc != 0:
                    print(f"{name} failed (exit {rc}):", err.decode(errors="replace"))
                    return 1
                if expected is None:
                    expected = out
                elif out != expected:
                    i = first_difference(expected, out)
                    print(f"output of {name} differs from jinja2's at byte {i}")
                    print("jinja2:", expected[max(0, i - 200):i + 100])
                    print(f"{name}:", out[max(0, i - 200):i + 100])
                    return 1
                times[name][0].append(wall)
                times[name][1].append(cpu)

        print(f"nodes={args.nodes} output={len(expected)} bytes identical=True runs={args.repeat} (whole process)")
        for label, k in (("wall", 0), ("cpu ", 1)):
            j, m = times["jinja2"][k], times["msc"][k]
            jb, mb, jm, mm = min(j), min(m), statistics.median(j), statistics.median(m)
            print(f"{label}: jinja2 best {jb * 1000:7.1f} ms median {jm * 1000:7.1f} ms | "
                  f"msc_tmpl_render best {mb * 1000:6.1f} ms median {mm * 1000:6.1f} ms | "
                  f"speed-up best {jb / max(mb, 1e-9):5.1f}x median {jm / max(mm, 1e-9):5.1f}x")

        if args.render_only:
            import jinja2
            tmpl = jinja2.Environment(loader=jinja2.FileSystemLoader(BENCH),
                                      undefined=jinja2.StrictUndefined).get_template("model.py.j2")
            jr = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                tmpl.render(data)
                jr.append(time.perf_counter() - t0)
            env = dict(os.environ, MSC_TMPL_BENCH_REPEAT=str(args.repeat))
            _, err, rc, _, _ = run_timed(msc_cmd + [data_path], env=env)
            if rc != 0:
                print("msc_tmpl_render failed:", err.decode(errors="replace"))
                return 1
            mr = float(err.decode().split("render_ms=")[1].split()[0]) / 1000
            print(f"render only (best, in-process): jinja2 {min(jr) * 1000:.1f} ms  msc {mr * 1000:.2f} ms  "
                  f"speed-up {min(jr) / mr:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
