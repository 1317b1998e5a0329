#!/usr/bin/python3
"""Differential test of the engine's JSON data reader (tmpl::Data::ParseJson, used by
msc_tmpl_render) against Python's json.load as jinja_render.py uses it.

usage: json_data.py MSC_TMPL_RENDER [--count N] [--seed S] [-v]

Renders one template over random JSON documents (nested objects/arrays, repeated keys, unicode
and escaped strings, ints up to 64 bits, floats of every magnitude, rounded floats), written in
varied layouts (indentation, separators, ensure_ascii), with both programs and requires
byte-identical output. Then feeds malformed documents that Python rejects and requires
msc_tmpl_render to reject them too ("error: DATA: invalid JSON: line L, column C: ...").
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
JINJA_RENDER = os.path.join(HERE, "jinja_render.py")

TEMPLATE = """{{ doc }}
{% for k, v in doc.items() %}{{ k }}={{ v }}|{{ v is string }}{% if v is string %}:{{ v|length }}:{{ v|tojson }}{% endif %}
{% endfor %}{% for x in nums %}{{ x }} {{ x|round(3) }} {{ x|round(0) }} {{ x|round(7) }} {{ x|round(16) }} {{ '%.4g'|format(x) }}
{% endfor %}{{ keys|dictsort }}"""

# Malformed documents (Python's json.load rejects each of them).
INVALID = [
    '{"a": 1,}', '{"a": [1, 2,]}', "{'a': 1}", '{"a": 01}', '{"a": 1} x', '{"a": .5}',
    '{"a": 1.}', '{"a": -}', '{"a": tru}', '{"a": "x\ny"}', '{"a": "\\x"}', '{"a": "\\u12"}',
    '{"a" 1}', '{"a": 1 "b": 2}', '{a: 1}', '{"a": 1', '[1, 2', '', '   ', '{"a": "abc',
    '{"a": 1e}', '{"a": 1e+}', '{"a": --1}', '/* c */ {}', '{"a": [1 2]}',
]


def rand_string(r):
    alphabet = ["a", "b", "Z", "_", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\x7f", "é", "ß",
                "λ", "中", "😀", "\u2028", "<", ">", "&", "'", "%", "{", "}"]
    return "".join(r.choice(alphabet) for _ in range(r.randint(0, 12)))


def rand_float(r):
    k = r.random()
    if k < 0.2:
        return r.uniform(-1e6, 1e6)
    if k < 0.4:
        return r.uniform(-1, 1) * 10 ** r.randint(-12, 22)
    if k < 0.6:
        return r.randint(-10**6, 10**6) / 10 ** r.randint(0, 8)
    if k < 0.7:
        return r.choice([0.0, -0.0, 1e-05, 0.001, 0.1, 1e16, 1e15, 123456789.0, 5e-324, 1.7e308])
    return r.randint(-1000, 1000) / 8


def rand_value(r, depth):
    k = r.random()
    if depth > 3 or k < 0.35:
        return r.choice([None, True, False, r.randint(-2**63, 2**63 - 1), r.randint(-100, 100),
                         rand_float(r), rand_string(r)])
    if k < 0.65:
        return [rand_value(r, depth + 1) for _ in range(r.randint(0, 5))]
    return {rand_string(r) or "k": rand_value(r, depth + 1) for _ in range(r.randint(0, 6))}


def rand_doc(r):
    doc = {"k%d" % i: rand_value(r, 1) for i in range(r.randint(1, 8))}
    keys = {rand_string(r): r.randint(0, 9) for _ in range(r.randint(0, 20))}
    return {"doc": doc, "nums": [rand_float(r) for _ in range(8)], "keys": keys}


def dump(r, data):
    text = json.dumps(data, ensure_ascii=r.random() < 0.5, indent=r.choice([None, None, 1, 2, "\t"]),
                      separators=r.choice([None, (",", ":"), (", ", ": ")]))
    if r.random() < 0.3:  # repeated keys: Python keeps the first position, the last value
        text = text.replace('{"k0": ', '{"k0": 123, "k0": ', 1)
    return text


def run(cmd):
    p = subprocess.run(cmd, capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    r = random.Random(args.seed)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmpl = os.path.join(tmp, "t.j2")
        with open(tmpl, "w", encoding="utf-8") as fh:
            fh.write(TEMPLATE)
        data_path = os.path.join(tmp, "data.json")
        for i in range(args.count):
            text = dump(r, rand_doc(r))
            with open(data_path, "w", encoding="utf-8") as fh:
                fh.write(text)
            jrc, jout, jerr = run([sys.executable, JINJA_RENDER, tmpl, data_path])
            mrc, mout, merr = run([args.binary, tmpl, data_path])
            if jrc != 0 or mrc != 0 or jout != mout:
                failures += 1
                print(f"FAIL document #{i}: jinja2 rc={jrc} msc rc={mrc} {merr.strip()[:300]}")
                print("  data:", text[:400])
                for a, b in zip(jout.decode("utf-8", "replace").splitlines(),
                                mout.decode("utf-8", "replace").splitlines()):
                    if a != b:
                        print("  jinja2:", a[:300])
                        print("  msc:   ", b[:300])
                        break
            elif args.v:
                print(f"ok document #{i}")
        for i, text in enumerate(INVALID + ['{"a": "\xff"}'.encode("latin-1").decode("latin-1")]):
            raw = text.encode("latin-1") if "\xff" in text else text.encode("utf-8")
            with open(data_path, "wb") as fh:
                fh.write(raw)
            jrc, _, _ = run([sys.executable, JINJA_RENDER, tmpl, data_path])
            mrc, _, merr = run([args.binary, tmpl, data_path])
            if jrc == 0 or mrc != 1 or not merr.startswith(f"error: {data_path}: invalid JSON: line "):
                failures += 1
                print(f"FAIL invalid document {text!r}: jinja2 rc={jrc}, msc rc={mrc} {merr.strip()}")
    total = args.count + len(INVALID) + 1
    print(f"{total - failures}/{total} JSON data checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
