"""Shared helpers for the relax backend tests (run with /usr/bin/python3 -m pytest tests/relax).

Environment (tests/relax.cmake sets them): MSC_CODEGEN = the msc-codegen binary (required: the
tests fail, not skip, without it), MSC_SHARED_REFERENCE_DIR = ../shared/reference,
MSC_SOURCE_DIR = the repository root (default: two levels up from here).
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
GRAPHS = os.path.join(HERE, "graphs")
RELAX_OPS = os.path.join(REFERENCE, "relax_ops.json")
API_EXTRA = os.path.join(HERE, "relax_api_extra.json")
PYTHON = sys.executable

sys.path.insert(0, HERE)
sys.path.insert(0, GRAPHS)

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


def run_project(project, flavor="v0.20", args=(), timeout=600):
    """Runs the project's own `python3 test_model.py` against the fake TVM (see fake_tvm/README.md)."""
    env = dict(os.environ, PYTHONPATH=FAKE_TVM, FAKE_TVM_FLAVOR=flavor, MSC_SHARED_REFERENCE_DIR=REFERENCE)
    return subprocess.run([PYTHON, "test_model.py", *args], cwd=str(project), capture_output=True, text=True,
                          env=env, timeout=timeout)


def run_in_project(project, code, flavor="v0.20"):
    """Runs Python `code` in the project folder with the fake TVM; returns stdout (asserts success)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([FAKE_TVM, str(project)]), FAKE_TVM_FLAVOR=flavor,
               MSC_SHARED_REFERENCE_DIR=REFERENCE)
    proc = subprocess.run([PYTHON, "-c", code], cwd=str(project), capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


class Project:
    """A generated relax project plus the graph it came from."""

    def __init__(self, name, graph_path, out, has_golden):
        self.name, self.graph_path, self.dir, self.has_golden = name, graph_path, out, has_golden
        with open(graph_path, encoding="utf-8") as f:
            self.graph = json.load(f)

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
    return Project(name, graph_path, out, golden is not None)


@pytest.fixture(scope="session")
def signatures():
    import relax_check
    return relax_check.load_signatures(RELAX_OPS, API_EXTRA)


def case_project(name, tmp_dir):
    """Generates the relax project of synthetic case `name` (graphs/cases.py) with its weights and
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
