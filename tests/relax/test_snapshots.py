"""Whole-file snapshots of the relax projects generated for the real MSC graphs (conv_relu, mlp):
tests/relax/snapshots/<model>/{model.py,test_model.py,README.md}. Reviewed like code.

    MSC_UPDATE_SNAPSHOTS=1 ctest -R relax      rewrite them from the current templates
"""
import difflib
import os

import pytest

from conftest import REFERENCE, SNAPSHOTS, generate, npz_to_safetensors

FILES = ["model.py", "test_model.py", "README.md"]
UPDATE = os.environ.get("MSC_UPDATE_SNAPSHOTS") == "1"


@pytest.mark.parametrize("model", ["conv_relu", "mlp"])
def test_snapshot(model, tmp_path):
    src = os.path.join(REFERENCE, "msc-real", model)
    golden = tmp_path / "golden"
    golden.mkdir()
    for part in ("inputs", "outputs"):
        npz_to_safetensors(os.path.join(src, part + ".npz"), golden / (part + ".safetensors"))
    p = generate(model, os.path.join(src, "graph.json"), tmp_path, os.path.join(src, "weights.safetensors"), str(golden))
    problems = []
    for f in FILES:
        got = p.read(f)
        path = os.path.join(SNAPSHOTS, model, f)
        if UPDATE:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(got)
            continue
        if not os.path.exists(path):
            problems.append("%s: no snapshot (run with MSC_UPDATE_SNAPSHOTS=1)" % path)
            continue
        with open(path, encoding="utf-8", newline="") as fh:
            want = fh.read()
        if got != want:
            diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), path, "generated"))
            problems.append(diff)
    assert not problems, "snapshots differ (review, then MSC_UPDATE_SNAPSHOTS=1):\n" + "\n".join(problems)
