"""The TVM a test runs generated relax projects on, shared by tests/relax/test_real_tvm.py and
tests/onnx (the real models). One of, the first that is set:

  MSC_TVM_PYTHON  an interpreter that imports tvm: the project's venv with the newest apache-tvm
                  wheel (scripts/install_venv.sh; CMake passes MSC_VENV_PYTHON);
  MSC_TVM_HOME    a TVM source tree with a build: $MSC_TVM_HOME/python (the tvm package) and
                  $MSC_TVM_HOME/build/libtvm.so, run with Debian's Python (the private v0.20.0
                  build of ../shared/reference/tvm.md).
"""
import os


class TVMConfigError(ValueError):
    """MSC_TVM_PYTHON / MSC_TVM_HOME is set but does not name a usable TVM."""


def tvm_under_test(debian_python):
    """(interpreter, environment) that run code against the TVM under test, or None when neither
    variable is set. Raises TVMConfigError for a variable that names no usable TVM."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("FAKE_TVM_FLAVOR", None)
    env.pop("PYTHONPATH", None)
    python = os.environ.get("MSC_TVM_PYTHON")
    if python:
        if not os.path.isfile(python):
            raise TVMConfigError("MSC_TVM_PYTHON=%s is not a file" % python)
        return python, env
    home = os.environ.get("MSC_TVM_HOME")
    if not home:
        return None
    python_dir, build = os.path.join(home, "python"), os.path.join(home, "build")
    if not os.path.isdir(os.path.join(python_dir, "tvm")) or not os.path.isfile(os.path.join(build, "libtvm.so")):
        raise TVMConfigError("MSC_TVM_HOME=%s must hold python/tvm and build/libtvm.so" % home)
    env.update(PYTHONPATH=python_dir, TVM_LIBRARY_PATH=build)
    return debian_python, env
