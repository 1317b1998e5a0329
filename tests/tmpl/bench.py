#!/usr/bin/python3
"""Benchmark: one large realistic render (a 5,000-op graph emitted as Python code through
macros, filters, an include per op) with Python's jinja2 and with msc_tmpl_render.

usage: bench.py MSC_TMPL_RENDER [--nodes N] [--repeat R]

Checks that both outputs are byte-identical and prints the best-of-R wall and CPU times:
  jinja2 (in-process: environment + template compile + render; JSON is already loaded)
  msc    (whole msc_tmpl_render process: start-up, JSON parse, template parse + render)
and their ratios (CPU times are the more stable figure on a busy machine), then the
render-only times: jinja2's Template.render() of the compiled template vs msc's
Environment::Render() of the cached template (MSC_TMPL_BENCH_REPEAT), best of R.
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

import jinja2

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "bench")
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


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    data = make_graph(args.nodes)
    with tempfile.TemporaryDirectory() as tmp:
        data_path = os.path.join(tmp, "data.json")
        with open(data_path, "w", encoding="utf-8") as fh:
            json.dump(data, fh)

        jinja_best, jinja_cpu, expected = None, None, None
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            env = jinja2.Environment(loader=jinja2.FileSystemLoader(BENCH), undefined=jinja2.StrictUndefined)
            expected = env.get_template("model.py.j2").render(data).encode("utf-8")
            dt, dc = time.perf_counter() - t0, time.process_time() - c0
            jinja_best = dt if jinja_best is None else min(jinja_best, dt)
            jinja_cpu = dc if jinja_cpu is None else min(jinja_cpu, dc)

        msc_best, msc_cpu, got = None, None, None
        for _ in range(args.repeat):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            p = subprocess.run([args.binary, os.path.join(BENCH, "model.py.j2"), data_path], capture_output=True)
            dt = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            dc = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
            if p.returncode != 0:
                print("msc_tmpl_render failed:", p.stderr.decode())
                return 1
            got = p.stdout
            msc_best = dt if msc_best is None else min(msc_best, dt)
            msc_cpu = dc if msc_cpu is None else min(msc_cpu, dc)

    tmpl = jinja2.Environment(loader=jinja2.FileSystemLoader(BENCH),
                              undefined=jinja2.StrictUndefined).get_template("model.py.j2")
    jinja_render = min(_timed(lambda: tmpl.render(data)) for _ in range(args.repeat))
    with tempfile.TemporaryDirectory() as tmp:
        data_path = os.path.join(tmp, "data.json")
        with open(data_path, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        env = dict(os.environ, MSC_TMPL_BENCH_REPEAT=str(args.repeat))
        p = subprocess.run([args.binary, os.path.join(BENCH, "model.py.j2"), data_path], capture_output=True, env=env)
        msc_render = float(p.stderr.decode().split("render_ms=")[1].split()[0]) / 1000

    same = got == expected
    print(f"nodes={args.nodes} output={len(expected)} bytes identical={same}")
    print(f"wall: jinja2 {jinja_best * 1000:.1f} ms  msc_tmpl_render {msc_best * 1000:.1f} ms  "
          f"speed-up {jinja_best / msc_best:.2f}x")
    print(f"cpu:  jinja2 {jinja_cpu * 1000:.1f} ms  msc_tmpl_render {msc_cpu * 1000:.1f} ms  "
          f"speed-up {jinja_cpu / max(msc_cpu, 1e-9):.2f}x")
    print(f"render only: jinja2 {jinja_render * 1000:.1f} ms  msc {msc_render * 1000:.1f} ms  "
          f"speed-up {jinja_render / msc_render:.2f}x")
    if not same:
        for i, (a, b) in enumerate(zip(expected, got)):
            if a != b:
                print("first difference at byte", i)
                print("jinja2:", expected[max(0, i - 200):i + 100])
                print("msc:   ", got[max(0, i - 200):i + 100])
                break
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
