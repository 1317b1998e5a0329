"""The backends the test suite runs: found, not listed. Every templates/<name>/backend.yaml with a
`test` section is one (`msc-codegen backends --json` reports them; the C++ loader is the only
parser of backend.yaml), so `msc-codegen new-backend mine --from torch` alone makes every suite
that runs backends run `mine` too.

backend.yaml `test` (docs/writing-a-backend.md, "How the tests find a backend"):
  run             argv run in a generated project's folder; the word `python` is the interpreter
                  `python` names
  python          debian: the interpreter the test runs under (MSC_PYTHON in ctest: Debian's torch
                  1.13, numpy, safetensors; the venv's for today's stack); tvm: the TVM under test
                  (tests/common/tvm_under_test.py: MSC_TVM_PYTHON / MSC_TVM_HOME), else the
                  stand-in tests/relax/fake_tvm (TVM v0.20's relax API evaluated with PyTorch)
  merge           True: a build per project costs minutes, so tests merge many graphs into one
                  project (python/msc_export/graph_merge.py) and run that
  atol            the absolute float error the backend's kernels may add to float32 math; tests
                  comparing with golden data made elsewhere (ONNX's own) take max(their atol, it)
  env             extra environment of the run
Every harness takes --atol X --rtol Y and --save-outputs FILE (run_project's `args`). From the rest of backend.yaml:
precisions (besides fp32) and dynamic_shapes (False for a backend with a memory_plan: generate
refuses graphs with dynamic dims; tests give it static ones).
"""
import json
import os
import subprocess
import sys
from collections import namedtuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from tvm_under_test import tvm_under_test  # noqa: E402

FAKE_TVM = os.path.join(ROOT, "tests", "relax", "fake_tvm")
REFERENCE = os.environ.get("MSC_SHARED_REFERENCE_DIR", os.path.join(os.path.dirname(ROOT), "shared", "reference"))

Backend = namedtuple("Backend", "name summary run python merge atol dynamic_shapes env precisions")


def _listing(binary, templates=None):
    args = [binary] + (["--templates", str(templates)] if templates else []) + ["backends", "--json"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(args), proc.stderr.strip()))
    return json.loads(proc.stdout)


def discover(binary, templates=None):
    """The backends with a `test` section, sorted by name (list of Backend)."""
    out = []
    for b in _listing(binary, templates):
        t = b["test"]
        if t is not None:
            out.append(Backend(b["name"], b["summary"], t["run"], t["python"], t["merge"], t["atol"],
                               b["dynamic_shapes"], t["env"], b["precisions"]))
    return out


def untested(binary, templates=None):
    """Names of the backends without a `test` section (the suite cannot run their projects)."""
    return [b["name"] for b in _listing(binary, templates) if b["test"] is None]


def names(binary, templates=None, **where):
    """Names of the discovered backends whose fields equal `where` (e.g. merge=False)."""
    return [b.name for b in discover(binary, templates) if all(getattr(b, k) == v for k, v in where.items())]


def is_dynamic(graph):
    """Whether an MSCGraph (its JSON as a dict) has symbolic dims: prims, or a -1 in the shape of a
    node output or weight."""
    tensors = [t for n in graph["nodes"] for t in n["outputs"] + list(n.get("weights", {}).values())]
    return bool(graph.get("prims")) or any(d < 0 for t in tensors for d in t["shape"])


def takes(backend, graph):
    """Whether `backend` takes the MSCGraph `graph` (a dict): a memory-planning backend
    (dynamic_shapes false) only static ones."""
    return backend.dynamic_shapes or not is_dynamic(graph)


def interpreter(backend, debian_python=None):
    """(python, env) that `python` in the backend's `run` stands for; (None, env) when it uses none."""
    debian_python = debian_python or sys.executable
    env = dict(os.environ)
    python = None
    if backend.python == "debian":
        python = debian_python
    elif backend.python == "tvm":
        real = tvm_under_test(debian_python)
        if real is not None:
            python, env = real
        else:
            python = debian_python
            env.update(PYTHONPATH=FAKE_TVM, FAKE_TVM_FLAVOR="v0.20", MSC_SHARED_REFERENCE_DIR=REFERENCE)
    env.update(backend.env)
    return python, env


def command(backend, debian_python=None):
    """(argv, env) that run a generated project of `backend` in its folder."""
    python, env = interpreter(backend, debian_python)
    return [python if w == "python" else w for w in backend.run], env


def run_project(backend, project_dir, debian_python=None, timeout=1500, args=(), env=None):
    """Runs the project's golden test in `project_dir`; returns the CompletedProcess (text). `args`
    go to the harness: every backend's takes --atol X --rtol Y (the float tolerance of the check,
    |got - expected| <= atol + rtol * |expected|) and --save-outputs FILE (run on the golden
    inputs and write every output, keyed by MSC tensor name, to the safetensors file FILE instead
    of checking them). `env`: more environment for the run (e.g. CMake's CMAKE_BUILD_TYPE)."""
    argv, run_env = command(backend, debian_python)
    env = dict(run_env, **(env or {}))
    return subprocess.run(argv + [str(a) for a in args], cwd=str(project_dir), env=env, capture_output=True,
                          text=True, timeout=timeout)


def generate_and_run(binary, backend, sources, project_dir, debian_python=None, timeout=1500, args=()):
    """`msc-codegen generate` for `backend` from `sources` (generate's --graph / --weights / --golden
    arguments) into `project_dir`, then its golden test (run_project with `args`). Returns "" when
    both pass, else the failing step's output."""
    gen = subprocess.run([str(binary), "generate", *map(str, sources), "--backend", backend.name, "--out",
                          str(project_dir)], capture_output=True, text=True, timeout=900)
    if gen.returncode != 0:
        return "generate failed:\n" + gen.stderr
    run = run_project(backend, project_dir, debian_python, timeout=timeout, args=args)
    return "" if run.returncode == 0 else run.stdout[-6000:] + run.stderr[-6000:]


def run_projects(backend, project_dirs, debian_python=None):
    """Runs the golden test of many projects; returns {dir (absolute): (returncode, output)}. A
    backend whose `run` is `python test_model.py` (the Python harness convention: test_model.main
    (argv) returns the exit status) runs them in two parallel processes that import the framework
    once (tests/common/run_golden_batch.py); others one process per project."""
    dirs = [os.path.abspath(str(d)) for d in project_dirs]
    if backend.run == ["python", "test_model.py"]:
        import run_golden_batch
        python, env = interpreter(backend, debian_python)
        records = run_golden_batch.run_batches(python, dirs, env)
        return {d: (r["rc"], r["stdout"] + r["stderr"]) for d, r in records.items()}
    out = {}
    for d in dirs:
        proc = run_project(backend, d, debian_python)
        out[d] = (proc.returncode, proc.stdout + proc.stderr)
    return out
