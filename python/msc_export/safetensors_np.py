"""A small numpy-only reader/writer for the safetensors format.

Format (https://github.com/huggingface/safetensors, the reference implementation is the
Rust crate ``safetensors``, ``tensor.rs``):

* 8 bytes: little-endian ``u64`` N, the length of the JSON header;
* N bytes: a UTF-8 JSON object ``{"__metadata__": {str: str}, name: {"dtype": "F32",
  "shape": [..], "data_offsets": [begin, end]}, ...}`` written compactly (no spaces), padded
  with trailing spaces so that ``8 + N`` is a multiple of 8;
* the byte buffer: every tensor's raw little-endian, C-order data; ``data_offsets`` are relative
  to the start of that buffer.

Writer conventions, as the reference implementation's ``serialize`` does them:

* ``__metadata__`` is written first and only when given (values must be strings);
* tensors are laid out sorted by dtype, descending in the order of the reference crate's
  ``Dtype`` enum (U64, I64, F64, F32, U32, I32, BF16, F16, U16, I16, I8, U8, BOOL), then by
  name -- which keeps every tensor aligned to its element size; for a file holding a single
  dtype (e.g. all float32 weights) that is simply "keys sorted".  The header lists the tensors
  in that same order;
* the header is padded with spaces to a multiple of 8 bytes.

0-d arrays stay 0-d (``shape: []``, one element of data), on write and on read. numpy has no
bfloat16: a ``BF16`` tensor is read as float32 (exact: its 16 bits are float32's high half); an
ml_dtypes ``bfloat16`` array (the exporter's bfloat16 weights and golden data) is written as
``BF16``.
"""

from __future__ import annotations

import json
import struct
from typing import Dict, Mapping, Optional, Tuple

import numpy as np

__all__ = ["save_file", "load_file", "save_bytes", "load_bytes", "DTYPE_TO_NUMPY"]

# safetensors dtype name -> numpy dtype (little-endian).
DTYPE_TO_NUMPY: Dict[str, np.dtype] = {
    "BOOL": np.dtype("bool"),
    "U8": np.dtype("<u1"),
    "I8": np.dtype("<i1"),
    "I16": np.dtype("<i2"),
    "U16": np.dtype("<u2"),
    "F16": np.dtype("<f2"),
    "I32": np.dtype("<i4"),
    "U32": np.dtype("<u4"),
    "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"),
    "I64": np.dtype("<i8"),
    "U64": np.dtype("<u8"),
}
_NUMPY_TO_DTYPE = {v.newbyteorder("<") if v.itemsize > 1 else v: k for k, v in DTYPE_TO_NUMPY.items()}

# Declaration order of the reference crate's ``Dtype`` enum; serialization sorts by it,
# descending (so F64/I64/U64 come first, BOOL last).
_DTYPE_RANK = ["BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64"]


def _dtype_name(arr: np.ndarray) -> str:
    dt = arr.dtype
    if dt.name == "bfloat16":  # ml_dtypes' bfloat16 (numpy has none): written as BF16, bit for bit
        return "BF16"
    if dt.itemsize > 1:
        dt = dt.newbyteorder("<")
    try:
        return _NUMPY_TO_DTYPE[dt]
    except KeyError:
        raise TypeError(f"safetensors: unsupported numpy dtype {arr.dtype}") from None


def save_bytes(tensors: Mapping[str, np.ndarray], metadata: Optional[Mapping[str, str]] = None) -> bytes:
    """Serialize ``{name: array}`` (+ optional string metadata) to safetensors bytes."""
    arrays = {}
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"safetensors: tensor names must be str, got {name!r}")
        if name == "__metadata__":
            raise ValueError("safetensors: '__metadata__' is reserved")
        arr = np.asarray(value)
        arrays[name] = (arr, _dtype_name(arr))
    order = sorted(arrays, key=lambda n: (-_DTYPE_RANK.index(arrays[n][1]), n))
    header: Dict[str, object] = {}
    if metadata is not None:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError("safetensors: metadata keys and values must be str")
        header["__metadata__"] = dict(metadata)
    chunks = []
    offset = 0
    for name in order:
        arr, dname = arrays[name]
        data = np.ascontiguousarray(arr)
        data = (data.view("<u2") if dname == "BF16" else data.astype(DTYPE_TO_NUMPY[dname], copy=False)).tobytes("C")
        header[name] = {"dtype": dname, "shape": [int(s) for s in arr.shape],
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def save_file(tensors: Mapping[str, np.ndarray], path: str, metadata: Optional[Mapping[str, str]] = None) -> None:
    """Write ``{name: array}`` to ``path`` in safetensors format."""
    blob = save_bytes(tensors, metadata)
    with open(path, "wb") as f:
        f.write(blob)


def load_bytes(blob: bytes) -> Tuple[Dict[str, np.ndarray], Dict[str, str]]:
    """Parse safetensors bytes; returns ``(tensors, metadata)``. Arrays are writable copies."""
    if len(blob) < 8:
        raise ValueError("safetensors: file shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise ValueError(f"safetensors: header length {n} exceeds file size {len(blob)}")
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    if not isinstance(header, dict):
        raise ValueError("safetensors: header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    base = 8 + n
    out: Dict[str, np.ndarray] = {}
    for name, info in header.items():
        dname = info["dtype"]
        bf16 = dname == "BF16"
        if bf16:
            dname = "U16"  # the raw bits, widened to float32 below
        if dname not in DTYPE_TO_NUMPY:
            raise ValueError(f"safetensors: tensor {name!r} has unsupported dtype {dname!r}")
        dt = DTYPE_TO_NUMPY[dname]
        shape = tuple(int(s) for s in info["shape"])
        begin, end = (int(x) for x in info["data_offsets"])
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if end - begin != count * dt.itemsize or base + end > len(blob):
            raise ValueError(f"safetensors: tensor {name!r} has inconsistent data_offsets {begin},{end}")
        arr = np.frombuffer(blob, dtype=dt, count=count, offset=base + begin).reshape(shape).copy()
        out[name] = np.asarray(np.left_shift(arr.astype("<u4"), np.uint32(16))).view("<f4") if bf16 else arr
    return out, metadata


def load_file(path: str) -> Dict[str, np.ndarray]:
    """Read a safetensors file into ``{name: array}`` (0-d arrays stay 0-d)."""
    with open(path, "rb") as f:
        tensors, _ = load_bytes(f.read())
    return tensors


def load_file_with_metadata(path: str) -> Tuple[Dict[str, np.ndarray], Dict[str, str]]:
    """Like :func:`load_file` but also returns the ``__metadata__`` dict ({} when absent)."""
    with open(path, "rb") as f:
        return load_bytes(f.read())
