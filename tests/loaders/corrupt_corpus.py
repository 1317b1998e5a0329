#!/usr/bin/python3
"""A corpus of corrupt safetensors files derived from one valid file, for the loaders of the
generated projects (the Python loader of torch/relax/numpy, templates/*/helpers/
load_safetensors.py.j2, and the Vulkan runtime's runtime/vulkan/safetensors.cc).

Each variant breaks exactly one rule of the format (https://github.com/huggingface/safetensors
README "Format", checked as the reference reader safetensors/src/tensor.rs does) or one expectation
of the model (a tensor missing, of another dtype, of another shape), and carries two expectations:
  - the Vulkan runtime's own reader (runtime/vulkan/safetensors.cc): the substring its one-line
    error must contain and the tensor the message must name (None when the problem is not one
    tensor's);
  - the Python projects' reader, the safetensors package (0.8) behind LoadError: the substring of
    the package's reason and the tensor the message must name, or reference=None where the
    package reads the file (it keeps the last of duplicate keys and allows whitespace before the
    header's '{'; the runtime's reader is stricter there).

    corrupt_corpus.py SRC OUT_DIR [--prefix NAME]

writes OUT_DIR/<NAME>_<variant>.safetensors for every variant and OUT_DIR/<NAME>_manifest.json:
{"<variant>": {"file": ..., "expect": ..., "tensor": ... or null, "what": ..., "reference": ... or null
(null: the safetensors package reads the file), "reference_tensor": ... or null}}. The source must hold
a tensor with data and use only the dtypes below; the overlap variant needs two such tensors and
is left out otherwise.
"""
import argparse
import json
import os
import struct
import sys
from typing import Dict, List, NamedTuple, Optional

# dtype code -> bytes per element (the codes both loaders read).
ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}
# Another code of the same size (a wrong dtype whose byte count still fits the offsets).
SAME_SIZE = {"F64": "I64", "I64": "F64", "F32": "I32", "I32": "F32", "F16": "I16", "I16": "F16",
             "I8": "U8", "U8": "I8", "BOOL": "U8"}
MAX_HEADER = 100000000  # safetensors/src/tensor.rs MAX_HEADER_SIZE


ACCEPTED = "accepted"  # Variant.reference: the safetensors package reads this file


class Variant(NamedTuple):
    name: str
    data: bytes
    expect: str  # substring of the Vulkan runtime reader's error message
    tensor: Optional[str]  # the tensor the message must name, if any
    what: str  # one line: what is broken
    reference: Optional[str]  # substring of the safetensors package's reason; None: ACCEPTED
    reference_tensor: Optional[str]  # the tensor the Python loader's message must name, if any


class Entry(NamedTuple):
    name: str
    dtype: str
    shape: List[int]
    begin: int
    end: int


def parse(blob: bytes):
    """(entries sorted by offset, metadata or None, data section) of a valid safetensors file."""
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", None)
    entries = sorted((Entry(k, v["dtype"], list(v["shape"]), *v["data_offsets"]) for k, v in header.items()),
                     key=lambda e: (e.begin, e.end, e.name))
    for e in entries:
        if e.dtype not in ITEMSIZE:
            raise ValueError("corrupt_corpus: tensor %r has dtype %s, not one of %s" % (
                e.name, e.dtype, sorted(ITEMSIZE)))
    return entries, meta, blob[8 + n:]


def entry_text(name: str, dtype: str, shape: str, offsets: str) -> str:
    """One header entry as JSON text: `name` and `dtype` are strings, `shape` and `offsets` raw JSON
    text (so they can be anything, NaN included)."""
    return "%s:{\"dtype\":%s,\"shape\":%s,\"data_offsets\":%s}" % (json.dumps(name), json.dumps(dtype), shape, offsets)


def assemble(header_text: str, data: bytes, pad: bool = True) -> bytes:
    """u64 length + header (space-padded to 8 bytes, as the reference writer) + data."""
    raw = header_text.encode("utf-8")
    if pad:
        raw += b" " * ((8 - len(raw) % 8) % 8)
    return struct.pack("<Q", len(raw)) + raw + data


def header_of(entries: List[Entry], meta=None, override: Optional[Dict[str, str]] = None, extra: str = "") -> str:
    """Header text for `entries` (in order); override maps a tensor name to its raw entry text."""
    parts = []
    if meta is not None:
        parts.append("\"__metadata__\":" + json.dumps(meta))
    for e in entries:
        if override and e.name in override:
            parts.append(override[e.name])
        else:
            parts.append(entry_text(e.name, e.dtype, json.dumps(e.shape), json.dumps([e.begin, e.end])))
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}"


def variants(blob: bytes) -> List[Variant]:
    """Every corrupt variant of the valid safetensors file `blob`."""
    entries, meta, data = parse(blob)
    filled = [e for e in entries if e.end > e.begin]
    if not filled:
        raise ValueError("corrupt_corpus: the source has no tensor with data")
    (n,) = struct.unpack("<Q", blob[:8])
    header = blob[8:8 + n]
    first, last = filled[0], entries[-1]
    out = []

    def add(name, data_, expect, tensor, what, ref=None):
        """ref: (substring, tensor) the safetensors package's error must hold; ACCEPTED when it
        reads the file; default: the same as the runtime's (the model's own expectations)."""
        reference, reference_tensor = (None, None) if ref == ACCEPTED else ref or (expect, tensor)
        out.append(Variant(name, data_, expect, tensor, what, reference, reference_tensor))

    def with_entry(e: Entry, text: str, data_=data, extra=""):
        """The file with tensor e's header entry replaced by `text`."""
        return assemble(header_of(entries, meta, {e.name: text}, extra), data_)

    def edited(e: Entry, dtype=None, shape=None, offsets=None, data_=data):
        """The file with tensor e's dtype, shape (raw JSON text) or data_offsets (raw) replaced."""
        text = entry_text(e.name, dtype or e.dtype, shape or json.dumps(e.shape),
                          offsets or json.dumps([e.begin, e.end]))
        return with_entry(e, text, data_)

    text = header.decode("utf-8").rstrip(" ")
    # Truncation and header lengths.
    add("empty", b"", "0 bytes is too short for a safetensors header", None, "an empty file",
        ("header too small", None))
    add("short", blob[:5], "5 bytes is too short for a safetensors header", None, "5 bytes: no header length",
        ("header too small", None))
    add("header_past_eof", blob[:8 + n // 2], "exceeds the file size", None, "cut inside the header",
        ("invalid header length", None))
    add("header_len_huge", struct.pack("<Q", 2 ** 63) + blob[8:], "exceeds the limit of 100000000 bytes", None,
        "header length 2^63", ("header too large", None))
    add("header_len_over_limit", struct.pack("<Q", MAX_HEADER + 1) + blob[8:],
        "exceeds the limit of 100000000 bytes", None, "header length one past the format's 100 MB limit",
        ("header too large", None))
    add("header_len_zero", struct.pack("<Q", 0) + blob[8:], "header is not a JSON object", None,
        "header length 0: the header becomes data", ("invalid JSON in header", None))
    add("data_truncated", blob[:-1], "lie outside the data section", last.name,
        "the last data byte cut off (the last tensor runs past the end)",
        ("file not fully covered", last.name))
    add("trailing_bytes", blob + b"\0" * 16, "16 trailing bytes after the last tensor", None,
        "16 bytes after the last tensor (a hole: polyglot files)", ("file not fully covered", None))
    # Header text.
    bad = bytearray(header)
    bad[header.index(b'"') + 1] = 0xFF
    add("header_not_utf8", blob[:8] + bytes(bad) + data, "header is not valid UTF-8", None,
        "a byte 0xFF in the first key", ("invalid UTF-8 in header", None))
    add("header_leading_space", assemble(" " + text, data, pad=False), "does not start with '{'", None,
        "a space before the opening brace", ACCEPTED)
    add("header_not_object", assemble("[" + json.dumps(first.name) + "]", data), "header is not a JSON object", None,
        "a JSON array instead of an object", ("invalid JSON in header", None))
    add("header_invalid_json", assemble(text[:-1], data), "header is not valid JSON", None,
        "the closing brace removed", ("invalid JSON in header", None))
    add("header_nan", edited(first, shape="[NaN]"), "header is not valid JSON", None, "NaN (not JSON) as a dimension",
        ("invalid JSON in header", first.name))
    add("header_deep_nesting", assemble("{\"x\":" + "[" * 100000 + "]" * 100000 + "}", b""),
        "nested too deeply", None, "100000 nested arrays (parser stack exhaustion)",
        ("recursion limit exceeded", None))
    dup = entry_text(first.name, first.dtype, json.dumps(first.shape), json.dumps([first.begin, first.end]))
    add("duplicate_tensor", assemble(header_of(entries, meta, extra=dup), data),
        "duplicate key '%s'" % first.name, None, "the first tensor listed twice (the aliasing trick)", ACCEPTED)
    add("duplicate_field", with_entry(first, dup[:-1] + ",\"dtype\":\"F64\"}"), "duplicate key 'dtype'", None,
        "dtype given twice in one entry", ("duplicate field `dtype`", first.name))
    add("metadata_not_strings", assemble(header_of(entries, None, extra="\"__metadata__\":{\"format\":1}"), data),
        "'__metadata__' is not an object of strings", None, "__metadata__ with a number value",
        ("invalid JSON in header", None))
    # One tensor's entry.
    fields = "expected an object with keys dtype, shape, data_offsets"
    json_error = ("invalid JSON in header", first.name)  # serde's error position names the entry
    add("entry_not_object", with_entry(first, json.dumps(first.name) + ":[1,2]"), fields, first.name,
        "an entry that is an array", json_error)
    add("entry_missing_offsets", with_entry(first, "%s:{\"dtype\":%s,\"shape\":%s}" % (
        json.dumps(first.name), json.dumps(first.dtype), json.dumps(first.shape))), fields, first.name,
        "an entry without data_offsets", ("missing field `data_offsets`", first.name))
    add("unknown_dtype", edited(first, dtype="Q4"), "unsupported dtype \"Q4\"", first.name, "dtype Q4",
        ("unknown variant `Q4`", first.name))
    dims = "has a non-integer or negative dimension"
    add("negative_dim", edited(first, shape=json.dumps([-1] + first.shape)), dims, first.name, "a dimension -1",
        json_error)
    add("fractional_dim", edited(first, shape="[2.5]"), dims, first.name, "a dimension 2.5", json_error)
    add("shape_overflow", edited(first, shape="[4294967296,4294967296,16]"), "overflows 64-bit sizes", first.name,
        "2^32 x 2^32 x 16 elements: int64 overflow", ("overflow computing buffer size", first.name))
    pair = "is not a pair of non-negative integers"
    add("offsets_not_pair", edited(first, offsets=json.dumps([first.begin])), pair, first.name,
        "data_offsets with one number", json_error)
    add("offsets_negative", edited(first, offsets=json.dumps([-8, first.end])), pair, first.name, "a negative offset",
        json_error)
    offset_error = ("invalid offset for tensor", first.name)
    add("offsets_reversed", edited(first, offsets=json.dumps([first.end, first.begin])), "end before they begin",
        first.name, "begin > end", offset_error)
    size, far = first.end - first.begin, len(data) + 4096
    add("offsets_out_of_range", edited(first, offsets=json.dumps([far, far + size])), "lie outside the data section",
        first.name, "offsets 4 KiB past the end of the data", offset_error)
    add("offsets_huge", edited(first, offsets=json.dumps([2 ** 64 - 1 - size, 2 ** 64 - 1])),
        "lie outside the data section", first.name, "offsets near 2^64 (pointer-wrap bait)", offset_error)
    add("size_mismatch", edited(first, offsets=json.dumps([first.begin, first.end - 1])), "but data_offsets cover",
        first.name, "one byte fewer than numel * itemsize", ("invalid shape, data type, or offset", first.name))
    # The tensors against each other: they must tile the data section.
    if len(filled) >= 2:
        # `second` moved onto the start of `first` (offset 0): the overlap is met before the hole it
        # leaves; of the two at offset 0 the one sorted later (by end, then name) is named.
        second = filled[1]
        moved = Entry(second.name, second.dtype, second.shape, first.begin, first.begin + second.end - second.begin)
        culprit = max([first, moved], key=lambda e: (e.end, e.name)).name
        # (the package names the tensor it meets out of order, which may be either)
        add("overlap", edited(second, offsets=json.dumps([moved.begin, moved.end])), "overlap tensor", culprit,
            "two tensors sharing bytes", ("invalid offset for tensor", None))
    end = filled[-1]
    add("gap", edited(end, offsets=json.dumps([end.begin + 8, end.end + 8]), data_=data + b"\0" * 8),
        "leave a gap of 8 bytes", end.name, "8 unindexed bytes before the last tensor",
        ("invalid offset for tensor", end.name))
    # What the model expects (each of these is a valid safetensors file).
    shift = first.end - first.begin  # first starts at 0: every later tensor moves down
    kept = [Entry(e.name, e.dtype, e.shape, e.begin - shift, e.end - shift) for e in entries if e.name != first.name]
    add("missing_tensor", assemble(header_of(kept, meta), data[shift:]), "has no tensor '%s'" % first.name,
        first.name, "the first tensor and its bytes removed")
    other = SAME_SIZE[first.dtype]
    add("wrong_dtype", edited(first, dtype=other), "has dtype %s" % other, first.name,
        "dtype %s -> %s (same size)" % (first.dtype, other))
    numel = 1
    for d in first.shape:
        numel *= d
    reshaped = [numel] if len(first.shape) != 1 else [1, numel]
    add("wrong_shape", edited(first, shape=json.dumps(reshaped)),
        "has shape %s" % json.dumps(reshaped).replace(",", ", "), first.name,
        "shape %s -> %s (same size)" % (first.shape, reshaped))
    return out


def write_corpus(src: str, out_dir: str, prefix: str) -> Dict[str, dict]:
    """Writes every variant of `src`; returns (and writes) the manifest."""
    with open(src, "rb") as f:
        blob = f.read()
    os.makedirs(out_dir, exist_ok=True)
    manifest = {}
    for v in variants(blob):
        path = os.path.join(out_dir, "%s_%s.safetensors" % (prefix, v.name))
        with open(path, "wb") as f:
            f.write(v.data)
        manifest[v.name] = {"file": path, "expect": v.expect, "tensor": v.tensor, "what": v.what,
                            "reference": v.reference, "reference_tensor": v.reference_tensor}
    with open(os.path.join(out_dir, prefix + "_manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    return manifest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", help="a valid safetensors file (two or more tensors with data)")
    ap.add_argument("out_dir")
    ap.add_argument("--prefix", default="corrupt")
    args = ap.parse_args(argv)
    manifest = write_corpus(args.src, args.out_dir, args.prefix)
    print("%d variants of %s -> %s" % (len(manifest), args.src, args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
