"""msc-codegen CLI end to end, on the real graphs TVM v0.20's MSC wrote (../shared/reference/msc-real)."""
import filecmp
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import BINARY, REFERENCE, ROOT, run_cli

sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
import backends  # noqa: E402

# Every backend under templates/ (`msc-codegen backends --json`), and the precisions each offers.
_LISTING = json.loads(run_cli("backends", "--json").stdout)
ALL_BACKENDS = [b["name"] for b in _LISTING]
PRECISIONS = {b["name"]: b["precisions"] for b in _LISTING}

REAL = os.path.join(REFERENCE, "msc-real")


def real(model, name):
    return os.path.join(REAL, model, name)


def run_project_test(out):
    proc = subprocess.run([sys.executable, "test_model.py"], cwd=out, capture_output=True, text=True, timeout=600)
    return proc


@pytest.mark.parametrize("model", ["conv_relu", "mlp"])
@pytest.mark.parametrize("weights", ["weights.safetensors", "weights.bin"])
def test_real_graph_torch_project_passes_golden(model, weights, tmp_path, real_golden):
    out = tmp_path / "out"
    run_cli("generate", "--graph", real(model, "graph.json"), "--weights", real(model, weights),
            "--backend", "torch", "--out", out, "--golden", real_golden(model))
    proc = run_project_test(out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED" in proc.stdout and "max abs err" in proc.stdout


def test_golden_harness_fails_on_wrong_outputs(tmp_path, real_golden):
    """The harness must really fail: corrupt one golden output value."""
    import numpy as np
    from conftest import write_safetensors
    golden = real_golden("conv_relu")
    with np.load(real("conv_relu", "outputs.npz")) as z:
        bad = {k: z[k].copy() for k in z.files}
    key = next(iter(bad))
    bad[key].flat[3] += 1e-3
    write_safetensors(golden / "outputs.safetensors", bad)
    out = tmp_path / "out"
    run_cli("generate", "--graph", real("conv_relu", "graph.json"), "--weights", real("conv_relu", "weights.bin"),
            "--backend", "torch", "--out", out, "--golden", golden)
    proc = run_project_test(out)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED" in proc.stdout


@pytest.mark.parametrize("backend", [b for b in backends.discover(BINARY) if not b.merge], ids=lambda b: b.name)
def test_every_harness_takes_atol_and_rtol(backend, tmp_path, real_golden):
    """Every backend's golden test takes --atol / --rtol (tests pass their tolerance that way,
    tests/common/backends.py): golden outputs 0.1% off fail at the default tolerance and pass at
    --rtol 1e-2. (numpy's harness had neither option; the ONNX real-model tests found it.)"""
    import numpy as np
    from conftest import write_safetensors
    golden = real_golden("conv_relu")
    with np.load(real("conv_relu", "outputs.npz")) as z:
        write_safetensors(golden / "outputs.safetensors", {k: z[k] * np.float32(1.001) for k in z.files})
    out = tmp_path / backend.name
    run_cli("generate", "--graph", real("conv_relu", "graph.json"), "--weights", real("conv_relu", "weights.bin"),
            "--backend", backend.name, "--out", out, "--golden", golden)
    strict = backends.run_project(backend, out, timeout=600)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    loose = backends.run_project(backend, out, timeout=600, args=["--atol", "1e-5", "--rtol", "1e-2"])
    assert loose.returncode == 0, loose.stdout + loose.stderr


def test_no_template_is_a_copy_of_another():
    """Templates share by reference, never by copy: two files under templates/ with the same
    bytes must both be one `{% include "..." %}` line (an op rendered by another op's snippet),
    not two copies of code that would drift apart."""
    by_bytes = {}
    for folder, _, files in os.walk(os.path.join(ROOT, "templates")):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                by_bytes.setdefault(f.read(), []).append(os.path.relpath(path, ROOT))
    include = re.compile(rb'\{%-? include "[^"]+" -?%\}\n?')
    copies = [sorted(paths) for text, paths in by_bytes.items() if len(paths) > 1 and not include.fullmatch(text)]
    assert not copies, copies


@pytest.mark.parametrize("backend", [b for b in backends.discover(BINARY) if not b.merge], ids=lambda b: b.name)
def test_every_harness_saves_outputs(backend, tmp_path, real_golden):
    """Every backend's golden test takes --save-outputs FILE (tests/difftest reads every backend's
    outputs that way): it writes the outputs on the golden inputs, keyed by tensor name, with the
    graph's dtype and shape, and does not check them (golden outputs 1% off still exit 0). The
    merged (Vulkan) harness is run the same way by the difftest ctest."""
    import numpy as np
    from conftest import write_safetensors
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from msc_export.safetensors_np import load_file
    golden = real_golden("conv_relu")
    with np.load(real("conv_relu", "outputs.npz")) as z:
        right = {k: z[k] for k in z.files}
    write_safetensors(golden / "outputs.safetensors", {k: v * np.float32(1.01) for k, v in right.items()})
    out = tmp_path / backend.name
    run_cli("generate", "--graph", real("conv_relu", "graph.json"), "--weights", real("conv_relu", "weights.bin"),
            "--backend", backend.name, "--out", out, "--golden", golden)
    saved = tmp_path / "outputs.safetensors"
    proc = backends.run_project(backend, out, timeout=600, args=["--save-outputs", saved])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = load_file(str(saved))
    assert sorted(got) == sorted(right)
    for name, value in right.items():
        assert got[name].dtype == value.dtype and got[name].shape == value.shape, name
        np.testing.assert_allclose(got[name], value, rtol=1e-4, atol=1e-5)


def test_generation_is_deterministic(tmp_path, real_golden):
    golden = real_golden("mlp")
    outs = []
    for i in range(2):
        out = tmp_path / ("out%d" % i)
        run_cli("generate", "--graph", real("mlp", "graph.json"), "--weights", real("mlp", "weights.safetensors"),
                "--backend", "torch", "--out", out, "--golden", golden)
        outs.append(out)
    cmp = filecmp.dircmp(outs[0], outs[1])
    assert not cmp.diff_files and not cmp.left_only and not cmp.right_only
    for sub in cmp.subdirs.values():
        assert not sub.diff_files
    for name in ("model.py", "weights.safetensors", "test_model.py"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes()


def test_refuses_foreign_folder_and_force_replaces(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    args = ["generate", "--graph", real("conv_relu", "graph.json"), "--weights", real("conv_relu", "weights.bin"),
            "--backend", "torch", "--out", out]
    proc = run_cli(*args, check=False)
    assert proc.returncode == 1
    assert "not empty and not generated by msc-codegen" in proc.stderr and "--force" in proc.stderr
    assert (out / "notes.txt").read_text() == "keep me"
    run_cli(*args, "--force")
    assert not (out / "notes.txt").exists() and (out / "model.py").exists()
    run_cli(*args)  # our own output: replaced without --force


def test_failed_run_leaves_no_output(tmp_path):
    graph = json.load(open(real("conv_relu", "graph.json")))
    graph["nodes"][2]["optype"] = "nn.frobnicate"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(graph))
    out = tmp_path / "out"
    proc = run_cli("generate", "--graph", bad, "--weights", real("conv_relu", "weights.bin"), "--backend", "torch",
                   "--out", out, check=False)
    assert proc.returncode == 1
    assert "nodes[2].optype (node \"relu\"): unknown optype \"nn.frobnicate\"" in proc.stderr
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["bad.json"]  # no temporary sibling left behind


def test_missing_snippet_names_expected_file(tmp_path):
    """An optype with an opdef but no snippet in a backend: error names the expected template."""
    import shutil
    templates = tmp_path / "templates"
    shutil.copytree(os.path.join(ROOT, "templates", "torch"), templates / "torch")
    os.remove(templates / "torch" / "ops" / "nn" / "relu.py.j2")
    out = tmp_path / "out"
    proc = run_cli("--templates", templates, "generate", "--graph", real("conv_relu", "graph.json"),
                   "--weights", real("conv_relu", "weights.bin"), "--backend", "torch", "--out", out, check=False)
    assert proc.returncode == 1
    expected = os.path.join(str(templates), "torch", "ops/nn/relu.py.j2")
    assert "optype 'nn.relu' (node \"relu\") has no torch snippet: expected " + expected in proc.stderr
    assert not out.exists()


def test_weight_mismatches_reported_together(tmp_path):
    graph = json.load(open(real("mlp", "graph.json")))
    graph["nodes"][1]["weights"]["weight"]["shape"] = [128, 783]
    graph["nodes"][3]["weights"]["bias"]["dtype"] = "float16"
    bad = tmp_path / "g.json"
    bad.write_text(json.dumps(graph))
    proc = run_cli("generate", "--graph", bad, "--weights", real("mlp", "weights.safetensors"), "--backend", "torch",
                   "--out", tmp_path / "out", check=False)
    assert proc.returncode == 1
    assert "2 weight problems" in proc.stderr, proc.stderr
    assert "const" in proc.stderr and "const_3" in proc.stderr


def test_bad_inputs_give_clear_errors(tmp_path):
    trunc = tmp_path / "w.safetensors"
    trunc.write_bytes(open(real("mlp", "weights.safetensors"), "rb").read()[:1000])
    proc = run_cli("generate", "--graph", real("mlp", "graph.json"), "--weights", trunc, "--backend", "torch",
                   "--out", tmp_path / "o", check=False)
    assert proc.returncode == 1 and str(trunc) in proc.stderr and "error:" in proc.stderr
    proc = run_cli("generate", "--graph", tmp_path / "nope.json", "--backend", "torch", "--out", tmp_path / "o", check=False)
    assert proc.returncode == 1 and "nope.json: cannot open graph file" in proc.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "main",\n "inputs": [}')
    proc = run_cli("validate", bad, check=False)
    assert proc.returncode == 1 and "bad.json:2:" in proc.stderr and "invalid JSON" in proc.stderr
    proc = run_cli("generate", "--graph", real("mlp", "graph.json"), "--weights", real("mlp", "weights.bin"),
                   "--backend", "cobol", "--out", tmp_path / "o", check=False)
    assert proc.returncode == 1 and "unknown backend 'cobol'" in proc.stderr and "torch" in proc.stderr
    proc = run_cli("generate", "--graph", real("mlp", "graph.json"), "--backend", "torch", "--out", tmp_path / "o",
                   check=False)
    assert proc.returncode == 1 and "pass --weights" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_inspect_validate_ops_help():
    text = run_cli("inspect", real("mlp", "graph.json")).stdout
    assert text.startswith("main <INPUTS: inp_0:0| OUTPUTS: matmul_1:0>\n")
    assert "ID_1 matmul <PARENTS: inp_0| CHILDERN: relu>\n" in text
    assert "    weight: const(matmul.weight)<128,784|float32|OI>" in text
    assert "valid (4 nodes)" in run_cli("validate", real("mlp", "graph.json")).stdout
    ops = run_cli("ops").stdout
    assert ops.splitlines()[0].split()[:2] == ["optype", "relax"] or "torch" in ops.splitlines()[0]
    row = [line for line in ops.splitlines() if line.startswith("nn.conv2d ")][0]
    assert "yes" in row
    # the total row's counts sit under the backend names (they were one column to the right)
    header = ops.splitlines()[0]
    total = [line for line in ops.splitlines() if line.startswith("total ")][0]
    for backend in header.split()[1:]:
        col = header.index(" " + backend + " ") + 1 if (" " + backend + " ") in header else header.index(backend)
        assert total[col].isdigit() and total[col - 1] == " ", (header, total)
    for sub in ("generate", "inspect", "validate", "render", "ops"):
        assert "--help" in run_cli(sub, "--help").stdout or "Usage" in run_cli(sub, "--help").stdout


def test_ops_traits():
    """`ops --traits [--json]`: each opdef trait, what it means and its optypes (from the opdefs)."""
    traits = {t["name"]: t for t in json.loads(run_cli("ops", "--traits", "--json").stdout)}
    assert {"elementwise", "unary_math", "binary_math", "select", "view", "reduction"} <= set(traits)
    assert "acosh" in traits["unary_math"]["optypes"] and "add" not in traits["unary_math"]["optypes"]
    assert traits["select"]["optypes"] == ["where"] and traits["select"]["inputs"] == 3
    assert all(t["doc"] for t in traits.values())
    text = run_cli("ops", "--traits").stdout
    assert text.startswith("elementwise: ") and " reshape" in text
    assert run_cli("ops", "--json", check=False).returncode == 2  # --json needs --traits
    assert run_cli(check=False).returncode == 2
    assert run_cli("generate", "--graph", "g.json", check=False).returncode == 2  # --out etc. missing


def test_render_subcommand(tmp_path):
    (tmp_path / "inc.j2").write_text("[{{ x }}]")
    (tmp_path / "t.j2").write_text("{% include 'inc.j2' %} {{ name | py_str }}\n")
    (tmp_path / "d.json").write_text(json.dumps({"x": 1, "name": "a\"b"}))
    assert run_cli("render", tmp_path / "t.j2", "--data", tmp_path / "d.json").stdout == "[1] \"a\\\"b\""
    (tmp_path / "u.j2").write_text("ok\n{{ missing }}")
    proc = run_cli("render", tmp_path / "u.j2", "--data", tmp_path / "d.json", check=False)
    assert proc.returncode == 1 and "u.j2:2" in proc.stderr and "missing" in proc.stderr


def test_installed_layout_generates(tmp_path):
    """`cmake --install` puts opdefs/templates/runtime under share/msc-codegen; the installed binary
    finds them there and the vulkan backend's runtime copy still resolves."""
    import shutil
    build = os.path.dirname(os.path.abspath(os.environ.get("MSC_CODEGEN", os.path.join(ROOT, "build", "msc-codegen"))))
    proc = subprocess.run(["cmake", "--install", build, "--prefix", str(tmp_path / "prefix")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    binary = tmp_path / "prefix" / "bin" / "msc-codegen"
    env = {k: v for k, v in os.environ.items() if k != "MSC_CODEGEN_HOME"}
    help_text = subprocess.run([str(binary), "--help"], capture_output=True, text=True, env=env).stdout
    assert str(tmp_path / "prefix" / "share" / "msc-codegen" / "templates") in help_text  # not the source tree
    out = tmp_path / "vk"
    proc = subprocess.run([str(binary), "generate", "--graph", real("conv_relu", "graph.json"), "--weights",
                           real("conv_relu", "weights.bin"), "--backend", "vulkan", "--out", str(out)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert (out / "runtime" / "msc_vk.h").exists() and (out / "model.cc").exists()
    ops = subprocess.run([str(binary), "ops"], capture_output=True, text=True, env=env).stdout
    assert "vulkan" in ops.splitlines()[0]
    shutil.rmtree(tmp_path / "prefix")


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_hostile_names_write_nothing_outside_out(backend, tmp_path):
    """Names with quotes, newlines, '../', keywords and non-ASCII never become paths: every file
    lands under --out, and nothing else appears beside it."""
    export = tmp_path / "export"
    proc = subprocess.run([sys.executable, "-m", "msc_export", "hostile", "--out", str(export)],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    assert proc.returncode == 0, proc.stderr
    work = tmp_path / "work"
    work.mkdir()
    out = work / "out"
    run_cli("generate", "--graph", export / "graph.json", "--weights", export / "weights.safetensors", "--golden",
            export / "golden", "--backend", backend, "--out", out)
    assert sorted(os.listdir(work)) == ["out"]
    for dirpath, dirnames, filenames in os.walk(out):
        for name in dirnames + filenames:
            path = os.path.realpath(os.path.join(dirpath, name))
            assert path.startswith(str(out.resolve()) + os.sep), path
            assert "\n" not in name and ".." not in name.split(os.sep)


def test_vulkan_project_copies_only_its_shaders(tmp_path):
    """backend.yaml's copy filter: the project gets the .comp files of the stems its CMakeLists.txt
    compiles and nothing else of shaders/*.comp; every other runtime file (sources, includes) is
    copied."""
    out = tmp_path / "out"
    run_cli("generate", "--graph", real("conv_relu", "graph.json"), "--weights", real("conv_relu", "weights.bin"),
            "--backend", "vulkan", "--out", out)
    runtime = os.path.join(ROOT, "runtime", "vulkan")

    def files(root):
        return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}
    copied, source = files(out / "runtime"), files(runtime)
    cmake = (out / "CMakeLists.txt").read_text()
    stems = cmake.split("STEMS", 1)[1].split(")", 1)[0].split()
    assert "msc/conv2d_bias" in stems or "nn/conv2d" in stems, stems
    assert {f for f in copied if f.endswith(".comp")} == {"shaders/%s.comp" % s for s in stems}
    assert {f for f in copied if not f.endswith(".comp")} == {f for f in source if not f.endswith(".comp")}
    assert len([f for f in source if f.endswith(".comp")]) > 2 * len(stems)  # the filter did drop files


def test_copy_filter_listing_a_missing_file_is_an_error(tmp_path):
    """A copy filter template listing a file that does not exist fails before anything is written,
    naming the template and the path."""
    import shutil
    templates = tmp_path / "templates"
    shutil.copytree(os.path.join(ROOT, "templates", "vulkan"), templates / "vulkan")
    os.symlink(os.path.join(ROOT, "runtime"), tmp_path / "runtime")  # backend.yaml's ../../runtime/vulkan
    keep = templates / "vulkan" / "project" / "shader_files.j2"
    keep.write_text(keep.read_text() + "shaders/no_such_op.comp\n")
    out = tmp_path / "out"
    proc = run_cli("--templates", templates, "generate", "--graph", real("conv_relu", "graph.json"),
                   "--weights", real("conv_relu", "weights.bin"), "--backend", "vulkan", "--out", out, check=False)
    assert proc.returncode == 1, proc.stderr
    assert str(keep) + ": lists 'shaders/no_such_op.comp', which is no file under " in proc.stderr
    assert not out.exists()


def test_vulkan_concat_in_place(tmp_path):
    """memory_plan.concat_in_place: a channel concat at batch 1 whose slices are 256-byte aligned
    is planned in place (inputs at the output's offset + the bytes before them, no copy
    dispatched); a misaligned one keeps its ops::Concat. Run on the device by
    e2e_merged (squeezenet1_0)."""
    from collections import OrderedDict
    from msc_export.mscgraph import MSCGraph, MSCJoint, MSCTensor

    def t(name, c):
        return MSCTensor(name + ":0", "float32", "NCHW", [1, c, 4, 4])
    nodes = [MSCJoint(0, "x", "input", [], [t("x", 4)], OrderedDict(), {}),
             MSCJoint(1, "a", "nn.relu", ["x:0"], [t("a", 4)], OrderedDict(), {}),
             MSCJoint(2, "b", "sigmoid", ["x:0"], [t("b", 4)], OrderedDict(), {}),
             MSCJoint(3, "c", "concat", ["a:0", "b:0"], [t("c", 8)], OrderedDict([("axis", "1")]), {}),
             MSCJoint(4, "d", "nn.relu", ["c:0"], [t("d", 8)], OrderedDict(), {}),
             MSCJoint(5, "s", "strided_slice", ["x:0"], [t("s", 3)],
                      OrderedDict([("axes", "1"), ("begin", "0"), ("end", "3"), ("strides", "1")]), {}),
             MSCJoint(6, "e", "concat", ["s:0", "d:0"], [t("e", 11)], OrderedDict([("axis", "1")]), {})]
    MSCGraph("g", nodes, ["x:0"], ["e:0"]).save(str(tmp_path / "graph.json"))
    run_cli("generate", "--graph", tmp_path / "graph.json", "--backend", "vulkan", "--out", tmp_path / "vk")
    model = (tmp_path / "vk" / "model.cc").read_text()
    offset = {name: int(model.split('m->Arena("%s:0", DType::kFloat32, ' % name, 1)[1].split(", ", 4)[4].split(")")[0])
              for name in "abcd"}
    assert offset["a"] == offset["c"] and offset["b"] == offset["c"] + 4 * 4 * 4 * 4
    assert "// in place: a, b were written into their slices of c\n" in model
    assert model.count("ops::Concat(") == 1  # e: s's 192 bytes put d at a misaligned offset
    assert "ops::Concat(prog, {s, d}, e, /*axis=*/1);" in model


def _safetensors_dtypes(path):
    import struct
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    return {k: v["dtype"] for k, v in header.items() if k != "__metadata__"}


def test_precision_fp16_stores_linear_weights_as_float16(tmp_path, real_golden):
    """--precision fp16 (vulkan backend.yaml precision.fp16): the linear weights go to the project as
    F16 (bias stays F32), model.cc declares them float16, and main.cc / README carry the fp16 golden
    tolerance. The kernels reading them run in tests/vulkan (float16 weights of every conv
    algorithm and GEMM) and on resnet18 in e2e_resnet18_fp16."""
    out = tmp_path / "vk"
    run_cli("generate", "--graph", real("mlp", "graph.json"), "--weights", real("mlp", "weights.safetensors"),
            "--backend", "vulkan", "--precision", "fp16", "--out", out, "--golden", real_golden("mlp"))
    assert _safetensors_dtypes(out / "weights.safetensors") == {
        "const": "F16", "const_1": "F32", "const_2": "F16", "const_3": "F32"}
    model = (out / "model.cc").read_text()
    assert "{\"const\", DType::kFloat16, {128, 784}}" in model and "{\"const_1\", DType::kFloat32, {128}}" in model
    main = (out / "main.cc").read_text()
    assert "defaults.tol.atol = 0.01;" in main and "defaults.tol.rtol = 0.01;" in main
    assert "2 weight and 2 activation tensors stored as float16" in main
    # The hidden activations (linear -> relu) are float16; the graph's input and output stay float32.
    assert 'm->Arena("matmul:0", DType::kFloat16, {1, 128}' in model
    assert 'm->Input("inp_0:0", DType::kFloat32' in model
    assert 'm->Arena("matmul_1:0", DType::kFloat32, {1, 10}' in model
    assert "Golden tolerance: atol = 0.01, rtol = 0.01" in (out / "README.md").read_text()
    # The float kernels' float16-output shader variants are compiled for this project only.
    assert re.search(r"STEMS [^)]* F16\)", (out / "CMakeLists.txt").read_text())
    # fp32 (the default) keeps every weight float32 and the runtime's default tolerance.
    run_cli("generate", "--graph", real("mlp", "graph.json"), "--weights", real("mlp", "weights.safetensors"),
            "--backend", "vulkan", "--out", tmp_path / "fp32")
    assert set(_safetensors_dtypes(tmp_path / "fp32" / "weights.safetensors").values()) == {"F32"}
    assert " F16)" not in (tmp_path / "fp32" / "CMakeLists.txt").read_text()
    assert "defaults.tol" not in (tmp_path / "fp32" / "main.cc").read_text()


@pytest.mark.parametrize("backend", [b for b in ALL_BACKENDS if "fp16" not in PRECISIONS[b]])
def test_precision_fp16_is_refused_where_the_backend_does_not_offer_it(backend, tmp_path):
    proc = run_cli("generate", "--graph", real("mlp", "graph.json"), "--weights", real("mlp", "weights.safetensors"),
                   "--backend", backend, "--precision", "fp16", "--out", tmp_path / "o", check=False)
    assert proc.returncode != 0
    assert ("backend '%s' does not offer --precision fp16 (its backend.yaml `precision` offers: fp32)" % backend
            in proc.stderr), proc.stderr
    assert not (tmp_path / "o").exists()
    proc = run_cli("generate", "--graph", real("mlp", "graph.json"), "--backend", "vulkan",
                   "--precision", "bf16", "--out", tmp_path / "o", check=False)
    assert proc.returncode != 0 and "--precision" in proc.stderr and "bf16" in proc.stderr, proc.stderr
    assert not (tmp_path / "o").exists()
