#!/usr/bin/python3
"""Peers benchmark: msc-codegen's Vulkan project vs ncnn, IREE, ONNX Runtime, OpenVINO, TVM, PyTorch.

    /usr/bin/python3 scripts/bench_peers.py [--models resnet18 text_transformer ...] [--runs 50] [--rounds 3]
                                            [--peers msc-vk ncnn-vk ...] [--threads 2] [--work DIR]
                                            [--no-write] [--quick]

One command, on this machine (llvmpipe / lavapipe is a CPU Vulkan driver: every "GPU" peer runs on
the same CPU cores as the CPU peers):

1. Export each model ONCE (project venv, `bash scripts/install_venv.sh`): the repo's seeded
   builders (python/msc_export/onnx_models.build_model -- the models of tests/onnx/test_onnx_exporters.py,
   built as examples/models/export.py and examples/<name>/ build them, BatchNorm calibrated --;
   squeezenet1_0 from examples/models/export.py) give one torch module and one golden input; from
   that same object come model.onnx (onnx_models.export_onnx: torch.onnx.export, legacy exporter,
   its default opset, checked) and graph.json + weights.safetensors + golden/ (msc_export.export_torch,
   torch.fx). golden/outputs are torch's own outputs; every peer is checked against them.
2. Convert it for every peer (cached in --work; a failed conversion is a table entry with its
   reason, not a crash):
     msc-vk / msc-vk-fp16   `msc-codegen generate --backend vulkan [--precision fp16]`, CMake Release
                            (CMAKE_CXX_COMPILER_LAUNCHER=ccache), timed by the project's own
                            `model --bench N --warmup W` (model.Run(), inputs staged once)
     ncnn-vk / ncnn-cpu     pnnx model.onnx -> model.ncnn.{param,bin}; ncnn's Python binding,
                            opt.use_vulkan_compute on/off, ncnn's default options (float16 /
                            packed storage where the device has it) except use_fp16_arithmetic off:
                            with it, resnet18 misses the 1e-2 tolerance (max abs err 0.015; 0.005 without)
     iree-vk / iree-cpu     iree-import-onnx -> iree-compile --iree-hal-target-backends=vulkan-spirv
                            / llvm-cpu (--iree-llvmcpu-target-cpu=host) -> iree.runtime (vulkan /
                            local-task driver)
     ort-cpu                ONNX Runtime, CPUExecutionProvider, all graph optimizations
     openvino-cpu           OpenVINO CPU plugin, PERFORMANCE_HINT=LATENCY, f32 inference precision
     tvm-cpu                msc-codegen's OWN generated relax project: its model.py builds the
                            IRModule, compile_module (LegalizeOps, relax.build) for target "llvm"
                            (no tuning), relax.VirtualMachine; the built library is cached
     torch-cpu              PyTorch eager: the seeded torch module itself, no_grad
3. Check every peer's output against golden/outputs: |got - want| <= atol + rtol * |want|
   elementwise, atol = rtol = 1e-3 for float32 peers (the vulkan project's own tolerance) and 1e-2
   for peers that may compute in float16 (msc-vk-fp16, ncnn-*: the --precision fp16 project's
   tolerance). A peer that gives a wrong output is FAIL in the table (and not timed); the script
   then exits 1.
4. Time everything interleaved: for round in --rounds: for model: for peer: --warmup runs, then
   --runs timed runs (one inference each, inputs and outputs host arrays; a run past --budget
   seconds stops early after 3 runs, the table says how many ran) -> p50 / p90 of that round; the
   table shows the median over rounds of each.

Threads: --threads (2) everywhere it can be set: torch.set_num_threads, ORT intra_op_num_threads
(inter_op 1), OpenVINO INFERENCE_NUM_THREADS, ncnn opt.num_threads, IREE local-task
--task_topology_max_group_count, TVM_NUM_THREADS, and LP_NUM_THREADS (lavapipe's worker threads) for
every Vulkan peer; OMP_NUM_THREADS too.

Columns of docs/performance.md (between the bench_peers markers; --no-write leaves it alone):
p50 / p90 ms (median over rounds), runs per round, the check (max abs error, tolerance), and the
ratios msc-vk / best Vulkan peer (ncnn-vk, iree-vk), msc-vk / ort-cpu, msc-vk / best CPU peer
(< 1: msc-codegen faster); the same for msc-vk-fp16. The machine's load average is printed at start
and end and written with the table: on a shared machine compare runs taken at the same load.
Appendix (unless --no-profile): each msc-codegen project's `model --bench N --profile`, the
--profile-rows (8) op types that take the most GPU time (timestamp queries), so the next
bottleneck is visible.

Environments: this script runs under any Python 3 with numpy (Debian's /usr/bin/python3);
exports, PyTorch and TVM run in the project venv (scripts/install_venv.sh, torch 2.15, apache-tvm
0.27); the peers' runtimes and converters in $MSC_CACHE/venv-peers (scripts/install_venv.sh peers:
scripts/requirements-peers.txt, no torch -- pnnx converts the ONNX file, which needs no torch, and
torch's 7 GB stay in one venv). Both are created (pinned) by the script when missing. Each Python
peer runs in its own long-lived worker process (`--worker PEER`), so one runtime's thread pool
never shares a process with another's; the orchestrator sends it one request at a time.
Exit status: 0 ok, 1 a peer produced a wrong output, 2 a broken environment (no msc-codegen
binary, a venv that cannot be created, an export that fails).
"""
import argparse
import json
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from bench_vulkan import build_vulkan, generate, load, vk_bench  # noqa: E402

CACHE = os.environ.get("MSC_CACHE", os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                                                 "msc-codegen"))
MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "vit_b_16", "text_transformer",
          "gpt2_block"]
# peer -> (kind, venv, float16 tolerance?)
PEERS = {
    "msc-vk": ("vulkan", None, False),
    "msc-vk-fp16": ("vulkan", None, True),
    "ncnn-vk": ("vulkan", "peers", True),
    "iree-vk": ("vulkan", "peers", False),
    "ncnn-cpu": ("cpu", "peers", True),
    "iree-cpu": ("cpu", "peers", False),
    "ort-cpu": ("cpu", "peers", False),
    "openvino-cpu": ("cpu", "peers", False),
    "tvm-cpu": ("cpu", "main", False),
    "torch-cpu": ("cpu", "main", False),
}
TOL32, TOL16 = 1e-3, 1e-2
MARK_BEGIN, MARK_END = "<!-- bench_peers:begin -->", "<!-- bench_peers:end -->"
HEADING = "## Peers (scripts/bench_peers.py)"


class Failed(Exception):
    """A conversion or load that failed: its message is the table entry."""


def sh(cmd, env=None, cwd=None, timeout=3600):
    """stdout of cmd; Failed(last lines of its output) when it exits non-zero."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **(env or {})), cwd=cwd,
                          timeout=timeout)
    if proc.returncode != 0:
        lines = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
        errors = [ln for ln in lines if "error" in ln.lower()]
        raise Failed("%s exited %d: %s" % (os.path.basename(cmd[0]), proc.returncode,
                                           " | ".join(errors[:2] or lines[-4:])[:500]))
    return proc.stdout


def run_failure(err):
    """Failed(one line) for a bench_vulkan.run failure (SystemExit "failed: CMD\nOUTPUT"): the
    command's first words and its first error lines (else its last lines)."""
    head, _, out = str(err).partition("\n")
    cmd = head.replace("failed: ", "", 1).split()
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return Failed("%s: %s" % (" ".join(os.path.basename(w) for w in cmd[:2]) or "?",
                              " | ".join(errors[:2] or lines[-3:])[:500]))


def percentile(sorted_ms, p):
    """runtime/vulkan/bench.cc's rule: the ceil(p% * n)-th smallest."""
    rank = max(1, -(-len(sorted_ms) * p // 100))
    return sorted_ms[int(rank) - 1]


def thread_env(threads):
    t = str(threads)
    return {"LP_NUM_THREADS": t, "TVM_NUM_THREADS": t, "OMP_NUM_THREADS": t}


# ---------------------------------------------------------------------------------------------
# export (project venv): `--export NAME DIR`

def build_spec(name, seed=0):
    """The seeded torch module + golden inputs (msc_export.onnx_models.ModelSpec) of `name`."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from msc_export import onnx_models
    if name in onnx_models.MODELS:
        return onnx_models.build_model(name, seed)
    import importlib.util
    import torch
    spec = importlib.util.spec_from_file_location("bench_peers_models_export",
                                                  os.path.join(ROOT, "examples", "models", "export.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.build(name, seed)  # examples/models/export.py: seeded, BatchNorm calibrated
    torch.manual_seed(seed)
    image = torch.randn(1, 3, 224, 224)
    return onnx_models.ModelSpec(name, model, [image.numpy()], ["input"], ["logits"])


def export_model(name, out):
    import numpy as np
    import torch
    from msc_export import export_torch
    from msc_export import onnx_models
    torch.set_num_threads(2)
    spec = build_spec(name)
    _, opset, _ = onnx_models.opset_range("legacy")
    info = onnx_models.export_onnx(name, opset, out, spec=spec)
    dtypes = [str(x.dtype) for x in spec.inputs]
    result = export_torch(spec.model, [list(x.shape) for x in spec.inputs], out, input_dtypes=dtypes,
                          inputs=spec.inputs)
    # numpy copies of the golden data for the peers' venv (no safetensors package there)
    golden = [np.asarray(v) for v in result.outputs.values()]
    for i, x in enumerate(spec.inputs):
        np.save(os.path.join(out, "in_%d.npy" % i), x)
    for i, y in enumerate(golden):
        np.save(os.path.join(out, "out_%d.npy" % i), y)
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump({"inputs": [[list(x.shape), str(x.dtype)] for x in spec.inputs], "outputs": len(golden),
                   "opset": info["opset"], "onnx_ops": info["ops"], "ort_max_abs": info["ort_max_abs"],
                   "msc_nodes": len(result.graph.nodes)}, f, indent=1)
    print("%s: opset %d, %d ONNX nodes, %d MSC nodes" % (name, info["opset"], sum(info["ops"].values()),
                                                          len(result.graph.nodes)))


# ---------------------------------------------------------------------------------------------
# workers: `--worker PEER`; one JSON request per stdin line, one JSON answer per stdout line

def compare(outs, golden, tol):
    """(ok, max abs err, message) of the peer's outputs vs the golden ones (numpy allclose's rule)."""
    import numpy as np
    if len(outs) < len(golden):
        return False, None, "%d outputs, expected %d" % (len(outs), len(golden))
    worst = 0.0
    for got, want in zip(outs, golden):
        got = np.asarray(got)
        if got.size != want.size:
            return False, None, "output of %d elements, expected %s" % (got.size, list(want.shape))
        g = got.reshape(want.shape).astype(np.float64)
        w = want.astype(np.float64)
        diff = np.abs(g - w)
        worst = max(worst, float(np.nanmax(diff)) if diff.size else 0.0)
        if not (np.all(np.isfinite(g)) and np.all(diff <= tol + tol * np.abs(w))):
            return False, worst, "max abs err %.3g > tolerance %g" % (worst, tol)
    return True, worst, "max abs err %.2g (tol %g)" % (worst, tol)


def make_runner(peer, mdir, cdir, threads):
    """A function running one inference on a list of numpy inputs -> list of numpy outputs."""
    import numpy as np
    if peer in ("ncnn-vk", "ncnn-cpu"):
        import ncnn
        param, binf = os.path.join(cdir, "model.ncnn.param"), os.path.join(cdir, "model.ncnn.bin")
        if not os.path.exists(param):
            raise Failed("no ncnn model (pnnx failed)")
        net = ncnn.Net()
        net.opt.use_vulkan_compute = peer == "ncnn-vk"
        net.opt.num_threads = threads
        # float16 storage stays on (ncnn's default, as msc-vk-fp16), float16 arithmetic off: ncnn's
        # default on lavapipe (fp16-a=1) misses the 1e-2 tolerance on resnet18 (max abs err 0.015; 0.005 without)
        net.opt.use_fp16_arithmetic = False
        if peer == "ncnn-vk":
            if ncnn.get_gpu_count() < 1:
                raise Failed("ncnn sees no Vulkan device")
            net.set_vulkan_device(0)
        if net.load_param(param) != 0 or net.load_model(binf) != 0:
            raise Failed("ncnn cannot load %s" % param)
        ins, outs = net.input_names(), net.output_names()

        def run(arrays):
            ex = net.create_extractor()
            # pnnx's ncnn models take the input without its batch dim; ncnn.Mat borrows the numpy
            # buffer, which must outlive the extraction
            keep = [np.ascontiguousarray(a.astype(np.float32).squeeze(0)) for a in arrays]
            for n, a in zip(ins, keep):
                ex.input(n, ncnn.Mat(a))
            res = []
            for n in outs:
                ret, m = ex.extract(n)
                if ret != 0:
                    raise Failed("ncnn extract %s returned %d" % (n, ret))
                res.append(np.array(m))
            return res
        return run
    if peer in ("iree-vk", "iree-cpu"):
        import iree.runtime as ireert
        vmfb = os.path.join(cdir, "model.vmfb")
        if not os.path.exists(vmfb):
            raise Failed("no IREE module (iree-compile failed)")
        if peer == "iree-cpu":
            ireert.flags.parse_flags("--task_topology_max_group_count=%d" % threads)
        config = ireert.Config("vulkan" if peer == "iree-vk" else "local-task")
        ctx = ireert.SystemContext(config=config)
        with open(vmfb, "rb") as f:
            module = ireert.VmModule.copy_buffer(ctx.instance, f.read())
        ctx.add_vm_module(module)
        names = [n for n in module.function_names if not n.startswith("__") and not n.endswith("$async")]
        fn = getattr(ctx.modules, module.name)[names[0]]

        device = ctx.config.device
        from iree.runtime.array_interop import map_dtype_to_element_type

        def upload(a, align=4096):
            """`a` in a device-local buffer, through a host copy whose address and size are
            multiples of `align`: IREE's Vulkan driver imports the host memory it copies from, and
            lavapipe refuses an import unless pointer and size are multiples of
            minImportedHostPointerAlignment (4096) -- a page-aligned array of 128 bytes is not."""
            a = np.ascontiguousarray(a)
            size = max(1, -(-a.nbytes // align)) * align
            raw = np.zeros(size + align, dtype=np.uint8)
            off = (-raw.ctypes.data) % align
            host = raw[off:off + size]
            host[:a.nbytes] = a.reshape(-1).view(np.uint8)
            buf = device.allocator.allocate_buffer_copy(
                memory_type=ireert.MemoryType.DEVICE_LOCAL, allowed_usage=ireert.BufferUsage.DEFAULT,
                device=device, buffer=host)
            return ireert.HalBufferView(buf, list(a.shape), map_dtype_to_element_type(a.dtype))

        def download(r):
            """A result on the host: copied by the device queue into a mappable host-local
            buffer (DeviceArray.to_host would import a numpy allocation, refused as above)."""
            view = r._buffer_view
            dst = device.allocator.allocate_buffer(
                memory_type=ireert.MemoryType.HOST_LOCAL | ireert.MemoryType.DEVICE_VISIBLE,
                allowed_usage=ireert.BufferUsage.TRANSFER | ireert.BufferUsage.MAPPING,
                allocation_size=view.byte_length)
            done = device.create_semaphore(0)
            device.queue_copy(view.get_buffer(), dst, [], [(done, 1)])
            done.wait(1)
            return np.array(dst.map().asarray(r.shape, r.dtype))

        def run(arrays):
            # inputs uploaded and results read back inside the timed run, as every peer is handed
            # host arrays and returns them
            if peer != "iree-vk":
                res = fn(*arrays)
                res = res if isinstance(res, (list, tuple)) else [res]
                return [np.asarray(r.to_host() if hasattr(r, "to_host") else r) for r in res]
            res = fn(*[upload(a) for a in arrays])
            return [download(r) for r in (res if isinstance(res, (list, tuple)) else [res])]
        return run
    onnx_path = os.path.join(mdir, "model.onnx")
    if peer == "ort-cpu":
        import onnxruntime as ort
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        sess = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])
        names = [i.name for i in sess.get_inputs()]
        return lambda arrays: sess.run(None, dict(zip(names, arrays)))
    if peer == "openvino-cpu":
        import openvino as ov
        core = ov.Core()
        compiled = core.compile_model(core.read_model(onnx_path), "CPU", {
            "INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"})
        req = compiled.create_infer_request()

        def run(arrays):
            res = req.infer(arrays)
            return [np.array(res[o]) for o in compiled.outputs]
        return run
    if peer == "torch-cpu":
        import torch
        torch.set_num_threads(threads)
        spec = build_spec(os.path.basename(mdir))
        model = spec.model.eval()

        def run(arrays):
            with torch.no_grad():
                out = model(*[torch.from_numpy(a) for a in arrays])
            out = out if isinstance(out, (list, tuple)) else [out]
            return [o.numpy() for o in out]
        return run
    if peer == "tvm-cpu":
        import importlib.util
        import tvm
        from tvm import relax
        spec = importlib.util.spec_from_file_location("relax_model_" + os.path.basename(mdir),
                                                      os.path.join(cdir, "model.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        lib = os.path.join(cdir, "model_llvm.so")
        if os.path.exists(lib):
            executable = tvm.runtime.load_module(lib)
        else:
            with tvm.transform.PassContext(opt_level=3):
                executable = mod.compile_module(mod.load_model(), target="llvm")
            executable.export_library(lib + ".tmp.so")
            os.replace(lib + ".tmp.so", lib)
            executable = tvm.runtime.load_module(lib)
        vm = relax.VirtualMachine(executable, tvm.cpu(0))
        fn = vm[mod.FUNC_NAME]

        def flat(v):
            if hasattr(v, "numpy"):
                return [v.numpy()]
            return [a for x in v for a in flat(x)]
        return lambda arrays: flat(fn(*[mod.to_tensor(a) for a in arrays]))
    raise Failed("unknown peer %s" % peer)


def worker(peer, threads):
    import numpy as np
    runners, inputs = {}, {}
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req["op"] == "load":
                mdir, name = req["model_dir"], req["model"]
                meta = json.load(open(os.path.join(mdir, "meta.json")))
                arrays = [np.load(os.path.join(mdir, "in_%d.npy" % i)) for i in range(len(meta["inputs"]))]
                golden = [np.load(os.path.join(mdir, "out_%d.npy" % i)) for i in range(meta["outputs"])]
                t0 = time.perf_counter()
                run = make_runner(peer, mdir, req["conv_dir"], threads)
                load_s = time.perf_counter() - t0
                ok, err, msg = compare(run(arrays), golden, req["tol"])
                runners[name], inputs[name] = run, arrays
                ans = {"ok": ok, "max_abs": err, "msg": msg, "load_s": load_s}
            elif req["op"] == "time":
                run, arrays = runners[req["model"]], inputs[req["model"]]
                for _ in range(req["warmup"]):
                    run(arrays)
                ms, start = [], time.perf_counter()
                for _ in range(req["runs"]):
                    t0 = time.perf_counter()
                    run(arrays)
                    ms.append((time.perf_counter() - t0) * 1e3)
                    if len(ms) >= 3 and time.perf_counter() - start > req["budget"]:
                        break
                ms.sort()
                ans = {"ok": True, "p50": percentile(ms, 50), "p90": percentile(ms, 90), "runs": len(ms)}
            elif req["op"] == "version":
                ans = {"ok": True, "version": peer_version(peer)}
            else:
                ans = {"ok": False, "msg": "bad request"}
        except Exception as err:  # noqa: BLE001  a peer's own error is a table entry
            ans = {"ok": False, "error": True, "msg": "%s: %s" % (type(err).__name__, str(err).split("\n")[0][:400])}
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()
    return 0


def peer_version(peer):
    from importlib import metadata
    pkgs = {"ncnn-vk": ["ncnn", "pnnx"], "ncnn-cpu": ["ncnn", "pnnx"], "iree-vk": ["iree-base-runtime",
            "iree-base-compiler"], "iree-cpu": ["iree-base-runtime", "iree-base-compiler"],
            "ort-cpu": ["onnxruntime"], "openvino-cpu": ["openvino"], "tvm-cpu": ["apache-tvm"], "torch-cpu": ["torch"]}
    return ", ".join("%s %s" % (p, metadata.version(p)) for p in pkgs[peer])


class Worker:
    """One peer with one model loaded, in its own process; a request past its timeout kills it."""

    def __init__(self, peer, python, threads):
        self.peer = peer
        self.dead = None
        self.proc = subprocess.Popen([python, os.path.abspath(__file__), "--worker", peer, "--threads", str(threads)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env=dict(os.environ, **thread_env(threads)), cwd="/")

    def ask(self, timeout, **req):
        if self.dead:
            return {"ok": False, "error": True, "msg": self.dead}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.proc.kill()
            self.proc.wait()
            self.dead = "%s took over %d s (killed)" % ("load + first inference" if req["op"] == "load" else
                                                        "the timed runs", timeout)
            return {"ok": False, "error": True, "msg": self.dead}
        line = self.proc.stdout.readline()
        if not line:
            self.dead = "worker exited (%s)" % self.proc.wait()
            return {"ok": False, "error": True, "msg": self.dead}
        return json.loads(line)

    def close(self):
        if not self.dead:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:  # a runtime's threads keep it busy
                self.proc.kill()
                self.proc.wait()


# ---------------------------------------------------------------------------------------------
# conversions (cached in --work)

def venv_python(tier):
    args = ["bash", os.path.join(ROOT, "scripts", "install_venv.sh")] + ([tier] if tier else [])
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit("bench_peers: %s failed:\n%s" % (" ".join(args), proc.stderr[-2000:]))
    return proc.stdout.strip().splitlines()[-1]


def cached(stamp, fn, remember_failure=True):
    """Runs fn() unless `stamp` exists; with remember_failure a failure is remembered
    (stamp.failed: the peers' converters are pinned, so it would fail again) and re-raised;
    without (msc-codegen's own projects: the binary and templates change) it is tried again on
    the next run."""
    if os.path.exists(stamp):
        return
    if os.path.exists(stamp + ".failed"):
        if remember_failure:
            raise Failed(open(stamp + ".failed").read())
        os.remove(stamp + ".failed")
    try:
        fn()
    except Failed as err:
        if remember_failure:
            with open(stamp + ".failed", "w") as f:
                f.write(str(err))
        raise
    open(stamp, "w").close()


def convert(peer, name, mdir, work, binary, peers_bin, threads):
    """Prepare `peer` for model `name`; returns its conversion folder. Raises Failed."""
    meta = json.load(open(os.path.join(mdir, "meta.json")))
    if peer in ("msc-vk", "msc-vk-fp16"):
        proj = os.path.join(work, name, peer)

        def do():
            shutil.rmtree(proj, ignore_errors=True)
            try:
                generate(binary, mdir, "vulkan", proj, ["--precision", "fp16"] if peer.endswith("fp16") else [])
                build_vulkan(proj, env={"CMAKE_CXX_COMPILER_LAUNCHER": "ccache", "CCACHE_BASEDIR": work})
            except SystemExit as err:  # bench_vulkan.run's failure
                raise run_failure(err)
        cached(proj + ".done", do, remember_failure=False)
        return proj
    if peer == "tvm-cpu":
        proj = os.path.join(work, name, "relax")

        def do():
            shutil.rmtree(proj, ignore_errors=True)
            try:
                generate(binary, mdir, "relax", proj)
            except SystemExit as err:
                raise run_failure(err)
        cached(proj + ".done", do, remember_failure=False)
        return proj
    if peer in ("ncnn-vk", "ncnn-cpu"):
        out = os.path.join(work, name, "ncnn")

        def do():
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            shutil.copy(os.path.join(mdir, "model.onnx"), os.path.join(out, "model.onnx"))
            shapes = ",".join("[%s]%s" % (",".join(map(str, s)), {"float32": "f32", "int64": "i64"}.get(d, d))
                              for s, d in meta["inputs"])
            log = sh([os.path.join(peers_bin, "pnnx-bin"), "model.onnx", "inputshape=" + shapes], cwd=out)
            with open(os.path.join(out, "pnnx.log"), "w") as f:
                f.write(log)
            if not os.path.exists(os.path.join(out, "model.ncnn.param")):
                unsupported = sorted(set(re.findall(r"(?:not supported|unsupported|ignore)\S*\s+(\S+)", log)))
                raise Failed("pnnx wrote no ncnn model%s" % (": " + ", ".join(unsupported) if unsupported else ""))
            # pnnx keeps ops ncnn has no layer for as their pnnx names; ncnn then refuses to load them
            with open(os.path.join(out, "model.ncnn.param")) as f:
                layers = [ln.split()[0] for ln in f.read().splitlines()[2:] if ln.strip()]
            odd = sorted({t for t in layers if "." in t})
            if odd:
                raise Failed("pnnx: ops without an ncnn layer: %s" % ", ".join(odd))
        cached(out + ".done", do)
        return out
    if peer in ("iree-vk", "iree-cpu"):
        out = os.path.join(work, name, peer)

        def do():
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            mlir = os.path.join(work, name, "model.mlir")
            if not os.path.exists(mlir):
                sh([os.path.join(peers_bin, "iree-import-onnx"), os.path.join(mdir, "model.onnx"), "-o", mlir + ".tmp"])
                os.replace(mlir + ".tmp", mlir)
            target = (["--iree-hal-target-backends=vulkan-spirv"] if peer == "iree-vk" else
                      ["--iree-hal-target-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"])
            try:
                sh([os.path.join(peers_bin, "iree-compile"), mlir] + target + ["-o", os.path.join(out, "model.vmfb")])
            except Failed as err:  # name the op, not the whole MLIR line
                op = re.search(r'failed to legalize operation .*?name = "([\w.]+)"', str(err))
                raise Failed("iree-compile: %s not legalized (%s)" % (op.group(1), re.sub(r".*error: ", "", str(err))[:160])
                             if op else str(err))
        cached(out + ".done", do)
        return out
    return os.path.join(work, name)  # ort-cpu, openvino-cpu, torch-cpu read the export itself


# ---------------------------------------------------------------------------------------------
# report

def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for ln in f:
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    try:
        vk = subprocess.run(["vulkaninfo", "--summary"], capture_output=True, text=True).stdout
        fields = dict(re.findall(r"^\s*(deviceName|driverInfo|apiVersion)\s*=\s*(.+)$", vk, re.M))
        driver = "%s, %s, Vulkan %s" % (fields.get("deviceName", "?"), fields.get("driverInfo", "?"),
                                        fields.get("apiVersion", "?"))
    except OSError:
        driver = "vulkaninfo not found"
    return cpu, os.cpu_count(), driver


def fmt(v):
    return "-" if v is None else ("%.2f" % v if v < 100 else "%.1f" % v)


def ratio_line(res, msc, peers):
    """msc p50 / the best (smallest p50) of `peers` that passed; (text, value)."""
    if res.get(msc, {}).get("p50") is None:
        return "-", None
    best = [(res[p]["p50"], p) for p in peers if res.get(p, {}).get("p50") is not None]
    if not best:
        return "-", None
    t, p = min(best)
    r = res[msc]["p50"] / t
    return "%.2f (%s)" % (r, p), r


def profile_rows(out, n):
    """The header and the `n` costliest op types of a `model --profile` output (harness.cc
    PrintProfile: stem, dispatches, ms per inference, share of GPU time), then its start-up section
    (PrintPipelines: pipelines created, host ms) with the 3 costliest shader modules."""
    lines = out.splitlines()

    def section(prefix, k, what):
        for i, ln in enumerate(lines):
            if ln.startswith(prefix):
                rows = []
                for r in lines[i + 1:]:
                    if not r.startswith("  "):
                        break
                    rows.append(r)
                return [ln] + rows[:k] + (["  ... %d more %s" % (len(rows) - k, what)] if len(rows) > k else [])
        return []
    got = section("profile:", n, "op types") + section("pipelines:", 3, "shader modules")
    return got or ["(no profile in the output)"]


def render(results, peers, models, info, profiles=None):
    out = [MARK_BEGIN, "", "Generated by `%s` on %s." % (info["command"], info["date"]), "",
           "- machine: %s, %d cores; load average %s at start, %s at end" % (
               info["cpu"], info["cores"], info["load_start"], info["load_end"]),
           "- Vulkan driver: %s (a CPU driver: the Vulkan peers run on the same cores)" % info["driver"],
           "- threads: %d for every peer (see the docstring for each knob); %d timed runs per round after "
           "%d warm-up, %d rounds, median over rounds; budget %gs per measurement" % (
               info["threads"], info["runs"], info["warmup"], info["rounds"], info["budget"]),
           "- models: %s; total wall time %.0f s (exports and builds %s)" % (
               ", ".join(models), info["wall"], "cached" if info["cached"] else "included"),
           "- versions: " + "; ".join("%s: %s" % (p, info["versions"].get(p, "?")) for p in peers),
           "- tolerance: |got - golden| <= tol + tol * |golden|, tol %g (float32 peers), %g (msc-vk-fp16, ncnn-*: "
           "float16 storage)" % (TOL32, TOL16), ""]
    for name in models:
        res = results[name]
        out += ["### %s" % name, "", "| peer | p50 ms | p90 ms | runs | check |", "|---|---:|---:|---:|---|"]
        for p in peers:
            r = res.get(p, {})
            if r.get("status") == "ok":
                out.append("| %s | %s | %s | %s | %s |" % (p, fmt(r.get("p50")), fmt(r.get("p90")), r.get("runs", "-"),
                                                        r.get("msg", "")))
            else:
                out.append("| %s | - | - | - | %s: %s |" % (p, r.get("status", "?").upper(),
                                                          r.get("msg", "").replace("|", "/")))
        out.append("")
        for msc in ("msc-vk", "msc-vk-fp16"):
            if msc not in peers:
                continue
            parts = []
            for label, group in (("best Vulkan peer", ["ncnn-vk", "iree-vk"]), ("ort-cpu", ["ort-cpu"]),
                                 ("best CPU peer", [p for p in PEERS if PEERS[p][0] == "cpu"])):
                parts.append("vs %s %s" % (label, ratio_line(res, msc, group)[0]))
            out.append("%s p50 ratio (< 1: msc-codegen faster): %s" % (msc, "; ".join(parts)) + "  ")
        out.append("")
    if profiles:
        out += ["### Appendix: where msc-codegen's Vulkan time goes (`model --bench N --profile`)", "",
                "GPU time per op type from timestamp queries around every dispatch (mean per inference; "
                "conv rows split by algorithm), the costliest first; then the start-up: host time creating "
                "the pipelines, per shader module.", ""]
        for (name, p), rows in sorted(profiles.items()):
            out += ["%s, %s:" % (name, p), "", "```"] + rows + ["```", ""]
    out.append(MARK_END)
    return "\n".join(out)


def write_doc(block):
    path = os.path.join(ROOT, "docs", "performance.md")
    text = open(path).read() if os.path.exists(path) else "# Performance\n"
    if MARK_BEGIN in text and MARK_END in text:
        text = text[:text.index(MARK_BEGIN)] + block + text[text.index(MARK_END) + len(MARK_END):]
    else:
        if HEADING not in text:
            text = text.rstrip("\n") + "\n\n" + HEADING + "\n"
        i = text.index(HEADING) + len(HEADING)
        text = text[:i] + "\n\n" + block + "\n" + text[i:].lstrip("\n")
    with open(path, "w") as f:
        f.write(text if text.endswith("\n") else text + "\n")
    return path


# ---------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    ap.add_argument("--peers", nargs="+", default=list(PEERS), choices=list(PEERS))
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--budget", type=float, default=60.0,
                    help="seconds per measurement after which the runs stop (at least 3 ran)")
    ap.add_argument("--load-timeout", type=int, default=300,
                    help="seconds a peer may take to load a model and run it once (else: no run)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default=os.path.join(CACHE, "bench-peers"),
                    help="exports, conversions and builds, reused across runs")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "msc-codegen"))
    ap.add_argument("--no-write", action="store_true", help="do not touch docs/performance.md")
    ap.add_argument("--no-profile", action="store_true", help="no per-kernel profile appendix")
    ap.add_argument("--profile-rows", type=int, default=8, help="op types per profile in the appendix")
    ap.add_argument("--quick", action="store_true", help="smoke run: --runs 3 --rounds 1 --warmup 1")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--export", nargs=2, metavar=("MODEL", "DIR"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.threads)
    if args.export:
        export_model(*args.export)
        return 0
    if args.quick:
        args.runs, args.rounds, args.warmup = 3, 1, 1
    t_start = time.time()
    load_start = load()
    print("load average at start: %s (%d CPUs)" % (load_start, os.cpu_count()), flush=True)
    if not os.access(args.binary, os.X_OK):
        print("bench_peers: no msc-codegen binary at %s (scripts/build.sh)" % args.binary, file=sys.stderr)
        return 2
    main_py = venv_python(None)
    need_peers = any(PEERS[p][1] == "peers" for p in args.peers)
    peers_py = venv_python("peers") if need_peers else None
    peers_bin = os.path.dirname(peers_py) if peers_py else ""
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    if peers_py:  # the pnnx binary, without its Python wrapper (whose package imports torch)
        pkg = subprocess.run([peers_py, "-c", "import importlib.util as u; "
                              "print(u.find_spec('pnnx').submodule_search_locations[0])"],
                             capture_output=True, text=True).stdout.strip()
        link = os.path.join(peers_bin, "pnnx-bin")
        if pkg and not os.path.exists(link):
            os.symlink(os.path.join(pkg, "pnnx"), link)
    env_threads = thread_env(args.threads)
    os.environ.update(env_threads)
    cached_all = True

    # 1. exports
    for name in args.models:
        mdir = os.path.join(work, name)
        if not os.path.exists(os.path.join(mdir, "meta.json")):
            cached_all = False
            print("export %s ..." % name, flush=True)
            proc = subprocess.run([main_py, os.path.abspath(__file__), "--export", name, mdir], capture_output=True,
                                  text=True, env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")), cwd="/")
            if proc.returncode != 0:
                print("bench_peers: export of %s failed:\n%s" % (name, proc.stderr[-3000:]), file=sys.stderr)
                return 2
            print("  " + proc.stdout.strip().replace("\n", "\n  "), flush=True)

    # 2. conversions, 3. loads + checks
    results = {name: {} for name in args.models}
    workers = {}  # (peer, model) -> Worker
    versions = {}

    def python_of(p):
        return main_py if PEERS[p][1] == "main" else peers_py
    for p in args.peers:
        if PEERS[p][1] is not None:
            w = Worker(p, python_of(p), args.threads)
            v = w.ask(120, op="version")
            versions[p] = v.get("version") or v.get("msg")
            w.close()
        else:
            versions[p] = sh([args.binary, "--version"]).strip()
    wrong = False
    for name in args.models:
        mdir = os.path.join(work, name)
        for p in args.peers:
            tol = TOL16 if PEERS[p][2] else TOL32
            r = results[name][p] = {"tol": tol}
            t0 = time.time()
            try:
                was = [f for f in os.listdir(os.path.join(work, name)) if f.endswith(".done")]
                cdir = convert(p, name, mdir, work, args.binary, peers_bin, args.threads)
                if len([f for f in os.listdir(os.path.join(work, name)) if f.endswith(".done")]) != len(was):
                    cached_all = False
            except Failed as err:
                r.update(status="no conversion", msg=str(err))
                print("%-16s %-13s conversion failed: %s" % (name, p, err), flush=True)
                continue
            if PEERS[p][1] is not None:
                workers[(p, name)] = Worker(p, python_of(p), args.threads)
                ans = workers[(p, name)].ask(args.load_timeout, op="load", model=name, model_dir=mdir, conv_dir=cdir,
                                             tol=tol)
                if ans.get("error"):
                    r.update(status="no run", msg=ans["msg"])
                elif not ans["ok"]:
                    r.update(status="fail", msg=ans["msg"])
                    wrong = True
                else:
                    r.update(status="ok", msg=ans["msg"])
                if r["status"] != "ok":  # not timed: its runtime's threads must not run on
                    workers.pop((p, name)).close()
            else:
                model = os.path.join(cdir, "build", "model")
                proc = subprocess.run([model], capture_output=True, text=True)
                errs = re.findall(r"max_abs=([0-9.e+-]+|nan|inf)", proc.stdout)
                worst = max((float(e) for e in errs), default=float("nan"))
                if "golden check: PASS" in proc.stdout and proc.returncode == 0:
                    r.update(status="ok", msg="max abs err %.2g (tol %g)" % (worst, tol))
                else:
                    r.update(status="fail", msg="golden check failed (exit %d): %s" % (
                        proc.returncode, " | ".join(proc.stdout.strip().splitlines()[-3:])[-300:]))
                    wrong = True
            print("%-16s %-13s %s: %s (%.0f s)" % (name, p, r["status"], r["msg"], time.time() - t0), flush=True)

    # 4. timing, interleaved
    for rnd in range(args.rounds):
        for name in args.models:
            for p in args.peers:
                r = results[name][p]
                if r.get("status") != "ok":
                    continue
                if (p, name) in workers:
                    ans = workers[(p, name)].ask(args.load_timeout + 2 * args.budget, op="time", model=name,
                                                 runs=args.runs, warmup=args.warmup, budget=args.budget)
                    if not ans.get("ok"):
                        r.update(status="no run", msg=ans.get("msg"))
                        continue
                    p50, p90, n = ans["p50"], ans["p90"], ans["runs"]
                else:
                    try:
                        p50, p90, _ = vk_bench(os.path.join(work, name, p, "build", "model"), args.runs,
                                               warmup=args.warmup)
                    except SystemExit as err:
                        r.update(status="no run", msg=str(err)[-300:])
                        continue
                    n = args.runs
                r.setdefault("p50s", []).append(p50)
                r.setdefault("p90s", []).append(p90)
                r["runs"] = n
                print("round %d %-16s %-13s p50 %9.2f ms  p90 %9.2f ms  (%d runs)" % (rnd + 1, name, p, p50, p90, n),
                      flush=True)
    for w in workers.values():
        w.close()
    # 4b. per-kernel profiles of msc-codegen's projects (the appendix): where the time goes
    profiles = {}
    if not args.no_profile:
        for name in args.models:
            for p in ("msc-vk", "msc-vk-fp16"):
                if p in args.peers and results[name].get(p, {}).get("status") == "ok":
                    try:
                        _, _, out = vk_bench(os.path.join(work, name, p, "build", "model"), max(args.runs, 10),
                                             warmup=args.warmup, extra=["--profile"])
                        profiles[(name, p)] = profile_rows(out, args.profile_rows)
                    except SystemExit as err:
                        profiles[(name, p)] = ["(profile failed: %s)" % str(err)[-200:]]
    for name in args.models:
        for p, r in results[name].items():
            if r.get("p50s"):
                r["p50"], r["p90"] = statistics.median(r["p50s"]), statistics.median(r["p90s"])

    # 5. report
    cpu, cores, driver = machine()
    load_end = load()
    argv = [a for a in sys.argv[1:]]
    info = {"command": "python3 scripts/bench_peers.py " + " ".join(argv), "date": time.strftime("%Y-%m-%d"),
            "cpu": cpu, "cores": cores, "driver": driver, "load_start": load_start, "load_end": load_end,
            "threads": args.threads, "runs": args.runs, "warmup": args.warmup, "rounds": args.rounds,
            "budget": args.budget, "wall": time.time() - t_start, "cached": cached_all, "versions": versions}
    block = render(results, args.peers, args.models, info, profiles)
    print("\n" + block)
    print("\nratios (msc p50 / peer p50; < 1: msc-codegen faster):")
    for name in args.models:
        for msc in ("msc-vk", "msc-vk-fp16"):
            if msc in args.peers:
                print("  %-16s %-12s vs best Vulkan %-22s vs ort-cpu %-20s vs best CPU %s" % (
                    name, msc, ratio_line(results[name], msc, ["ncnn-vk", "iree-vk"])[0],
                    ratio_line(results[name], msc, ["ort-cpu"])[0],
                    ratio_line(results[name], msc, [p for p in PEERS if PEERS[p][0] == "cpu"])[0]))
    print("load average at end: %s; wall time %.0f s" % (load_end, time.time() - t_start))
    if not args.no_write:
        print("wrote %s" % write_doc(block))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
