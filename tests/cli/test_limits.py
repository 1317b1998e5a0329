"""Resource limits and output paths (README "Limits"): every case ends in a clear error or a correct
result, never a crash, a hang, or a write outside --out.

* shapes whose element or byte count overflows int64;
* a template that includes itself / a macro that recurses forever;
* a weights file of several GB of which the graph uses a little: memory-mapped, never read whole;
* --out that is a symbolic link (refused), or that goes through one (followed, written in place);
* several runs at once on the same --out: each succeeds, the result is one run's project whole.
"""
import filecmp
import json
import os
import struct
import subprocess
import sys

import pytest

from conftest import BINARY, REFERENCE, run_cli

REAL = os.path.join(REFERENCE, "msc-real")
CONV_RELU = os.path.join(REAL, "conv_relu")


def generate_args(out, backend="torch", graph=None, weights=None):
    return ["generate", "--graph", graph or os.path.join(CONV_RELU, "graph.json"), "--weights",
            weights or os.path.join(CONV_RELU, "weights.bin"), "--backend", backend, "--out", out]


def run_measured(*args):
    """Runs msc-codegen *args in a child of a fresh Python (so that getrusage(RUSAGE_CHILDREN)
    measures msc-codegen alone); returns (CompletedProcess, msc-codegen's peak RSS in KiB)."""
    code = ("import resource, subprocess, sys\n"
            "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            "sys.stderr.write(p.stderr)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
            "sys.exit(p.returncode)\n")
    proc = subprocess.run([sys.executable, "-c", code, BINARY, *map(str, args)], capture_output=True,
                          text=True, timeout=300)
    return proc, int(proc.stdout.strip() or -1)


def leftovers(folder):
    """Temporary siblings a run could leave behind (.<name>.msc-tmp-* / .msc-old-*)."""
    return [n for n in os.listdir(folder) if ".msc-tmp-" in n or ".msc-old-" in n]


def test_int64_overflowing_shape_is_a_clear_error(tmp_path):
    graph = json.load(open(os.path.join(CONV_RELU, "graph.json")))
    graph["nodes"][0]["outputs"][0]["shape"] = [2 ** 32, 2 ** 32, 4, 4]
    bad = tmp_path / "g.json"
    bad.write_text(json.dumps(graph))
    out = tmp_path / "out"
    proc = run_cli(*generate_args(out, graph=bad), check=False)
    assert proc.returncode == 1, proc.stderr
    assert ("nodes[0].outputs[0].shape (node \"inp_0\"): shape [4294967296,4294967296,4,4] has more "
            "elements or bytes than a 64-bit size can count") in proc.stderr
    assert not out.exists()


def test_self_including_template_and_endless_macro_recursion(tmp_path):
    (tmp_path / "self.j2").write_text("x{% include 'self.j2' %}")
    (tmp_path / "macro.j2").write_text("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}")
    (tmp_path / "d.json").write_text("{}")
    for name in ("self.j2", "macro.j2"):
        proc = run_cli("render", tmp_path / name, "--data", tmp_path / "d.json", check=False)
        assert proc.returncode == 1, (name, proc.returncode, proc.stderr[-500:])
        lines = proc.stderr.strip().splitlines()
        assert lines[0].startswith("error: ") and "maximum recursion depth exceeded" in lines[0]
        assert len(lines) <= 10, proc.stderr  # the include trace is cut short, not 100 levels deep


def write_sparse_safetensors(path, small, big_name, big_elems):
    """safetensors with the small float32 tensors (name -> bytes, shape) plus one float32 tensor of
    big_elems zeros written as a hole (sparse: no disk space, no page cache)."""
    header, offset = {}, 0
    for name, (data, shape) in sorted(small.items()):
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    header[big_name] = {"dtype": "F32", "shape": [big_elems], "data_offsets": [offset, offset + 4 * big_elems]}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, (data, shape) in sorted(small.items()):
            f.write(data)
        f.truncate(8 + len(text) + offset + 4 * big_elems)


def test_multi_gigabyte_weights_file_is_mapped_not_read(tmp_path):
    """conv_relu's weights plus an unused 4 GiB tensor: generation succeeds and its peak RSS stays
    far below the file size (the reader maps the file; only the used tensors are touched)."""
    import numpy as np

    out0 = tmp_path / "ref"
    run_cli(*generate_args(out0))
    from msc_export.safetensors_np import load_file
    weights = load_file(str(out0 / "weights.safetensors"))
    small = {k: (np.ascontiguousarray(v, dtype=np.float32).tobytes(), list(v.shape)) for k, v in weights.items()}
    big = tmp_path / "big.safetensors"
    write_sparse_safetensors(big, small, "unused_huge", 1 << 30)
    assert os.path.getsize(big) > 4 * 2 ** 30
    out = tmp_path / "out"
    proc, peak_kib = run_measured(*generate_args(out, weights=big))
    assert proc.returncode == 0, proc.stderr
    assert 0 < peak_kib < 512 * 1024, "peak RSS %d KiB for a 4 GiB weights file" % peak_kib
    assert (out / "weights.safetensors").read_bytes() == (out0 / "weights.safetensors").read_bytes()


def test_out_that_is_a_symlink_is_refused(tmp_path):
    target = tmp_path / "real"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    link = tmp_path / "link"
    link.symlink_to(target)
    proc = run_cli(*generate_args(link), check=False)
    assert proc.returncode == 1
    assert "is a symbolic link (to %s)" % target in proc.stderr and "pass the real folder" in proc.stderr
    assert os.path.islink(link) and os.listdir(target) == ["keep.txt"]
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    proc = run_cli(*generate_args(dangling), check=False)
    assert proc.returncode == 1 and "is a symbolic link" in proc.stderr
    assert not (tmp_path / "nowhere").exists() and os.path.islink(dangling)
    assert leftovers(tmp_path) == []


def test_out_through_a_symlinked_parent_is_written_in_place(tmp_path):
    real_parent = tmp_path / "real_parent"
    real_parent.mkdir()
    (tmp_path / "via").symlink_to(real_parent)
    run_cli(*generate_args(tmp_path / "via" / "proj"))
    assert (real_parent / "proj" / "model.py").is_file()
    assert os.path.islink(tmp_path / "via")  # the link itself is untouched
    assert sorted(os.listdir(real_parent)) == ["proj"]  # no temporary sibling left
    # Regenerating through the link replaces the project in place.
    run_cli(*generate_args(tmp_path / "via" / "proj", backend="relax"))
    assert (real_parent / "proj" / "model.py").is_file() and sorted(os.listdir(real_parent)) == ["proj"]


@pytest.mark.parametrize("runs", [6])
def test_concurrent_runs_on_the_same_out(tmp_path, runs):
    """Runs started together on one --out all succeed; the folder ends up as exactly one run's
    complete project (every file identical to a lone run's), with no temporary folder left."""
    ref = tmp_path / "ref"
    run_cli(*generate_args(ref))
    out = tmp_path / "shared"
    procs = [subprocess.Popen([BINARY, *map(str, generate_args(out))], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(runs)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    cmp = filecmp.dircmp(ref, out)
    assert not cmp.diff_files and not cmp.left_only and not cmp.right_only, cmp.report()
    assert sorted(os.listdir(tmp_path)) == ["ref", "shared"]


def test_node_limit_refuses_a_million_node_graph_while_parsing(tmp_path):
    """A 10^6-node graph is over the default limit: refused while parsing (before its JSON tree
    exists), fast and in little memory; --max-nodes raises the limit."""
    node = ('{"index":%d,"name":"r%d","shared_ref":"","optype":"nn.relu","parents":["%s"],'
            '"inputs":["%s:0"],"outputs":[{"name":"r%d:0","alias":"","dtype":"float32","layout":"",'
            '"shape":[1,4],"prims":[]}],"attrs":{},"weights":{}}')
    inp = ('{"index":0,"name":"x","shared_ref":"","optype":"input","parents":[],"inputs":[],"outputs":'
           '[{"name":"x:0","alias":"x","dtype":"float32","layout":"","shape":[1,4],"prims":[]}],'
           '"attrs":{},"weights":{}}')

    def write_chain(path, n):
        parts = [inp] + [node % (i, i, "x" if i == 1 else "r%d" % (i - 1), "x" if i == 1 else "r%d" % (i - 1), i)
                         for i in range(1, n)]
        path.write_text('{"name":"main","inputs":["x:0"],"outputs":["r%d:0"],"nodes":[%s]}' % (n - 1, ",".join(parts)))

    big = tmp_path / "million.json"
    write_chain(big, 1000000)
    for args in (["validate", big], ["generate", "--graph", big, "--backend", "torch", "--out", tmp_path / "out"]):
        proc, peak_kib = run_measured(*args)
        assert proc.returncode == 1, proc.stderr
        assert ("million.json: nodes[250000]: the graph has more than 250000 nodes, the limit (generating it "
                "needs about 7 KB of memory per node; raise the limit with --max-nodes N)") in proc.stderr
        assert 0 < peak_kib < 1024 * 1024, peak_kib  # the 230 MB text, not a multi-GB tree
    assert not (tmp_path / "out").exists()
    small = tmp_path / "small.json"
    write_chain(small, 50)
    proc = run_cli("--max-nodes", "49", "validate", small, check=False)
    assert proc.returncode == 1 and "nodes[49]: the graph has more than 49 nodes" in proc.stderr
    assert "valid (50 nodes)" in run_cli("--max-nodes", "50", "validate", small).stdout
    run_cli("--max-nodes", "50", "generate", "--graph", small, "--backend", "torch", "--out", tmp_path / "ok")
    assert (tmp_path / "ok" / "model.py").is_file()
