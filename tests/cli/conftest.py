"""Shared fixtures: the msc-codegen binary, reference data, and npz -> safetensors conversion."""
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

BINARY = os.environ.get("MSC_CODEGEN", os.path.join(ROOT, "build", "msc-codegen"))
REFERENCE = os.environ.get("MSC_SHARED_REFERENCE_DIR", os.path.join(ROOT, "..", "shared", "reference"))


def run_cli(*args, check=True):
    """Runs msc-codegen; returns CompletedProcess (text). check=True asserts exit status 0."""
    proc = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def write_safetensors(path, arrays):
    """Minimal numpy safetensors writer (sorted keys, 8-byte aligned header)."""
    import json
    import struct
    codes = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("int64"): "I64",
             np.dtype("int32"): "I32", np.dtype("bool"): "BOOL", np.dtype("float64"): "F64"}
    header, blobs, offset = {}, [], 0
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name]) if np.ndim(arrays[name]) else np.asarray(arrays[name])
        raw = a.astype(a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": codes[a.dtype], "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


@pytest.fixture
def real_golden(tmp_path):
    """golden dir for msc-real/<model>: inputs.npz / outputs.npz converted to safetensors."""
    def make(model):
        d = tmp_path / ("golden-" + model)
        d.mkdir()
        for kind in ("inputs", "outputs"):
            with np.load(os.path.join(REFERENCE, "msc-real", model, kind + ".npz")) as z:
                write_safetensors(d / (kind + ".safetensors"), {k: z[k] for k in z.files})
        return d
    return make
