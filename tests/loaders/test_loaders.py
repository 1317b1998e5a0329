"""Corrupt weights and golden files against the loaders of every generated project type.

One small model (TinyNet below: two inputs, two linear layers, four float32 weights), exported with
python/msc_export as the examples are, is generated for every backend the suite finds whose
projects are Python harnesses (tests/common/backends.py: backend.yaml test.run `python
test_model.py`; torch, numpy, relax on the TVM under test or the fake TVM of tests/relax) and for
the Vulkan runtime's own loader (one project, built once with AddressSanitizer +
UndefinedBehaviorSanitizer). corrupt_corpus.py derives its corrupt variants from
each of weights.safetensors, golden/inputs.safetensors and golden/outputs.safetensors, plus an
absent weights file; every project's golden test runs once per variant (`--weights FILE` or
`--golden DIR`) and must
  - exit with status 2 and print one line "error: <message>" holding the variant's expected
    substring, the corrupt file's path and, where there is one, the tensor's name ('name');
  - not raise: no exception escapes the Python harness (a traceback from inside numpy, torch or
    TVM), and the Vulkan binary dies of no signal and prints no sanitizer report.
The untouched files must pass (status 0) in every project, so a failure is the loader's.
Python projects run all their cases in one process (run_cases.py: torch and TVM are imported once);
two cases per Python project also run as real `python3 test_model.py` processes.

Environment: MSC_CODEGEN (the binary, required), MSC_LOADERS_WORK (a folder kept between runs, where
the Vulkan project is built incrementally; default: a temporary folder), MSC_LOADERS_VULKAN=0 to
skip vulkan (tests/loaders.cmake sets it when the Vulkan loader or glslc is missing),
MSC_SHARED_REFERENCE_DIR (for the fake TVM), MSC_TVM_PYTHON / MSC_TVM_HOME (optional: relax on a
real TVM instead of the fake one).
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
import backends  # noqa: E402
import corrupt_corpus  # noqa: E402

PY = sys.executable  # MSC_PYTHON: Debian's stack + safetensors (scripts/install_venv.sh debian)
HELPER = os.path.join(ROOT, "templates", "common", "helpers", "load_safetensors.py.j2")
# Substrings that mean a crash or a sanitizer finding in the Vulkan binary's output.
SANITIZER_MARKS = ("AddressSanitizer", "UndefinedBehaviorSanitizer", "runtime error:", "LeakSanitizer",
                   "terminate called", "Aborted", "Segmentation fault")


def codegen():
    path = os.environ.get("MSC_CODEGEN")
    if not path or not os.path.isfile(path):
        pytest.fail("MSC_CODEGEN must name the msc-codegen binary (got %r); run through ctest" % path)
    return path


def python_backends():
    """The discovered backends whose projects run as `python test_model.py` (run_cases.py calls
    test_model.main(argv) in one process)."""
    return [b for b in backends.discover(codegen()) if b.run == ["python", "test_model.py"]]


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    path = os.environ.get("MSC_LOADERS_WORK")
    if not path:
        return str(tmp_path_factory.mktemp("loaders"))
    os.makedirs(path, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def export(work):
    """TinyNet exported (graph.json, weights.safetensors, golden/) with msc_export, seeded."""
    import torch
    from torch import nn
    from msc_export import export_torch

    class TinyNet(nn.Module):
        """y = fc2(relu(fc1(x))) + b: x float32 [2, 6], b float32 [2, 4]; weights [5, 6] [5] [4, 5] [4]."""

        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 5)
            self.fc2 = nn.Linear(5, 4)

        def forward(self, x, b):
            return self.fc2(torch.relu(self.fc1(x))) + b

    out = os.path.join(work, "export")
    shutil.rmtree(out, ignore_errors=True)
    torch.manual_seed(0)
    export_torch(TinyNet().eval(), [[2, 6], [2, 4]], out, seed=0)
    return out


@pytest.fixture(scope="session")
def cases(export, work):
    """[{id, kind, argv, file, expect, tensor}]: one per corrupt variant of each file, plus the
    baseline (no corruption, must pass) and an absent weights file."""
    root = os.path.join(work, "corpus")
    shutil.rmtree(root, ignore_errors=True)
    golden = os.path.join(export, "golden")
    result = [{"id": "baseline", "kind": None, "argv": [], "file": None, "expect": None, "tensor": None}]
    absent = os.path.join(root, "no_such_weights.safetensors")
    result.append({"id": "weights-absent", "kind": "weights", "argv": ["--weights", absent], "file": absent,
                   "expect": "not found or not readable", "tensor": None})
    sources = {"weights": os.path.join(export, "weights.safetensors"),
               "inputs": os.path.join(golden, "inputs.safetensors"),
               "outputs": os.path.join(golden, "outputs.safetensors")}
    for kind, src in sources.items():
        manifest = corrupt_corpus.write_corpus(src, os.path.join(root, kind), kind)
        for variant, v in sorted(manifest.items()):
            case = {"id": "%s-%s" % (kind, variant), "kind": kind, "expect": v["expect"], "tensor": v["tensor"],
                    "reference": v["reference"], "reference_tensor": v["reference_tensor"]}
            if kind == "weights":
                case.update(argv=["--weights", v["file"]], file=v["file"])
            else:  # a golden folder holding the corrupt file and the other, untouched one
                folder = os.path.join(root, "golden", case["id"])
                os.makedirs(folder)
                other = "outputs" if kind == "inputs" else "inputs"
                shutil.copyfile(v["file"], os.path.join(folder, kind + ".safetensors"))
                shutil.copyfile(sources[other], os.path.join(folder, other + ".safetensors"))
                case.update(argv=["--golden", folder], file=os.path.join(folder, kind + ".safetensors"))
            result.append(case)
    return result


def generate(export, backend, out):
    proc = subprocess.run([codegen(), "generate", "--graph", os.path.join(export, "graph.json"), "--weights",
                           os.path.join(export, "weights.safetensors"), "--golden", os.path.join(export, "golden"),
                           "--backend", backend, "--out", out, "--force"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out


def check(case, status, stdout, stderr, escaped=None):
    """Problems (strings) of one run against the case's expectation; [] when it is as required."""
    if case["expect"] is None:
        return [] if status == 0 and escaped is None else ["the untouched files fail (status %r):\n%s%s%s" % (
            status, stdout[-2000:], stderr[-2000:], escaped or "")]
    problems = []
    if escaped is not None:
        problems.append("an exception escaped the harness:\n" + escaped)
    if status != 2:
        problems.append("exit status %r, expected 2" % (status,))
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    if len(errors) != 1:
        problems.append("expected one 'error: ' line on stderr, got %d" % len(errors))
    else:
        line = errors[0]
        for need in [case["expect"], case["file"]] + ([repr(case["tensor"])] if case["tensor"] else []):
            if need not in line:
                problems.append("the error does not contain %r" % need)
    if "Traceback" in stdout + stderr:
        problems.append("a Python traceback was printed")
    return ["%s: %s\n    stderr: %s" % (case["id"], p, stderr.strip()[-600:]) for p in problems]


def helper_module(hide_package=False):
    """The Python projects' loader (templates/common/helpers/load_safetensors.py.j2, plain Python
    with the imports model.py gives it) as a namespace; hide_package: as if safetensors were not
    installed."""
    import builtins
    with open(HELPER, encoding="utf-8") as f:
        text = f.read()
    for marker in ("{{", "{%", "{#"):
        assert marker not in text, "the shared loader must be plain Python"
    real_import = builtins.__import__

    def no_safetensors(name, *args, **kwargs):
        if name == "safetensors":
            raise ImportError("hidden by the test")
        return real_import(name, *args, **kwargs)

    import numpy as np
    namespace = {"json": json, "os": os, "re": __import__("re"), "struct": __import__("struct"), "np": np,
                 "__builtins__": dict(vars(builtins), __import__=no_safetensors if hide_package else real_import)}
    exec(compile(text, HELPER, "exec"), namespace)
    return namespace


def write_raw_safetensors(path, entries):
    """A valid file by hand: entries [(name, dtype code, shape, bytes)] in order."""
    header, offset = {}, 0
    for name, code, shape, data in entries:
        header[name] = {"dtype": code, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(__import__("struct").pack("<Q", len(text)) + text + b"".join(e[3] for e in entries))


def test_loader_dtypes_and_package(tmp_path):
    """BF16 widens exactly to float32, a dtype numpy lacks (F8_E4M3) is refused naming the tensor,
    and without the safetensors package the error says what to install, naming the file."""
    import numpy as np
    m = helper_module()
    bits = np.array([0x3F80, 0xC040, 0x7F80], dtype="<u2")  # 1.0, -3.0, inf as bfloat16
    path = str(tmp_path / "bf16.safetensors")
    write_raw_safetensors(path, [("b", "BF16", [3], bits.tobytes()), ("i", "I64", [], np.int64(7).tobytes()),
                                 ("s", "BF16", [], bits[1:2].tobytes())])
    got = m["load_safetensors"](path, {"b": ([3], "bfloat16"), "i": ([], "int64"), "s": ([], "bfloat16")})
    assert got["b"].dtype == np.float32 and got["b"].tolist() == [1.0, -3.0, float("inf")]
    # a 0-d one too (numpy 1.x promotes a 0-d uint32 << 16 to int64: ONNX's celu_bfloat16 test)
    assert isinstance(got["s"], np.ndarray) and got["s"].dtype == np.float32 and got["s"].shape == ()
    assert float(got["s"]) == -3.0
    assert got["i"].shape == () and int(got["i"]) == 7 and got["i"].flags.writeable
    path8 = str(tmp_path / "f8.safetensors")
    write_raw_safetensors(path8, [("q", "F8_E4M3", [2], b"\x38\x40")])
    with pytest.raises(m["LoadError"], match=r"f8.safetensors: tensor 'q': dtype F8_E4M3 has no numpy dtype"):
        m["load_safetensors"](path8)
    hidden = helper_module(hide_package=True)
    with pytest.raises(hidden["LoadError"], match=r"bf16.safetensors: reading it needs the safetensors package"):
        hidden["load_safetensors"](path)


def python_case(case):
    """The expectation for the Python projects' reader (the safetensors package behind LoadError):
    the package's reason and the tensor it is about, or success where the package reads the file."""
    if "reference" not in case:  # baseline, absent file: the same for every reader
        return case
    return dict(case, expect=case["reference"], tensor=case["reference_tensor"])


@pytest.mark.parametrize("backend", python_backends(), ids=lambda b: b.name)
def test_python_project_rejects_corrupt_files(backend, export, cases, work, tmp_path):
    project = generate(export, backend.name, str(tmp_path / backend.name))
    python, env = backends.interpreter(backend, PY)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    spec, results = tmp_path / "cases.json", tmp_path / "results.json"
    spec.write_text(json.dumps([{"id": c["id"], "argv": c["argv"]} for c in cases]))
    proc = subprocess.run([python, os.path.join(HERE, "run_cases.py"), project, str(spec), str(results)],
                          capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = json.loads(results.read_text())
    problems = []
    for case in map(python_case, cases):
        r = got[case["id"]]
        problems += check(case, r["status"], r["stdout"], r["stderr"], r["escaped"])
    assert not problems, "%d of %d cases wrong:\n%s" % (len(problems), len(cases), "\n".join(problems))
    # Two cases as the user runs them: a real process, one line on stderr, no traceback.
    by_id = {c["id"]: python_case(c) for c in cases}
    for case in (by_id["weights-overlap"], by_id["inputs-header_not_utf8"]):
        run = subprocess.run([python, "test_model.py", *case["argv"]], cwd=project, capture_output=True,
                             text=True, env=env, timeout=600)
        problems += check(case, run.returncode, run.stdout, run.stderr)
        if run.stderr.count("\n") != 1:
            problems.append("%s: stderr is not exactly one line:\n%s" % (case["id"], run.stderr))
    assert not problems, "\n".join(problems)


def sync_tree(src, dst):
    """Makes folder `dst` a copy of `src`, rewriting only files whose bytes differ (so an
    incremental build of `dst` recompiles only what changed)."""
    wanted = set()
    for folder, _, files in os.walk(src):
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), src)
            wanted.add(rel)
            a, b = os.path.join(src, rel), os.path.join(dst, rel)
            with open(a, "rb") as f:
                data = f.read()
            if os.path.isfile(b):
                with open(b, "rb") as f:
                    if f.read() == data:
                        continue
            os.makedirs(os.path.dirname(b), exist_ok=True)
            with open(b, "wb") as f:
                f.write(data)
    for folder, _, files in os.walk(dst):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.relpath(path, dst) not in wanted:
                os.remove(path)


@pytest.mark.skipif(os.environ.get("MSC_LOADERS_VULKAN") == "0", reason="no Vulkan loader or glslc")
def test_vulkan_project_rejects_corrupt_files(export, cases, work):
    base = os.path.join(work, "vulkan")
    fresh, project, build = (os.path.join(base, d) for d in ("fresh", "project", "build"))
    generate(export, "vulkan", fresh)
    os.makedirs(project, exist_ok=True)
    sync_tree(fresh, project)
    flags = "-O0 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
    configure = ["cmake", "-S", project, "-B", build, "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_CXX_FLAGS=" + flags,
                 "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"]
    if shutil.which("ccache"):
        configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    for cmd in (configure, ["cmake", "--build", build, "-j2"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
        assert proc.returncode == 0, "%s failed:\n%s%s" % (" ".join(cmd), proc.stdout[-4000:], proc.stderr[-4000:])
    binary = os.path.join(build, "model")
    # Leak checking is off: the Mesa driver leaks at exit (outside this code); UBSan halts on the
    # first finding, ASan on the first error.
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0", UBSAN_OPTIONS="print_stacktrace=1")

    def run(case):
        proc = subprocess.run([binary, *case["argv"]], capture_output=True, text=True, env=env, timeout=120)
        problems = check(case, proc.returncode, proc.stdout, proc.stderr)
        if proc.returncode < 0:
            problems.append("%s: killed by signal %d" % (case["id"], -proc.returncode))
        problems += ["%s: crash or sanitizer output %r:\n%s" % (case["id"], m, proc.stderr[-3000:])
                     for m in SANITIZER_MARKS if m in proc.stdout + proc.stderr]
        return problems

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for ps in pool.map(run, cases) for p in ps]
    assert not problems, "%d problems in %d cases:\n%s" % (len(problems), len(cases), "\n".join(problems))
