"""The generated projects of the plain-Python backends (test.python: debian; torch and numpy) on
today's stack: every per-op case of tests/ops/cases/cases.py (the cases tests/ops runs on Debian's
torch 1.13 / numpy 1.24) is generated for each of them and its own golden harness (test_model.main) runs under the
project's venv (MSC_VENV_PYTHON: torch 2.x, numpy 2.x; scripts/install_venv.sh), in two parallel
batches (tests/common/run_golden_batch.py). Each project must print PASSED.

Run by ctest `projects_venv` with Debian's Python (which builds the cases with torch 1.13).
"""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "ops"))
sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
import run_golden_batch  # noqa: E402
from test_ops import BACKENDS as FOUND, cases, generate, write_case  # noqa: E402  (the per-op cases, their writer)

# The backends whose projects run on a plain Python interpreter (backend.yaml test.python: debian),
# here the venv's; relax's run on the TVM under test (tests/relax, relax_tvm_newest).
BACKENDS = [b.name for b in FOUND if b.python == "debian"]


def venv_python():
    python = os.environ.get("MSC_VENV_PYTHON")
    if not python or not os.path.isfile(python):
        pytest.fail("MSC_VENV_PYTHON must name the venv's interpreter (scripts/install_venv.sh), got %r" % python)
    return python


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{(backend, case): record} for every case and Python backend, run under the venv."""
    root = tmp_path_factory.mktemp("todays-stack")
    dirs = {}
    for name in sorted(cases.CASES):
        case = cases.build_case(name)
        folder = str(root / name)
        write_case(folder, case.graph, case.weights, case.inputs, case.outputs)
        for backend in BACKENDS:
            out = os.path.join(folder, backend)
            proc = generate(folder, backend, out)
            assert proc.returncode == 0, proc.stderr
            dirs[os.path.abspath(out)] = (backend, name)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    records = run_golden_batch.run_batches(venv_python(), list(dirs), env)
    return {dirs[d]: r for d, r in records.items()}


def test_the_venv_is_todays_stack():
    proc = subprocess.run([venv_python(), "-c", "import torch, numpy; print(torch.__version__, numpy.__version__)"],
                          capture_output=True, text=True, timeout=300)
    torch_version, numpy_version = proc.stdout.split()
    assert torch_version.startswith("2.") and numpy_version.startswith("2."), proc.stdout


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_project_passes_on_todays_stack(runs, backend, name):
    record = runs[(backend, name)]
    assert record["rc"] == 0, record["stdout"] + record["stderr"]
    assert record["stdout"].strip().splitlines()[-1] == "PASSED"
