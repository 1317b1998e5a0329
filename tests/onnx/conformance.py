#!/usr/bin/python3
"""ONNX backend-test conformance of msc-codegen's ONNX frontend, per backend.

Every test of Debian's libonnx-testdata (/usr/share/libonnx-testdata/data/{node,
pytorch-converted,pytorch-operator,simple}/<test>/: model.onnx + test_data_set_0/{input,output}_N.pb,
ONNX 1.12's own backend test suite) is imported with `msc-codegen import --golden-from`, generated
for each backend, and run against the expected outputs. Each (test, backend) gets one status:

  pass                 outputs match: ONNX's own tolerance (rtol 1e-3, atol 1e-7; onnx/backend/
                       test/runner's defaults; rtol 2^-6 for bfloat16 outputs, as its runner
                       widens it), atol widened to the backend's backend.yaml
                       `test.atol` (vulkan 1e-5: GPU transcendental approximations); integer and
                       bool outputs exactly; NaN matches NaN, equal infinities match
  import-unsupported   `import` rejects the model with a clear error: an op type with no
                       converter, an attribute value or input kind a converter cannot express,
                       a dtype MSC has no name for, a dim unknown after shape inference
  generate-unsupported `generate` rejects the imported graph with a clear error (the backend
                       cannot express it)
  wrong                the generated project runs and some output differs
  run-error            the generated project fails to build or raises at run time
  crash                msc-codegen died (signal, "internal" error) or hung: always a bug

The backends are the ones the suite finds (tests/common/backends.py: every backend.yaml with a
`test` section; --backends picks some, --merge yes/no those whose projects are / are not merged),
each project run as its `test.run` says with `--save-outputs FILE`; the outputs are compared here
(so the harnesses' own degenerate-golden guard, which rejects near-zero float goldens in this
project's own tests, does not apply: ONNX's goldens are what they are). Python-harness projects
run in batches that import the framework once (tests/common/run_golden_batch.py); a `merge`
backend's graphs are merged (names prefixed per test) into batches of MERGE_BATCH, one project
each (graphs with dynamic dims one by one), a batch that fails as a whole split in halves until
the failing test is alone. relax (`python: tvm`) runs on the TVM under test (MSC_TVM_PYTHON /
MSC_TVM_HOME), else on the stand-in tests/relax/fake_tvm (TVM v0.20's relax API, evaluated with
PyTorch): "pass" then means the generated model.py builds against that API with the graph's
struct info and computes the right values on the stand-in.

  tests/onnx/conformance.py [--backends B,...] [--merge yes|no] [--folders node,...] [--filter RE]
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
sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
import backends as suite_backends  # noqa: E402
import run_golden_batch  # noqa: E402

DEBIAN_DATA = "/usr/share/libonnx-testdata/data"
DATA = DEBIAN_DATA  # --data
FOLDERS = ["node", "pytorch-converted", "pytorch-operator", "simple", "real"]
BINARY = os.environ.get("MSC_CODEGEN", os.path.join(ROOT, "build", "msc-codegen"))
PY = sys.executable  # MSC_PYTHON: Debian's stack + safetensors (scripts/install_venv.sh debian)
STATUSES = ["pass", "import-unsupported", "generate-unsupported", "wrong", "run-error", "crash"]
ONNX_TOL = (1e-7, 1e-3)  # atol, rtol: onnx/backend/test/runner's defaults
# rtol of a bfloat16 output: at least two bfloat16 ULPs, as onnx/backend/test/runner/__init__.py
# (onnx >= 1.17) widens it (ONNX's reference rounds once; a composition of ops rounds each step)
BF16_RTOL = 2.0 ** -6
MERGE_BATCH = 120
SAVED = "saved_outputs.safetensors"  # --save-outputs, in the project folder


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


# --- running the projects and checking their outputs

def _load_st(path):
    from msc_export.safetensors_np import load_file
    return load_file(path)


def tolerance(backend):
    """(atol, rtol) for `backend`: ONNX's, atol widened to its backend.yaml test.atol."""
    return max(ONNX_TOL[0], backend.atol), ONNX_TOL[1]


def bfloat16_outputs(graph, prefix=""):
    """The names (with `prefix`) of the MSCGraph `graph`'s outputs of dtype bfloat16."""
    from msc_export.mscgraph import output_dtypes
    return {prefix + name for name, dtype in output_dtypes(graph).items() if dtype == "bfloat16"}


def check_outputs(got, expected, names, atol, rtol, bfloat16=()):
    """(status, message) of the saved outputs `got` against `expected` for the tensors `names`
    (each printed under names[t], the test's own output name); those in `bfloat16` at rtol
    BF16_RTOL or more."""
    import numpy as np
    bad = []
    for name, label in names.items():
        rtol_t = max(rtol, BF16_RTOL) if name in bfloat16 else rtol
        want, g = expected[name], got.get(name)
        if g is None:
            bad.append("%s: no such output" % label)
        elif g.shape != want.shape or g.dtype != want.dtype:
            bad.append("%s: %s %s, expected %s %s" % (label, g.dtype, list(g.shape), want.dtype, list(want.shape)))
        elif want.dtype.kind in "biu":
            n = int(np.count_nonzero(g != want))
            if n:
                bad.append("%s: %d of %d elements differ" % (label, n, g.size))
        else:
            gg, ee = g.astype(np.float64), want.astype(np.float64)
            with np.errstate(invalid="ignore"):
                diff = np.abs(gg - ee)
                same = (gg == ee) | (np.isnan(gg) & np.isnan(ee))
                ok = same | (np.isfinite(gg) & np.isfinite(ee) & (diff <= atol + rtol_t * np.abs(ee)))
            if not bool(np.all(ok)):
                worst = float(np.max(np.where(same, 0.0, np.nan_to_num(diff, nan=np.inf))))
                bad.append("%s: %d of %d elements differ, max abs err %.3e (atol %g, rtol %g)" % (
                    label, int(np.count_nonzero(~ok)), g.size, worst, atol, rtol_t))
    return ("wrong", "; ".join(bad)[:2000]) if bad else ("pass", "")


def _expected(out):
    return _load_st(os.path.join(out, "import", "golden", "outputs.safetensors"))


def _saved_result(backend, key, out, project, rc, text):
    """(status, message) of one test's project run with --save-outputs."""
    saved = os.path.join(project, SAVED)
    if rc != 0 or not os.path.exists(saved):
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        return "run-error", "exit %s: %s" % (rc, " | ".join(lines[-3:])[-1500:])
    expected = _expected(out)
    try:
        got = _load_st(saved)
    except Exception as e:  # noqa: BLE001
        return "run-error", "unreadable outputs: %s" % e
    with open(os.path.join(out, "import", "graph.json")) as f:
        bf16 = bfloat16_outputs(json.load(f))
    return check_outputs(got, expected, {t: t for t in expected}, *tolerance(backend), bfloat16=bf16)


def run_each(backend, items, jobs):
    """items: [(key, test dir)] -> {key: (status, message)}: one project per test. A Python
    harness runs in parallel batches that import the framework once (a batch whose process dies
    is run again project by project, so the culprit is marked)."""
    projects = {key: os.path.join(out, backend.name) for key, out in items}
    runs = {}
    if backend.run == ["python", "test_model.py"]:
        python, env = suite_backends.interpreter(backend, PY)
        env = dict(env, OMP_NUM_THREADS="1")
        try:
            records = run_golden_batch.run_batches(python, list(projects.values()), env, shards=jobs,
                                                   args=["--save-outputs", SAVED])
            runs = {d: (r["rc"], r["stdout"] + r["stderr"]) for d, r in records.items()}
        except RuntimeError:
            runs = {}
    for key, proj in projects.items():
        if os.path.abspath(proj) not in runs:
            try:
                p = suite_backends.run_project(backend, proj, PY, timeout=600, args=["--save-outputs", SAVED])
                runs[os.path.abspath(proj)] = (p.returncode, p.stdout + p.stderr)
            except subprocess.TimeoutExpired:
                runs[os.path.abspath(proj)] = (-1, "timed out after 600 s")
    return {key: _saved_result(backend, key, dict(items)[key], proj, *runs[os.path.abspath(proj)])
            for key, proj in projects.items()}


def _merged_batch(backend, batch, bdir):
    """One merged project of `batch` [(key, dir, graph)]: {key: (status, message)} or None when
    the whole generate, build or run failed (the caller then splits the batch)."""
    from msc_export.graph_merge import merge_graphs
    from msc_export.safetensors_np import save_file
    shutil.rmtree(bdir, ignore_errors=True)
    os.makedirs(os.path.join(bdir, "golden"))
    parts, weights, inputs, outputs, owner, bf16 = [], {}, {}, {}, {}, set()
    for i, (key, out, g) in enumerate(batch):
        prefix = "t%d_" % i
        parts.append((prefix, g))
        imp = os.path.join(out, "import")
        for src, dst in ((os.path.join(imp, "weights.safetensors"), weights),
                         (os.path.join(imp, "golden", "inputs.safetensors"), inputs),
                         (os.path.join(imp, "golden", "outputs.safetensors"), outputs)):
            dst.update({prefix + k: v for k, v in _load_st(src).items()})
        for t in g["outputs"]:
            owner.setdefault(key, {})[prefix + t] = t
        bf16 |= bfloat16_outputs(g, prefix)
    with open(os.path.join(bdir, "graph.json"), "w") as f:
        json.dump(merge_graphs(parts, "onnx_batch"), f)
    save_file(weights, os.path.join(bdir, "weights.safetensors"))
    save_file(inputs, os.path.join(bdir, "golden", "inputs.safetensors"))
    save_file(outputs, os.path.join(bdir, "golden", "outputs.safetensors"))
    keys = [b[0] for b in batch]
    proj = os.path.join(bdir, backend.name)
    st, msg = run_cli(["generate", "--graph", os.path.join(bdir, "graph.json"), "--weights",
                       os.path.join(bdir, "weights.safetensors"), "--golden", os.path.join(bdir, "golden"),
                       "--backend", backend.name, "--out", proj])
    if st != "ok":
        if len(batch) > 1:
            return None
        return {keys[0]: ("crash" if st == "crash" else "generate-unsupported", msg)}
    try:
        p = suite_backends.run_project(backend, proj, PY, timeout=1800, args=["--save-outputs", SAVED])
        rc, text = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, text = -1, "timed out after 1800 s"
    if not os.environ.get("MSC_KEEP"):
        shutil.rmtree(os.path.join(proj, "build"), ignore_errors=True)
    if rc != 0 or not os.path.exists(os.path.join(proj, SAVED)):
        if len(batch) > 1:
            return None
        return {keys[0]: _saved_result(backend, keys[0], batch[0][1], proj, rc, text)}
    got = _load_st(os.path.join(proj, SAVED))
    return {k: check_outputs(got, outputs, owner.get(k, {}), *tolerance(backend), bfloat16=bf16) for k in keys}


def run_merged(backend, items, work):
    """items: [(key, test dir)] -> {key: (status, message)}. Static graphs are merged MERGE_BATCH
    at a time into one project; a batch that fails as a whole is split in halves until the
    failing test is alone; graphs with dynamic dims run one by one."""
    results = {}
    static, dynamic = [], []
    for key, out in items:
        with open(os.path.join(out, "import", "graph.json")) as f:
            g = json.load(f)
        (dynamic if suite_backends.is_dynamic(g) else static).append((key, out, g))
    queue = [static[i:i + MERGE_BATCH] for i in range(0, len(static), MERGE_BATCH)] + [[d] for d in dynamic]
    n = 0
    while queue:
        batch = queue.pop(0)
        r = _merged_batch(backend, batch, os.path.join(work, "%s_batch_%d" % (backend.name, n)))
        n += 1
        if r is None:
            half = len(batch) // 2
            queue[:0] = [batch[:half], batch[half:]]
        else:
            results.update(r)
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
    ap.add_argument("--backends", default="", help="comma-separated (default: every backend the suite finds)")
    ap.add_argument("--merge", choices=["yes", "no"], default=None,
                    help="only the backends whose projects are (yes) / are not (no) merged (backend.yaml test.merge)")
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
    found = {b.name: b for b in suite_backends.discover(BINARY)}
    backends = [b for b in args.backends.split(",") if b] or sorted(found)
    unknown = [b for b in backends if b not in found]
    if unknown:
        sys.exit("error: unknown backend(s) %s (found: %s)" % (", ".join(unknown), ", ".join(sorted(found))))
    if args.merge is not None:
        backends = [b for b in backends if found[b].merge == (args.merge == "yes")]
    tests = list_tests(args.folders.split(","), args.filter, args.list)
    if args.from_json:
        with open(args.from_json) as f:
            data = json.load(f)
        backends = [b for b in backends if all(b in v for v in data.values())]  # the ones it has
        results = {k: {b: tuple(v[b]) for b in backends} for k, v in data.items() if k in tests}
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
    for b in backends:
        items = ready(b)
        if items:
            run = run_merged(found[b], items, work) if found[b].merge else run_each(found[b], items, args.jobs)
            for k, r in run.items():
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
