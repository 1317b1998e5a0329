"""msc-codegen visualize: .prototxt as TVM MSC wrote it, .dot written by us, .svg through Graphviz.

The prototxt is compared with what TVM v0.20's MSCGraph.visualize() really wrote for the graphs in
../shared/reference/msc-real, as parsed trees (MSC took the key order of layer_param from a hash
map, so that order is compared sorted). SVG tests need Graphviz's `dot` (Debian: graphviz).
"""
import json
import os
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import BINARY, REFERENCE, run_cli

REAL = os.path.join(REFERENCE, "msc-real")
SVG_NS = "{http://www.w3.org/2000/svg}"
HAVE_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAVE_DOT, reason="Graphviz's dot is not installed (apt-get install graphviz)")


# ------------------------------------------------------------------------------------------------
# A small prototxt reader (the subset MSC's PrototxtPrinter writes: key: "str" | int, key { ... })
# ------------------------------------------------------------------------------------------------

def _unescape(body):
    """tvm::support::StrEscape's escapes (\\" \\\\ \\n \\t \\r \\xHH) -> str (bytes decoded as UTF-8)."""
    out, i = bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        n = body[i + 1]
        if n == "x":
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
        else:
            out += {"n": b"\n", "t": b"\t", "r": b"\r", '"': b'"', "\\": b"\\"}[n]
            i += 2
    return out.decode("utf-8")


def parse_prototxt(text):
    """-> list of (key, value); value is str, int, or a nested list."""
    tokens = re.findall(r'"(?:[^"\\]|\\.)*"|[{}:]|[^\s{}:"]+', text)
    pos = 0

    def block(closing):
        nonlocal pos
        items = []
        while pos < len(tokens):
            tok = tokens[pos]
            if tok == "}":
                assert closing, "unbalanced }"
                pos += 1
                return items
            key = tok
            pos += 1
            if tokens[pos] == "{":
                pos += 1
                items.append((key, block(True)))
            else:
                assert tokens[pos] == ":", (key, tokens[pos])
                val = tokens[pos + 1]
                pos += 2
                items.append((key, _unescape(val[1:-1]) if val.startswith('"') else int(val)))
        assert not closing, "missing }"
        return items

    return block(False)


def normalized(tree):
    """layer_param children sorted by key; everything else keeps its order."""
    out = []
    for key, val in tree:
        if isinstance(val, list):
            val = normalized(val)
            if key == "layer_param":
                val = sorted(val, key=lambda kv: kv[0])
        out.append((key, val))
    return out


# ------------------------------------------------------------------------------------------------
# Graphs
# ------------------------------------------------------------------------------------------------

def tensor(name, shape, alias=""):
    return {"name": name, "alias": alias, "dtype": "float32", "layout": "", "shape": shape, "prims": []}


def node(index, name, optype, inputs=(), attrs=None, shape=(1, 3)):
    parents = []
    for i in inputs:
        p = i.rsplit(":", 1)[0]
        if p not in parents:
            parents.append(p)
    return {"index": index, "name": name, "shared_ref": "", "optype": optype, "parents": parents,
            "inputs": list(inputs), "outputs": [tensor(name + ":0", list(shape))],
            "attrs": attrs or {}, "weights": {}}


def write_graph(path, nodes, outputs, name="g"):
    g = {"name": name, "inputs": [nodes[0]["name"] + ":0"], "outputs": outputs, "nodes": nodes, "prims": []}
    path.write_text(json.dumps(g, ensure_ascii=False), encoding="utf-8")
    return path


HOSTILE = 'a"b\\N<c>&d\'e:f.g/h ü $(touch PWNED); `x`'


@pytest.fixture
def hostile_graph(tmp_path):
    nodes = [node(0, "x", "input"), node(1, HOSTILE, "nn.relu", ["x:0"], {"note": 'q"\\<&>\n'})]
    return write_graph(tmp_path / "hostile.json", nodes, [HOSTILE + ":0"], name="g<&>")


def svg_texts(path):
    root = ET.parse(str(path)).getroot()
    return [("".join(t.itertext())) for t in root.iter(SVG_NS + "text")]


def listing(d):
    return sorted(os.listdir(d))


# ------------------------------------------------------------------------------------------------
# prototxt
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", ["conv_relu", "mlp"])
def test_prototxt_matches_msc(model, tmp_path):
    out = tmp_path / "g.prototxt"
    run_cli("visualize", os.path.join(REAL, model, "graph.json"), "-o", out)
    ours = out.read_text()
    with open(os.path.join(REAL, model, "visualize.prototxt")) as f:
        msc = f.read()
    assert normalized(parse_prototxt(ours)) == normalized(parse_prototxt(msc))
    # Same lines, too (indentation, quoting, no final newline), up to the order in layer_param.
    assert sorted(ours.split("\n")) == sorted(msc.split("\n"))
    assert not ours.endswith("\n") and not msc.endswith("\n")


def test_prototxt_comparison_is_not_vacuous(tmp_path):
    """The tree comparison notices a changed value, a dropped bottom, and a reordered layer."""
    with open(os.path.join(REAL, "mlp", "visualize.prototxt")) as f:
        msc = f.read()
    ref = normalized(parse_prototxt(msc))
    assert normalized(parse_prototxt(msc.replace("idx: 2", "idx: 3"))) != ref
    assert normalized(parse_prototxt(msc.replace('  bottom: "relu"\n', "", 1))) != ref
    layers = msc.split("\nlayer {")
    swapped = "\nlayer {".join([layers[0], layers[2], layers[1]] + layers[3:])
    assert normalized(parse_prototxt(swapped)) != ref
    assert [k for k, _ in ref] == ["name", "layer", "layer", "layer", "layer"]


def test_prototxt_escapes_like_tvm(hostile_graph, tmp_path):
    out = tmp_path / "h.prototxt"
    run_cli("visualize", hostile_graph, "-o", out)
    text = out.read_text()
    assert '  name: "a\\"b\\\\N<c>&d\'e:f.g/h \\xC3\\xBC $(touch PWNED); `x`"' in text
    tree = parse_prototxt(text)
    layer = [v for k, v in tree if k == "layer"][1]
    assert dict((k, v) for k, v in layer if k != "layer_param")["name"] == HOSTILE
    assert dict(dict(layer)["layer_param"])["note"] == 'q"\\<&>\n'
    assert not os.path.exists("PWNED") and not (tmp_path / "PWNED").exists()


# ------------------------------------------------------------------------------------------------
# DOT
# ------------------------------------------------------------------------------------------------

def test_dot_labels_and_edges(tmp_path):
    out = tmp_path / "g.dot"
    run_cli("visualize", os.path.join(REAL, "mlp", "graph.json"), "-o", out)
    dot = out.read_text()
    edges = re.findall(r"^  (n\d+) -> (n\d+) \[label=<([^>]*)>\];$", dot, re.M)
    assert edges == [("n0", "n1", "1x784"), ("n1", "n2", "1x128"), ("n2", "n3", "1x128")]
    n1 = re.search(r"^  n1 \[label=.*$", dot, re.M).group(0)
    for part in ("<B>matmul</B>", ">msc.linear_bias</FONT>", "out_dtype = float32",
                 "weight: 128x784 float32", "bias: 128 float32", "out: 1x128 float32"):
        assert part in n1, part
    assert "<B>graph input</B> inp_0:0" in dot and "<B>graph output</B> matmul_1:0" in dot
    # Same bytes on a second run.
    out2 = tmp_path / "g2.dot"
    run_cli("visualize", os.path.join(REAL, "mlp", "graph.json"), "--out", out2)
    assert out2.read_text() == dot


def test_format_override_and_unknown_extension(tmp_path):
    g = os.path.join(REAL, "conv_relu", "graph.json")
    out = tmp_path / "picture.txt"
    run_cli("visualize", g, "-o", out, "--format", "dot")
    assert out.read_text().startswith("// MSCGraph (3 nodes)")
    proc = run_cli("visualize", g, "-o", tmp_path / "g.png", check=False)
    assert proc.returncode == 2
    assert ".svg, .dot or .prototxt" in proc.stderr and "g.png" in proc.stderr
    proc = run_cli("visualize", g, "-o", tmp_path / "g.dot", "--format", "png", check=False)
    assert proc.returncode == 2
    assert listing(tmp_path) == ["picture.txt"]


def test_invalid_graphs_give_the_loader_errors(tmp_path):
    proc = run_cli("visualize", tmp_path / "missing.json", "-o", tmp_path / "g.dot", check=False)
    assert proc.returncode == 1 and "missing.json: cannot open graph file" in proc.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "g", "inputs": [')
    proc = run_cli("visualize", bad, "-o", tmp_path / "g.dot", check=False)
    assert proc.returncode == 1 and "bad.json:1:" in proc.stderr and "invalid JSON" in proc.stderr
    dangling = write_graph(tmp_path / "dangling.json",
                           [node(0, "x", "input"), node(1, "y", "nn.relu", ["nope:0"])], ["y:0"])
    proc = run_cli("visualize", dangling, "-o", tmp_path / "g.dot", check=False)
    assert proc.returncode == 1 and 'nodes[1].inputs[0] (node "y")' in proc.stderr and "nope:0" in proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["bad.json", "dangling.json"]


def test_large_graph_is_written_quickly(tmp_path):
    n = 10000
    nodes = [node(0, "x", "input")]
    for i in range(1, n):
        nodes.append(node(i, "layer%d" % i, "nn.relu", ["%s:0" % nodes[-1]["name"]], {"alpha": "0.1"}))
    g = write_graph(tmp_path / "big.json", nodes, ["layer%d:0" % (n - 1)])
    for ext in ("dot", "prototxt"):
        t0 = time.monotonic()
        run_cli("visualize", g, "-o", tmp_path / ("big." + ext))
        assert time.monotonic() - t0 < 20, ext  # ~0.2 s here
    assert (tmp_path / "big.dot").read_text().count(" -> ") == n - 1
    assert (tmp_path / "big.prototxt").read_text().count("\nlayer {") == n


# ------------------------------------------------------------------------------------------------
# SVG
# ------------------------------------------------------------------------------------------------

@needs_dot
def test_svg_rendered_by_graphviz(tmp_path):
    out = tmp_path / "g.svg"
    run_cli("visualize", os.path.join(REAL, "conv_relu", "graph.json"), "-o", out)
    texts = svg_texts(out)
    for part in ("inp_0", "conv2d", "nn.conv2d", "relu", "strides = 1,1", "weight: 6x3x1x1 float32",
                 "out: 1x6x4x4 float32", "1x3x4x4", "1x6x4x4"):
        assert part in texts, part
    assert listing(tmp_path) == ["g.svg"]


@needs_dot
def test_svg_hostile_names_survive_graphviz(hostile_graph, tmp_path):
    """Quotes, backslashes (\\N would be Graphviz's node-name macro), <>&, unicode and shell
    syntax in names reach the picture unchanged, and nothing is executed."""
    out = tmp_path / "weird $(touch PWNED); name's.svg"
    run_cli("visualize", hostile_graph, "-o", out)
    texts = svg_texts(out)
    assert HOSTILE in texts
    assert 'note = q"\\<&>\\n' in texts  # a newline in a value shows as \n
    root = ET.parse(str(out)).getroot()
    tips = [a.get("{http://www.w3.org/1999/xlink}title") for a in root.iter(SVG_NS + "a")]
    assert HOSTILE + "\nnn.relu\nnote = q\"\\<&>\\n" in tips
    assert not (tmp_path / "PWNED").exists() and not os.path.exists("PWNED")
    assert listing(tmp_path) == ["hostile.json", "weird $(touch PWNED); name's.svg"]


def test_svg_without_dot_is_a_clear_error(tmp_path):
    out = tmp_path / "g.svg"
    env = dict(os.environ, PATH=str(tmp_path / "no-bin"))
    proc = subprocess.run([BINARY, "visualize", os.path.join(REAL, "mlp", "graph.json"), "-o", str(out)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1
    assert ("visualize: SVG needs Graphviz's `dot` (apt-get install graphviz); write .dot instead"
            in proc.stderr)
    assert listing(tmp_path) == []


def test_failing_dot_leaves_old_output_untouched(tmp_path):
    """A `dot` (first on PATH) that writes half an SVG and fails: the old file stays, no temp."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "dot"
    fake.write_text("#!/bin/sh\ncat > /dev/null\nprintf '<svg half'\necho 'Error: boom' >&2\nexit 1\n")
    fake.chmod(0o755)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "g.svg"
    out.write_text("old picture")
    env = dict(os.environ, PATH=str(bin_dir) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run([BINARY, "visualize", os.path.join(REAL, "mlp", "graph.json"), "-o", str(out)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1
    assert "-Tsvg` failed (exit status 1): Error: boom" in proc.stderr
    assert out.read_text() == "old picture"
    assert listing(out_dir) == ["g.svg"]
