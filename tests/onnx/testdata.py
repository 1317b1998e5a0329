"""Writes the backend test suite of the installed ``onnx`` release (the one the importer is built
on, ``scripts/install_onnx.sh``) as test folders, for ``tests/onnx/conformance.py --data``.

    <venv python> tests/onnx/testdata.py [--out DIR]     prints DIR

``DIR`` (default ``$MSC_CACHE/onnx-testdata-<onnx version>``, outside the clone) gets, in the layout
of Debian's libonnx-testdata (``<folder>/<test>/model.onnx`` + ``test_data_set_0/{input,output}_N.pb``):

* ``node/``: every node test the release defines
  (``onnx.backend.test.case.node.collect_testcases()``, the generator behind ONNX's own
  ``onnx/backend/test/data/node``; the PyPI wheel ships the definitions, not the data). The cases
  draw inputs with ``np.random``; it is seeded with 0 before collection, so two runs write the same
  files. Expected outputs are the cases' own (numpy / ONNX reference implementation).
* ``pytorch-converted/``, ``pytorch-operator/``, ``simple/``: copied from the wheel's
  ``onnx/backend/test/data``.
* ``real/``: the wheel's ``real`` tests point at its ``light`` models (``data.json``: real
  architectures with constant-filled weights). ONNX's runner feeds them
  ``Runner.generate_dummy_data(seed=0, random=False)`` and has no stored output; here the same
  input is written as ``input_0.pb`` and ONNX Runtime's output as ``output_N.pb``, and the test
  folder holds a ``reference`` file saying so (``onnxruntime <version>``).

A ``.msc-stamp`` (onnx and onnxruntime versions, this file's hash) makes a second run a no-op.
Needs the project venv (``scripts/install_venv.sh``: onnx, onnxruntime, numpy).
"""
import argparse
import hashlib
import json
import os
import shutil
import sys


def _write_case(case, out_dir, numpy_helper):
    os.makedirs(out_dir)
    with open(os.path.join(out_dir, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    for i, (inputs, outputs) in enumerate(case.data_sets):
        ds = os.path.join(out_dir, "test_data_set_%d" % i)
        os.makedirs(ds)
        for prefix, values, infos in (("input", inputs, case.model.graph.input),
                                      ("output", outputs, case.model.graph.output)):
            for j, v in enumerate(values):
                t = infos[j].type
                if t.HasField("sequence_type"):
                    proto = numpy_helper.from_list(v, infos[j].name)
                elif t.HasField("optional_type"):
                    proto = numpy_helper.from_optional(v, infos[j].name)
                elif t.HasField("map_type"):
                    proto = numpy_helper.from_dict(v, infos[j].name)
                elif hasattr(v, "SerializeToString"):
                    proto = v
                else:
                    proto = numpy_helper.from_array(v, infos[j].name)
                with open(os.path.join(ds, "%s_%d.pb" % (prefix, j)), "wb") as f:
                    f.write(proto.SerializeToString())


def _real(src_data, out, onnx, numpy_helper):
    import numpy as np
    import onnxruntime as ort
    from onnx.backend.test.runner import Runner
    for name in sorted(os.listdir(os.path.join(src_data, "real"))):
        with open(os.path.join(src_data, "real", name, "data.json")) as f:
            info = json.load(f)
        model_path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(src_data)))),
                                  info["url"])
        model = onnx.load(model_path)
        dst = os.path.join(out, "real", name)
        ds = os.path.join(dst, "test_data_set_0")
        os.makedirs(ds)
        shutil.copy(model_path, os.path.join(dst, "model.onnx"))
        inits = {i.name for i in model.graph.initializer}
        feeds = {}
        for x in model.graph.input:
            if x.name in inits:
                continue
            value = Runner.generate_dummy_data(x, seed=0, name=info["model_name"], random=False)
            feeds[x.name] = value
            with open(os.path.join(ds, "input_%d.pb" % (len(feeds) - 1)), "wb") as f:
                f.write(numpy_helper.from_array(value, x.name).SerializeToString())
        opts = ort.SessionOptions()
        opts.log_severity_level = 3  # the light models carry unused initializers ORT warns about
        sess = ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
        for j, (o, v) in enumerate(zip(model.graph.output, sess.run(None, feeds))):
            with open(os.path.join(ds, "output_%d.pb" % j), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(v), o.name).SerializeToString())
        with open(os.path.join(dst, "reference"), "w") as f:
            f.write("onnxruntime %s (ONNX's runner has no stored output for real/ tests)\n" % ort.__version__)


def main():
    import onnx
    import onnxruntime
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cache = os.environ.get("MSC_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msc-codegen")
    ap.add_argument("--out", default=os.path.join(cache, "onnx-testdata-%s" % onnx.__version__))
    args = ap.parse_args()
    with open(__file__, "rb") as f:
        stamp = "onnx %s onnxruntime %s %s" % (onnx.__version__, onnxruntime.__version__,
                                                hashlib.sha256(f.read()).hexdigest())
    stamp_file = os.path.join(args.out, ".msc-stamp")
    if os.path.exists(stamp_file) and open(stamp_file).read().strip() == stamp:
        print(args.out)
        return 0
    import warnings

    import numpy as np
    from onnx import numpy_helper
    tmp = args.out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    np.random.seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import onnx.backend.test.case.node as node_cases
        cases = node_cases.collect_testcases()
    for case in cases:
        _write_case(case, os.path.join(tmp, "node", case.name), numpy_helper)
    src_data = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
    for folder in ("pytorch-converted", "pytorch-operator", "simple"):
        shutil.copytree(os.path.join(src_data, folder), os.path.join(tmp, folder))
    _real(src_data, tmp, onnx, numpy_helper)
    with open(os.path.join(tmp, ".msc-stamp"), "w") as f:
        f.write(stamp + "\n")
    shutil.rmtree(args.out, ignore_errors=True)
    os.rename(tmp, args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
