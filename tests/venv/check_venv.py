"""Checks one of the project's Python environments against its pins (ctest `venv`, `python_debian`).

    <venv python> check_venv.py scripts/requirements-venv.txt
    <MSC_PYTHON>  check_venv.py scripts/requirements-debian.txt --debian

Every `name==version` line of the pins file must be installed at exactly that version. Today's
venv: torch must be 2.x and numpy 2.x, and the apache-tvm wheel must have LLVM (relax.build(...,
"llvm") runs on a CPU). --debian: torch must be Debian's 1.x and numpy 1.x (the old tier the
generated torch projects still support). Prints the versions; exit status 1 with every mismatch
listed otherwise.
"""
import importlib.metadata as md
import re
import sys


def main(pins_path, debian=False):
    problems = []
    with open(pins_path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", line)
            if not m:
                problems.append("%s: %r is not an exact pin (name==version)" % (pins_path, line))
                continue
            name, want = m.groups()
            try:
                got = md.version(name)
            except md.PackageNotFoundError:
                problems.append("%s %s: not installed" % (name, want))
                continue
            if got != want:
                problems.append("%s: %s installed, pinned %s" % (name, got, want))
    import numpy
    import torch
    if debian:
        print("python %s, torch %s, numpy %s" % (sys.version.split()[0], torch.__version__, numpy.__version__))
        if not torch.__version__.startswith("1.") or not numpy.__version__.startswith("1."):
            problems.append("torch %s / numpy %s are not Debian's 1.x: MSC_PYTHON must be the Debian tier "
                            "(scripts/install_venv.sh debian)" % (torch.__version__, numpy.__version__))
        for p in problems:
            print("error: " + p, file=sys.stderr)
        return 1 if problems else 0
    import tvm
    print("python %s, torch %s, numpy %s, tvm %s" % (sys.version.split()[0], torch.__version__, numpy.__version__,
                                                    tvm.__version__))
    if not torch.__version__.startswith("2."):
        problems.append("torch %s is not 2.x" % torch.__version__)
    if not numpy.__version__.startswith("2."):
        problems.append("numpy %s is not 2.x" % numpy.__version__)
    if not tvm.runtime.enabled("llvm"):
        problems.append("tvm %s has no LLVM target" % tvm.__version__)
    for p in problems:
        print("error: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], debian="--debian" in sys.argv[2:]))
