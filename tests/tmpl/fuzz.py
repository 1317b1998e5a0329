#!/usr/bin/python3
"""Robustness test: msc_tmpl_render must never crash or hang.

usage: fuzz.py MSC_TMPL_RENDER [--count N] [--seed S]

Mutates the golden case templates and the snippets (random deletions, duplications, insertions
of template syntax fragments, truncation) and renders each mutant. Every run must finish within
the timeout with exit status 0, or 1 with a message "error: <file>:..." on stderr. Exits 1 on
the first crash, hang or malformed error.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

import differential
import gen_exprs

HERE = os.path.dirname(os.path.abspath(__file__))
FRAGMENTS = ["{{", "}}", "{%", "%}", "{#", "#}", "-", "(", ")", "[", "]", "{", "}", "'", '"', "\\", "|", ".", ",",
             " if ", " else ", " for x in ", "endfor", "endif", "macro", "call", "caller()", "loop.", "**", "//",
             "~", " is ", " not ", "1e309", "99999999999999999999", "\x00", "\xff", "é", "\n", "{% raw %}",
             "{% endraw %}", "range(10**6)", "*", "=", ":", "0", "-1", "none", "ns.x", "namespace()",
             "{% include 't.j2' %}", "{% import 't.j2' as m %}", "|join", "|map('x')", "%s",
             "{% extends 't.j2' %}", "{% block b %}", "{% endblock %}", " scoped", " required", " recursive",
             "loop(", "super()", "self.b()", "{% block b %}{{ self.b() }}{% endblock %}"]


def sources():
    out = list(differential.load_snippets())
    cases = os.path.join(HERE, "cases")
    for case in sorted(os.listdir(cases)):
        with open(os.path.join(cases, case, "template.j2"), encoding="utf-8") as fh:
            out.append(fh.read())
    return out


def mutate(r, s):
    for _ in range(r.randint(1, 4)):
        op = r.randrange(5)
        i = r.randrange(len(s) + 1)
        if op == 0 and s:
            j = min(len(s), i + r.randint(1, 8))
            s = s[:i] + s[j:]
        elif op == 1:
            s = s[:i] + r.choice(FRAGMENTS) + s[i:]
        elif op == 2 and s:
            j = min(len(s), i + r.randint(1, 20))
            s = s[:i] + s[i:j] * r.randint(2, 4) + s[i:]
        elif op == 3:
            s = s[:i]
        else:
            k = r.randrange(len(s) + 1)
            s = s[:i] + s[min(i, k):max(i, k)] + s[i:]
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--seed", type=int, default=99)
    args = ap.parse_args()
    r = random.Random(args.seed)
    base = sources()
    ok = errors = 0
    with tempfile.TemporaryDirectory() as tmp:
        data_path = os.path.join(tmp, "data.json")
        with open(data_path, "w", encoding="utf-8") as fh:
            json.dump(gen_exprs.DATA, fh)
        tpath = os.path.join(tmp, "t.j2")
        for i in range(args.count):
            src = mutate(r, r.choice(base))
            with open(tpath, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
                fh.write(src)
            try:
                p = subprocess.run([args.binary, tpath, data_path], capture_output=True, timeout=20)
            except subprocess.TimeoutExpired:
                print(f"HANG on mutant #{i}: {src!r}")
                return 1
            err = p.stderr.decode("utf-8", "replace")
            if p.returncode == 0:
                ok += 1
            elif p.returncode == 1 and err.startswith("error: ") and "AddressSanitizer" not in err and "runtime error" not in err:
                errors += 1
            else:
                print(f"CRASH (exit {p.returncode}) on mutant #{i}: {src!r}\n{err[-3000:]}")
                return 1
    print(f"{args.count} mutants: {ok} rendered, {errors} clean errors, no crash or hang")
    return 0


if __name__ == "__main__":
    sys.exit(main())
