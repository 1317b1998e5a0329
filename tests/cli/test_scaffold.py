"""Authoring tools: `msc-codegen new-op`, `new-backend` and `context`, run on temporary copies of
opdefs/, templates/ and the per-op test cases (never on the repository's own files)."""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import BINARY, REFERENCE, ROOT, run_cli

sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
import backends  # noqa: E402

PY = sys.executable  # MSC_PYTHON: Debian's stack + safetensors (scripts/install_venv.sh debian)
CONV_RELU = os.path.join(REFERENCE, "msc-real", "conv_relu")


@pytest.fixture
def tree(tmp_path):
    """A copy of opdefs/, templates/ and tests/ops/cases/cases*.py; `cli(...)` runs msc-codegen
    on it."""
    root = tmp_path / "repo"
    shutil.copytree(os.path.join(ROOT, "opdefs"), root / "opdefs")
    shutil.copytree(os.path.join(ROOT, "templates"), root / "templates")
    (root / "runtime").symlink_to(os.path.join(ROOT, "runtime"))  # vulkan's copy: ../../runtime/vulkan
    cases = root / "tests" / "ops" / "cases"
    cases.mkdir(parents=True)
    for name in ("cases.py", "cases_base.py", "cases_ops.py"):
        shutil.copy(os.path.join(ROOT, "tests", "ops", "cases", name), cases / name)

    class Tree:
        path = root
        templates = root / "templates"
        opdefs = root / "opdefs"
        cases_ops = cases / "cases_ops.py"

        @staticmethod
        def cli(*args, check=True):
            return run_cli("--templates", root / "templates", "--opdefs", root / "opdefs", *args,
                           check=check)

        @staticmethod
        def snapshot():
            """{relative path: sha256} of every file under the copy."""
            out = {}
            for dirpath, _, files in os.walk(root):
                for f in files:
                    p = os.path.join(dirpath, f)
                    out[os.path.relpath(p, root)] = hashlib.sha256(open(p, "rb").read()).hexdigest()
            return out
    return Tree


def graph_with(tmp_path, optype):
    """conv_relu's graph.json with the relu node's optype replaced."""
    graph = json.load(open(os.path.join(CONV_RELU, "graph.json")))
    relu = [n for n in graph["nodes"] if n["optype"] == "nn.relu"][0]
    relu["optype"] = optype
    path = tmp_path / ("graph_%s.json" % optype.replace(".", "_"))
    path.write_text(json.dumps(graph))
    return path


def ops_row(tree, optype):
    lines = tree.cli("ops").stdout.splitlines()
    header = lines[0].split()[1:]
    row = [line for line in lines if line.split()[:1] == [optype]]
    assert row, "%s not listed by `ops`" % optype
    return dict(zip(header, row[0].split()[1:]))


def run_case(tree, code):
    """Runs `code` with the copy's cases module imported as `cases`."""
    program = "import sys; sys.path.insert(0, %r); import cases\n%s" % (
        str(tree.cases_ops.parent), code)
    return subprocess.run([PY, "-c", program], capture_output=True, text=True, timeout=300)


# ---- new-op -------------------------------------------------------------------------------------

def test_new_op_writes_opdef_snippets_and_case_then_generate_fails_clearly(tree, tmp_path):
    import yaml
    proc = tree.cli("new-op", "nn.my_op", "--cases", tree.cases_ops)
    specs = {p.parent.name: yaml.safe_load(p.read_text()) for p in tree.templates.glob("*/backend.yaml")}
    snippets = {b: spec["op_template"].replace("{path}", "nn/my_op") for b, spec in specs.items()}
    for backend, rel in snippets.items():
        path = tree.templates / backend / rel
        assert "created  %s" % path in proc.stdout
        text = path.read_text()
        assert "{# msc-codegen:stub #}" in text
        # the header points to the context reference and the command, copying neither
        words = " ".join(text.split())  # the header is wrapped
        assert "docs/template-context.md" in words, backend
        assert "msc-codegen context GRAPH.json --node NAME --backend %s" % backend in words
        assert "node.attrs_raw" not in text, backend
    words = lambda path: " ".join(path.read_text().split())  # noqa: E731  (the header is wrapped)
    for backend, rel in snippets.items():
        assert "op_sections (%s)" % ", ".join(specs[backend]["op_sections"]) in words(tree.templates / backend / rel)
    nn_yaml = (tree.opdefs / "nn.yaml").read_text()
    assert "appended %s" % (tree.opdefs / "nn.yaml") in proc.stdout
    assert re.search(r"\nnn\.my_op:\n  summary: .*\n  # traits: .*\n  inputs: \[x\]", nn_yaml)
    assert "\n@case\ndef case_nn_my_op():\n" in tree.cases_ops.read_text()

    # ops lists it, as a stub on every backend
    row = ops_row(tree, "nn.my_op")
    assert set(row) == set(snippets) and set(row.values()) == {"stub"}
    # a graph using it fails on every backend with the stub's message; nothing is written
    graph = graph_with(tmp_path, "nn.my_op")
    for backend, rel in snippets.items():
        out = tmp_path / ("out_" + backend)
        proc = tree.cli("generate", "--graph", graph, "--weights", os.path.join(CONV_RELU, "weights.bin"),
                        "--backend", backend, "--out", out, check=False)
        assert proc.returncode == 1
        assert ("function 'raise_error' failed: nn.my_op is not implemented yet on the %s backend "
                "(node \"relu\"): %s is a stub written by `msc-codegen new-op nn.my_op`" % (backend, rel)) \
            in proc.stderr, proc.stderr
        assert str(tree.templates / backend / rel) in proc.stderr
        assert not out.exists()
    # the test case stub is registered and fails until its reference is written
    run = run_case(tree, "assert 'nn_my_op' in cases.CASES\ncases.build_case('nn_my_op')")
    assert run.returncode == 1
    assert "NotImplementedError: case nn_my_op: write the reference of nn.my_op" in run.stderr


def test_new_op_namespace_decides_the_opdef_file(tree):
    tree.cli("new-op", "msc.my_fused")
    assert "\nmsc.my_fused:\n" in (tree.opdefs / "msc.yaml").read_text()
    tree.cli("new-op", "my_plain")
    assert "\nmy_plain:\n" in (tree.opdefs / "tensor.yaml").read_text()
    proc = tree.cli("new-op", "vision.nms")  # a new namespace gets its own file
    assert "created  %s" % (tree.opdefs / "vision.yaml") in proc.stdout
    assert {"msc.my_fused", "my_plain", "vision.nms"} <= set(
        line.split()[0] for line in tree.cli("ops").stdout.splitlines()[1:] if line.strip())
    # the default cases file is <opdefs>/../tests/ops/cases/cases_ops.py (here: the copy's)
    assert "def case_vision_nms():" in tree.cases_ops.read_text()


def test_new_op_like_copies_and_generates_a_working_torch_project(tree, tmp_path, real_golden):
    import yaml
    proc = tree.cli("new-op", "nn.relu2", "--like", "nn.relu")
    out = proc.stdout + proc.stderr
    defs = yaml.safe_load((tree.opdefs / "nn.yaml").read_text())
    assert defs["nn.relu2"] == defs["nn.relu"]
    # every backend gets nn.relu's snippet, or none where a trait snippet renders the op
    # (backend.yaml trait_snippets: the copy of the traits makes it cover nn.relu2 too)
    backends = sorted(p.parent.name for p in tree.templates.glob("*/backend.yaml"))
    by_trait = 0
    for backend in backends:
        spec = yaml.safe_load((tree.templates / backend / "backend.yaml").read_text())
        dst = tree.templates / backend / spec["op_template"].replace("{path}", "nn/relu2")
        trait = next((t for t in defs["nn.relu"].get("traits", []) if t in spec.get("trait_snippets", {})), None)
        if trait:
            by_trait += 1
            assert not dst.exists() and "%s: nn.relu2 is rendered by its trait snippet %s" % (
                backend, spec["trait_snippets"][trait]) in out, (backend, out)
        else:
            src = tree.templates / backend / spec["op_template"].replace("{path}", "nn/relu")
            assert dst.read_bytes() == src.read_bytes(), backend
    assert by_trait >= 1  # the trait-snippet path is exercised
    row = ops_row(tree, "nn.relu2")
    assert set(row) == set(backends) and set(row.values()) == {"yes"}

    golden = real_golden("conv_relu")
    weights = os.path.join(CONV_RELU, "weights.bin")
    tree.cli("generate", "--graph", graph_with(tmp_path, "nn.relu2"), "--weights", weights, "--golden", golden,
             "--backend", "torch", "--out", tmp_path / "copy")
    run = subprocess.run([PY, "test_model.py"], cwd=tmp_path / "copy", capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "PASSED" in run.stdout, run.stdout + run.stderr
    # the very same project as with nn.relu, but for the optype in a comment
    tree.cli("generate", "--graph", os.path.join(CONV_RELU, "graph.json"), "--weights", weights, "--golden", golden,
             "--backend", "torch", "--out", tmp_path / "orig")
    copy = (tmp_path / "copy" / "model.py").read_text()
    assert copy.count("nn.relu2") == 1
    assert copy.replace("nn.relu2", "nn.relu") == (tmp_path / "orig" / "model.py").read_text()


def test_new_op_like_resolves_yaml_anchors(tree):
    """nn.conv2d's attrs are a YAML anchor other entries alias: the copy spells them out."""
    import yaml
    tree.cli("new-op", "nn.conv2d_copy", "--like", "nn.conv2d")
    text = (tree.opdefs / "nn.yaml").read_text()
    entry = text[text.index("\nnn.conv2d_copy:\n"):]
    assert "*" not in entry and "&" not in entry
    defs = yaml.safe_load(text)
    assert defs["nn.conv2d_copy"] == defs["nn.conv2d"]


def test_new_op_refuses_to_overwrite_and_writes_nothing(tree):
    before = tree.snapshot()

    def refused(*args, message):
        proc = tree.cli("new-op", *args, "--cases", tree.cases_ops, check=False)
        assert proc.returncode == 1, proc.stdout
        assert message in proc.stderr, proc.stderr
        assert proc.stdout == ""
        assert tree.snapshot() == before, "something was written"

    refused("nn.relu", message="optype 'nn.relu' already has an opdef (")
    refused("nn.relu", "--like", "add", message="already has an opdef")
    refused("nn.new_op", "--like", "nn.nope", message="--like 'nn.nope': no such optype")
    refused("../evil", message="invalid optype")
    refused("nn..x", message="invalid optype")
    # one backend already has a snippet for the new optype: named, and no other file is written
    existing = tree.templates / "vulkan" / "ops" / "nn" / "new_op.cc.j2"
    existing.write_text("mine")
    before = tree.snapshot()
    refused("nn.new_op", message="%s exists (the vulkan snippet of nn.new_op); nothing was written" % existing)
    assert not (tree.templates / "torch" / "ops" / "nn" / "new_op.py.j2").exists()
    existing.unlink()
    # a test case of that name exists
    with open(tree.cases_ops, "a") as f:
        f.write("\n\ndef case_nn_new_op():\n    pass\n")
    before = tree.snapshot()
    refused("nn.new_op", message="test case 'nn_new_op' exists")
    # a case JSON of that name exists
    (tree.cases_ops.parent / "nn_other.json").write_text("{}")
    before = tree.snapshot()
    refused("nn.other", message="test case 'nn_other' exists")


# ---- new-backend --------------------------------------------------------------------------------

def generate_all(tree, backend, out, model="conv_relu"):
    ref = os.path.join(REFERENCE, "msc-real", model)
    weights = os.path.join(ref, "weights.bin")
    tree.cli("generate", "--graph", os.path.join(ref, "graph.json"), "--weights", weights, "--backend", backend,
             "--out", out)
    return {os.path.relpath(os.path.join(d, f), out): open(os.path.join(d, f), "rb").read()
            for d, _, files in os.walk(out) for f in files}


@pytest.mark.parametrize("source", sorted(os.path.basename(os.path.dirname(p)) for p in
                                           glob.glob(os.path.join(ROOT, "templates", "*", "backend.yaml"))))
def test_new_backend_from_generates_the_same_project(tree, tmp_path, source):
    proc = tree.cli("new-backend", "mine", "--from", source)
    assert "created  %s" % (tree.templates / "mine") in proc.stdout
    yaml_text = (tree.templates / "mine" / "backend.yaml").read_text()
    assert "summary: \"mine: a copy of the %s backend (" % source in yaml_text
    assert "{% extends" in yaml_text  # says why it is a copy
    # every file but backend.yaml is a byte copy
    src = tree.templates / source
    for d, _, files in os.walk(src):
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), src)
            if rel != "backend.yaml":
                assert (tree.templates / "mine" / rel).read_bytes() == (src / rel).read_bytes(), rel
    assert "mine" in tree.cli("ops").stdout.splitlines()[0].split()
    # the suite finds it: every test that runs backends (tests/common/backends.py) runs it too,
    # exactly as it runs the source
    found = {b.name: b for b in backends.discover(BINARY, tree.templates)}
    assert found["mine"]._replace(name=source, summary="") == found[source]._replace(summary="")
    for model in ("conv_relu", "mlp"):
        a = generate_all(tree, source, tmp_path / (model + "_a"), model)
        b = generate_all(tree, "mine", tmp_path / (model + "_b"), model)
        # the same bytes, but for a header that names the backend (options.backend)
        named = ("(backend: %s)" % source).encode()
        assert a == {k: v.replace(b"(backend: mine)", named) for k, v in b.items()}
    # refused once it exists; nothing changes
    before = tree.snapshot()
    proc = tree.cli("new-backend", "mine", "--from", "torch", check=False)
    assert proc.returncode == 1 and "mine exists; nothing was written" in proc.stderr
    assert tree.snapshot() == before


def test_new_backend_refusals(tree):
    before = tree.snapshot()
    for args, message in [(["torch"], "torch exists"), (["x", "--from", "cobol"], "unknown backend 'cobol'"),
                          (["../up"], "invalid backend name"), (["ok", "--ext", "p/y"], "invalid --ext")]:
        proc = tree.cli("new-backend", *args, check=False)
        assert proc.returncode == 1 and message in proc.stderr, proc.stderr
        assert tree.snapshot() == before
    assert not [p for p in os.listdir(tree.templates) if p.startswith(".")]  # no staging left


def test_new_backend_skeleton_works_once_snippets_are_written(tree, tmp_path):
    tree.cli("new-backend", "sk", "--ext", "py")
    sk = tree.templates / "sk"
    assert (sk / "project" / "model.py.j2").exists() and (sk / "project" / "README.md.j2").exists()
    lines = tree.cli("ops").stdout.splitlines()
    column = lines[0].split()[1:].index("sk")
    cells = {line.split()[0]: line.split()[1 + column] for line in lines[1:] if len(line.split()) > column + 1
             and not line.startswith(("-", "total", "n/a "))}
    assert cells["input"] == "yes" and cells["nn.conv2d"] == "stub" and cells["nn.nll_loss"] == "n/a"
    assert set(cells.values()) == {"yes", "stub", "n/a"}
    # stubs: generation fails naming the first node with a snippet
    proc = tree.cli("generate", "--graph", os.path.join(CONV_RELU, "graph.json"), "--weights",
                    os.path.join(CONV_RELU, "weights.bin"), "--backend", "sk", "--out", tmp_path / "o", check=False)
    assert proc.returncode == 1 and "nn.conv2d is not implemented yet on the sk backend (node \"conv2d\")" in proc.stderr
    # written snippets: the skeleton project renders them in graph order
    (sk / "ops" / "nn" / "conv2d.py.j2").write_text(
        "{{ node.outputs[0].ident }} = conv2d({{ node.inputs[0].ident }}, {{ node.weights.weight.ident }}, "
        "strides={{ node.attrs.strides | py_literal }})\n")
    (sk / "ops" / "nn" / "relu.py.j2").write_text("{{ node.ident }} = relu({{ node.inputs[0].ident }})\n")
    tree.cli("generate", "--graph", os.path.join(CONV_RELU, "graph.json"), "--weights",
             os.path.join(CONV_RELU, "weights.bin"), "--backend", "sk", "--out", tmp_path / "o")
    model = (tmp_path / "o" / "model.py").read_text()
    assert "input inp_0: float32 [1, 3, 4, 4]" in model
    assert "weight conv2d_weight = weights.safetensors[\"const\"]: float32 [6, 3, 1, 1]" in model
    assert "conv2d = conv2d(inp_0, conv2d_weight, strides=[1, 1])\nrelu = relu(conv2d)\noutput relu" in model
    assert (tmp_path / "o" / "weights.safetensors").exists() and (tmp_path / "o" / "README.md").exists()
    # without a `test` section (commented out in the skeleton) the suite does not run it, and says so
    assert "sk" in backends.untested(BINARY, tree.templates)
    assert "sk" not in [b.name for b in backends.discover(BINARY, tree.templates)]


# ---- context ------------------------------------------------------------------------------------

def test_context_reference_is_docs_template_context_md():
    """docs/template-context.md is generated from generator/tools/context_doc.cc; regenerate it with
    `build/msc-codegen context --reference > docs/template-context.md` when this fails."""
    proc = run_cli("context", "--reference")
    with open(os.path.join(ROOT, "docs", "template-context.md"), encoding="utf-8") as f:
        assert proc.stdout == f.read(), "docs/template-context.md is stale: regenerate it (see this test's doc)"
    assert "| `node.fused_chain` |" in proc.stdout and "| `T.offset` |" in proc.stdout
    bad = run_cli("context", "g.json", "--reference", check=False)
    assert bad.returncode == 1 and "context --reference takes no graph" in bad.stderr


def context(tree, *args):
    return json.loads(tree.cli("context", *args).stdout)


def test_context_of_a_conv_node(tree):
    ctx = context(tree, os.path.join(CONV_RELU, "graph.json"), "--node", "conv2d", "--backend", "torch")
    assert list(ctx) == ["node", "section"] and ctx["section"] == "init"
    node = ctx["node"]
    assert (node["name"], node["optype"], node["ns"], node["op"], node["index"]) == \
        ("conv2d", "nn.conv2d", "nn", "conv2d", 1)
    assert node["attrs"]["strides"] == [1, 1] and node["attrs"]["padding"] == [0, 0, 0, 0]
    assert node["attrs"]["groups"] == 1 and node["attrs_raw"]["strides"] == "1,1"
    assert node["inputs"][0]["name"] == "inp_0:0" and node["inputs"][0]["shape"] == [1, 3, 4, 4]
    assert node["inputs"][0]["dims"] == {"N": 1, "C": 3, "H": 4, "W": 4}
    assert node["inputs"][0]["is_graph_input"] is True and node["inputs"][0]["consumers"] == ["conv2d"]
    assert node["outputs"][0]["name"] == "conv2d:0" and node["outputs"][0]["nbytes"] == 1 * 6 * 4 * 4 * 4
    w = node["weights"]["weight"]
    assert (w["key"], w["role"], w["alias"], w["shape"], w["is_weight"]) == \
        ("const", "weight", "conv2d.weight", [6, 3, 1, 1], True)
    assert node["code"] == {} and node["fused_epilogue"] is None
    # later sections see the code of the earlier ones
    fwd = context(tree, os.path.join(CONV_RELU, "graph.json"), "--node", "conv2d", "--section", "forward")
    assert list(fwd["node"]["code"]) == ["init"] and "nn.Conv2d" in fwd["node"]["code"]["init"]
    # vulkan: memory plan offsets and the fused relu epilogue
    vk = context(tree, os.path.join(CONV_RELU, "graph.json"), "--node", "conv2d", "--backend", "vulkan")
    assert vk["section"] == "run" and vk["node"]["fused_epilogue"]["optype"] == "nn.relu"
    assert "offset" in vk["node"]["inputs"][0] and "offset" not in vk["node"]["weights"]["weight"]


def test_context_is_what_the_snippet_sees(tree):
    """A probe wrapped around torch's conv2d snippet prints {node, section} as the forward section
    renders it (a comment in model.py); `context` gives the same object."""
    tree.cli("new-backend", "probe", "--from", "torch")
    ops = tree.templates / "probe" / "ops" / "nn"
    (ops / "conv2d.py.j2").rename(ops / "conv2d_orig.py.j2")
    (ops / "conv2d.py.j2").write_text(
        '{%- if section == "forward" %}# CONTEXT {{ {"node": node, "section": section} | tojson }}\n'
        '{% endif %}{% include "ops/nn/conv2d_orig.py.j2" %}\n')
    out = tree.path / "probe_out"
    tree.cli("generate", "--graph", os.path.join(CONV_RELU, "graph.json"), "--weights",
             os.path.join(CONV_RELU, "weights.bin"), "--backend", "probe", "--out", out)
    line = [l for l in (out / "model.py").read_text().splitlines() if "# CONTEXT " in l][0]
    seen = json.loads(line.split("# CONTEXT ", 1)[1])
    for backend in ("probe", "torch"):  # torch: same snippets before forward, same context
        printed = context(tree, os.path.join(CONV_RELU, "graph.json"), "--node", "conv2d", "--backend", backend,
                          "--section", "forward", "--weights", os.path.join(CONV_RELU, "weights.bin"))
        assert printed == seen


def test_context_shows_infinities_and_dynamic_shapes(tree):
    graphs = os.path.join(ROOT, "tests", "ops", "cases")
    node = context(tree, os.path.join(graphs, "clip.json"), "--node", "clip")["node"]
    assert node["attrs"]["min"] == float("-inf") and node["attrs_raw"]["min"] == "-inf"
    text = tree.cli("context", os.path.join(graphs, "clip.json"), "--node", "clip").stdout
    assert '"min": -Infinity' in text
    dyn = json.load(open(os.path.join(graphs, "dynamic.json")))
    name = [n["name"] for n in dyn["nodes"] if n["optype"] != "input"][0]
    node = context(tree, os.path.join(graphs, "dynamic.json"), "--node", name)["node"]
    assert -1 in node["outputs"][0]["shape"] and node["outputs"][0]["numel"] == -1


def test_context_project_and_errors(tree):
    graph = os.path.join(CONV_RELU, "graph.json")
    proj = context(tree, graph, "--project", "--backend", "vulkan")
    assert list(proj) == ["graph", "backend", "options"]
    assert proj["backend"] == {"name": "vulkan", "summary": proj["backend"]["summary"],
                               "weights": "weights.safetensors", "golden": "golden"}
    assert proj["options"] == {"has_golden": False, "golden_files": [], "precision": {"name": "fp32"}}
    # --precision fp16: the weights stored as float16 are named, with the backend's tolerance.
    fp16 = context(tree, graph, "--project", "--backend", "vulkan", "--precision", "fp16",
                   "--weights", os.path.join(CONV_RELU, "weights.safetensors"))
    # conv -> relu -> graph output: relu writes its input's dtype and the output stays float32, so
    # no activation is float16 here.
    assert fp16["options"]["precision"] == {"name": "fp16", "atol": 0.01, "rtol": 0.01, "weights": ["const"],
                                            "activations": []}
    assert fp16["graph"]["weights"][0]["dtype"] == "float16"
    assert proj["graph"]["memory"]["alignment"] == 256
    assert all(n["code"] for n in proj["graph"]["nodes"])
    for args, message in [(["--node", "nope"], 'no node "nope" (nodes: "inp_0", "conv2d", "relu")'),
                          (["--node", "inp_0"], 'node "inp_0" (input) has no torch snippet (backend.yaml no_snippet)'),
                          (["--node", "relu", "--section", "x"], "has no section 'x' (op_sections: init, forward, params, helpers)"),
                          (["--node", "relu", "--backend", "cobol"], "unknown backend 'cobol'"),
                          ([], "give --node NAME (or --project)")]:
        proc = tree.cli("context", graph, *args, check=False)
        assert proc.returncode == 1 and message in proc.stderr, (args, proc.stderr)
    proc = tree.cli("context", graph, "--node", "relu", "--project", check=False)
    assert proc.returncode == 2  # --node excludes --project


def test_docs_name_every_context_field(tree):
    """docs/template-context.md documents every key a real context has (vulkan: memory plan and
    fusion fields too)."""
    doc = open(os.path.join(ROOT, "docs", "template-context.md")).read()
    memory_row = next(line for line in doc.splitlines() if line.startswith("| `graph.memory` |"))
    proj = context(tree, os.path.join(CONV_RELU, "graph.json"), "--project", "--backend", "vulkan")
    missing = []

    def need(path):  # documented itself, or each of its keys (options.precision.name, ...)
        if "`%s`" % path not in doc and "`%s." % path not in doc:
            missing.append(path)
    for key in proj["graph"]:
        need("graph." + key)
    for key in proj["graph"]["memory"]:
        if key not in memory_row:
            missing.append("graph.memory." + key)
    for key in ("backend", "options"):
        for sub in proj[key]:
            need(key + "." + sub)
    tensors = list(proj["graph"]["inputs"]) + list(proj["graph"]["weights"])
    for node in proj["graph"]["nodes"]:
        for key in node:
            need("node." + key)
        tensors += node["inputs"] + node["outputs"] + list(node["weights"].values())
    for t in tensors:
        for key in t:
            need("T." + key)
    assert not sorted(set(missing)), sorted(set(missing))


def test_docs_worked_example(tmp_path, real_golden):
    """The worked example of docs/writing-a-backend.md (every code block after an
    `<!-- example: tiny/... -->` line) generates the MLP and passes its golden test."""
    doc = open(os.path.join(ROOT, "docs", "writing-a-backend.md")).read()
    blocks = re.findall(r"<!-- example: (\S+) -->\n```\w*\n(.*?)\n```\n", doc, re.S)
    assert sorted(path for path, _ in blocks) == ["tiny/backend.yaml", "tiny/ops/msc/linear_bias.py.j2",
                                                  "tiny/ops/nn/relu.py.j2", "tiny/project/model.py.j2",
                                                  "tiny/project/test_model.py.j2"]
    templates = tmp_path / "templates"
    for path, text in blocks:
        (templates / path).parent.mkdir(parents=True, exist_ok=True)
        (templates / path).write_text(text + "\n")
    mlp = os.path.join(REFERENCE, "msc-real", "mlp")
    out = tmp_path / "out"
    run_cli("--templates", templates, "generate", "--graph", os.path.join(mlp, "graph.json"), "--weights",
            os.path.join(mlp, "weights.safetensors"), "--golden", real_golden("mlp"), "--backend", "tiny", "--out", out)
    run = subprocess.run([PY, "test_model.py"], cwd=out, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "PASSED", run.stdout + run.stderr
    # the generated code shown in the doc is what it generates
    shown = re.search(r"The generated `run`:\n\n```python\n(.*?)\n```", doc, re.S).group(1)
    assert shown in (out / "model.py").read_text()
