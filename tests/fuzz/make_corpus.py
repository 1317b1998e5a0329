#!/usr/bin/python3
"""(Re)creates the committed seed corpora tests/fuzz/corpus/<harness>/ and the libFuzzer
dictionaries tests/fuzz/dict/<harness>.dict from files of this repository (and, for the ONNX
importer, the small models of Debian's libonnx-testdata that tests/onnx/scope.json marks in scope).

usage: make_corpus.py

Seeds are real inputs (graphs, weights and golden files of tests/msc_real, opdefs/*.yaml,
templates/*/backend.yaml, template snippets and tests/tmpl cases, ONNX backend-test models) plus a
few crafted files that cover what the real ones do not (every dtype, 0-d and empty tensors,
safetensors metadata, TVM param dicts of every DLDataType the reader accepts). Each seed is named
after its source, capped in size (the harness's -max_len) and deduplicated by content. The whole
corpus stays well under 2 MB. Regression inputs (tests/fuzz/regressions/) are not touched.
The corpus is a snapshot: it need not follow later edits of its sources (seeds only have to be
interesting), so nothing checks that it is up to date. Rerun after adding a harness or when the
formats change a lot; libFuzzer's -merge=1 (scripts/fuzz.sh --merge) adds fuzzer-found inputs.
"""
import argparse
import hashlib
import json
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ONNX_DATA = "/usr/share/libonnx-testdata/data"
MSC_REAL = os.path.join(ROOT, "tests", "msc_real", "cases")

# Keep in sync with the -max_len defaults in the harnesses (fuzz_<name>.cc).
MAX_LEN = {"graph": 65536, "safetensors": 16384, "param_dict": 16384, "opdef": 16384,
           "backend_spec": 8192, "tmpl": 4096, "vk_readers": 16384, "onnx": 16384}


def read(path, mode="rb"):
    with open(path, mode) as fh:
        return fh.read()


# --- crafted weights files -------------------------------------------------------------------

ST_DTYPES = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "F16": 2, "BF16": 2, "I32": 4, "F32": 4,
             "F64": 8, "I64": 8}


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape, bytes)] in buffer order -> file bytes (reference layout)."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    off = 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(data)]}
        off += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors)


def crafted_safetensors():
    out = {}
    all_dtypes = []
    for i, (code, size) in enumerate(sorted(ST_DTYPES.items(), key=lambda kv: -kv[1])):
        all_dtypes.append((f"t_{code.lower()}", code, [2], bytes(range(i, i + 2 * size))))
    out["crafted_all_dtypes"] = safetensors(all_dtypes)
    out["crafted_metadata"] = safetensors([("w", "F32", [2, 2], struct.pack("<4f", 1, -2, 0.5, 3))],
                                          {"format": "pt", "source": "msc"})
    out["crafted_scalar_and_empty"] = safetensors([("s", "F32", [], struct.pack("<f", 7.5)),
                                                   ("e", "F32", [0, 3], b"")])
    out["crafted_no_tensors"] = safetensors([])
    out["crafted_nan_inf"] = safetensors([("x", "F32", [4], struct.pack("<4f", float("nan"),
                                                                        float("inf"), -0.0, 1e-45)),
                                          ("h", "F16", [2], b"\x00\x7c\x00\x7e")])
    return out


# tvm src/runtime/file_utils.cc SaveParams, include/tvm/runtime/ndarray.h SaveDLTensor.
PD_DTYPES = {"int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
             "uint8": (1, 8), "bool": (1, 1), "float16": (2, 16), "float32": (2, 32),
             "float64": (2, 64), "bfloat16": (4, 16), "dlbool": (6, 8)}


def param_dict(arrays):
    """arrays: [(name, (code, bits), shape, bytes)] -> tvm.runtime.save_param_dict bytes."""
    b = struct.pack("<QQ", 0xF7E58D4F05049CB7, 0)
    b += struct.pack("<Q", len(arrays))
    for name, _, _, _ in arrays:
        b += struct.pack("<Q", len(name)) + name.encode()
    b += struct.pack("<Q", len(arrays))
    for _, (code, bits), shape, data in arrays:
        b += struct.pack("<QQiii", 0xDD5E40F096B4A13F, 0, 1, 0, len(shape))
        b += struct.pack("<BBH", code, bits, 1)
        b += b"".join(struct.pack("<q", d) for d in shape)
        b += struct.pack("<q", len(data)) + data
    return b


def crafted_param_dicts():
    out = {}
    arrays = []
    for i, (name, (code, bits)) in enumerate(PD_DTYPES.items()):
        item = (bits + 7) // 8
        arrays.append((f"p_{name}", (code, bits), [2, 1], bytes(range(i, i + 2 * item))))
    out["crafted_all_dtypes"] = param_dict(arrays)
    out["crafted_scalar_and_empty"] = param_dict([("s", (2, 32), [], struct.pack("<f", 1.5)),
                                                  ("e", (0, 64), [0], b"")])
    out["crafted_empty_dict"] = param_dict([])
    return out


# --- seeds per harness -------------------------------------------------------------------------

def msc_real_cases():
    return sorted(d for d in os.listdir(MSC_REAL) if os.path.isdir(os.path.join(MSC_REAL, d)))


def seeds_graph():
    out = {}
    for case in msc_real_cases():
        data = read(os.path.join(MSC_REAL, case, "graph.json"))
        if len(data) <= 20000:
            out[f"msc_real_{case}"] = data
    out["schema_example"] = read(os.path.join(ROOT, "..", "shared", "reference",
                                              "mscgraph_example_derived.json"))
    # One graph per optype (tests/ops/cases), compact JSON to keep the corpus small.
    rdir = os.path.join(ROOT, "tests", "ops", "cases")
    for f in sorted(os.listdir(rdir)):
        if f.endswith(".json"):
            g = json.loads(read(os.path.join(rdir, f)))
            out[f"relax_{f[:-5]}"] = json.dumps(g, separators=(",", ":")).encode()
    # conv2d -> batch_norm -> get_item -> clip: what the vulkan backend's fold_batch_norm pass folds.
    g = json.loads(read(os.path.join(MSC_REAL, "model_mobilenet_v2", "graph.json")))
    g["nodes"] = g["nodes"][:8]
    g["outputs"] = [g["nodes"][-1]["outputs"][0]["name"]]
    out["msc_real_mobilenet_v2_first8"] = json.dumps(g, indent=1).encode()
    return out


def weights_files():
    """The smallest tests/msc_real weights/golden file per header structure (dtypes and ranks)."""
    best = {}
    for case in msc_real_cases():
        for rel in ("weights.safetensors", "golden/inputs.safetensors", "golden/outputs.safetensors"):
            p = os.path.join(MSC_REAL, case, rel)
            if not (os.path.exists(p) and os.path.getsize(p) <= 4096):
                continue
            data = read(p)
            n = struct.unpack("<Q", data[:8])[0]
            header = json.loads(data[8:8 + n])
            kind = tuple(sorted((v["dtype"], len(v["shape"])) for k, v in header.items()
                                if k != "__metadata__"))
            name = f"msc_real_{case}_{rel.replace('/', '_').split('.')[0]}"
            if kind not in best or (len(data), name) < best[kind][:2]:
                best[kind] = (len(data), name, data)
    return {name: data for _, name, data in best.values()}


def seeds_safetensors():
    out = weights_files()
    out.update(crafted_safetensors())
    return out


def seeds_param_dict():
    out = {"msc_real_conv_relu_weights_bin": read(os.path.join(
        ROOT, "..", "shared", "reference", "msc-real", "conv_relu", "weights.bin"))}
    out.update(crafted_param_dicts())
    return out


def seeds_opdef():
    out = {}
    opdefs = os.path.join(ROOT, "opdefs")
    for f in sorted(os.listdir(opdefs)):
        if not f.endswith(".yaml"):
            continue
        text = read(os.path.join(opdefs, f), "r")
        out[f"opdefs_{f[:-5]}"] = text.encode()
        # Single entries (top-level keys), for small, fast seeds; anchors are not split apart.
        entries = re.split(r"\n(?=[^\s#][^\n]*:\s*\n)", text)
        for e in entries[1:6]:
            if "*" not in e:
                key = e.split(":", 1)[0].strip().replace(".", "_")
                out[f"opdefs_{f[:-5]}_{key}"] = (e.strip() + "\n").encode()
    return out


def seeds_backend_spec():
    out = {}
    tdir = os.path.join(ROOT, "templates")
    for b in sorted(os.listdir(tdir)):
        p = os.path.join(tdir, b, "backend.yaml")
        if os.path.exists(p):
            out[f"templates_{b}"] = read(p)
    return out


def seeds_tmpl():
    out = {}
    cases = os.path.join(ROOT, "tests", "tmpl", "cases")
    for c in sorted(os.listdir(cases)):
        out[f"tmpl_case_{c}"] = read(os.path.join(cases, c, "template.j2"))
    snippets = read(os.path.join(ROOT, "tests", "tmpl", "snippets.txt"), "r").split("\n%%%%\n")
    for i, s in enumerate(snippets[1:]):
        s = "\n".join(line for line in s.split("\n") if not line.startswith("#")) if s.startswith("#") else s
        out[f"tmpl_snippet_{i:03d}"] = s.encode()
    # Real per-op snippets: every 7th by name (deterministic, spread over ops), all backends.
    tdir = os.path.join(ROOT, "templates")
    for b in sorted(os.listdir(tdir)):
        ops = os.path.join(tdir, b, "ops")
        if not os.path.isdir(ops):
            continue
        files = sorted(os.path.relpath(os.path.join(d, f), ops)
                       for d, _, fs in os.walk(ops) for f in fs if f.endswith(".j2"))
        for rel in files[::7]:
            out[f"templates_{b}_{rel.replace('/', '_')}"] = read(os.path.join(ops, rel))
    return out


def seeds_vk_readers():
    return seeds_safetensors()


def seeds_onnx():
    out = {}
    scope = json.load(open(os.path.join(ROOT, "tests", "onnx", "scope.json")))["tests"]
    best = {}
    for key, t in sorted(scope.items()):
        p = os.path.join(ONNX_DATA, key, "model.onnx")
        if not (t.get("in_scope") and os.path.exists(p)):
            continue
        size = os.path.getsize(p)
        if size > 4096:
            continue
        group = (key.split("/")[0], tuple(t["onnx_ops"]))
        if group not in best or size < best[group][0]:
            best[group] = (size, key, p)
    for _, key, p in sorted(best.values(), key=lambda v: v[1]):
        out["onnx_" + key.replace("/", "_")] = read(p)
    # ONNX 1.23.2's own suite (tests/onnx/testdata.py, when it has been written): opset >= 18 models,
    # the smallest per op set, in scope or holding an op of the newer opsets (function bodies,
    # sequences, attention, the new normalizations)
    release = os.environ.get("MSC_ONNX_TESTDATA") or os.path.expanduser("~/.cache/msc-codegen/onnx-testdata-1.23.2")
    scope_path = os.path.join(ROOT, "tests", "onnx", "scope-onnx-1.23.2.json")
    if os.path.isdir(release) and os.path.exists(scope_path):
        newer = {"Attention", "RMSNormalization", "GroupNormalization", "RotaryEmbedding", "Gelu", "Mish", "Swish",
                 "SwiGLU", "LpPool", "SequenceConstruct", "SequenceInsert", "ConcatFromSequence", "Split", "Pad",
                 "ReduceMean", "ReduceMax", "ReduceL2", "Resize", "SoftmaxCrossEntropyLoss", "AffineGrid",
                 "CenterCropPad", "LayerNormalization", "MaxPool", "AveragePool", "SpaceToDepth"}
        best = {}
        for key, t in sorted(json.load(open(scope_path))["tests"].items()):
            p = os.path.join(release, key, "model.onnx")
            if (t.get("opset") or 0) < 18 or not os.path.exists(p) or os.path.getsize(p) > 4096:
                continue
            if not (t.get("in_scope") or newer & set(t["onnx_ops"])):
                continue
            group = tuple(t["onnx_ops"])
            if group not in best or os.path.getsize(p) < best[group][0]:
                best[group] = (os.path.getsize(p), key, p)
        for _, key, p in sorted(best.values(), key=lambda v: v[1]):
            out["onnx123_" + key.replace("/", "_")] = read(p)
    return out


# --- dictionaries --------------------------------------------------------------------------------

def q(token):
    """A libFuzzer dictionary entry: "..." with \\xNN escapes for non-printables."""
    if isinstance(token, str):
        token = token.encode()
    s = "".join(chr(c) if 0x20 <= c < 0x7F and chr(c) not in '"\\' else f"\\x{c:02X}" for c in token)
    return f'"{s}"'


def optypes():
    names = []
    for f in sorted(os.listdir(os.path.join(ROOT, "opdefs"))):
        if f.endswith(".yaml"):
            names += re.findall(r"^([A-Za-z_][\w.]*):\s*$", read(os.path.join(ROOT, "opdefs", f), "r"),
                                re.M)
    return names


def attr_names():
    names = set()
    for f in sorted(os.listdir(os.path.join(ROOT, "opdefs"))):
        if f.endswith(".yaml"):
            names |= set(re.findall(r"^    (\w+): \{type:", read(os.path.join(ROOT, "opdefs", f), "r"),
                                    re.M))
    return sorted(names)


MSC_DTYPES = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8",
              "bool"]
JSON_TOKENS = ["{", "}", "[", "]", ":", ",", '"', "null", "true", "false", "-1", "0", "1e308",
               "18446744073709551615", "9223372036854775808", "-9223372036854775809", "\\u0000",
               "\\ud800", "0.000010"]


def dict_graph():
    keys = ["name", "inputs", "outputs", "nodes", "prims", "index", "shared_ref", "optype", "parents",
            "attrs", "weights", "alias", "dtype", "layout", "shape", "weight", "bias", "gamma", "beta",
            "mean", "var", "const"]
    vals = ["NCHW", "OIHW", "NC", "O", ":0", ":1", "inp_0", "inp_0:0", "1,1", "1,", "inf", "-inf"]
    return ([q(f'"{k}"') for k in keys] + [q(f'"{v}"') for v in MSC_DTYPES + optypes() + vals] +
            [q(f'"{a}"') for a in attr_names()] + [q(t) for t in JSON_TOKENS])


def dict_safetensors():
    keys = ["__metadata__", "dtype", "shape", "data_offsets", "format", "pt"]
    return ([q(f'"{k}"') for k in keys] + [q(f'"{d}"') for d in ST_DTYPES] +
            [q(f'"{d}"') for d in ("F8_E4M3", "U16", "U32", "U64", "C64")] + [q(t) for t in JSON_TOKENS])


def dict_param_dict():
    out = [q(struct.pack("<Q", 0xF7E58D4F05049CB7)), q(struct.pack("<Q", 0xDD5E40F096B4A13F)),
           q(struct.pack("<ii", 1, 0)), q(struct.pack("<Q", 0)), q(struct.pack("<Q", 0xFFFFFFFFFFFFFFFF)),
           q(struct.pack("<q", -1)), q(struct.pack("<i", -1))]
    for code, bits in PD_DTYPES.values():
        out.append(q(struct.pack("<BBH", code, bits, 1)))
    return out


def dict_opdef():
    keys = ["summary", "inputs", "min_inputs", "weights", "attrs", "extra_attrs", "not_for_inference",
            "type", "default", "required", "nullable", "choices", "length", "min", "doc", "optional",
            "layout"]
    types = ["int", "float", "bool", "str", "dtype", "int list", "float list", "str list", "variadic"]
    yaml = [": ", "- ", "{", "}", "[", "]", ", ", "&a ", "*a", "<<: ", "!!str ", "|\n", ">\n", "---\n",
            "...\n", "~", "null", ".inf", ".nan", "0x10", "1e3", "'", '"', "? ", "%YAML 1.2\n", "\t"]
    return [q(k + ":") for k in keys] + [q(t) for t in types] + [q(y) for y in yaml]


def dict_backend_spec():
    keys = ["summary", "op_template", "op_sections", "no_snippet", "files", "copy", "weights", "golden",
            "reserved_names", "memory_plan", "fuse_epilogues", "template", "output", "from", "to",
            "alignment", "alias", "producers", "epilogues", "residual", "residual_producers", "passes",
            "fuse_elementwise", "ops", "selects", "max_ops", "max_inputs"]
    vals = ["ops/{path}.py.j2", "{path}", "../", "/abs", "init", "forward", "64", "0", "-8", "fold_batch_norm"]
    return [q(k + ":") for k in keys] + [q(v) for v in vals] + [q(y) for y in
                                                               [": ", "- ", "{", "}", "[", "]", "&a ", "*a"]]


def dict_tmpl():
    tags = ["{{", "}}", "{%", "%}", "{#", "#}", "{%-", "-%}", "{{-", "-}}"]
    stmts = ["if", "elif", "else", "endif", "for", "in", "endfor", "recursive", "set", "endset",
             "macro", "endmacro", "call", "endcall", "include", "ignore missing", "with context",
             "without context", "import", "from", "as", "filter", "endfilter", "with", "endwith",
             "raw", "endraw", "extends", "block", "endblock", "scoped", "required", "print", "not",
             "and", "or", "is", "none", "true", "false", "loop", "caller", "super()", "self",
             "varargs", "kwargs", "namespace", "range", "dict", "joiner", "cycler"]
    filters = ("abs attr batch capitalize center count d default dictsort e escape first float "
               "forceescape format groupby indent int items join last length list lower map max min "
               "reject rejectattr replace reverse round safe select selectattr slice sort string sum "
               "title tojson trim truncate unique upper wordcount py_literal c_literal py_str c_str "
               "raise_error").split()
    tests = ("defined undefined none boolean true false number integer float string mapping callable "
             "escaped sequence iterable divisibleby even odd eq equalto ne lt lessthan le gt "
             "greaterthan ge in sameas lower upper filter test").split()
    names = ["node", "section", "graph", "inputs", "outputs", "attrs", "attrs_raw", "weights", "ident",
             "shape", "dtype", "code", "'t.j2'", "'base.j2'", "'m.j2'", "'self.j2'", "'macros.j2'",
             "lst", "d", "s", "n", "people", "r"]
    ops = ["|", "~", "**", "//", "%", "==", "!=", "<=", "[::-1]", "(", ")", ".", ",", "=", "*", "'%s'",
           ".format(", "'{:", "'{0:>10.3f}'", "'%5.2e'", "'{:,}'"]
    return ([q(t) for t in tags] + [q(" " + s + " ") for s in stmts] + [q("|" + f) for f in filters] +
            [q(" is " + t) for t in tests] + [q(n) for n in names] + [q(o) for o in ops])


def dict_vk_readers():
    return dict_safetensors()


def dict_onnx():
    ops = set()
    scope = json.load(open(os.path.join(ROOT, "tests", "onnx", "scope.json")))["tests"]
    for t in scope.values():
        if t.get("in_scope"):
            ops |= set(t["onnx_ops"])
    release = os.path.join(ROOT, "tests", "onnx", "scope-onnx-1.23.2.json")
    for t in json.load(open(release))["tests"].values():
        if t.get("in_scope"):
            ops |= set(t["onnx_ops"])
    ops |= {"Attention", "RMSNormalization", "GroupNormalization", "RotaryEmbedding", "Gelu", "Swish",
            "SequenceConstruct", "SequenceAt", "ConcatFromSequence", "LpPool"}
    attrs = ["num_outputs", "num_groups", "approximate", "is_causal", "scale", "stash_type", "new_axis",
             "axis", "axes", "keepdims", "pads", "strides", "kernel_shape", "dilations", "group",
             "auto_pad", "epsilon", "alpha", "beta", "transA", "transB", "perm", "mode", "value",
             "to", "starts", "ends", "split", "ceil_mode", "count_include_pad", "SAME_UPPER", "VALID",
             "ai.onnx", "external_data", "location", "offset", "length"]
    return [q(o) for o in sorted(ops)] + [q(a) for a in attrs]


HARNESSES = ["graph", "safetensors", "param_dict", "opdef", "backend_spec", "tmpl", "vk_readers", "onnx"]


def build():
    """-> {relative path: bytes} of every corpus file and dictionary."""
    files = {}
    for h in HARNESSES:
        seen = set()
        for name, data in sorted(globals()["seeds_" + h]().items()):
            data = data[:MAX_LEN[h]]
            digest = hashlib.sha1(data).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            files[f"corpus/{h}/{name}"] = data
        entries = globals()["dict_" + h]()
        text = (f"# libFuzzer dictionary of fuzz_{h}, made by tests/fuzz/make_corpus.py\n" +
                "\n".join(dict.fromkeys(entries)) + "\n")
        files[f"dict/{h}.dict"] = text.encode()
    return files


def main():
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    files = build()
    existing = set()
    for sub in ("corpus", "dict"):
        for d, _, fs in os.walk(os.path.join(HERE, sub)):
            existing |= {os.path.relpath(os.path.join(d, f), HERE) for f in fs}
    for p in existing - set(files):
        os.remove(os.path.join(HERE, p))
    for p, data in files.items():
        os.makedirs(os.path.dirname(os.path.join(HERE, p)), exist_ok=True)
        with open(os.path.join(HERE, p), "wb") as fh:
            fh.write(data)
    total = sum(len(v) for k, v in files.items() if k.startswith("corpus/"))
    for h in HARNESSES:
        n = sum(1 for k in files if k.startswith(f"corpus/{h}/"))
        size = sum(len(v) for k, v in files.items() if k.startswith(f"corpus/{h}/"))
        print(f"{h:13s} {n:4d} seeds {size:8d} bytes")
    print(f"total {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
