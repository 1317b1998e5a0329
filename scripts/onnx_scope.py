#!/usr/bin/env python3
"""Compute the "MSC scope" of the ONNX backend test suite (tests/onnx/scope.json).

What: for every test under /usr/share/libonnx-testdata/data/{node,pytorch-converted,
pytorch-operator,simple} (Debian's libonnx-testdata 1.12.0; 1,072 tests, each with a model.onnx)
this records, per test (key "<folder>/<test>"):

    folder, name     where the test lives
    opset            the model's opset of the default domain ("" or "ai.onnx"); null if none
    ir_version       ModelProto.ir_version
    onnx_ops         sorted unique op_type of the top-level graph's nodes; ops of another domain
                     are written "<domain>:<op_type>" (nodes inside If/Loop/Scan bodies not listed)
    fp32             every graph input (initializers listed as inputs excluded) and every graph
                     output is a tensor of elem_type FLOAT
    relax            "ok" when TVM v0.20's relax ONNX frontend
                     ``tvm.relax.frontend.onnx.from_onnx(model, shape_dict, keep_params_in_input=False)``
                     returned, else "<ExceptionType>: <first line of the message>" ("Timeout: ..."
                     past --timeout seconds, "Crash: ..." when the process died)
    relax_ops        sorted set of the relax ops called anywhere in the IRModule's "main" (all
                     bindings, nested functions and If branches included), "relax." prefix
                     stripped ("relax.nn.conv2d" -> "nn.conv2d"), which is exactly how MSC's
                     GraphBuilder named a node's optype (src/contrib/msc/core/ir/graph_builder.cc);
                     call_tir / call_dps_packed / call_pure_packed are written "call_tir:<prim_func>",
                     "call_dps_packed:<symbol>", ...; a call of a module function "call:<name>".
                     Plumbing (Tuple, TupleGetItem, ShapeExpr, Constant, PrimValue) is no call, so
                     it is not listed
    msc              relax == "ok" and every relax op is an optype MSC's relax codegen supported
                     (/work/shared/reference/msc_optypes_relax.txt, 121 optypes)
    msc_missing      the relax ops not in that list
    in_scope         fp32 and msc

The definition of "MSC scope" is therefore external: the test suite (ONNX 1.12), TVM v0.20's own
ONNX frontend, and the optypes MSC v0.20 could emit code for. A test whose model the frontend
folds to no op at all (Identity, Constant, Clip without bounds) is in scope with relax_ops == [].

Input shapes given to the frontend are the model's own static shapes; a dimension the model
leaves symbolic (dim_param or unset) is taken from test_data_set_0/input_<i>.pb, so every
conversion sees static shapes. Input dtypes are the model's.

How: the conversions run in one niced worker subprocess at a time (``--worker TODO``: the test
dirs listed in the file TODO, one JSON line per test on stdout), each under
signal.alarm(--timeout); the parent kills a worker that stays silent past the timeout (+30 s) and
restarts one after the test that hung or crashed it (recorded as a failure, "Timeout: ..." /
"Crash: ..."). PYTHONHASHSEED is fixed for the worker so messages that print Python sets are
stable; memory addresses and log timestamps in messages are masked, so two runs give the same
file but for the date in "source". Run (a few seconds; the per-test guards are for safety):

    MSC_TVM_HOME=/work/tvm PYTHONPATH=/work/tvm/python TVM_LIBRARY_PATH=/work/tvm/build \\
        nice /usr/bin/python3 scripts/onnx_scope.py [--out tests/onnx/scope.json]

It writes compact JSON, one test per line, keys sorted, and prints per-folder counts
(total / fp32 / relax ok / msc / in_scope) and the most common reasons fp32 tests fall out.
"""
import argparse
import collections
import datetime
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = "/usr/share/libonnx-testdata/data"
FOLDERS = ("node", "pytorch-converted", "pytorch-operator", "simple", "real")
OPTYPES = "/work/shared/reference/msc_optypes_relax.txt"
DEFAULT_OUT = os.path.join(ROOT, "tests", "onnx", "scope.json")

# relax ops whose first argument names the callee (a PrimFunc GlobalVar or an ExternFunc)
_CALLEE_OPS = {
    "relax.call_tir": "call_tir",
    "relax.call_tir_inplace": "call_tir",
    "relax.call_tir_with_grad": "call_tir",
    "relax.call_dps_packed": "call_dps_packed",
    "relax.call_pure_packed": "call_pure_packed",
    "relax.call_inplace_packed": "call_inplace_packed",
}


# ---- ONNX facts (no TVM needed) ---------------------------------------------------------------

def _default_opset(model):
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    return None


def _onnx_ops(model):
    ops = set()
    for node in model.graph.node:
        dom = node.domain
        ops.add(node.op_type if dom in ("", "ai.onnx") else "%s:%s" % (dom, node.op_type))
    return sorted(ops)


def _graph_inputs(model):
    """Graph inputs that are real inputs (not initializers listed as inputs), in order."""
    inits = {t.name for t in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in inits]


def _is_fp32(vi):
    import onnx
    t = vi.type
    return t.HasField("tensor_type") and t.tensor_type.elem_type == onnx.TensorProto.FLOAT


def _static_shapes(model, test_dir):
    """{input name: [dims]} from the model, symbolic dims filled from test_data_set_0."""
    import onnx
    shapes = {}
    for i, vi in enumerate(_graph_inputs(model)):
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None
                for d in vi.type.tensor_type.shape.dim]
        if None in dims:
            pb = os.path.join(test_dir, "test_data_set_0", "input_%d.pb" % i)
            if not os.path.exists(pb):
                continue
            tensor = onnx.TensorProto()
            with open(pb, "rb") as f:
                tensor.ParseFromString(f.read())
            if len(tensor.dims) != len(dims):
                continue
            dims = list(tensor.dims)
        shapes[vi.name] = [int(d) for d in dims]
    return shapes


# ---- relax facts --------------------------------------------------------------------------------

def _relax_ops(mod):
    """Sorted names of the ops called in mod["main"] and the relax functions it calls."""
    from tvm import ir, relax

    names, todo, seen = set(), [mod.get_global_var("main")], set()

    def visit(expr):
        if not isinstance(expr, relax.Call):
            return
        op = expr.op
        if isinstance(op, ir.Op):
            if op.name in _CALLEE_OPS:
                callee = expr.args[0]
                label = (callee.name_hint if isinstance(callee, ir.GlobalVar)
                         else getattr(callee, "global_symbol", str(callee)))
                names.add("%s:%s" % (_CALLEE_OPS[op.name], label))
            else:
                names.add(op.name[len("relax."):] if op.name.startswith("relax.") else op.name)
        elif isinstance(op, ir.GlobalVar):
            names.add("call:%s" % op.name_hint)
            todo.append(op)
        elif isinstance(op, relax.ExternFunc):
            names.add("extern:%s" % op.global_symbol)
        # a call of a local Var / Function: its body is visited where it is bound

    while todo:
        gv = todo.pop()
        if gv.name_hint in seen:
            continue
        seen.add(gv.name_hint)
        func = mod[gv]
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, visit)
    return sorted(names)


def _first_line(exc):
    """'<Type>: <first meaningful line>' of an exception, addresses masked, at most 300 chars."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if lines and lines[0].startswith("Traceback"):
        # TVM errors carry the C++/Python traceback first; the message is the first line
        # after the frames ("<Kind>Error: ..." or the check that failed).
        body = [ln for ln in lines[1:]
                if not re.match(r"^(\[bt\]|\d+:|File \"|at |\^)", ln)]
        lines = body or lines
    line = lines[0] if lines else ""
    prefix = type(exc).__name__ + ": "
    if line.startswith(prefix):  # TVM repeats the error kind in the message
        line = line[len(prefix):]
    line = re.sub(r"0x[0-9a-fA-F]+", "0x?", line)
    line = re.sub(r"\[\d\d:\d\d:\d\d\] ", "", line)  # TVM log timestamps
    if len(line) > 300:
        line = line[:297] + "..."
    return "%s: %s" % (type(exc).__name__, line) if line else type(exc).__name__


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout()


def _onnx_record(test_dir):
    """(model, the ONNX part of the test's record)."""
    import onnx
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    return model, {
        "folder": os.path.basename(os.path.dirname(test_dir)),
        "name": os.path.basename(test_dir),
        "opset": _default_opset(model),
        "ir_version": int(model.ir_version),
        "onnx_ops": _onnx_ops(model),
        "fp32": all(_is_fp32(vi) for vi in _graph_inputs(model))
        and all(_is_fp32(vi) for vi in model.graph.output),
    }


def _examine(test_dir, optypes, timeout):
    """The record of one test (see the module docstring)."""
    from tvm.relax.frontend.onnx import from_onnx

    model, rec = _onnx_record(test_dir)
    ops = []
    signal.alarm(timeout)
    try:
        mod = from_onnx(model, shape_dict=_static_shapes(model, test_dir),
                        keep_params_in_input=False)
        ops = _relax_ops(mod)
        relax_status = "ok"
    except _Timeout:
        relax_status = "Timeout: from_onnx ran over %d s" % timeout
    except BaseException as exc:  # noqa: B036 -- the frontend raises anything, even SystemExit
        relax_status = _first_line(exc)
    finally:
        signal.alarm(0)
    rec["relax"] = relax_status
    rec["relax_ops"] = ops
    missing = [op for op in ops if op not in optypes]
    rec["msc_missing"] = missing
    rec["msc"] = relax_status == "ok" and not missing
    rec["in_scope"] = rec["fp32"] and rec["msc"]
    return rec


def _read_optypes():
    with open(OPTYPES) as f:
        return {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}


def worker(todo, timeout):
    """For each test dir listed in the file todo write {"start": dir}, then {"record": ...},
    one JSON object a line, on stdout."""
    import warnings
    warnings.simplefilter("ignore")
    import tvm  # noqa: F401 -- fail here, before the first test, if TVM is missing
    signal.signal(signal.SIGALRM, _on_alarm)
    optypes = _read_optypes()
    # the protocol gets its own copy of fd 1; whatever the frontend (Python or C++) prints to
    # stdout goes to stderr instead
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with open(todo) as f:
        tests = [ln.strip() for ln in f if ln.strip()]
    for test_dir in tests:
        out.write(json.dumps({"start": test_dir}) + "\n")
        out.flush()
        rec = _examine(test_dir, optypes, timeout)
        out.write(json.dumps({"record": rec}) + "\n")
        out.flush()


# ---- parent -------------------------------------------------------------------------------------

def _onnx_only_record(test_dir, status):
    """Record of a test whose worker hung or died: the ONNX facts, relax = status."""
    rec = _onnx_record(test_dir)[1]
    rec.update(relax=status, relax_ops=[], msc_missing=[], msc=False, in_scope=False)
    return rec


def _lines(fd, deadline):
    """Yield the lines a worker writes on fd; None when nothing came before deadline()."""
    buf = b""
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield line.decode()
        wait = deadline() - time.monotonic()
        if wait <= 0 or not select.select([fd], [], [], wait)[0]:
            yield None
            return
        chunk = os.read(fd, 65536)
        if not chunk:  # EOF
            return
        buf += chunk


def _run_all(tests, timeout, log):
    """Records for all test dirs, through --worker subprocesses, one at a time, restarted
    after the test on which one hung (no answer within timeout + 30 s) or died."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    records, pending = {}, list(tests)
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as todo:
        while pending:
            todo.seek(0)
            todo.truncate()
            todo.write("".join(t + "\n" for t in pending))
            todo.flush()
            proc = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--worker", todo.name,
                 "--timeout", str(timeout)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, env=env, cwd="/",
                preexec_fn=lambda: os.nice(10))
            current, failed = None, None
            limit = [time.monotonic() + timeout + 120]  # the first answer waits for TVM's import
            for line in _lines(proc.stdout.fileno(), lambda: limit[0]):
                if line is None:
                    proc.kill()
                    failed = "Timeout: no answer within %d s (worker killed)" % (timeout + 30)
                    break
                msg = json.loads(line)
                if "start" in msg:
                    current = msg["start"]
                    limit[0] = time.monotonic() + timeout + 30
                else:
                    records[current] = msg["record"]
                    pending.remove(current)
                    current = None
                    if len(records) % 100 == 0:
                        print("  %d / %d" % (len(records), len(tests)), file=sys.stderr,
                              flush=True)
            rc = proc.wait()
            proc.stdout.close()
            if current is None:
                if pending:
                    sys.exit("error: worker stopped (%d) outside a test; see %s" % (rc, log.name))
                break
            if failed is None:
                failed = "Crash: worker %s" % (
                    "killed by %s" % signal.Signals(-rc).name if rc < 0 else "exit code %d" % rc)
            records[current] = _onnx_only_record(current, failed)
            pending.remove(current)
    return records


def _write(records, out_path, timeout):
    import onnx
    import tvm
    suite = ("Debian libonnx-testdata 1.12.0" if DATA == "/usr/share/libonnx-testdata/data"
             else "tests/onnx/testdata.py's %s" % DATA.replace(os.path.expanduser("~"), "~"))
    source = (
        "scripts/onnx_scope.py on %s: ONNX backend tests of SUITE "
        "(onnx %s), relax frontend of TVM %s "
        "(tvm.relax.frontend.onnx.from_onnx, keep_params_in_input=False, static input shapes, "
        "%d s per test), MSC relax optypes from msc_optypes_relax.txt. "
        "in_scope = fp32 and msc; see the script's docstring and docs/onnx-scope.md"
        % (datetime.date.today().isoformat(), onnx.__version__, tvm.__version__, timeout)).replace("SUITE", suite)
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        f.write('{"source":%s,\n"tests":{\n' % json.dumps(source))
        keys = sorted(records)
        for i, key in enumerate(keys):
            f.write("%s:%s%s\n" % (json.dumps(key), json.dumps(
                records[key], sort_keys=True, separators=(",", ":")),
                "," if i + 1 < len(keys) else ""))
        f.write("}}\n")


def _summary(records):
    rows = collections.OrderedDict((f, collections.Counter()) for f in FOLDERS)
    for rec in records.values():
        c = rows[rec["folder"]]
        c["total"] += 1
        c["fp32"] += rec["fp32"]
        c["relax ok"] += rec["relax"] == "ok"
        c["msc"] += rec["msc"]
        c["in_scope"] += rec["in_scope"]
    cols = ("total", "fp32", "relax ok", "msc", "in_scope")
    print("%-18s %s" % ("folder", " ".join("%8s" % c for c in cols)))
    tot = collections.Counter()
    for folder, c in rows.items():
        tot.update(c)
        print("%-18s %s" % (folder, " ".join("%8d" % c[k] for k in cols)))
    print("%-18s %s" % ("all", " ".join("%8d" % tot[k] for k in cols)))
    print("node in_scope: %d" % rows["node"]["in_scope"])

    empty = sum(1 for r in records.values() if r["in_scope"] and not r["relax_ops"])
    print("in scope with no relax op left (the frontend folded the graph away): %d" % empty)

    # Why fp32 tests fall out: grouped by the test's ONNX op types (graphs of more than three
    # op types, the *_expanded function bodies, are one group), each with its reasons.
    out = [r for r in records.values() if r["fp32"] and not r["msc"]]
    failed = sum(1 for r in out if r["relax"] != "ok")
    print("\nfp32 tests out of scope: %d (frontend failed: %d; relax ops outside MSC's "
          "optypes: %d)" % (len(out), failed, len(out) - failed))
    groups = collections.defaultdict(collections.Counter)
    for r in out:
        ops = r["onnx_ops"]
        key = " + ".join(ops) if len(ops) <= 3 else "(graphs of >3 op types)"
        why = ("not in MSC: " + ", ".join(r["msc_missing"]) if r["relax"] == "ok"
               else "frontend: " + r["relax"])
        groups[key][why[:110]] += 1
    for key, whys in sorted(groups.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
        print("  %4d  %s" % (sum(whys.values()), key))
        for why, n in sorted(whys.items(), key=lambda kv: (-kv[1], kv[0])):
            print("          %3d  %s" % (n, why))


def main():
    global DATA
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="scope JSON to write (%(default)s)")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per conversion")
    ap.add_argument("--log", default="/tmp/onnx_scope.log", help="worker stderr (%(default)s)")
    ap.add_argument("--only", help="regex on '<folder>/<test>': examine only these (debugging)")
    ap.add_argument("--worker", metavar="TODO", help=argparse.SUPPRESS)
    ap.add_argument("--data", default=DATA, help="suite folder (%(default)s, or tests/onnx/testdata.py's output)")
    args = ap.parse_args()
    DATA = os.path.abspath(args.data)
    if args.worker:
        worker(args.worker, args.timeout)
        return
    if not os.environ.get("MSC_TVM_HOME") and "tvm" not in os.environ.get("PYTHONPATH", ""):
        try:
            import tvm  # noqa: F401  an installed apache-tvm (the project venv)
        except ImportError:
            sys.exit("error: run with a Python that has apache-tvm, or set MSC_TVM_HOME, PYTHONPATH and "
                     "TVM_LIBRARY_PATH to a TVM build")
    home = os.environ.get("MSC_TVM_HOME")
    if home:
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (os.path.join(home, "python"), os.environ.get("PYTHONPATH")) if p)
        os.environ.setdefault("TVM_LIBRARY_PATH", os.path.join(home, "build"))
        sys.path.insert(0, os.path.join(home, "python"))
    tests = sorted(os.path.join(DATA, f, t) for f in FOLDERS if os.path.isdir(os.path.join(DATA, f))
                   for t in os.listdir(os.path.join(DATA, f))
                   if os.path.exists(os.path.join(DATA, f, t, "model.onnx")))
    if args.only:
        tests = [t for t in tests if re.search(args.only, os.path.relpath(t, DATA))]
    t0 = time.monotonic()
    log_path = args.log
    with open(log_path, "w") as log:
        records = _run_all(tests, args.timeout, log)
    records = {os.path.relpath(d, DATA): r for d, r in records.items()}
    _write(records, args.out, args.timeout)
    print("wrote %s (%d tests, %.0f s; worker stderr in %s)"
          % (args.out, len(records), time.monotonic() - t0, log_path))
    _summary(records)


if __name__ == "__main__":
    main()
