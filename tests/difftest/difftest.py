#!/usr/bin/python3
"""Random-graph differential testing of the backends (issue 10, item 4).

For every seed, python/msc_export/randgraph.py generates a random valid MSCGraph with weights,
inputs, the exact expected value of every tensor (the reference interpreter,
python/msc_export/interp.py, in float64) and a per-element tolerance (Monte-Carlo error
propagation of each op's error budget; see randgraph's docstring). The graphs of a batch are
merged into ONE graph (names prefixed "g<seed>_", python/msc_export/graph_merge.py), generated
once per backend with `msc-codegen generate` and run once. The backends are the ones the suite
finds (tests/common/backends.py: every backend.yaml with a `test` section), each project run as
its `test.run` says with `--save-outputs FILE`: the harness runs the model on the golden inputs
and writes every output, bit for bit, to FILE. The environment of those runs asks a project that
is built first (the Vulkan one) for a fast, warning-free build: CMAKE_BUILD_TYPE=None (no
optimization: GCC takes minutes on a model.cc of thousands of nodes at -O1 and above, seconds at
-O0; the kernels are the same), CXXFLAGS=-Werror (the generated code must build warning-free; a
warning fails its batch, which is then split down to the graph), CMAKE_CXX_COMPILER_LAUNCHER=ccache
when installed (with CCACHE_BASEDIR, so folders do not matter) and MSC_VK_GLSLC=glslc_cache.py
(a caching front end of the shader compiler).

Every output of every backend is compared with the reference (floats: |got - expected| <=
tolerance per element; integers and bools exactly; dtypes and shapes exactly), and the backends
with each other ("backends: torch=numpy | vulkan" groups the ones that agree). A batch that fails
as a whole (generate, build -- a compiler warning included -- or run error) is split in halves
until the failing graph is alone; that graph is reported as an error of the backend.

A disagreement is minimized on its backend: (1) every tensor of the graph is made an output and
the first one (in node order) that differs is found; (2) its node alone, fed with the reference
values of its inputs, is tried; (3) else nodes are cut away greedily (each replaced by graph
inputs holding its reference values) while the graph still disagrees, all candidates of a round
in one merged run. The minimized graph is printed and written with weights and golden data to
<work>/minimized/<seed>_<backend>/ (`msc-codegen generate --graph .../graph.json ...` reproduces).

  difftest.py --seeds 0:250                     CI (tests/difftest.cmake): fixed seeds, one build
  difftest.py --minutes 25 --seeds 100000:      long run: batches of --batch seeds until time is up
  difftest.py --seeds 185:186 --backends vulkan one seed on one backend (to reproduce a finding)

Prints "graphs run: N, disagreements: D, errors: E" (and one block per finding); exit status 1
when there is any disagreement or error.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "common"))

from msc_export import randgraph  # noqa: E402
from msc_export.graph_merge import merge_graphs  # noqa: E402
from msc_export.safetensors_np import load_file, save_file  # noqa: E402
import backends as suite_backends  # noqa: E402

BINARY = os.environ.get("MSC_CODEGEN", os.path.join(ROOT, "build", "msc-codegen"))
PY = sys.executable  # MSC_PYTHON: Debian's stack + safetensors (scripts/install_venv.sh debian)


def log(msg):
    print(msg, flush=True)


# ---- cases ---------------------------------------------------------------------------------------

class Case:
    """One graph to run: a RandomGraph, or a derived graph (minimization) with its own reference."""

    def __init__(self, key, graph, weights, inputs, expected, tolerance):
        self.key, self.graph, self.weights, self.inputs = key, graph, weights, inputs
        self.expected, self.tolerance = expected, tolerance

    @classmethod
    def from_random(cls, rg):
        return cls("g%d" % rg.seed, rg.graph, rg.weights, rg.inputs, rg.expected, rg.tolerance)

    def producer(self, tensor):
        for n in self.graph["nodes"]:
            for t in n["outputs"]:
                if t["name"] == tensor:
                    return n
        return None

    def tensor_meta(self, tensor):
        n = self.producer(tensor)
        return next(t for t in n["outputs"] if t["name"] == tensor)


def _dtype_np(name):
    return randgraph.NP_DTYPES[name]


def compare(case, tensor, got):
    """None when `got` matches the reference of `tensor`, else a description."""
    meta = case.tensor_meta(tensor)
    exp = case.expected[tensor]
    if got is None:
        return "missing"
    if list(got.shape) != list(meta["shape"]):
        return "shape %s, expected %s" % (list(got.shape), meta["shape"])
    if got.dtype != np.dtype(_dtype_np(meta["dtype"])):
        return "dtype %s, expected %s" % (got.dtype, meta["dtype"])
    if meta["dtype"] in randgraph.FLOATS:
        tol = case.tolerance[tensor]
        g = got.astype(np.float64)
        with np.errstate(invalid="ignore"):  # equal infinities and nan vs nan match exactly
            bad = ~((g == exp) | (np.isnan(g) & np.isnan(exp)) | (np.abs(g - exp) <= tol))
    else:
        bad = got != exp
    n = int(np.count_nonzero(bad))
    if n == 0:
        return None
    if meta["dtype"] in randgraph.FLOATS:
        with np.errstate(invalid="ignore", divide="ignore"):
            excess = np.where(bad, np.nan_to_num(np.abs(got.astype(np.float64) - exp) / tol, nan=np.inf), 0)
        i = np.unravel_index(int(np.argmax(excess)), got.shape) if got.ndim else ()
        return "%d of %d elements differ; worst at %s: got %r, expected %r, tolerance %.3g" % (
            n, got.size, list(i), float(got[i]), float(exp[i]), float(case.tolerance[tensor][i]))
    i = np.unravel_index(int(np.argmax(bad)), got.shape) if got.ndim else ()
    return "%d of %d elements differ; first at %s: got %r, expected %r" % (
        n, got.size, list(i), got[i].item(), np.asarray(exp)[i].item())


# ---- running a batch on one backend ---------------------------------------------------------------

def _run(cmd, cwd=None, timeout=1800, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return -1, "", "timed out after %d s" % timeout


class Runner:
    def __init__(self, work, backends, jobs=2, verbose=False, shader_cache=True):
        self.work = work
        self.backends = {b.name: b for b in backends}
        self.jobs = jobs
        self.verbose = verbose
        self.builds = collections.Counter()
        self.ccache = shutil.which("ccache")
        self.shader_cache = shader_cache

    def write(self, cases, folder):
        """Merged graph, weights and golden files of `cases` in `folder`; returns the graph."""
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(os.path.join(folder, "golden"))
        graph = merge_graphs([(c.key + "_", c.graph) for c in cases], "difftest")
        weights, inputs, outputs = {}, {}, {}
        for c in cases:
            p = c.key + "_"
            weights.update({p + k: v for k, v in c.weights.items()})
            inputs.update({p + k: v for k, v in c.inputs.items()})
            for t in c.graph["outputs"]:
                outputs[p + t] = np.asarray(c.expected[t]).astype(_dtype_np(c.tensor_meta(t)["dtype"]))
        with open(os.path.join(folder, "graph.json"), "w") as f:
            json.dump(graph, f, indent=1)
        save_file(weights, os.path.join(folder, "weights.safetensors"))
        save_file(inputs, os.path.join(folder, "golden", "inputs.safetensors"))
        save_file(outputs, os.path.join(folder, "golden", "outputs.safetensors"))
        return graph

    def run_env(self, proj):
        """The environment of a project's run (see the module docstring)."""
        env = {"CMAKE_BUILD_TYPE": "None", "CXXFLAGS": "-Werror", "OMP_NUM_THREADS": "1",
               "CMAKE_BUILD_PARALLEL_LEVEL": str(self.jobs)}
        if self.ccache:
            env.update(CMAKE_CXX_COMPILER_LAUNCHER="ccache", CCACHE_BASEDIR=os.path.realpath(proj), CCACHE_NOHASHDIR="1")
        if self.shader_cache:
            env["MSC_VK_GLSLC"] = os.path.join(HERE, "glslc_cache.py")
        return env

    def run_once(self, cases, backend, folder):
        """(outputs by merged tensor name, None) or (None, error message)."""
        self.write(cases, folder)
        proj = os.path.join(folder, backend)
        rc, out, err = _run([BINARY, "generate", "--graph", os.path.join(folder, "graph.json"), "--weights",
                             os.path.join(folder, "weights.safetensors"), "--golden", os.path.join(folder, "golden"),
                             "--backend", backend, "--out", proj], timeout=600)
        if rc != 0:
            return None, "msc-codegen generate failed (exit %d): %s" % (rc, (err or out).strip()[-3000:])
        result = os.path.join(folder, backend + "_outputs.safetensors")
        t0 = time.time()
        try:
            proc = suite_backends.run_project(self.backends[backend], proj, PY, timeout=1800,
                                              args=["--save-outputs", result], env=self.run_env(proj))
        except subprocess.TimeoutExpired:
            return None, "run timed out after 1800 s"
        self.builds[backend] += 1
        if self.verbose:
            log("  %s run of %d graphs: %.0f s" % (backend, len(cases), time.time() - t0))
        if proc.returncode != 0:
            return None, "run failed (exit %d): %s" % (proc.returncode, (proc.stderr + proc.stdout).strip()[-3000:])
        try:
            return load_file(result), None
        except Exception as e:  # noqa: BLE001
            return None, "unreadable outputs: %s" % e

    def run(self, cases, backend):
        """{case key: (outputs {tensor: array}, None) | (None, error)}; whole-batch failures are
        split in halves until the failing case is alone."""
        results = {}
        queue = [list(cases)]
        folder = os.path.join(self.work, backend)
        while queue:
            batch = queue.pop(0)
            outs, err = self.run_once(batch, backend, folder)
            if err is not None and len(batch) > 1:
                half = len(batch) // 2
                queue[:0] = [batch[:half], batch[half:]]
                if self.verbose:
                    log("  %s: batch of %d failed, splitting (%s)" % (backend, len(batch), err.splitlines()[-1][:200]))
                continue
            for c in batch:
                if err is not None:
                    results[c.key] = (None, err)
                else:
                    p = c.key + "_"
                    results[c.key] = ({t: outs.get(p + t) for t in c.graph["outputs"]}, None)
        return results


# ---- checking ----------------------------------------------------------------------------------

Finding = collections.namedtuple("Finding", "key backend kind tensor optype detail")


def check(cases, results_by_backend):
    """Findings (disagreements and errors) of every backend on every case."""
    findings = []
    for c in cases:
        for backend, results in results_by_backend.items():
            outs, err = results[c.key]
            if err is not None:
                findings.append(Finding(c.key, backend, "error", None, None, err))
                continue
            for t in c.graph["outputs"]:
                d = compare(c, t, outs.get(t))
                if d is not None:
                    findings.append(Finding(c.key, backend, "wrong", t, c.producer(t)["optype"], d))
    return findings


def agreement(c, tensor, results_by_backend):
    """Which backends agree with each other on `tensor` (2x the tolerance for float pairs)."""
    vals = {b: r[c.key][0].get(tensor) for b, r in results_by_backend.items() if r[c.key][0] is not None}
    groups = []
    for b, v in vals.items():
        for grp in groups:
            w = vals[grp[0]]
            if v is not None and w is not None and v.shape == w.shape and v.dtype == w.dtype:
                if v.dtype.kind == "f":
                    p, q = v.astype(np.float64), w.astype(np.float64)
                    with np.errstate(invalid="ignore"):
                        same = bool(np.all((p == q) | (np.isnan(p) & np.isnan(q)) |
                                           (np.abs(p - q) <= 2 * c.tolerance[tensor])))
                else:
                    same = bool(np.array_equal(v, w))
                if same:
                    grp.append(b)
                    break
        else:
            groups.append([b])
    return " | ".join("=".join(g) for g in groups)


# ---- minimization --------------------------------------------------------------------------------

def _subgraph(case, keep_nodes, cut, outputs, key):
    """A Case holding the nodes named in keep_nodes (in order), the tensors in `cut` turned into
    graph inputs with their reference values, and `outputs`; None when the reference rejects it."""
    nodes, inputs, in_values = [], [], {}
    for n in case.graph["nodes"]:
        if n["name"] in keep_nodes:
            nodes.append(json.loads(json.dumps(n)))
    producers = {t["name"]: n for n in case.graph["nodes"] for t in n["outputs"]}
    new_inputs = []
    for t in cut:
        meta = case.tensor_meta(t)
        name = "cut_" + re.sub(r"[^A-Za-z0-9_]", "_", t)
        new_inputs.append({"index": 0, "name": name, "shared_ref": "", "optype": "input", "parents": [], "inputs": [],
                           "outputs": [dict(meta, name=name + ":0", alias=name)], "attrs": {}, "weights": {}})
        ref = case.expected[t] if t in case.expected else case.inputs[t]
        in_values[name + ":0"] = np.asarray(ref).astype(_dtype_np(meta["dtype"]))
    rename = {t: "cut_" + re.sub(r"[^A-Za-z0-9_]", "_", t) + ":0" for t in cut}
    for n in nodes:
        n["inputs"] = [rename.get(t, t) for t in n["inputs"]]
        n["parents"] = []
        for t in n["inputs"]:
            p = t.rsplit(":", 1)[0]
            if p not in n["parents"]:
                n["parents"].append(p)
    for n in nodes:
        if n["optype"] == "input":
            inputs.append(n["outputs"][0]["name"])
            in_values[n["outputs"][0]["name"]] = case.inputs[n["outputs"][0]["name"]]
    all_nodes = new_inputs + nodes
    for i, n in enumerate(all_nodes):
        n["index"] = i
    graph = {"name": key, "inputs": [n["outputs"][0]["name"] for n in new_inputs] + inputs, "outputs": list(outputs),
             "nodes": all_nodes, "prims": []}
    weights = {t["name"]: case.weights[t["name"]] for n in nodes for t in n["weights"].values()}
    del producers
    try:
        expected, tol = randgraph.evaluate(graph, weights, in_values)
    except randgraph.Reject:
        return None
    return Case(key, graph, weights, in_values, expected, tol)


def _needed(case, outputs, cut=()):
    """Names of the nodes the tensors `outputs` depend on, stopping at the `cut` tensors."""
    producers = {t["name"]: n for n in case.graph["nodes"] for t in n["outputs"]}
    keep, stack = set(), list(outputs)
    while stack:
        t = stack.pop()
        if t in cut:
            continue
        n = producers[t]
        if n["name"] in keep:
            continue
        keep.add(n["name"])
        stack.extend(n["inputs"])
    return keep


def _fails(case, results, backend):
    outs, err = results[case.key]
    if err is not None:
        return None
    return [t for t in case.graph["outputs"] if compare(case, t, outs.get(t)) is not None]


def minimize(case, finding, runner, max_rounds=8):
    """(minimized Case, description) for a disagreement of finding.backend on case."""
    backend = finding.backend
    # (1) localize: every node output an output
    all_t = [t["name"] for n in case.graph["nodes"] if n["optype"] != "input" for t in n["outputs"]]
    full = _subgraph(case, {n["name"] for n in case.graph["nodes"]}, [], all_t, case.key + "all")
    first = None
    if full is not None:
        res = runner.run([full], backend)
        bad = _fails(full, res, backend)
        if bad:
            first = next(t for t in all_t if t in bad)
    target = first or finding.tensor
    # (2) the node alone
    node = case.producer(target)
    consts = {t for t in node["inputs"] if case.producer(t)["optype"] == "constant"}
    single = _subgraph(case, {node["name"]} | {case.producer(t)["name"] for t in consts},
                       [t for t in node["inputs"] if t not in consts], [target], case.key + "node")
    if single is not None:
        res = runner.run([single], backend)
        if _fails(single, res, backend):
            return single, "node %s (%s) alone" % (node["name"], node["optype"])
    # (3) greedy: cut nodes away while it still fails
    current = _subgraph(case, _needed(case, [target]), [], [target], case.key + "m0")
    if current is None or not _fails(current, runner.run([current], backend), backend):
        return case, "could not be reduced (the disagreement needs the whole graph)"
    cut = []
    for rnd in range(max_rounds):
        cands = []
        for n in current.graph["nodes"]:
            if n["optype"] in ("input", "constant") or target in [t["name"] for t in n["outputs"]]:
                continue
            new_cut = cut + [t["name"] for t in n["outputs"]]
            keep = _needed(case, [target], set(new_cut))
            used = {t for m in case.graph["nodes"] if m["name"] in keep for t in m["inputs"]}
            c = _subgraph(case, keep, [t for t in new_cut if t in used], [target], "%sm%d_%d" % (case.key, rnd + 1, len(cands)))
            if c is not None:
                cands.append((c, new_cut))
        if not cands:
            break
        res = runner.run([c for c, _ in cands], backend)
        failing = [(c, k) for c, k in cands if _fails(c, res, backend)]
        if not failing:
            break
        current, cut = min(failing, key=lambda ck: len(ck[0].graph["nodes"]))
    return current, "greedy reduction to %d nodes" % len(current.graph["nodes"])


def report_minimized(c, backend, how, runner, folder):
    os.makedirs(folder, exist_ok=True)
    runner.write([c], folder)
    res = runner.run([c], backend)
    outs, err = res[c.key]
    lines = ["  minimized (%s): %d nodes, written to %s" % (how, len(c.graph["nodes"]), folder)]
    for n in c.graph["nodes"]:
        ins = ", ".join(n["inputs"])
        outs_s = ", ".join("%s %s%s" % (t["name"], t["dtype"], t["shape"]) for t in n["outputs"])
        attrs = " ".join("%s=%r" % kv for kv in n["attrs"].items())
        w = " ".join("%s:%s%s" % (r, t["dtype"], t["shape"]) for r, t in n["weights"].items())
        lines.append("    %s = %s(%s) %s %s" % (outs_s, n["optype"], ins, attrs, w))
    if err is None:
        for t in c.graph["outputs"]:
            d = compare(c, t, outs.get(t))
            if d:
                lines.append("    %s differs on %s: %s" % (backend, t, d))
                if c.tolerance.get(t) is not None and outs.get(t) is not None and outs[t].size <= 64:
                    lines.append("      got      %s" % np.array2string(outs[t].reshape(-1), precision=6))
                    lines.append("      expected %s" % np.array2string(np.asarray(c.expected[t]).reshape(-1), precision=6))
    else:
        lines.append("    %s: %s" % (backend, err.splitlines()[-1][:300]))
    return "\n".join(lines)


# ---- main ----------------------------------------------------------------------------------------

def parse_seeds(text):
    a, _, b = text.partition(":")
    return int(a or 0), (int(b) if b else None)


def run_batch(seeds, args, runner, backends, totals, report):
    t0 = time.time()
    cases = [Case.from_random(randgraph.generate(s, (args.min_ops, args.max_ops))) for s in seeds]
    t_gen = time.time() - t0
    results = {}
    times = {}
    for b in backends:
        t1 = time.time()
        results[b] = runner.run(cases, b)
        times[b] = time.time() - t1
    findings = check(cases, results)
    totals["graphs"] += len(cases)
    totals["nodes"] += sum(len(c.graph["nodes"]) for c in cases)
    for c in cases:
        for n in c.graph["nodes"]:
            totals["optypes"][n["optype"]] += 1
    log("seeds %d..%d: %d graphs (%d nodes), generated in %.1f s, %s; %d findings" % (
        seeds[0], seeds[-1], len(cases), sum(len(c.graph["nodes"]) for c in cases), t_gen,
        ", ".join("%s %.1f s" % kv for kv in times.items()), len(findings)))
    by_key = {c.key: c for c in cases}
    seen = set()
    for f in findings:
        totals["errors" if f.kind == "error" else "disagreements"] += 1
        c = by_key[f.key]
        head = "FINDING %s [%s] %s" % (f.key, f.backend, "error" if f.kind == "error" else "%s (%s): %s" % (
            f.tensor, f.optype, f.detail))
        if f.kind == "error":
            head += ": " + f.detail.splitlines()[-1][:500] if f.detail else ""
        else:
            head += "\n  backends: " + agreement(c, f.tensor, results)
        log(head)
        report.append(head)
        if f.kind == "wrong" and not args.no_minimize and (f.key, f.backend) not in seen:
            seen.add((f.key, f.backend))
            try:
                small, how = minimize(c, f, runner)
                text = report_minimized(small, f.backend, how, runner,
                                        os.path.join(args.work, "minimized", "%s_%s" % (f.key, f.backend)))
            except Exception as e:  # noqa: BLE001  minimization is best effort
                text = "  minimization failed: %s: %s" % (type(e).__name__, e)
            log(text)
            report.append(text)
    return findings


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0:200", help="A:B (B exclusive; open-ended with --minutes)")
    ap.add_argument("--minutes", type=float, default=0.0, help="long run: keep going until this many minutes")
    ap.add_argument("--batch", type=int, default=0, help="graphs per merged run (default: all seeds, or 200)")
    ap.add_argument("--backends", default="", help="comma-separated subset (default: every backend the suite finds)")
    ap.add_argument("--min-ops", type=int, default=3)
    ap.add_argument("--max-ops", type=int, default=10)
    ap.add_argument("--work", default="")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--no-shader-cache", action="store_true", help="run glslc itself (see glslc_cache.py)")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--report", default="", help="also write the findings to this file")
    args = ap.parse_args()
    if not os.path.exists(BINARY):
        sys.exit("error: %s not found (set MSC_CODEGEN)" % BINARY)
    found = suite_backends.discover(BINARY)
    backends = [b for b in args.backends.split(",") if b] or [b.name for b in found]
    unknown = sorted(set(backends) - {b.name for b in found})
    if unknown:
        sys.exit("error: unknown backend(s) %s (found: %s)" % (", ".join(unknown), ", ".join(b.name for b in found)))
    args.work = args.work or tempfile.mkdtemp(prefix="difftest_")
    os.makedirs(args.work, exist_ok=True)
    runner = Runner(args.work, found, args.jobs, args.verbose, not args.no_shader_cache)
    start, stop = parse_seeds(args.seeds)
    batch = args.batch or ((stop - start) if stop is not None and not args.minutes else 200)
    totals = collections.Counter()
    totals["optypes"] = collections.Counter()
    report = []
    t0 = time.time()
    seed = start
    while True:
        if stop is not None and seed >= stop:
            break
        if args.minutes and time.time() - t0 > args.minutes * 60:
            break
        end = seed + batch if stop is None else min(seed + batch, stop)
        run_batch(list(range(seed, end)), args, runner, backends, totals, report)
        seed = end
    covered = sorted(o for o in totals["optypes"] if o != "input")
    log("optypes covered: %d (%s)" % (len(covered), ", ".join(covered)))
    log("graphs run: %d (%d nodes, seeds %d..%d), disagreements: %d, errors: %d, builds: %s, %.0f s" % (
        totals["graphs"], totals["nodes"], start, seed - 1, totals["disagreements"], totals["errors"],
        dict(runner.builds) or "none", time.time() - t0))
    if args.report:
        with open(args.report, "w") as f:
            f.write("\n".join(report) + "\n")
    if not args.keep:
        for b in backends:
            shutil.rmtree(os.path.join(args.work, b), ignore_errors=True)
    return 1 if totals["disagreements"] or totals["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
