#!/usr/bin/python3
"""Differential test of msc's template engine against Python's jinja2.

usage: differential.py MSC_TMPL_RENDER [--random N] [--seed S] [--only NAME] [-v]

1. Renders every golden case folder cases/<case>/ (template.j2 + data.json, plus included files)
   with jinja2 (FileSystemLoader(case dir), StrictUndefined, default settings) and with the
   msc_tmpl_render binary, and compares the output bytes.
2. Renders every snippet of snippets.txt (edge cases, many of them errors) with both; when
   jinja2 raises, msc_tmpl_render must fail too (exit status 1).
3. Renders N (default 300) randomly generated single-expression templates (gen_exprs.py, fixed
   seed) with both, with the same rule for errors.
Exits 1 when anything differs.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import jinja2

import gen_exprs

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")


def jinja_render(folder, name, data):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), undefined=jinja2.StrictUndefined)
    try:
        return env.get_template(name).render(data).encode("utf-8"), None
    except Exception as e:  # noqa: BLE001 - any jinja2/Python error counts as "fails"
        return None, f"{type(e).__name__}: {e}"


def ours_render(binary, template_path, data_path):
    p = subprocess.run([binary, template_path, data_path], capture_output=True, timeout=60)
    if p.returncode == 0:
        return p.stdout, None
    return None, p.stderr.decode("utf-8", "replace").strip() or f"exit status {p.returncode}"


def compare(label, expected, exp_err, got, got_err, verbose):
    if exp_err is not None:
        if got_err is not None:
            if verbose:
                print(f"ok   {label}: both fail\n       jinja2: {exp_err}\n       msc:    {got_err}")
            return True
        print(f"FAIL {label}: jinja2 fails ({exp_err}) but msc rendered {got!r}")
        return False
    if got_err is not None:
        print(f"FAIL {label}: jinja2 rendered {expected!r} but msc failed: {got_err}")
        return False
    if got != expected:
        print(f"FAIL {label}:\n  jinja2: {expected!r}\n  msc:    {got!r}")
        return False
    if verbose:
        print(f"ok   {label}")
    return True


def load_snippets():
    """Templates of snippets.txt: blocks separated by lines "%%%%"; '#' lines after a separator
    are comments; the newline before a separator belongs to the separator."""
    with open(os.path.join(HERE, "snippets.txt"), encoding="utf-8", newline="") as fh:
        text = fh.read()
    out = []
    for block in text.split("\n%%%%\n")[1:]:
        lines = block.split("\n")
        while lines and lines[0].startswith("#"):
            lines.pop(0)
        out.append("\n".join(lines))
    if out and out[-1].endswith("\n"):
        out[-1] = out[-1][:-1]
    return out


def run_inline(binary, sources, label, verbose):
    """Renders each template source with both engines (data: gen_exprs.DATA)."""
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        data_path = os.path.join(tmp, "data.json")
        with open(data_path, "w", encoding="utf-8") as fh:
            json.dump(gen_exprs.DATA, fh)
        for i, src in enumerate(sources):
            tpath = os.path.join(tmp, "t.j2")
            with open(tpath, "w", encoding="utf-8", newline="") as fh:
                fh.write(src)
            expected, exp_err = jinja_render(tmp, "t.j2", gen_exprs.DATA)
            got, got_err = ours_render(binary, tpath, data_path)
            failures += not compare(f"{label} #{i} {src!r}", expected, exp_err, got, got_err, verbose)
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--random", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--only", default=None, help="run only the case folder with this name")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    failures = total = 0

    for case in sorted(os.listdir(CASES)) if os.path.isdir(CASES) else []:
        if args.only and case != args.only:
            continue
        folder = os.path.join(CASES, case)
        with open(os.path.join(folder, "data.json"), encoding="utf-8") as fh:
            data = json.load(fh)
        expected, exp_err = jinja_render(folder, "template.j2", data)
        got, got_err = ours_render(binary, os.path.join(folder, "template.j2"), os.path.join(folder, "data.json"))
        total += 1
        failures += not compare(f"case {case}", expected, exp_err, got, got_err, args.verbose)

    if args.only is None:
        snippets = load_snippets()
        total += len(snippets)
        failures += run_inline(binary, snippets, "snippet", args.verbose)
        if args.random > 0:
            total += args.random
            failures += run_inline(binary, gen_exprs.generate(args.random, args.seed), "random", args.verbose)

    print(f"{total - failures}/{total} differential checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
