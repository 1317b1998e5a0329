#!/usr/bin/python3
"""Regenerates the golden outputs of the template engine's test cases with Python's jinja2.

usage: make_expected.py [--check] [CASE...]

For every folder cases/<case>/ (template.j2, data.json, optional extra .j2 files) renders
template.j2 with jinja2.Environment(loader=FileSystemLoader(<case dir>),
undefined=StrictUndefined) -- Jinja2's default settings otherwise -- and writes expected.txt
(UTF-8, bytes exactly as rendered). With --check nothing is written; the script exits 1 when
an expected.txt is missing or differs from what jinja2 renders now.
"""
import argparse
import json
import os
import sys

import jinja2

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")


def render(folder):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), undefined=jinja2.StrictUndefined)
    with open(os.path.join(folder, "data.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    return env.get_template("template.j2").render(data).encode("utf-8")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="verify instead of writing")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    names = args.cases or sorted(os.listdir(CASES))
    bad = 0
    for name in names:
        folder = os.path.join(CASES, name)
        try:
            out = render(folder)
        except Exception as e:  # noqa: BLE001 - a case must render; report which one does not
            print(f"{name}: jinja2 failed: {type(e).__name__}: {e}")
            bad += 1
            continue
        path = os.path.join(folder, "expected.txt")
        if args.check:
            try:
                with open(path, "rb") as fh:
                    current = fh.read()
            except FileNotFoundError:
                current = None
            if current != out:
                print(f"{name}: expected.txt is {'missing' if current is None else 'out of date'}")
                bad += 1
        else:
            with open(path, "wb") as fh:
                fh.write(out)
    print(f"{len(names) - bad}/{len(names)} cases {'match jinja2' if args.check else 'written'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
