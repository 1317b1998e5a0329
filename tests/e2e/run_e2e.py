"""End to end: an example exported from PyTorch, generated for every backend the suite finds
(tests/common/backends.py: each templates/<name>/backend.yaml with a `test` section) and the
generated project's own golden test run.

    run_e2e.py export EXAMPLE --out ROOT
        examples/run_example.sh without a binary: ROOT/EXAMPLE/export (graph.json,
        weights.safetensors, golden/), checked against the reference interpreter
    run_e2e.py run EXAMPLE --out ROOT [--precision P]
        every backend whose `test.merge` is false (and, with --precision, that offers P): generate
        ROOT/EXAMPLE/export into ROOT/EXAMPLE/<backend>[_P] and run its golden test
    run_e2e.py merged EXAMPLE... --out ROOT [--precision P]
        every backend whose `test.merge` is true: the examples' exports merged into one graph
        (ROOT/merged[_P]), one project ROOT/merged[_P]/<backend>, one build, one run; a backend
        without dynamic_shapes gets the static examples only

MSC_CODEGEN: the msc-codegen binary; MSC_PYTHON (this interpreter): Debian's stack + safetensors.
Exit status 0 when every project passes. Backends' extra environment (test.env; vulkan:
MSC_VK_VALIDATION=1, the validation layer) comes from backend.yaml.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import backends  # noqa: E402
from merged import run_merged  # noqa: E402

BINARY = os.environ.get("MSC_CODEGEN", os.path.join(ROOT, "build", "msc-codegen"))


def export(example, out):
    env = dict(os.environ, MSC_PYTHON=sys.executable)
    subprocess.run(["bash", os.path.join(ROOT, "examples", "run_example.sh"), example, "", str(out)], check=True,
                   env=env)


def graph_of(export_dir):
    return json.loads((export_dir / "graph.json").read_text())


def selected(merge, precision):
    found = [b for b in backends.discover(BINARY) if b.merge == merge]
    return [b for b in found if precision is None or precision in b.precisions]


def run(example, out, precision):
    src = out / example / "export"
    failed = []
    for b in selected(False, precision):
        if not backends.takes(b, graph_of(src)):
            print("== %s: dynamic shapes; %s takes static graphs only" % (example, b.name))
            continue
        project = out / example / (b.name + ("_" + precision if precision else ""))
        print("== generate %s for %s -> %s" % (example, b.name, project), flush=True)
        gen = subprocess.run([BINARY, "generate", "--graph", str(src / "graph.json"), "--weights",
                              str(src / "weights.safetensors"), "--golden", str(src / "golden"), "--backend", b.name,
                              "--out", str(project), "--force"] + (["--precision", precision] if precision else []),
                             capture_output=True, text=True)
        print(gen.stderr, end="")
        if gen.returncode != 0:
            failed.append(b.name)
            continue
        proc = backends.run_project(b, project)
        print(proc.stdout[-4000:] + proc.stderr[-4000:], flush=True)
        if proc.returncode != 0:
            failed.append(b.name)
    return failed


def merged(examples, out, precision):
    failed = []
    work = out / ("merged" + ("_" + precision if precision else ""))
    for b in selected(True, precision):
        folders = [out / e / "export" for e in examples]
        folders = [f for f in folders if backends.takes(b, graph_of(f))]
        print("== %s: %d examples merged into one project (%s)" % (b.name, len(folders), work / b.name), flush=True)
        try:
            run_merged(BINARY, b, folders, work, "e2e", ["--precision", precision] if precision else [])
        except AssertionError as e:
            print(str(e))
            failed.append(b.name)
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["export", "run", "merged"])
    ap.add_argument("examples", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--precision")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    if args.what == "export":
        for e in args.examples:
            export(e, out)
        return 0
    if args.what == "run":
        failed = [f for e in args.examples for f in run(e, out, args.precision)]
    else:
        failed = merged(args.examples, out, args.precision)
    print("== failed: %s" % ", ".join(failed) if failed else "== ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
