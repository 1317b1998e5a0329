"""Runs the golden harness (`test_model.main([])`) of many generated projects (relax, torch,
numpy) in one Python process, so that TVM or torch is imported once rather than once per project
(importing the newest apache-tvm wheel or torch 2.x takes seconds; most per-op projects run in well
under that).

    <python> run_golden_batch.py [--args JSON_LIST] PROJECT_DIR [PROJECT_DIR ...]

Library use (from the tests, with any Python): run_batches(python, dirs, env) runs the dirs in
parallel batches under `python` and returns {dir: record}.

Each project runs as `python3 test_model.py [args]` would: its folder is the working directory and
first on sys.path, its `model` / `test_model` modules are imported afresh, and main(args) is called. Prints
one JSON line per project to stdout: {"dir", "rc" (main's return value; 3 for an exception),
"stdout", "stderr" (the traceback for an exception)}. The process's own exit status is 0 when it
ran every project (whatever they returned).
"""
import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
import traceback


def run_one(project_dir, args=()):
    out, err = io.StringIO(), io.StringIO()
    saved_path, saved_cwd = list(sys.path), os.getcwd()
    for name in ("model", "test_model"):
        sys.modules.pop(name, None)
    rc = 3
    try:
        os.chdir(project_dir)
        sys.path.insert(0, project_dir)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                test_model = importlib.import_module("test_model")
                rc = int(test_model.main(list(args)))
            except SystemExit as e:  # argparse or the harness exiting
                rc = e.code if isinstance(e.code, int) else 3
            except Exception:  # noqa: BLE001  (reported, the batch goes on)
                traceback.print_exc()
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        for name in ("model", "test_model"):
            sys.modules.pop(name, None)
    return {"dir": project_dir, "rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()[-6000:]}


def run_batches(python, dirs, env, shards=2, timeout=3600, args=()):
    """Runs this script under `python` over `dirs` split into `shards` parallel batches, each
    harness with the arguments `args` (e.g. ["--save-outputs", "out.safetensors"], relative to the
    project's folder); returns {dir: record} (the records main() prints). Raises RuntimeError when a
    batch itself fails."""
    dirs = [os.path.abspath(d) for d in dirs]
    head = ["--args", json.dumps(list(args))] if args else []
    procs = [subprocess.Popen([python, os.path.abspath(__file__), *head, *dirs[i::shards]], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for i in range(shards) if dirs[i::shards]]
    records = {}
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError("run_golden_batch.py failed (exit %d):\n%s" % (proc.returncode, err[-6000:]))
        for line in out.splitlines():
            record = json.loads(line)
            records[record["dir"]] = record
    return records


def main(argv):
    args = []
    if argv[:1] == ["--args"]:
        args, argv = json.loads(argv[1]), argv[2:]
    for project_dir in argv:
        print(json.dumps(run_one(os.path.abspath(project_dir), args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
