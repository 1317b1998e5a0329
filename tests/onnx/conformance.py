#!/usr/bin/python3
"""ONNX backend-test conformance of msc-codegen's ONNX frontend, per backend.

Every test of Debian's libonnx-testdata (/usr/share/libonnx-testdata/data/{node,
pytorch-converted,pytorch-operator,simple}/<test>/: model.onnx + test_data_set_0/{input,output}_N.pb,
ONNX 1.12's own backend test suite) is imported with `msc-codegen import --golden-from`, generated
for each backend, and run against the expected outputs. Each (test, backend) gets one status:

  pass                 outputs match (torch/relax: ONNX's own tolerance rtol 1e-3, atol 1e-7;
                       vulkan: rtol 1e-3, atol 1e-5 for GPU transcendental approximations;
                       integer and bool outputs exactly)
  import-unsupported   `import` rejects the model with a clear error: an op type with no
                       converter, an attribute value or input kind a converter cannot express,
                       a dtype MSC has no name for, a dim unknown after shape inference
  generate-unsupported `generate` rejects the imported graph with a clear error (the backend
                       cannot express it)
  wrong                the generated project runs and some output differs
  run-error            the generated project fails to build or raises at run time
  crash                msc-codegen died (signal, "internal" error) or hung: always a bug

The degenerate-golden guard of the generated harnesses (which rejects near-zero float goldens
in this project's own tests) is off here: ONNX's goldens are what they are.

vulkan: the imported graphs are merged (names prefixed per test) into batches, one Vulkan build
per batch (graphs with dynamic dims are run one by one). relax: without TVM the generated
model.py is checked statically (tests/relax/relax_check.py: API signatures of TVM v0.20 and
struct info against the graph) -- status pass means "passes the static checker"; with
MSC_TVM_HOME set, test_model.py also runs on real TVM.

  tests/onnx/conformance.py [--backends torch,vulkan,relax] [--folders node,...] [--filter RE]
      [--list FILE] [--jobs N] [--json OUT.json] [--markdown OUT.md] [--work DIR] [--keep]
      [--data DIR | --data-python VENV_PYTHON] [--scope FILE]

The suite is Debian's by default; --data-python runs tests/onnx/testdata.py with that Python (the
project venv's onnx 1.23.2) and takes the release's own suite it writes (node, pytorch-converted,
pytorch-operator, simple, real), with --scope tests/onnx/scope-onnx-1.23.2.json.

prints one line per backend "<backend>: N passed, N failed" (and the crash count), exit status
1 if anything crashed. --expect FILE (a --json output committed earlier, tests/onnx/expected.json)
also fails the run when a test that passed there no longer passes (a regression); tests that
newly pass are listed so the file can be refreshed with --json. tests/onnx/scope.json (scripts/onnx_scope.py) marks the tests TVM v0.20's
own relax ONNX frontend turns into MSC optypes ("in_scope" when also float32 in and out); the
markdown report gives the in-scope pass rate.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "relax"))

DEBIAN_DATA = "/usr/share/libonnx-testdata/data"
DATA = DEBIAN_DATA  # --data
FOLDERS = ["node", "pytorch-converted", "pytorch-operator", "simple", "real"]
BINARY = os.environ.get("MSC_CODEGEN", os.path.join(ROOT, "build", "msc-codegen"))
PY = sys.executable  # MSC_PYTHON: Debian's stack + safetensors (scripts/install_venv.sh debian)
STATUSES = ["pass", "import-unsupported", "generate-unsupported", "wrong", "run-error", "crash"]
TORCH_TOL = (1e-7, 1e-3)  # atol, rtol: onnx/backend/test/runner's defaults
VULKAN_TOL = (1e-5, 1e-3)
VULKAN_BATCH = 120


def list_tests(folders, pattern, list_file):
    tests = []
    wanted = None
    if list_file:
        with open(list_file) as f:
            wanted = {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}
    for folder in folders:
        if not os.path.isdir(os.path.join(DATA, folder)):
            continue  # Debian's 1.12 data has no real/ folder with data
        for name in sorted(os.listdir(os.path.join(DATA, folder))):
            key = folder + "/" + name
            if not os.path.exists(os.path.join(DATA, folder, name, "model.onnx")):
                continue
            if pattern and not re.search(pattern, key):
                continue
            if wanted is not None and key not in wanted:
                continue
            tests.append(key)
    return tests


def op_types(key):
    """ONNX op types of a test's model (read with the onnx package when available)."""
    try:
        import onnx
        m = onnx.load(os.path.join(DATA, key, "model.onnx"), load_external_data=False)
        return sorted({n.op_type for n in m.graph.node})
    except Exception:  # noqa: BLE001  a model onnx cannot read: the importer reports it
        return []


def run_cli(args, timeout=120):
    """Runs msc-codegen; returns (status, message): ok / unsupported / crash."""
    try:
        p = subprocess.run([BINARY] + args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "crash", "timed out after %d s" % timeout
    msg = (p.stderr or p.stdout).strip()
    if p.returncode == 0:
        return "ok", ""
    if p.returncode < 0 or p.returncode > 2 or "error: internal" in msg or not msg.startswith("error:"):
        return "crash", "exit %d: %s" % (p.returncode, msg[-2000:])
    return "unsupported", msg[len("error: "):]


def import_and_generate(key, work, backends):
    """Imports one test and generates its projects. Returns {backend: (status, message)}, dir."""
    src = os.path.join(DATA, key)
    out = os.path.join(work, key.replace("/", "__"))
    shutil.rmtree(out, ignore_errors=True)
    st, msg = run_cli(["import", os.path.join(src, "model.onnx"), "--out", os.path.join(out, "import"),
                       "--golden-from", os.path.join(src, "test_data_set_0")])
    if st != "ok":
        status = "crash" if st == "crash" else "import-unsupported"
        return {b: (status, msg) for b in backends}, out
    result = {}
    imp = os.path.join(out, "import")
    for b in backends:
        st, msg = run_cli(["generate", "--graph", os.path.join(imp, "graph.json"), "--weights",
                           os.path.join(imp, "weights.safetensors"), "--golden", os.path.join(imp, "golden"),
                           "--backend", b, "--out", os.path.join(out, b)])
        result[b] = ("generated", "") if st == "ok" else (
            "crash" if st == "crash" else "generate-unsupported", msg)
    return result, out


# --- torch: generated projects run in worker processes (one torch import per worker)

TORCH_WORKER = r"""
import importlib.util, json, sys, traceback
atol, rtol = float(sys.argv[1]), float(sys.argv[2])
for line in sys.stdin:
    key, project = json.loads(line)
    try:
        for mod in ("model", "test_model"):
            sys.modules.pop(mod, None)
        sys.path.insert(0, project)
        spec = importlib.util.spec_from_file_location("test_model", project + "/test_model.py")
        tm = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tm)
        tm.MIN_GOLDEN_MAGNITUDE = -1.0
        import io, contextlib
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            failures = tm.run_golden(atol, rtol)
        status, msg = ("wrong", "; ".join(failures)) if failures else ("pass", "")
    except Exception as e:
        status, msg = "run-error", "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    finally:
        if sys.path and sys.path[0] == project:
            sys.path.pop(0)
    print(json.dumps([key, status, msg[:2000]]), flush=True)
"""


def run_torch(items, jobs):
    """items: [(key, project dir)] -> {key: (status, message)}. A dying worker marks its test."""
    results = {}
    chunks = [items[i::jobs] for i in range(jobs)]

    def work(chunk):
        pending = list(chunk)
        while pending:
            p = subprocess.Popen([PY, "-c", TORCH_WORKER, str(TORCH_TOL[0]), str(TORCH_TOL[1])],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
            p.stdin.write("".join(json.dumps(list(it)) + "\n" for it in pending))
            p.stdin.close()
            done = 0
            for line in p.stdout:
                key, status, msg = json.loads(line)
                results[key] = (status, msg)
                done += 1
            p.wait()
            if done < len(pending):  # the worker died on pending[done]
                results[pending[done][0]] = ("run-error", "the generated model killed Python (exit %d)"
                                             % p.returncode)
                done += 1
            pending = pending[done:]

    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        list(ex.map(work, chunks))
    return results


# --- vulkan: merged builds

def _load_st(path):
    from msc_export.safetensors_np import load_file
    return load_file(path)


def _vulkan_batch(batch, bdir, jobs):
    """One merged build of `batch` [(key, dir, graph)]: {key: (status, message)} or None when the
    whole build or run failed without per-output results (the caller then splits the batch)."""
    from msc_export.graph_merge import merge_graphs
    from msc_export.safetensors_np import save_file
    shutil.rmtree(bdir, ignore_errors=True)
    os.makedirs(os.path.join(bdir, "golden"))
    parts, weights, inputs, outputs, owner = [], {}, {}, {}, {}
    for i, (key, out, g) in enumerate(batch):
        prefix = "t%d_" % i
        parts.append((prefix, g))
        imp = os.path.join(out, "import")
        for src, dst in ((os.path.join(imp, "weights.safetensors"), weights),
                         (os.path.join(imp, "golden", "inputs.safetensors"), inputs),
                         (os.path.join(imp, "golden", "outputs.safetensors"), outputs)):
            dst.update({prefix + k: v for k, v in _load_st(src).items()})
        for t in g["outputs"]:
            owner[prefix + t] = key
    with open(os.path.join(bdir, "graph.json"), "w") as f:
        json.dump(merge_graphs(parts, "onnx_batch"), f)
    save_file(weights, os.path.join(bdir, "weights.safetensors"))
    save_file(inputs, os.path.join(bdir, "golden", "inputs.safetensors"))
    save_file(outputs, os.path.join(bdir, "golden", "outputs.safetensors"))
    keys = [b[0] for b in batch]
    st, msg = run_cli(["generate", "--graph", os.path.join(bdir, "graph.json"), "--weights",
                       os.path.join(bdir, "weights.safetensors"), "--golden", os.path.join(bdir, "golden"),
                       "--backend", "vulkan", "--out", os.path.join(bdir, "vulkan")])
    if st != "ok":
        if len(batch) > 1:
            return None
        return {keys[0]: ("crash" if st == "crash" else "generate-unsupported", msg)}
    proj = os.path.join(bdir, "vulkan")
    build = subprocess.run("cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && "
                           "cmake --build build -j%d >/dev/null" % jobs, shell=True, cwd=proj,
                           capture_output=True, text=True)
    if build.returncode != 0:
        if len(batch) > 1:
            return None
        return {keys[0]: ("run-error", "build failed: " + (build.stderr or build.stdout)[-1500:])}
    try:
        run = subprocess.run(["./build/model", "--atol", str(VULKAN_TOL[0]), "--rtol", str(VULKAN_TOL[1])],
                             cwd=proj, capture_output=True, text=True, timeout=900)
        stdout, stderr, code = run.stdout, run.stderr, run.returncode
    except subprocess.TimeoutExpired:
        stdout, stderr, code = "", "timed out", -1
    if not os.environ.get("MSC_KEEP"):
        shutil.rmtree(os.path.join(proj, "build"), ignore_errors=True)
    per = collections.defaultdict(list)
    for line in stdout.splitlines():
        m = re.match(r"output '([^']+)' \(.*\): .*\b(PASS|FAIL)$", line)
        if m and m.group(1) in owner:
            per[owner[m.group(1)]].append((m.group(2), line))
    if not per and len(batch) > 1:
        return None
    results = {}
    for k in keys:
        lines = per.get(k)
        if not lines:
            results[k] = ("run-error", "no result line (exit %d): %s" % (code, (stderr or stdout)[-1500:]))
        elif all(s == "PASS" for s, _ in lines):
            results[k] = ("pass", "")
        else:
            results[k] = ("wrong", "; ".join(ln for s, ln in lines if s != "PASS")[:2000])
    return results


def run_vulkan(items, work, jobs):
    """items: [(key, test dir)] -> {key: (status, message)}. Static graphs are merged VULKAN_BATCH
    at a time into one build; a batch that fails as a whole is split in halves until the failing
    test is alone; graphs with dynamic dims run one by one."""
    results = {}
    static, dynamic = [], []
    for key, out in items:
        with open(os.path.join(out, "import", "graph.json")) as f:
            g = json.load(f)
        (dynamic if g.get("prims") else static).append((key, out, g))
    queue = [static[i:i + VULKAN_BATCH] for i in range(0, len(static), VULKAN_BATCH)] + [[d] for d in dynamic]
    n = 0
    while queue:
        batch = queue.pop(0)
        r = _vulkan_batch(batch, os.path.join(work, "vulkan_batch_%d" % n), jobs)
        n += 1
        if r is None:
            half = len(batch) // 2
            queue[:0] = [batch[:half], batch[half:]]
        else:
            results.update(r)
    return results


# --- relax: static checks (and real TVM when MSC_TVM_HOME is set)

def run_relax(items):
    import relax_check
    ref = os.environ.get("MSC_SHARED_REFERENCE_DIR", os.path.join(ROOT, "..", "shared", "reference"))
    sigs, removed = relax_check.load_signatures(os.path.join(ref, "relax_ops.json"),
                                                os.path.join(ROOT, "tests", "relax", "relax_api_extra.json"),
                                                os.path.join(ref, "relax_ops_v020_all.json"))
    sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
    from tvm_under_test import tvm_under_test
    found = tvm_under_test(PY)  # MSC_TVM_PYTHON (newest apache-tvm) or MSC_TVM_HOME (a build)
    results = {}
    for key, out in items:
        proj = os.path.join(out, "relax")
        with open(os.path.join(proj, "model.py")) as f:
            source = f.read()
        imp = os.path.join(out, "import")
        with open(os.path.join(imp, "graph.json")) as f:
            graph = json.load(f)
        # the graph after the relax backend's passes (fold_constant), which model.py is for
        ctx = subprocess.run([BINARY, "context", os.path.join(imp, "graph.json"), "--backend", "relax", "--project",
                              "--weights", os.path.join(imp, "weights.safetensors")],
                             capture_output=True, text=True, timeout=120)
        if ctx.returncode != 0:
            results[key] = ("wrong", "msc-codegen context failed: " + ctx.stderr[-2000:])
            continue
        graph = relax_check.graph_from_context(json.loads(ctx.stdout), graph)
        problems = (relax_check.api_problems(source, sigs, removed, "model.py")
                    + relax_check.struct_info_problems(source, graph))
        if problems:
            results[key] = ("wrong", "static check: " + "; ".join(problems)[:2000])
            continue
        if found:
            python, env = found
            r = subprocess.run([python, "test_model.py", "--atol", str(TORCH_TOL[0]), "--rtol", str(TORCH_TOL[1])],
                               cwd=proj, capture_output=True, text=True, env=env, timeout=600)
            if "PASSED" not in r.stdout:
                results[key] = ("wrong" if "FAILED" in r.stdout else "run-error", (r.stdout + r.stderr)[-2000:])
                continue
        results[key] = ("pass", "")
    return results


# --- report

SCOPE = os.path.join(HERE, "scope.json")  # --scope


def load_scope():
    path = SCOPE
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)["tests"]


def summarize(results, backends, ops, scope):
    lines = []
    for b in backends:
        counts = collections.Counter(results[k][b][0] for k in results)
        passed = counts["pass"]
        lines.append("%s: %d passed, %d failed (%s)" % (
            b, passed, len(results) - passed,
            ", ".join("%s %d" % (s, counts[s]) for s in STATUSES[1:] if counts[s])))
        ins = [k for k in results if scope.get(k, {}).get("in_scope")]
        if ins:
            p = sum(results[k][b][0] == "pass" for k in ins)
            lines.append("%s: in scope (TVM relax ONNX frontend -> MSC optypes, fp32): %d of %d passed (%.1f%%)"
                         % (b, p, len(ins), 100.0 * p / len(ins)))
    return lines


def import_reason(msg):
    """A short category of an import error message, for the report."""
    m = re.search(r"unsupported ONNX op types? \(opset \d+\):\s*(\S+?): nodes? ", msg)
    if m:
        return "no converter: " + m.group(1).strip()
    for pattern, label in (
            (r"must be a constant", "a parameter (shape, axes, pads, scales, k, ...) is a graph input, "
                                    "MSC takes it as a static attr"),
            (r"has no MSC dtype|element type \w+ has no MSC dtype", "a dtype MSC has no name for "
                                                                   "(string, uint16/32/64, complex, bf16 data)"),
            (r"not a tensor", "a sequence / map / optional graph input"),
            (r"is the symbol|is unknown after ONNX shape inference|computed at run time",
             "a dim only known at run time"),
            (r"3-D|5-D", "3-D pooling (no MSC optype)"),
            (r"no default-domain", "only ops of other domains (ai.onnx.ml, preview.training)"),
            (r"training", "training-mode semantics"),
    ):
        if re.search(pattern, msg):
            return label
    first = re.sub(r"^.*?: ", "", msg.split("\n")[-1]).strip()
    return "other: " + re.sub(r"'[^']*'", "'…'", first)[:120]


def source_text():
    if DATA == DEBIAN_DATA:
        return "Debian's libonnx-testdata 1.12 (`%s`)" % DEBIAN_DATA
    stamp = os.path.join(DATA, ".msc-stamp")
    version = open(stamp).read().split()[1] if os.path.exists(stamp) else "?"
    return ("ONNX %s's backend tests as tests/onnx/testdata.py writes them (node: the release's test case "
            "generator; pytorch-converted, pytorch-operator, simple: its wheel's data; real: its light models "
            "with ONNX's dummy input and ONNX Runtime's output)" % version)


def scope_text():
    try:
        with open(SCOPE) as f:
            return json.load(f)["source"].split(". in_scope")[0]
    except (OSError, ValueError, KeyError):
        return "no scope file"


def markdown(results, backends, ops, scope, argv):
    out = ["# ONNX conformance (generated by tests/onnx/conformance.py)", "",
           "Reproduce: `%s`" % " ".join(["tests/onnx/conformance.py"] + argv), "",
           "Source: %s, every test's `test_data_set_0`. Statuses are defined in "
           "tests/onnx/conformance.py. \"in scope\": %s (%s)." % (source_text(), os.path.relpath(SCOPE, ROOT),
                                                                scope_text()),
           "", "## Totals per folder", ""]
    header = "| folder | tests | " + " | ".join("%s pass" % b for b in backends) + " |"
    out += [header, "|" + "---|" * (2 + len(backends))]
    folders = sorted({k.split("/")[0] for k in results}, key=lambda f: FOLDERS.index(f) if f in FOLDERS else 9)
    for sel_name, sel in [(f, lambda k, f=f: k.startswith(f + "/")) for f in folders] + [
            ("node, in scope", lambda k: k.startswith("node/") and scope.get(k, {}).get("in_scope")),
            ("all, in scope", lambda k: scope.get(k, {}).get("in_scope")),
            ("all", lambda k: True)]:
        keys = [k for k in results if sel(k)]
        if not keys:
            continue
        cells = []
        for b in backends:
            p = sum(results[k][b][0] == "pass" for k in keys)
            cells.append("%d (%.1f%%)" % (p, 100.0 * p / len(keys)))
        out.append("| %s | %d | %s |" % (sel_name, len(keys), " | ".join(cells)))
    out += ["", "## Statuses per backend", "", "| backend | " + " | ".join(STATUSES) + " |",
            "|" + "---|" * (1 + len(STATUSES))]
    for b in backends:
        c = collections.Counter(results[k][b][0] for k in results)
        out.append("| %s | %s |" % (b, " | ".join(str(c[s]) for s in STATUSES)))
    out += ["", "## Per ONNX op type", "",
            "A test counts for every op type its model holds.", "",
            "| op type | tests | " + " | ".join(backends) + " |", "|" + "---|" * (2 + len(backends))]
    per_op = collections.defaultdict(list)
    for k in results:
        for op in ops.get(k, []):
            per_op[op].append(k)
    for op in sorted(per_op):
        keys = per_op[op]
        out.append("| %s | %d | %s |" % (op, len(keys), " | ".join(
            "%d" % sum(results[k][b][0] == "pass" for k in keys) for b in backends)))
    out += ["", "## Why imports fail", "",
            "Tests whose import fails, by the first reason the importer gives (one test may hold several "
            "unsupported op types).", "", "| reason | tests |", "|---|---|"]
    reasons = collections.Counter()
    for k in results:
        st, msg = results[k][backends[0]]
        if st == "import-unsupported":
            reasons[import_reason(msg)] += 1
    for reason, n in reasons.most_common():
        out.append("| %s | %d |" % (reason.replace("|", "\\|"), n))
    out += ["", "## Every test that does not pass", "",
            "| test | backend | status | reason |", "|---|---|---|---|"]
    for k in sorted(results):
        failed = [(b, results[k][b]) for b in backends if results[k][b][0] != "pass"]
        if not failed:
            continue
        # one row when every failing backend fails the same way (e.g. the import)
        groups = collections.OrderedDict()
        for b, (st, msg) in failed:
            groups.setdefault((st, msg), []).append(b)
        for (st, msg), bs in groups.items():
            reason = re.sub(r"\s+", " ", msg.replace(DATA + "/", "")).replace("|", "\\|")[:300]
            out.append("| %s | %s | %s | %s |" % (k, ", ".join(bs), st, reason))
    return "\n".join(out) + "\n"


def main():
    global DATA, SCOPE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="torch")
    ap.add_argument("--folders", default=",".join(FOLDERS))
    ap.add_argument("--filter", default="")
    ap.add_argument("--list", default="", help="file with one folder/test per line")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", default="")
    ap.add_argument("--markdown", default="")
    ap.add_argument("--work", default="")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--expect", default="", help="earlier --json output: fail on regressions")
    ap.add_argument("--from-json", default="", help="re-render the reports of an earlier --json run")
    ap.add_argument("--data", default=DEBIAN_DATA,
                    help="the suite's folder: Debian's 1.12 data (default) or tests/onnx/testdata.py's output")
    ap.add_argument("--data-python", default="",
                    help="a Python with onnx and onnxruntime (the project venv): --data is then what "
                         "tests/onnx/testdata.py writes with it (made once, cached)")
    ap.add_argument("--scope", default=SCOPE, help="scope file of that suite (scripts/onnx_scope.py)")
    args = ap.parse_args()
    if args.data_python:
        p = subprocess.run([args.data_python, os.path.join(HERE, "testdata.py")], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit("error: tests/onnx/testdata.py failed: " + p.stderr[-2000:])
        args.data = p.stdout.strip().splitlines()[-1]
    DATA, SCOPE = os.path.abspath(args.data), os.path.abspath(args.scope)
    backends = [b for b in args.backends.split(",") if b]
    tests = list_tests(args.folders.split(","), args.filter, args.list)
    if args.from_json:
        with open(args.from_json) as f:
            results = {k: {b: tuple(v[b]) for b in backends} for k, v in json.load(f).items() if k in tests}
        tests = [k for k in tests if k in results]
        ops = {k: op_types(k) for k in tests}
        for line in summarize(results, backends, ops, load_scope()):
            print(line)
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(markdown(results, backends, ops, load_scope(), sys.argv[1:]))
        return 0
    work = args.work or tempfile.mkdtemp(prefix="onnx_conformance_")
    os.makedirs(work, exist_ok=True)
    results, dirs = {}, {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for key, (res, out) in zip(tests, ex.map(lambda k: import_and_generate(k, work, backends), tests)):
            results[key] = res
            dirs[key] = out
    ready = lambda b: [(k, dirs[k]) for k in tests if results[k][b][0] == "generated"]  # noqa: E731
    runners = {"torch": lambda items: run_torch([(k, os.path.join(d, "torch")) for k, d in items], args.jobs),
               "vulkan": lambda items: run_vulkan(items, work, args.jobs),
               "relax": run_relax}
    for b in backends:
        items = ready(b)
        if items:
            for k, r in runners[b](items).items():
                results[k][b] = r
    ops = {k: op_types(k) for k in tests}
    scope = load_scope()
    for line in summarize(results, backends, ops, scope):
        print(line)
    crashes = [(k, b, results[k][b][1]) for k in tests for b in backends if results[k][b][0] == "crash"]
    for k, b, msg in crashes:
        print("CRASH %s [%s]: %s" % (k, b, msg[:500]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k: {b: list(results[k][b]) for b in backends} for k in tests}, f, indent=0, sort_keys=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(results, backends, ops, scope, sys.argv[1:]))
    regressions = []
    if args.expect:
        with open(args.expect) as f:
            expected = json.load(f)
        improved = []
        for k in tests:
            for b in backends:
                before = expected.get(k, {}).get(b, [None])[0]
                now = results[k][b][0]
                if before == "pass" and now != "pass":
                    regressions.append((k, b, now, results[k][b][1]))
                elif before is not None and before != "pass" and now == "pass":
                    improved.append((k, b))
        for k, b, st, msg in regressions:
            print("REGRESSION %s [%s]: %s: %s" % (k, b, st, msg[:500]))
        if improved:
            print("%d (test, backend) pairs now pass that did not in %s: refresh it with --json"
                  % (len(improved), args.expect))
    if not args.keep and not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if crashes or regressions else 0


if __name__ == "__main__":
    sys.exit(main())
