#!/usr/bin/python3
"""Runs a generated Python project's golden test, `test_model.main(argv)`, once per case inside this
one process (torch or TVM is imported once, not once per case) and records what each run did.

    run_cases.py PROJECT_DIR CASES_JSON RESULTS_JSON

CASES_JSON: [{"id": str, "argv": [str, ...]}, ...] (argv for main, e.g. ["--weights", FILE]).
RESULTS_JSON: {"<id>": {"status": int or null, "stdout": str, "stderr": str,
"escaped": null or the traceback of an exception that escaped main()}}. An escaped exception is
what a user would see as a Python traceback instead of the one-line error: the caller fails on it.
Run it with the environment the project needs (PYTHONPATH for TVM or the fake TVM).
"""
import contextlib
import io
import json
import os
import sys
import traceback


def main() -> int:
    project, cases_path, results_path = sys.argv[1:4]
    sys.path.insert(0, os.path.abspath(project))
    os.chdir(project)
    import test_model  # noqa: E402  (the project's own harness)

    with open(cases_path, encoding="utf-8") as f:
        cases = json.load(f)
    results = {}
    for case in cases:
        out, err = io.StringIO(), io.StringIO()
        status, escaped = None, None
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = test_model.main(case["argv"])
            except SystemExit as e:  # argparse, or a sys.exit() inside the harness
                status = e.code if isinstance(e.code, int) else 1
            except BaseException:  # noqa: B902 -- exactly what the test is looking for
                escaped = traceback.format_exc()
        results[case["id"]] = {"status": status, "stdout": out.getvalue(), "stderr": err.getvalue(), "escaped": escaped}
    with open(results_path, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
