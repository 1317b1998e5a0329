"""Fake relax.BlockBuilder / IRModule / transforms / VM (see _impl.py for what is and is not real)."""
from . import _impl as I


class Binding:
    def __init__(self, var, value, block):
        self.var, self.value, self.block = var, value, block

    def __repr__(self):
        return "%s = %r" % (self.var.name_hint or "_", self.value)


class Function:
    def __init__(self, name, params, bindings, output, attrs):
        self.name, self.all_params, self.bindings, self.output, self.attrs = name, params, bindings, output, attrs
        self.bound = {}  # param Var -> NDArray (BindParams)

    @property
    def params(self):
        return [p for p in self.all_params if p not in self.bound]

    def script(self):
        lines = ["def %s(%s):" % (self.name, ", ".join("%s: %r" % (p.name_hint, p.struct_info) for p in self.params))]
        for p, v in self.bound.items():
            lines.append("    %s = const(%s %s)" % (p.name_hint, v.dtype, list(v.shape)))
        for b in self.bindings:
            lines.append("    [%s] %r" % (b.block, b))
        lines.append("    return %r" % (self.output,))
        return "\n".join(lines)


class IRModule:
    def __init__(self, functions=None):
        self.functions = dict(functions or {})
        self.legalized = False

    def __getitem__(self, name):
        if name not in self.functions:
            raise KeyError("fake tvm IRModule has no function %r (has %s)" % (name, list(self.functions)))
        return self.functions[name]

    def __contains__(self, name):
        return name in self.functions

    def script(self):
        return "\n\n".join(f.script() for f in self.functions.values())

    def show(self):
        print(self.script())


class _Scope:
    def __init__(self, enter, exit_):
        self._enter, self._exit = enter, exit_

    def __enter__(self):
        self._enter()
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            self._exit()
        return False


class BlockBuilder:
    """Records one function at a time; checks scoping like relax's normalizer would."""

    @I.checked("relax.BlockBuilder")
    def __init__(self, mod):
        self._mod = IRModule()
        self._func = None
        self._dataflow = False
        self.bindings = []

    # -- scopes
    @I.checked("relax.BlockBuilder.function")
    def function(self, name, params, attrs, pure, private):
        if not isinstance(name, str):
            raise TypeError("BlockBuilder.function: name must be a str")
        params = list(params or [])
        for p in params:
            if not isinstance(p, I.RelaxVar):
                raise TypeError("BlockBuilder.function: each param must be a relax.Var, got %r" % (p,))
            if p.struct_info is None:
                raise ValueError("BlockBuilder.function: param %r has no struct info" % p.name_hint)
        if len({id(p) for p in params}) != len(params):
            raise ValueError("BlockBuilder.function: a Var appears twice in params")

        def enter():
            if self._func is not None:
                raise RuntimeError("BlockBuilder.function: nested functions")
            self._func = {"name": name, "params": params, "attrs": attrs, "defined": set(map(id, params)),
                          "bindings": [], "done": False, "blocks": 0}

        def exit_():
            if not self._func["done"]:
                raise RuntimeError("BlockBuilder.function %r: emit_func_output was not called" % name)
            self._func = None
        return _Scope(enter, exit_)

    @I.checked("relax.BlockBuilder.dataflow")
    def dataflow(self):
        def enter():
            if self._func is None or self._dataflow:
                raise RuntimeError("BlockBuilder.dataflow: outside a function or nested")
            self._dataflow = True
            self._func["blocks"] += 1

        def exit_():
            self._dataflow = False
        return _Scope(enter, exit_)

    # -- normalization
    def _check_defined(self, var):
        if id(var) not in self._func["defined"]:
            raise ValueError("relax.Var %r is used but is neither a parameter of the function nor bound "
                             "earlier" % var.name_hint)
        if var.is_dataflow and not self._dataflow:
            raise ValueError("DataflowVar %r used outside its dataflow block" % var.name_hint)

    def _normalize_arg(self, v):
        if isinstance(v, (I.Constant, I.PrimValue, I.ShapeExpr)):
            return v  # leaves, as in relax's normal form
        if isinstance(v, I.RelaxVar):
            self._check_defined(v)
            return v
        if isinstance(v, (I.Call, I.TupleGetItem, I.Tuple)):
            return self._bind(self._normalize(v), "")  # nested: bound first, unnamed (relax does too)
        if isinstance(v, (list, tuple)):
            return [self._normalize_arg(x) for x in v]
        return v

    def _normalize(self, expr):
        if isinstance(expr, (list, tuple)):
            expr = I._tuple(expr)
        if isinstance(expr, I.RelaxVar):
            self._check_defined(expr)
            return expr
        if isinstance(expr, (I.Constant, I.PrimValue)):
            return expr
        if isinstance(expr, I.Call):
            return I.Call(expr.op, {k: self._normalize_arg(v) for k, v in expr.args.items()})
        if isinstance(expr, I.Tuple):
            return I._tuple([self._normalize_arg(f) for f in expr.fields])
        if isinstance(expr, I.TupleGetItem):
            t = I.TupleGetItem.__new__(I.TupleGetItem)
            t.tuple_value, t.index = self._normalize_arg(expr.tuple_value), expr.index
            return t
        raise TypeError("fake relax cannot emit %r" % (expr,))

    def _sinfo(self, expr):
        if isinstance(expr, (I.RelaxVar, I.Constant, I.PrimValue)):
            return expr.struct_info
        if isinstance(expr, I.ShapeExpr):
            return I.ShapeStructInfo(len(expr.values))
        if isinstance(expr, I.Tuple):
            return I.TupleStructInfo([self._sinfo(f) for f in expr.fields])
        if isinstance(expr, I.TupleGetItem):
            s = self._sinfo(expr.tuple_value)
            if not isinstance(s, I.TupleStructInfo):
                raise TypeError("TupleGetItem on a non-tuple value (%r)" % (s,))
            if not 0 <= expr.index < len(s.fields):
                raise IndexError("TupleGetItem index %d out of range for %d fields" % (expr.index, len(s.fields)))
            return s.fields[expr.index]
        if isinstance(expr, I.Call):
            return I.infer_call(expr, self._sinfo)
        raise TypeError("no struct info for %r" % (expr,))

    def _bind(self, value, name_hint, output=False):
        if self._func is None:
            raise RuntimeError("emit outside a function")
        if not isinstance(name_hint, str):
            raise TypeError("name_hint must be a str")
        var = I._new_var(name_hint, self._sinfo(value), dataflow=self._dataflow and not output)
        b = Binding(var, value, "dataflow" if self._dataflow else "block")
        self._func["bindings"].append(b)
        self._func["defined"].add(id(var))
        self.bindings.append(b)
        return var

    # -- emitters
    @I.checked("relax.BlockBuilder.emit")
    def emit(self, expr, name_hint):
        return self._bind(self._normalize(expr), name_hint)

    @I.checked("relax.BlockBuilder.emit_output")
    def emit_output(self, output, name_hint):
        if not self._dataflow:
            raise RuntimeError("emit_output outside a dataflow block")
        return self._bind(self._normalize(output), name_hint, output=True)

    @I.checked("relax.BlockBuilder.emit_func_output")
    def emit_func_output(self, output, params):
        if self._func is None or self._func["done"]:
            raise RuntimeError("emit_func_output must be called exactly once, inside a function")
        if self._dataflow:
            raise RuntimeError("emit_func_output inside a dataflow block")
        if params is not None:
            raise RuntimeError("function parameters have been initialized in the function with scope")
        out = self._normalize(output)
        for v in (out.fields if isinstance(out, I.Tuple) else [out]):
            if not isinstance(v, I.RelaxVar):
                raise TypeError("function output must be Vars")
            if v.is_dataflow:
                raise ValueError("DataflowVar %r returned from the function (use emit_output)" % v.name_hint)
        f = self._func
        self._mod.functions[f["name"]] = Function(f["name"], f["params"], f["bindings"], out, f["attrs"])
        f["done"] = True

    @I.checked("relax.BlockBuilder.finalize")
    def finalize(self):
        if self._func is not None:
            raise RuntimeError("finalize inside a function")
        return self._mod


# ---- transforms, build, VM ---------------------------------------------------------------------

class _Pass:
    def __init__(self, name, fn):
        self.name, self._fn = name, fn

    def __call__(self, mod):
        if not isinstance(mod, IRModule):
            raise TypeError("%s: expected an IRModule" % self.name)
        return self._fn(mod)


def _match_shape(sinfo, shape, env, what):
    dims = sinfo.shape.values
    if len(dims) != len(shape):
        raise ValueError("%s: rank %d, expected %d" % (what, len(shape), len(dims)))
    for d, n in zip(dims, shape):
        if isinstance(d, I.Var) and d not in env:
            env[d] = int(n)
        if I.evaluate_prim(d, env) != n:
            raise ValueError("%s: shape %s does not match %r" % (what, list(shape), sinfo))


def BindParams(*args, **kwargs):
    a = I.bind("relax.transform.BindParams", args, kwargs)

    def run(mod):
        f = mod[a["func_name"]]
        new = Function(f.name, f.all_params, f.bindings, f.output, f.attrs)
        new.bound = dict(f.bound)
        by_name = {}
        for p in f.params:
            by_name.setdefault(p.name_hint, []).append(p)
        for key, value in a["params"].items():
            if isinstance(key, str):
                if len(by_name.get(key, [])) != 1:
                    raise ValueError("BindParams: %d params named %r" % (len(by_name.get(key, [])), key))
                key = by_name[key][0]
            if not any(key is p for p in f.params):
                raise ValueError("BindParams: %r is not a parameter of %r" % (key, f.name))
            if not isinstance(value, I.NDArray):
                raise TypeError("BindParams: value for %r is not a TVM tensor" % key.name_hint)
            if value.dtype != key.struct_info.dtype:
                raise ValueError("BindParams: %r is %s, the param is %s" % (key.name_hint, value.dtype, key.struct_info.dtype))
            _match_shape(key.struct_info, value.shape, {}, "BindParams %r" % key.name_hint)
            new.bound[key] = value
        out = IRModule(mod.functions)
        out.functions[f.name] = new
        out.legalized = mod.legalized
        return out
    return _Pass("BindParams", run)


def _rewrite(mod, fn):
    """A copy of `mod` whose Call bindings are replaced by fn(call) (a Call or None = unchanged)."""
    out = IRModule()
    out.legalized = mod.legalized
    for name, f in mod.functions.items():
        bindings = []
        for b in f.bindings:
            value = fn(b.value) if isinstance(b.value, I.Call) else None
            bindings.append(b if value is None else Binding(b.var, value, b.block))
        new = Function(f.name, f.all_params, bindings, f.output, f.attrs)
        new.bound = dict(f.bound)
        out.functions[name] = new
    return out


def _lowered(call, how):
    new = I.Call(call.op, call.args)
    new.lowering = how
    return new


# Ops TVM v0.20's LegalizeOps has no lowering for (python/tvm/relax/transform/legalize_ops/*.py
# registers none; the CPU pipeline has no library dispatch): building them fails.
SORT_SCAN_OPS = ("relax.op.topk", "relax.op.cumsum", "relax.op.cumprod", "relax.op.sort", "relax.op.argsort")
UNLOWERED_V020 = ("relax.op.isnan", "relax.op.isinf", "relax.op.isfinite")


def LegalizeOps(*args, **kwargs):
    """Marks the module legalized. v0.20 (FAKE_TVM_FLAVOR=v0.20): a relax.op.nn.batch_norm still
    present is lowered through topi.nn.batch_norm, which uses the batch statistics when
    training=False and the moving ones when training=True (the flag's meaning reversed; later
    releases changed it: apache/tvm#17752, #19574)."""
    I.bind("relax.transform.LegalizeOps", args, kwargs)

    def run(mod):
        def legalize(call):
            if call.op == "relax.op.nn.batch_norm" and getattr(call, "lowering", None) is None and I.FLAVOR == "v0.20":
                return _lowered(call, "v0.20-topi")
            return None
        out = _rewrite(mod, legalize)
        out.legalized = True
        return out
    return _Pass("LegalizeOps", run)


def DecomposeOpsForInference(*args, **kwargs):
    """relax.transform.DecomposeOpsForInference: batch_norm -> arithmetic on the moving mean/var
    (src/relax/transform/decompose_ops.cc), whatever its training flag says."""
    a = I.bind("relax.transform.DecomposeOpsForInference", args, kwargs)

    def run(mod):
        if a["func_name"] is not None and a["func_name"] not in mod:
            raise ValueError("DecomposeOpsForInference: no function %r" % (a["func_name"],))
        return _rewrite(mod, lambda call: _lowered(call, "decomposed") if call.op == "relax.op.nn.batch_norm" else None)
    return _Pass("DecomposeOpsForInference", run)


def DispatchSortScan(*args, **kwargs):
    """relax.backend.DispatchSortScan: sort/argsort/topk/cumsum/cumprod -> TOPI kernels for the
    current target (python/tvm/relax/backend/dispatch_sort_scan.py); needs a target in scope."""
    I.bind("relax.backend.DispatchSortScan", args, kwargs)

    def run(mod):
        def dispatch(call):
            if call.op not in SORT_SCAN_OPS:
                return None
            if Target.current() is None:
                raise ValueError("DispatchSortScan: target not found in the current context (use `with tvm.target.Target(...)`)")
            return _lowered(call, "dispatched")
        return _rewrite(mod, dispatch)
    return _Pass("DispatchSortScan", run)


class Target:
    """tvm.target.Target: only `llvm`; usable as a context manager (Target.current())."""
    _stack = []

    @I.checked("tvm.target.Target")
    def __init__(self, target, host):
        if target != "llvm":
            raise ValueError("fake tvm knows target 'llvm' only, got %r" % (target,))
        self.kind = target

    def __enter__(self):
        Target._stack.append(self)
        return self

    def __exit__(self, *exc):
        Target._stack.pop()
        return False

    @staticmethod
    def current(allow_none=True):
        return Target._stack[-1] if Target._stack else None


class Executable:
    def __init__(self, mod, target):
        self.mod, self.target = mod, target


def build(*args, **kwargs):
    a = I.bind("relax.build", args, kwargs)
    return _build(a["mod"], a["target"])


def compile(*args, **kwargs):  # noqa: A001 (tvm.compile)
    a = I.bind("tvm.compile", args, kwargs)
    return _build(a["mod"], a["target"])


def _unbuildable(call):
    """Why TVM v0.20 cannot build `call` for llvm (None = it can)."""
    lowering = getattr(call, "lowering", None)
    if call.op in SORT_SCAN_OPS and lowering != "dispatched":
        return "LegalizeOps has no lowering for %s; relax.backend.DispatchSortScan must run first" % call.op
    if call.op in UNLOWERED_V020:
        return "LegalizeOps has no lowering for %s" % call.op
    if call.op in ("relax.op.nn.conv1d_transpose", "relax.op.nn.conv2d_transpose") and \
            any(int(d) != 1 for d in ([call.args["dilation"]] if isinstance(call.args["dilation"], int) else call.args["dilation"])):
        return "LegalizeOps lowers %s only with dilation 1" % call.op
    if call.op == "relax.op.nn.attention" and call.args.get("window_size") is not None:
        return "LegalizeOps does not lower sliding-window attention"
    if call.op == "relax.op.nn.adaptive_avg_pool1d":
        return "LegalizeOps fails on adaptive_avg_pool1d (it hands topi an attr of the wrong type)"
    if call.op == "relax.op.nn.rms_norm":
        ndim = call.args["data"].struct_info.ndim
        axes = sorted(a % ndim for a in ([call.args["axes"]] if isinstance(call.args["axes"], int) else call.args["axes"]))
        if axes != list(range(ndim - len(axes), ndim)):
            return "topi.nn.rms_norm indexes its partial sums wrongly for axes %s of a %d-d tensor (not the last ones)" % (axes, ndim)
    if call.op == "relax.op.strided_slice" and any(isinstance(b, int) and b < 0 for b in call.args["begin"]):
        sinfo = call.args["x"].struct_info
        if any(not isinstance(d, I.IntImm) for d in sinfo.shape.values):
            return "strided_slice from a negative begin on a tensor with a dynamic dim computes wrong values"
    return None


def _build(mod, target):
    if not isinstance(mod, IRModule):
        raise TypeError("build: expected an IRModule")
    if target != "llvm":
        raise ValueError("fake tvm builds for target 'llvm' only, got %r" % (target,))
    if I.FLAVOR == "v0.20":
        for f in mod.functions.values():
            for b in f.bindings:
                why = _unbuildable(b.value) if isinstance(b.value, I.Call) else None
                if why:
                    raise RuntimeError("fake tvm (v0.20): cannot build binding %r: %s" % (b.var.name_hint, why))
    return Executable(mod, target)


class VirtualMachine:
    @I.checked("relax.VirtualMachine")
    def __init__(self, rt_mod, device, memory_cfg, profile):
        if not isinstance(rt_mod, Executable):
            raise TypeError("VirtualMachine: expected an executable from relax.build / tvm.compile")
        if not isinstance(device, I.Device):
            raise TypeError("VirtualMachine: expected a device")
        self.mod = rt_mod.mod

    def __getitem__(self, name):
        f = self.mod[name]
        return lambda *args: _run(f, args)


def _run(f, args):
    params = f.params
    if len(args) != len(params):
        raise TypeError("%s takes %d inputs, got %d" % (f.name, len(params), len(args)))
    env, values = {}, {}
    for p, a in zip(params, args):
        if not isinstance(a, I.NDArray):
            raise TypeError("VM inputs must be TVM tensors")
        if a.dtype != p.struct_info.dtype:
            raise ValueError("input %r: dtype %s, expected %s" % (p.name_hint, a.dtype, p.struct_info.dtype))
        _match_shape(p.struct_info, a.shape, env, "input %r" % p.name_hint)
        values[id(p)] = I.torch_of(a.numpy())
    for p, a in f.bound.items():
        values[id(p)] = I.torch_of(a.numpy())

    def lookup(e):
        if isinstance(e, I.RelaxVar):
            return values[id(e)]
        return evaluate(e)

    def evaluate(e):
        if isinstance(e, I.RelaxVar):
            return values[id(e)]
        if isinstance(e, I.Constant):
            return e.data.clone()
        if isinstance(e, I.Call):
            return I.run_call(e, env, lookup)
        if isinstance(e, I.Tuple):
            return tuple(lookup(x) for x in e.fields)
        if isinstance(e, I.TupleGetItem):
            return lookup(e.tuple_value)[e.index]
        raise TypeError("cannot evaluate %r" % (e,))

    for b in f.bindings:
        v = evaluate(b.value)
        values[id(b.var)] = v
        s = b.var.struct_info
        if isinstance(s, I.TensorStructInfo):  # the run agrees with the struct info built earlier
            _match_shape(s, tuple(v.shape), env, "binding %r" % b.var.name_hint)
            if I.dtype_name(v) != s.dtype:
                raise ValueError("binding %r: dtype %s, struct info says %s" % (b.var.name_hint, I.dtype_name(v), s.dtype))

    def pack(v):
        if isinstance(v, tuple):
            return [pack(x) for x in v]
        return I.NDArray(I.numpy_of(v))
    return pack(evaluate(f.output))


class PassContext:
    @I.checked("tvm.transform.PassContext")
    def __init__(self, opt_level, required_pass, disabled_pass, instruments, config, trace, trace_stack,
                 make_traceable, num_evals, tuning_api_database):
        self.opt_level = opt_level

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def cpu(*args, **kwargs):
    a = I.bind("tvm.cpu", args, kwargs)
    return I.Device("cpu", a["dev_id"])
