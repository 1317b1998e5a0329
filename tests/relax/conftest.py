"""Shared helpers for the relax backend tests (run with /usr/bin/python3 -m pytest tests/relax).

Environment (tests/relax.cmake sets them): MSC_CODEGEN = the msc-codegen binary (required: the
tests fail, not skip, without it), MSC_SHARED_REFERENCE_DIR = ../shared/reference,
MSC_SOURCE_DIR = the repository root (default: two levels up from here). Optional:
MSC_TVM_PYTHON = an interpreter with tvm installed (the project's venv: the newest apache-tvm) or
MSC_TVM_HOME = a TVM source tree with build/libtvm.so, for test_real_tvm.py (without either those
tests are skipped as "not run: no TVM (set MSC_TVM_PYTHON or MSC_TVM_HOME)").
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("MSC_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
REFERENCE = os.environ.get("MSC_SHARED_REFERENCE_DIR") or os.path.join(ROOT, "..", "shared", "reference")
FAKE_TVM = os.path.join(HERE, "fake_tvm")
SNAPSHOTS = os.path.join(HERE, "snapshots")
GRAPHS = os.path.join(ROOT, "tests", "ops", "cases")  # the per-op cases every backend runs
RELAX_OPS = os.path.join(REFERENCE, "relax_ops.json")
RELAX_OPS_V020 = os.path.join(REFERENCE, "relax_ops_v020_all.json")
API_EXTRA = os.path.join(HERE, "relax_api_extra.json")
# Every relax.op.* of the newest apache-tvm wheel (scripts/dump_relax_ops.py; its "source" names
# the version).
RELAX_OPS_NEWEST = os.path.join(HERE, "relax_ops_newest.json")
PYTHON = sys.executable

sys.path.insert(0, HERE)
sys.path.insert(0, GRAPHS)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "common"))  # run_golden_batch, tvm_under_test

# Snapshots hold generated test_model.py files and fake_tvm a `tvm` package: data, not tests here.
collect_ignore_glob = ["snapshots/*", "fake_tvm/*", "graphs/*"]


def binary():
    path = os.environ.get("MSC_CODEGEN")
    if not path or not os.path.isfile(path):
        pytest.fail("MSC_CODEGEN must name the msc-codegen binary (got %r); run through ctest or set it" % path)
    return path


def codegen(*args, check=True):
    """Runs msc-codegen; returns the CompletedProcess (text). check=True asserts exit status 0."""
    proc = subprocess.run([binary(), *map(str, args)], capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, "msc-codegen %s failed:\n%s" % (" ".join(map(str, args)), proc.stderr)
    return proc


_ST_CODES = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("float64"): "F64",
             np.dtype("int64"): "I64", np.dtype("int32"): "I32", np.dtype("int8"): "I8", np.dtype("uint8"): "U8",
             np.dtype("bool"): "BOOL"}


def write_safetensors(path, arrays):
    """Minimal numpy safetensors writer (keys sorted, 8-byte aligned header, 0-d kept 0-d)."""
    header, blobs, offset = {}, [], 0
    for name in sorted(arrays):
        a = np.asarray(arrays[name])
        raw = a.astype(a.dtype.newbyteorder("<")).tobytes(order="C")
        header[name] = {"dtype": _ST_CODES[a.dtype], "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """{name: np.ndarray} from a safetensors file (the dtypes write_safetensors writes)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    codes = {v: k for k, v in _ST_CODES.items()}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype = codes[info["dtype"]].newbyteorder("<")
        out[name] = np.frombuffer(blob[8 + n + begin:8 + n + end], dtype=dtype).reshape(info["shape"]).astype(dtype.newbyteorder("="))
    return out


def npz_to_safetensors(npz_path, out_path):
    """MSC's golden data (inputs.npz / outputs.npz keyed by tensor name) -> safetensors."""
    with np.load(npz_path) as z:
        write_safetensors(out_path, {k: z[k] for k in z.files})


def fake_tvm_env(flavor="v0.20"):
    """The environment a project runs in against the fake TVM of API `flavor` (fake_tvm/README.md)."""
    return dict(os.environ, PYTHONPATH=FAKE_TVM, FAKE_TVM_FLAVOR=flavor, MSC_SHARED_REFERENCE_DIR=REFERENCE)


def run_project(project, flavor="v0.20", args=(), timeout=600):
    """Runs the project's own `python3 test_model.py` against the fake TVM (see fake_tvm/README.md)."""
    return subprocess.run([PYTHON, "test_model.py", *args], cwd=str(project), capture_output=True, text=True,
                          env=fake_tvm_env(flavor), timeout=timeout)


def run_in_project(project, code, flavor="v0.20"):
    """Runs Python `code` in the project folder with the fake TVM; returns stdout (asserts success)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([FAKE_TVM, str(project)]), FAKE_TVM_FLAVOR=flavor,
               MSC_SHARED_REFERENCE_DIR=REFERENCE)
    proc = subprocess.run([PYTHON, "-c", code], cwd=str(project), capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def graph_after_passes(graph_path, weights=None):
    """The MSCGraph (as JSON) the relax backend generated code for: `graph_path` after the
    backend.yaml `passes` (fold_constant: constant subgraphs became `constant` nodes), read back
    from `msc-codegen context --project` (relax_check.graph_from_context)."""
    import relax_check
    args = ["context", graph_path, "--backend", "relax", "--project"] + (["--weights", weights] if weights else [])
    with open(graph_path, encoding="utf-8") as f:
        source = json.load(f)
    return relax_check.graph_from_context(json.loads(codegen(*args).stdout), source)


class Project:
    """A generated relax project plus the graph it came from (`source_graph`) and the graph its
    code was generated for (`graph`: after the backend's passes, see graph_after_passes)."""

    def __init__(self, name, graph_path, out, has_golden, weights=None):
        self.name, self.graph_path, self.dir, self.has_golden = name, graph_path, out, has_golden
        with open(graph_path, encoding="utf-8") as f:
            self.source_graph = json.load(f)
        self.graph = graph_after_passes(graph_path, weights)

    def read(self, filename):
        with open(os.path.join(self.dir, filename), encoding="utf-8") as f:
            return f.read()


def generate(name, graph_path, out_dir, weights=None, golden=None):
    out = os.path.join(str(out_dir), name)
    if os.path.exists(out):
        shutil.rmtree(out)
    args = ["generate", "--graph", graph_path, "--backend", "relax", "--out", out]
    if weights:
        args += ["--weights", weights]
    if golden:
        args += ["--golden", golden]
    codegen(*args)
    return Project(name, graph_path, out, golden is not None, weights)


@pytest.fixture(scope="session")
def signatures():
    import relax_check
    return relax_check.load_signatures(RELAX_OPS, API_EXTRA, RELAX_OPS_V020)


def case_project(name, tmp_dir):
    """Generates the relax project of synthetic case `name` (tests/ops/cases/cases.py) with its weights and
    golden data under tmp_dir."""
    import cases
    case = cases.build_case(name)
    work = os.path.join(str(tmp_dir), "data-" + name)
    golden = os.path.join(work, "golden")
    os.makedirs(golden, exist_ok=True)
    weights = os.path.join(work, "weights.safetensors")
    write_safetensors(weights, case.weights)
    write_safetensors(os.path.join(golden, "inputs.safetensors"), case.inputs)
    write_safetensors(os.path.join(golden, "outputs.safetensors"), case.outputs)
    return generate(name, os.path.join(GRAPHS, name + ".json"), tmp_dir, weights, golden)


# ---- the generated projects shared by test_relax_projects.py and test_real_tvm.py ----------------

import cases  # noqa: E402  (graphs/ is on sys.path)
import edge_cases  # noqa: E402

REAL = ["conv_relu", "mlp"]
# Graphs written by TVM v0.20's MSC itself, committed with golden data (tests/msc_real/cases).
MSC_REAL_CASES = os.path.join(ROOT, "tests", "msc_real", "cases")
MSC_REAL = sorted(d for d in os.listdir(MSC_REAL_CASES) if os.path.isfile(os.path.join(MSC_REAL_CASES, d, "graph.json")))
EXAMPLES = ["conv_relu", "fashion_mnist_mlp", "resnet18", "mobilenet_v2", "text_transformer", "gpt2_block"]
PROJECTS = (["real/" + m for m in REAL] + ["real/mlp-param-dict"] + ["mscreal/" + m for m in MSC_REAL] +
            ["case/" + c for c in cases.CASES] + ["edge/" + c for c in edge_cases.CASES] +
            ["example/" + e for e in EXAMPLES] + ["hostile"])


def _export(cmd, out, what):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    proc = subprocess.run(cmd + ["--out", out], capture_output=True, text=True, env=env, timeout=900, cwd=ROOT)
    assert proc.returncode == 0, "%s failed:\n%s%s" % (what, proc.stdout, proc.stderr)


class _Projects:
    """Generates each project of PROJECTS once per session, on first use (`projects` fixture):
    real/<m> = ../shared/reference/msc-real/<m> (golden npz converted), real/mlp-param-dict = its
    weights.bin, mscreal/<m> = tests/msc_real/cases/<m> (MSC-written graphs), case/<c> = graphs/cases.py, edge/<c> = edge_cases.py, example/<e> =
    examples/<e>/export.py, hostile = python -m msc_export hostile. A missing example or exporter is
    a failure, never a skip."""

    def __init__(self, root):
        self.root, self.cache = root, {}

    def __getitem__(self, pid):
        if pid not in self.cache:
            self.cache[pid] = self._make(pid)
        return self.cache[pid]

    def _make(self, pid):
        kind, _, name = pid.partition("/")
        work = os.path.join(self.root, pid.replace("/", "-"))
        os.makedirs(work, exist_ok=True)
        out = os.path.join(self.root, "projects")
        if kind == "real":
            model = name.replace("-param-dict", "")
            src = os.path.join(REFERENCE, "msc-real", model)
            golden = os.path.join(work, "golden")
            os.makedirs(golden, exist_ok=True)
            for part in ("inputs", "outputs"):
                npz_to_safetensors(os.path.join(src, part + ".npz"), os.path.join(golden, part + ".safetensors"))
            weights = os.path.join(src, "weights.bin" if name.endswith("-param-dict") else "weights.safetensors")
            return generate(pid.replace("/", "-"), os.path.join(src, "graph.json"), out, weights, golden)
        if kind == "mscreal":
            src = os.path.join(MSC_REAL_CASES, name)
            return generate(pid.replace("/", "-"), os.path.join(src, "graph.json"), out,
                            os.path.join(src, "weights.safetensors"), os.path.join(src, "golden"))
        if kind in ("case", "edge"):
            case = (cases if kind == "case" else edge_cases).build_case(name)
            golden = os.path.join(work, "golden")
            os.makedirs(golden, exist_ok=True)
            weights = os.path.join(work, "weights.safetensors")
            write_safetensors(weights, case.weights)
            write_safetensors(os.path.join(golden, "inputs.safetensors"), case.inputs)
            write_safetensors(os.path.join(golden, "outputs.safetensors"), case.outputs)
            graph = os.path.join(cases.HERE, name + ".json")
            if kind == "edge":  # not committed: written here
                graph = os.path.join(work, "graph.json")
                with open(graph, "w", encoding="utf-8") as f:
                    f.write(cases.graph_text(case.graph))
            return generate(pid.replace("/", "-"), graph, out, weights, golden)
        if kind == "example":
            script = os.path.join(ROOT, "examples", name, "export.py")
            if not os.path.isfile(script):
                pytest.fail("MISSING: %s (a colleague's example) does not exist" % script)
            extra = ["--epochs", "1", "--num-test", "200"] if name == "fashion_mnist_mlp" else []
            _export([PYTHON, script] + extra, work, "examples/%s/export.py" % name)
        elif kind == "hostile":
            if not os.path.isfile(os.path.join(ROOT, "python", "msc_export", "hostile.py")):
                pytest.fail("MISSING: python/msc_export/hostile.py (a colleague's hostile-names graph)")
            _export([PYTHON, "-m", "msc_export", "hostile"], work, "python -m msc_export hostile")
        else:
            raise KeyError(pid)
        return generate(pid.replace("/", "-"), os.path.join(work, "graph.json"), out,
                        os.path.join(work, "weights.safetensors"), os.path.join(work, "golden"))


@pytest.fixture(scope="session")
def projects(tmp_path_factory):
    return _Projects(str(tmp_path_factory.mktemp("relax")))
