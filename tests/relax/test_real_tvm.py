"""The generated relax projects on a real Apache TVM (not the fake): every project of
conftest.PROJECTS (the real MSC graphs, every synthetic case of graphs/cases.py incl. the per-op
cases, the examples, the hostile-names graph) runs its own golden harness -- build for llvm
through model.compile_module, run in the relax VM, compare with the golden data -- and must print
PASSED.

The TVM under test: MSC_TVM_PYTHON (the project's venv, the newest apache-tvm wheel; ctest's
relax_tvm_newest) or MSC_TVM_HOME (a source build, e.g. the private v0.20.0 one), see
tests/common/tvm_under_test.py. Without either these tests are skipped with the reason "not run:
no TVM (set MSC_TVM_PYTHON or MSC_TVM_HOME)"; a variable that names no usable TVM is a failure.
The one other skip: the v0.20 batch_norm lowering check, on any other version.

The projects run in two batches in parallel (run_golden_batch.py: TVM imported once per batch,
each project's test_model.main() as `python3 test_model.py` would run it).
"""
import os
import shutil
import subprocess

import pytest

import run_golden_batch  # tests/common, on sys.path by conftest
from conftest import PROJECTS, PYTHON
from tvm_under_test import TVMConfigError, tvm_under_test

NO_TVM = "not run: no TVM (set MSC_TVM_PYTHON or MSC_TVM_HOME)"


def tvm_python():
    """(interpreter, environment) that run code against the TVM under test (skips without one)."""
    try:
        found = tvm_under_test(PYTHON)
    except TVMConfigError as err:
        pytest.fail(str(err))
    if found is None:
        pytest.skip(NO_TVM)
    return found


def run_real(project_dir, args=(), code=None, timeout=1200):
    python, env = tvm_python()
    cmd = [python, "-c", code] if code is not None else [python, "test_model.py", *args]
    return subprocess.run(cmd, cwd=str(project_dir), capture_output=True, text=True, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def tvm_version():
    python, env = tvm_python()
    proc = subprocess.run([python, "-c", "import tvm; print(tvm.__version__); print(tvm.__file__)"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    version, path = proc.stdout.split()
    assert "fake" not in version and "fake_tvm" not in path, (version, path)
    return version


@pytest.fixture(scope="module")
def golden_runs(projects, tvm_version):
    """{project id: run_golden_batch.py's record} for every project of PROJECTS, run in two
    parallel batches."""
    python, env = tvm_python()
    dirs = {os.path.abspath(str(projects[pid].dir)): pid for pid in PROJECTS}
    return {dirs[d]: record for d, record in run_golden_batch.run_batches(python, list(dirs), env).items()}


@pytest.mark.parametrize("pid", PROJECTS)
def test_golden_harness_passes_on_real_tvm(projects, pid, golden_runs, tvm_version):
    p = projects[pid]
    run = golden_runs[pid]
    assert run["rc"] == 0, "TVM %s:\n%s%s" % (tvm_version, run["stdout"], run["stderr"])
    lines = run["stdout"].strip().splitlines()
    assert lines[-1] == "PASSED"
    assert sum("max abs err" in line and line.endswith(" ok") for line in lines) == len(p.graph["outputs"])


def test_real_tvm_harness_fails_on_wrong_outputs(projects, tmp_path, tvm_version):
    """On real TVM too, the harness fails (exit 1) when a golden output is off by 1e-3."""
    from conftest import read_safetensors, write_safetensors
    p = projects["case/nn_batch_norm"]
    bad = tmp_path / "project"
    shutil.copytree(p.dir, bad)
    outputs = read_safetensors(bad / "golden" / "outputs.safetensors")
    name = p.graph["outputs"][-1]
    outputs[name].reshape(-1)[0] += 1e-3
    write_safetensors(bad / "golden" / "outputs.safetensors", outputs)
    proc = run_real(bad)
    assert proc.returncode == 1 and "FAILED" in proc.stdout.splitlines()[-1], proc.stdout + proc.stderr


LEGALIZE_ONLY = '''
import numpy as np, tvm
from tvm import relax
import model, test_model
mod = relax.transform.LegalizeOps()(model.load_model())
vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
inputs = model.load_safetensors("golden/inputs.safetensors")
expected = model.load_safetensors("golden/outputs.safetensors")
got = test_model.run_model(vm, [inputs[name] for name, _ in model.INPUTS])
print(max(float(np.max(np.abs(g - expected[name]))) for (name, _), g in zip(model.OUTPUTS, got)))
'''


def test_batch_norm_needs_decompose_ops_for_inference_on_v020(projects, tvm_version):
    """Why model.lower_module runs DecomposeOpsForInference: on TVM v0.20, LegalizeOps alone
    lowers batch_norm(training=False) with the batch statistics, so the same module built without
    the decomposition is wrong, while the generated harness (with it) passes."""
    if not tvm_version.startswith("0.20"):
        pytest.skip("the reversed batch_norm lowering is TVM v0.20's (this is %s)" % tvm_version)
    p = projects["case/nn_batch_norm"]
    proc = run_real(p.dir, code=LEGALIZE_ONLY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert float(proc.stdout.split()[-1]) > 1e-2, proc.stdout
    assert run_real(p.dir).returncode == 0
