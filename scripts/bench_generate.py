#!/usr/bin/python3
"""Generation wall time and peak memory of msc-codegen for resnet18 and synthetic graphs.

    /usr/bin/python3 scripts/bench_generate.py [--binary build/msc-codegen] [--backends B ...]  (default: every backend)
                                               [--nodes 10000 100000] [--repeat 3]

The synthetic graph is a residual MLP on [1, 16]: repeated (msc.linear_bias -> nn.relu -> add)
blocks until 10,000 nodes, every linear with its own 16x16 weight. Times are the best of
--repeat runs of `msc-codegen generate` (process start to exit, output written); peak RSS is the
largest of those runs (GNU time, /usr/bin/time). Graphs of more than 250,000 nodes need --max-nodes.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from msc_export.safetensors_np import save_file  # noqa: E402


def tensor(name, shape, layout="NC", alias=""):
    return {"name": name, "alias": alias, "dtype": "float32", "layout": layout, "shape": shape, "prims": []}


def synthetic(n_nodes, folder):
    """Writes graph.json + weights.safetensors with n_nodes nodes; returns their paths."""
    nodes = [{"index": 0, "name": "inp_0", "shared_ref": "", "optype": "input", "parents": [], "inputs": [],
              "outputs": [tensor("inp_0:0", [1, 16], alias="inp_0")], "attrs": {}, "weights": {}}]
    weights = {}
    rng = np.random.default_rng(0)
    prev = "inp_0"
    block = 0
    while len(nodes) + 3 <= n_nodes:
        lin, relu, add = "linear_%d" % block, "relu_%d" % block, "add_%d" % block
        w, b = "const_%d" % (2 * block), "const_%d" % (2 * block + 1)
        weights[w] = rng.standard_normal((16, 16)).astype(np.float32) * 0.1
        weights[b] = rng.standard_normal((16,)).astype(np.float32) * 0.1
        for name, optype, ins, extra in (
                (lin, "msc.linear_bias", [prev], {"attrs": {"out_dtype": "float32"},
                                                  "weights": {"bias": tensor(b, [16], "O", lin + ".bias"),
                                                              "weight": tensor(w, [16, 16], "OI", lin + ".weight")}}),
                (relu, "nn.relu", [lin], {}),
                (add, "add", [relu, prev], {})):
            node = {"index": len(nodes), "name": name, "shared_ref": "", "optype": optype,
                    "parents": ins, "inputs": [i + ":0" for i in ins],
                    "outputs": [tensor(name + ":0", [1, 16])], "attrs": {}, "weights": {}}
            node.update(extra)
            nodes.append(node)
        prev = add
        block += 1
    while len(nodes) < n_nodes:
        name = "relu_tail_%d" % len(nodes)
        nodes.append({"index": len(nodes), "name": name, "shared_ref": "", "optype": "nn.relu", "parents": [prev],
                      "inputs": [prev + ":0"], "outputs": [tensor(name + ":0", [1, 16])], "attrs": {}, "weights": {}})
        prev = name
    nodes[-1]["outputs"][0]["alias"] = prev
    graph = {"name": "main", "inputs": ["inp_0:0"], "outputs": [prev + ":0"], "nodes": nodes, "prims": []}
    gpath, wpath = os.path.join(folder, "graph.json"), os.path.join(folder, "weights.safetensors")
    with open(gpath, "w") as f:
        json.dump(graph, f)
    save_file(weights, wpath)
    return gpath, wpath


def time_generate(binary, graph, weights, backend, out, repeat):
    """Best wall time over `repeat` runs and the largest peak RSS (MB) of those runs. The peak RSS
    comes from GNU time (a small parent: ru_maxrss survives exec, so a child forked from this
    Python process would report Python's own size)."""
    best, peak = None, 0
    rss_file = out + ".rss"
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file, binary, "generate", "--graph", graph,
                               "--weights", weights, "--backend", backend, "--out", out, "--force"],
                              capture_output=True, text=True)
        dt = time.perf_counter() - t0
        if proc.returncode != 0:
            return None, None, proc.stderr.strip().splitlines()[0]
        best = dt if best is None else min(best, dt)
        with open(rss_file) as f:
            peak = max(peak, int(f.read().split()[-1]) / 1024)
    return best, peak, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "msc-codegen"))
    ap.add_argument("--backends", nargs="+", default=None, help="default: every backend `msc-codegen backends` lists")
    ap.add_argument("--nodes", type=int, nargs="+", default=[10000], help="sizes of the synthetic graphs")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.backends is None:
        listing = subprocess.run([args.binary, "backends", "--json"], capture_output=True, text=True, check=True)
        args.backends = [b["name"] for b in json.loads(listing.stdout)]
    with tempfile.TemporaryDirectory() as tmp:
        graphs = {}
        r18 = os.path.join(tmp, "resnet18")
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "examples", "resnet18", "export.py"), "--out", r18],
                       check=True, capture_output=True)
        graphs["resnet18"] = (os.path.join(r18, "graph.json"), os.path.join(r18, "weights.safetensors"))
        for n in args.nodes:
            syn = os.path.join(tmp, "synthetic%d" % n)
            os.makedirs(syn)
            graphs["synthetic %d nodes" % n] = synthetic(n, syn)
        print("%-24s %-8s %-34s %s" % ("graph", "backend", "generate wall time (best of %d)" % args.repeat,
                                       "peak RSS"))
        for label, (g, w) in graphs.items():
            for backend in args.backends:
                secs, peak, err = time_generate(args.binary, g, w, backend, os.path.join(tmp, "out"), args.repeat)
                print("%-24s %-8s %-34s %s" % (label, backend, "%.3f s" % secs if secs is not None else "n/a: " + err,
                                               "%.0f MB" % peak if peak else ""))


if __name__ == "__main__":
    main()
