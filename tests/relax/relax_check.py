"""Static checks of generated relax projects (no TVM needed).

api_problems(source, signatures): every call the code makes into TVM -- `relax.op.*`, other
`relax.*` / `tir.*` / `tvm.*` callables, and methods of a `relax.BlockBuilder` -- must name an API
listed in ../shared/reference/relax_ops_v020_all.json (every public relax.op.* of a real TVM v0.20.0
build: the authority for v0.20 where both list a function), ../shared/reference/relax_ops.json
(the relax ops and BlockBuilder APIs MSC's codegen called, at TVM ff29817d57, checked against
v0.20.0; it adds the BlockBuilder and relax.op.linear_algebra.* names) or relax_api_extra.json
(the few runtime/transform/tir APIs besides),
its positional arguments must fit the parameter list, every keyword must be a parameter, every
required parameter must be given once, and parameters TVM v0.20 lacks (relax.op.take's `mode`)
are rejected. Names are resolved through the module's imports (`from tvm import relax`,
`from tvm import tirx as tir`), `getattr(tvm, "nd", None)`-style aliases and variables holding a
`relax.BlockBuilder()` or `tvm.arith.Analyzer()`; the newest release's renames of v0.20 APIs
(`tvm.sym`, `relax.TensorType`, `relax.prim_value`) are checked under their v0.20 names.
load_newest_signatures swaps in the newest release's relax.op.* signatures
(relax_ops_newest.json), so the same code is checked against both releases;
omitted_changed_defaults finds relax.op calls that rely on a default the two releases disagree on.

struct_info_problems(model_source, graph): the graph-aware checks of model.py -- the relax.Vars of
the inputs (input_vars) and weights carry the graph's shape/dtype; every node output has exactly
one build-time check `_expect(<var>, "<MSC tensor name>", <shape>, "<dtype>")` whose shape/dtype
are the graph's (a dynamic dim must be `prims["<its prim name>"]`), placed right after the value
was bound by `block_builder.emit(..., name_hint=<the node's name>)` (constants: the weight's Var;
tuple fields: the field's value); the outputs are emitted with emit_output in graph order.

Each returns a list of "line N: message" strings (empty = clean).

graph_from_context(context, source_graph): the MSCGraph a project's code was generated for (after
the backend's passes, e.g. fold_constant), from `msc-codegen context GRAPH --backend relax
--project` output; struct_info_problems needs that graph, not the input file.
"""
import ast
import json

TVM_ROOTS = ("relax", "tir", "tvm")


class Signature:
    def __init__(self, func, params, source=""):
        self.func = func
        self.source = source
        self.positional, self.kwonly, self.required = [], [], set()
        self.defaults = {}  # parameter -> its default as repr (None: required)
        kw = False
        for name, default in params:
            if name == "*":
                kw = True
                continue
            (self.kwonly if kw else self.positional).append(name)
            self.defaults[name] = default
            if default is None:
                self.required.add(name)

    @property
    def names(self):
        return self.positional + self.kwonly


def load_signatures(relax_ops_path, extra_path, v020_path=None):
    """{canonical name: Signature} and {func: [params removed in TVM v0.20]}. Entries of v020_path
    (relax_ops_v020_all.json) replace relax_ops.json's for the same function."""
    sigs = {}
    for path in [relax_ops_path] + ([v020_path] if v020_path else []):
        with open(path, encoding="utf-8") as f:
            for e in json.load(f):
                sigs[e["func"]] = Signature(e["func"], e["params"], e.get("source", ""))
    with open(extra_path, encoding="utf-8") as f:
        extra = json.load(f)
    for e in extra["apis"]:
        sigs[e["func"]] = Signature(e["func"], e["params"], e.get("source", ""))
    removed = extra.get("removed_in_v0_20", {})
    for func, names in removed.items():  # check against TVM v0.20: drop what it does not have
        s = sigs[func]
        if not set(names) & set(s.names):
            continue  # already without them (v020_path's entry)
        sigs[func] = Signature(func, [(n, None if n in s.required else "?") for n in s.positional if n not in names] +
                               ([("*", None)] if s.kwonly else []) +
                               [(n, None if n in s.required else "?") for n in s.kwonly if n not in names], s.source)
    return sigs, removed


def load_newest_signatures(signatures, newest_path):
    """`signatures` (load_signatures: TVM v0.20) with every relax.op.* entry replaced by the newest
    release's (relax_ops_newest.json, scripts/dump_relax_ops.py); relax.op.* functions the newest
    release lacks are dropped, so a call to one is an "unknown relax op" there."""
    sigs = {k: v for k, v in signatures.items() if not k.startswith("relax.op.")}
    with open(newest_path, encoding="utf-8") as f:
        for e in json.load(f):
            sigs[e["func"]] = Signature(e["func"], e["params"], e.get("source", ""))
    return sigs


def changed_defaults(old, new):
    """{relax.op function: [parameters whose default differs between `old` and `new`]}: a call
    that leaves one of them out means different things on the two releases."""
    changed = {}
    for func, sig in old.items():
        other = new.get(func)
        if func.startswith("relax.op.") and other is not None:
            names = [n for n, d in sig.defaults.items() if d is not None and n in other.defaults
                     and other.defaults[n] is not None and other.defaults[n] != d]
            if names:
                changed[func] = names
    return changed


def omitted_changed_defaults(source, signatures, changed):
    """"line N: <func> leaves out <param>" for every relax.op call of `source` that relies on a
    default listed in `changed` (changed_defaults)."""
    tree = ast.parse(source)
    resolver = _Resolver(tree)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            path = resolver.path(node.func)
            if path in changed:
                given = set(signatures[path].positional[:len(node.args)]) | {k.arg for k in node.keywords}
                for name in changed[path]:
                    if name not in given:
                        problems.append("line %d: %s leaves out %s, whose default changed since TVM v0.20"
                                        % (node.lineno, path, name))
    return problems


# Names the newest TVM gave to v0.20 APIs (model.py's compatibility block binds either): checked
# under their v0.20 name.
_RENAMED = {"tvm.sym": "tvm.arith", "relax.TensorType": "relax.TensorStructInfo", "relax.prim_value": "relax.PrimValue"}


def _canonical(path):
    """'tvm.relax.op.add' -> 'relax.op.add', 'tvm.tir.Var' / 'tvm.tirx.Var' -> 'tir.Var',
    'tvm.sym.Analyzer' -> 'tvm.arith.Analyzer', 'relax.TensorType' -> 'relax.TensorStructInfo'."""
    for new, old in _RENAMED.items():
        if path == new or path.startswith(new + "."):
            path = old + path[len(new):]
    parts = path.split(".")
    if parts[0] == "tvm" and len(parts) > 1 and parts[1] in ("relax", "tir", "tirx"):
        parts = parts[1:]
    if parts[0] == "tirx":
        parts[0] = "tir"
    path = ".".join(parts)
    for new, old in _RENAMED.items():
        if path == new:
            return old
    return path


class _Resolver:
    """Maps local names to TVM paths: imports, getattr aliases, and instance types."""

    def __init__(self, tree):
        self.alias = {}       # local name -> dotted TVM path (module or callable)
        self.instance = {}    # local name -> TVM class path of the object it holds
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "tvm":
                        self.alias[a.asname or "tvm"] = _canonical(a.name) if a.asname else "tvm"
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tvm":
                for a in node.names:
                    self.alias[a.asname or a.name] = _canonical(node.module + "." + a.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self._assign(node.targets[0].id, node.value)

    def _assign(self, name, value):
        if isinstance(value, ast.Attribute):  # TensorInfo = relax.TensorStructInfo
            path = self.path(value)
            if path:
                self.alias[name] = path
            return
        if isinstance(value, ast.Call):
            f = value.func
            if isinstance(f, ast.Name) and f.id == "getattr" and len(value.args) >= 2 and \
                    isinstance(value.args[1], ast.Constant) and isinstance(value.args[1].value, str):
                base = self.path(value.args[0])
                if base:
                    self.alias[name] = _canonical(base + "." + value.args[1].value)
                return
            path = self.path(f)
            if path in ("relax.BlockBuilder", "tvm.arith.Analyzer"):
                self.instance[name] = path

    def path(self, expr):
        """The canonical TVM path of an expression, or None."""
        if isinstance(expr, ast.Name):
            if expr.id in self.alias:
                return self.alias[expr.id]
            if expr.id in self.instance:
                return self.instance[expr.id]
            return None
        if isinstance(expr, ast.Attribute):
            base = self.path(expr.value)
            return _canonical(base + "." + expr.attr) if base else None
        return None


def _check_call(call, sig, removed, problems):
    where = "line %d: %s" % (call.lineno, sig.func)
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        problems.append("%s: *args/**kwargs cannot be checked" % where)
        return
    given = []
    if len(call.args) > len(sig.positional):
        problems.append("%s: %d positional arguments, at most %d (%s)" % (
            where, len(call.args), len(sig.positional), ", ".join(sig.positional) or "none"))
    given += sig.positional[:len(call.args)]
    for k in call.keywords:
        if k.arg in removed:
            problems.append("%s: parameter '%s' does not exist in TVM v0.20" % (where, k.arg))
            continue
        if k.arg not in sig.names:
            problems.append("%s: unknown keyword '%s' (parameters: %s)" % (where, k.arg, ", ".join(sig.names) or "none"))
        elif k.arg in given:
            problems.append("%s: '%s' given twice" % (where, k.arg))
        given.append(k.arg)
    for name in sorted(sig.required - set(given)):
        problems.append("%s: missing required argument '%s'" % (where, name))


def api_problems(source, signatures, removed=None, filename="<source>"):
    """See the module docstring. `source`: Python text; raises SyntaxError if it does not parse."""
    removed = removed or {}
    tree = ast.parse(source, filename)
    resolver = _Resolver(tree)
    problems = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        path = resolver.path(node.func)
        if path is None or path.split(".")[0] not in TVM_ROOTS:
            continue
        sig = signatures.get(path)
        if sig is None:
            kind = "relax op" if path.startswith("relax.op.") else "TVM API"
            problems.append("line %d: %s: unknown %s (not in relax_ops_v020_all.json, relax_ops.json or relax_api_extra.json)"
                            % (node.lineno, path, kind))
            continue
        _check_call(node, sig, removed.get(path, []), problems)
    return problems


# ---- graph-aware struct info checks -------------------------------------------------------------

def _literal(expr):
    """int / str / None / ("prim", name) / list of those, from an AST literal."""
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and isinstance(expr.operand, ast.Constant):
        return -expr.operand.value
    if isinstance(expr, (ast.List, ast.Tuple)):
        return [_literal(e) for e in expr.elts]
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and expr.value.id == "prims":
        key = expr.slice.value if isinstance(expr.slice, getattr(ast, "Index", ())) else expr.slice
        if isinstance(key, ast.Constant):
            return ("prim", key.value)
    return ("?", ast.dump(expr))


def _expected_dims(t):
    dims = []
    for i, d in enumerate(t["shape"]):
        if d >= 0:
            dims.append(d)
        elif len(t.get("prims", [])) == len(t["shape"]):
            dims.append(("prim", t["prims"][i]))
        else:
            dims.append(None)
    return dims


def _sinfo_call(expr):
    """(name, dims, dtype) of relax.Var(name, TensorInfo(dims, dtype)) (model.py's alias of
    relax.TensorStructInfo / relax.TensorType), or None."""
    if not (isinstance(expr, ast.Call) and ast.unparse(expr.func) == "relax.Var" and len(expr.args) == 2):
        return None
    s = expr.args[1]
    if not (isinstance(s, ast.Call) and ast.unparse(s.func) in ("TensorInfo", "relax.TensorStructInfo") and len(s.args) == 2):
        return None
    return _literal(expr.args[0]), _literal(s.args[0]), _literal(s.args[1])


def _flatten(body):
    for stmt in body:
        if isinstance(stmt, ast.With):
            yield stmt
            yield from _flatten(stmt.body)
        else:
            yield stmt


def _is_emit(expr, method="emit"):
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == method and \
        isinstance(expr.func.value, ast.Name) and expr.func.value.id == "block_builder"


def struct_info_problems(source, graph):
    tree = ast.parse(source)
    problems = []
    funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    tensors = {}
    for n in graph["nodes"]:
        for o in n["outputs"]:
            tensors[o["name"]] = (n, o)
    weights = []
    for n in graph["nodes"]:
        for w in n.get("weights", {}).values():
            if w["name"] not in [x["name"] for x in weights]:
                weights.append(w)

    # input_vars(): one relax.Var per graph input, in order.
    iv = funcs.get("input_vars")
    ret = [s for s in ast.walk(iv) if isinstance(s, ast.Return)] if iv else []
    got = [_sinfo_call(e) for e in ret[0].value.elts] if ret and isinstance(ret[0].value, ast.List) else None
    want = [((tensors[i][1]["alias"] or i), _expected_dims(tensors[i][1]), tensors[i][1]["dtype"]) for i in graph["inputs"]]
    if got != want:
        problems.append("input_vars(): relax.Vars %r, the graph's inputs are %r" % (got, want))

    # The graph function: the one that makes a relax.BlockBuilder().
    gf = [f for f in funcs.values() if any(isinstance(c, ast.Call) and ast.unparse(c.func) == "relax.BlockBuilder"
                                           for c in ast.walk(f))]
    if len(gf) != 1:
        return problems + ["expected one function building a relax.BlockBuilder, found %d" % len(gf)]
    gf = gf[0]
    params = [a.arg for a in gf.args.args]
    if len(params) != len(graph["inputs"]):
        problems.append("%s(): %d parameters, the graph has %d inputs" % (gf.name, len(params), len(graph["inputs"])))
    ident_of = dict(zip(graph["inputs"], params))

    # WEIGHTS constant and the weight relax.Vars, appended to the params in that order.
    wconst = [s for s in tree.body if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == "WEIGHTS"]
    want_w = [[w["name"], w["shape"], w["dtype"]] for w in weights]
    if not wconst or [list(_literal(e)) for e in wconst[0].value.elts] != want_w:
        problems.append("WEIGHTS is not the graph's weights %r" % (want_w,))
    last = {}        # local name -> value expr of its latest assignment (statement order)
    appended = []
    weight_vars = {}
    expects = {}
    emitted_names = set()
    outputs = None
    for stmt in _flatten(gf.body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                info = _sinfo_call(stmt.value)
                if info is not None:
                    weight_vars[target.id] = info
                if _is_emit(stmt.value):
                    hint = [k.value for k in stmt.value.keywords if k.arg == "name_hint"]
                    if hint:
                        emitted_names.add(_literal(hint[0]))
                last[target.id] = stmt.value
                if target.id == "outputs" and isinstance(stmt.value, ast.List):
                    outputs = stmt.value.elts
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            fname = ast.unparse(call.func)
            if fname == "inputs.append" and isinstance(call.args[0], ast.Name):
                appended.append(call.args[0].id)
            elif fname == "_expect":
                if len(call.args) != 4 or not isinstance(call.args[0], ast.Name):
                    problems.append("line %d: malformed _expect" % stmt.lineno)
                    continue
                var, tname, dims, dtype = call.args[0].id, _literal(call.args[1]), _literal(call.args[2]), _literal(call.args[3])
                if tname in expects:
                    problems.append("line %d: second _expect for %r" % (stmt.lineno, tname))
                expects[tname] = (var, stmt.lineno)
                if tname not in tensors:
                    problems.append("line %d: _expect of unknown tensor %r" % (stmt.lineno, tname))
                    continue
                node, t = tensors[tname]
                ident_of[tname] = var
                if dims != _expected_dims(t) or dtype != t["dtype"]:
                    problems.append("line %d: _expect(%s) says %s %r, the graph says %s %r" % (
                        stmt.lineno, tname, dtype, dims, t["dtype"], _expected_dims(t)))
                value = last.get(var)
                if node["optype"] == "constant":
                    key = node["weights"]["const"]["name"]
                    ok = isinstance(value, ast.Name) and weight_vars.get(value.id, (None,))[0] == key
                    if not ok:
                        problems.append("line %d: constant %r is not its weight's relax.Var %r" % (stmt.lineno, tname, key))
                elif node["optype"] == "tuple":
                    if not isinstance(value, ast.Name):
                        problems.append("line %d: tuple field %r is not an alias of its input" % (stmt.lineno, tname))
                else:
                    hint = [k.value for k in value.keywords if k.arg == "name_hint"] if _is_emit(value) else []
                    if not hint or _literal(hint[0]) != node["name"]:
                        problems.append("line %d: %r is not bound by block_builder.emit(..., name_hint=%r) right before its check"
                                        % (stmt.lineno, tname, node["name"]))
    # weights
    declared = {info[0]: info for info in weight_vars.values()}
    for w in weights:
        info = declared.get(w["name"])
        if info is None:
            problems.append("weight %r has no relax.Var" % w["name"])
        elif info[1] != w["shape"] or info[2] != w["dtype"]:
            problems.append("weight %r: relax.Var says %s %r, the graph says %s %r" % (w["name"], info[2], info[1], w["dtype"], w["shape"]))
    if [weight_vars[v][0] for v in appended if v in weight_vars] != [w["name"] for w in weights] or \
            len(appended) != len(weights):
        problems.append("weights are not appended to the params in WEIGHTS order")
    # every node output checked once; every emit named after a node
    for n in graph["nodes"]:
        if n["optype"] == "input":
            continue
        for o in n["outputs"]:
            if o["name"] not in expects:
                problems.append("no _expect for %r (node %r)" % (o["name"], n["name"]))
    names = {n["name"] for n in graph["nodes"]}
    for hint in emitted_names - names:
        problems.append("name_hint %r is not a node name" % (hint,))
    for n in graph["nodes"]:
        if n["optype"] not in ("input", "constant") and n["name"] not in emitted_names:
            problems.append("node %r has no emit with its name_hint" % n["name"])
    # outputs
    want_out = [ident_of.get(t) for t in graph["outputs"]]
    got_out = [e.args[0].id if _is_emit(e, "emit_output") and isinstance(e.args[0], ast.Name) else ast.unparse(e)
               for e in (outputs or [])]
    if got_out != want_out:
        problems.append("emit_output of %r, the graph's outputs are %r" % (got_out, want_out))
    return problems


def graph_from_context(context, source_graph):
    """The MSCGraph (as JSON) of a `msc-codegen context --project` object: the graph after the
    backend.yaml `passes` (node tensors, attrs_raw, weights). `source_graph` (the input graph's
    JSON) gives the prims, which the passes keep."""
    g = context["graph"]
    keys = ("name", "alias", "dtype", "layout", "shape", "prims")

    def tensor(t):
        return {k: t[k] for k in keys}
    nodes = [{"index": n["index"], "name": n["name"], "shared_ref": n["shared_ref"], "optype": n["optype"],
              "parents": n["parents"], "inputs": [t["name"] for t in n["inputs"]],
              "outputs": [tensor(t) for t in n["outputs"]], "attrs": n["attrs_raw"],
              "weights": {role: tensor(w) for role, w in n["weights"].items()}} for n in g["nodes"]]
    return {"name": g["name"], "inputs": [t["name"] for t in g["inputs"]],
            "outputs": [t["name"] for t in g["outputs"]], "nodes": nodes,
            "prims": source_graph.get("prims", [])}
