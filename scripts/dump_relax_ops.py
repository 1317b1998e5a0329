#!/usr/bin/env python3
"""Dumps every public ``relax.op.*`` function of the installed TVM with its parameters (name,
default as repr, or null when required) and source file:line -- the same shape as
``../shared/reference/relax_ops_v020_all.json`` (TVM v0.20.0) -- so that the static relax checker
(tests/relax/relax_check.py) knows the newest release's API too.

    <venv python> scripts/dump_relax_ops.py > tests/relax/relax_ops_newest.json

Run with the project's venv (scripts/install_venv.sh: the pinned apache-tvm wheel). Entries are
sorted by name; "source" names the TVM version, e.g. "apache-tvm 0.27.0.post1: tvm/relax/op/unary.py:26".
"""
import importlib.metadata
import inspect
import json
import os
import pkgutil
import sys

import tvm
from tvm import relax


def public_functions():
    """{"relax.op.<sub>.<name>": function} over relax.op and its subpackages (public names)."""
    found = {}
    root = relax.op
    modules = [("relax.op", root)]
    for info in pkgutil.walk_packages(root.__path__, "tvm.relax.op."):
        short = info.name[len("tvm."):]
        if any(part.startswith("_") for part in short.split(".")):
            continue
        try:
            modules.append((short, __import__(info.name, fromlist=["_"])))
        except ImportError:
            continue
    for prefix, module in modules:
        for name, value in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(value):
                continue
            if not value.__module__.startswith("tvm.relax.op"):
                continue  # re-exports of helpers from elsewhere
            found.setdefault("%s.%s" % (prefix, name), value)
    return found


def main():
    version = importlib.metadata.version("apache-tvm")
    base = os.path.dirname(os.path.dirname(tvm.__file__))
    entries = []
    for func, fn in sorted(public_functions().items()):
        params = []
        for p in inspect.signature(fn).parameters.values():
            if p.kind == p.VAR_POSITIONAL:
                params.append(["*" + p.name, None])
            elif p.kind == p.VAR_KEYWORD:
                params.append(["**" + p.name, None])
            else:
                if p.kind == p.KEYWORD_ONLY and not any(q[0] == "*" or q[0].startswith("*") for q in params):
                    params.append(["*", None])
                params.append([p.name, None if p.default is p.empty else repr(p.default)])
        code = fn.__code__
        source = "apache-tvm %s: %s:%d" % (version, os.path.relpath(code.co_filename, base), code.co_firstlineno)
        entries.append({"func": func, "params": params, "source": source})
    json.dump(entries, sys.stdout, indent=1)
    sys.stdout.write("\n")
    print("%d relax.op functions of apache-tvm %s" % (len(entries), version), file=sys.stderr)


if __name__ == "__main__":
    main()
