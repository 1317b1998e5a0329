"""Fused elementwise chains in generated Vulkan code (templates/vulkan/backend.yaml fuse_elementwise,
issue 9): one ops::ElementwiseChain call at the chain's last node, a `// fused:` comment with the
names as escaped literals (hostile names: quotes, backslashes, newlines, `*/`, non-ASCII), nothing
declared for the intermediates, the ew_chain shader in the project's CMakeLists, a where step with
a bool condition, a clip step with its bounds; and model.cc compiling with -Wall -Wextra -Werror
(syntax only: the runtime is built and run by the e2e / difftest / vulkan tests)."""
import os
import shutil
import subprocess
from collections import OrderedDict

import numpy as np
import pytest

from conftest import run_cli, write_safetensors
from msc_export.mscgraph import MSCGraph, MSCJoint, MSCTensor, validate

X = 'in "x"\\'
MASK = "mask\tint"
K = 'k:0 */ "c"'
E = 'e\n"1" // not a comment end \\'
M = "m\\"
C = "clip 卷积"
W = "where::std"
T = 'tanh "t" */'
S = [1, 8, 4, 4]


def _t(node, shape, dtype="float32", layout="NCHW"):
    return MSCTensor(f"{node}:0", dtype, layout, shape)


def _graph():
    const = MSCTensor(K, "float32", "CHW", [8, 1, 1])
    nodes = [
        MSCJoint(0, X, "input", [], [_t(X, S)], OrderedDict(), {}),
        MSCJoint(1, MASK, "input", [], [_t(MASK, S, "bool")], OrderedDict(), {}),
        MSCJoint(2, K, "constant", [], [_t(K, [8, 1, 1], layout="CHW")], OrderedDict(), {"const": const}),
        MSCJoint(3, E, "exp", [f"{X}:0"], [_t(E, S)], OrderedDict(), {}),
        MSCJoint(4, M, "multiply", [f"{E}:0", f"{K}:0"], [_t(M, S)], OrderedDict(), {}),
        MSCJoint(5, C, "clip", [f"{M}:0"], [_t(C, S)],
                 OrderedDict([("min", "-1.000000"), ("max", "inf")]), {}),
        MSCJoint(6, W, "where", [f"{MASK}:0", f"{C}:0", f"{X}:0"], [_t(W, S)], OrderedDict(), {}),
        MSCJoint(7, T, "tanh", [f"{W}:0"], [_t(T, S)], OrderedDict(), {}),
    ]
    graph = MSCGraph("chain", nodes, [f"{X}:0", f"{MASK}:0"], [f"{T}:0"])
    validate(graph)
    return graph


def _c_str(s):
    """The generator's c_str of these names: quotes, backslashes, \\n, \\t escaped, UTF-8 bytes
    beyond ASCII as octal escapes."""
    out = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return '"' + "".join(c if ord(c) < 128 else "".join("\\%03o" % b for b in c.encode()) for c in out) + '"'


@pytest.fixture
def project(tmp_path):
    _graph().save(str(tmp_path / "graph.json"))
    write_safetensors(tmp_path / "weights.safetensors", {K: np.full([8, 1, 1], 0.5, np.float32)})
    run_cli("generate", "--graph", tmp_path / "graph.json", "--weights", tmp_path / "weights.safetensors",
            "--backend", "vulkan", "--out", tmp_path / "vk")
    return tmp_path / "vk"


def test_the_chain_is_one_call_at_its_last_node(project):
    model = (project / "model.cc").read_text()
    assert model.count("ops::ElementwiseChain(") == 1
    for op in ("ops::Unary(", "ops::Binary(", "ops::Where("):
        assert op not in model
    assert "// fused: " + ", ".join(_c_str(n) for n in (E, M, C, W)) + " into " + _c_str(T) + "\n" in model
    call = model[model.index("ops::ElementwiseChain("):]
    call = call[:call.index(";\n")]
    # inputs in first-use order; the where's condition is the bool graph input
    assert call.startswith("ops::ElementwiseChain(prog, {in_x, k_0_c, mask_int},")
    assert 'ops::ChainUnary("exp", ops::ChainInput(0))' in call
    assert 'ops::ChainBinary("multiply", ops::ChainResult(0), ops::ChainInput(1))' in call
    assert 'ops::ChainUnary("clip", ops::ChainResult(1), -1.0, INFINITY)' in call
    assert "ops::ChainWhere(ops::ChainInput(2), ops::ChainResult(2), ops::ChainInput(0))" in call
    assert 'ops::ChainUnary("tanh", ops::ChainResult(3))' in call
    # the other members say where they went; their outputs are never declared (no arena bytes)
    assert model.count("// computed in the fused elementwise chain of " + _c_str(T) + " (never stored)") == 4
    for n in (E, M, C, W):
        assert "m->Arena(" + _c_str(n + ":0") not in model
    assert "m->Arena(" + _c_str(T + ":0") in model
    cmake = (project / "CMakeLists.txt").read_text()
    assert " ew_chain" in cmake


def test_model_cc_compiles_warning_free(project):
    cxx = shutil.which("c++") or shutil.which("g++")
    if not cxx:
        pytest.skip("no C++ compiler")
    run = subprocess.run([cxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-Iruntime",
                          '-DMSC_DATA_DIR="."', "model.cc"], cwd=project, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]


def test_backends_without_fuse_elementwise_keep_the_nodes(tmp_path):
    _graph().save(str(tmp_path / "graph.json"))
    write_safetensors(tmp_path / "weights.safetensors", {K: np.full([8, 1, 1], 0.5, np.float32)})
    run_cli("generate", "--graph", tmp_path / "graph.json", "--weights", tmp_path / "weights.safetensors",
            "--backend", "torch", "--out", tmp_path / "torch")
    text = "".join(open(os.path.join(tmp_path / "torch", f)).read()
                   for f in os.listdir(tmp_path / "torch") if f.endswith(".py"))
    assert "torch.tanh" in text and "torch.exp" in text
