"""A FAKE `tvm` package for tests: NOT Apache TVM. See tests/relax/fake_tvm/README.md.

Just enough of TVM's Python API for generated relax projects to run end to end: the calls are
checked against the signatures in relax_ops.json / relax_api_extra.json and recorded, relax ops
are evaluated with PyTorch. FAKE_TVM_FLAVOR=v0.20 (default) or new (post-v0.20 renames).
"""
from . import _builder, _impl
from ._builder import IRModule, cpu
from ._impl import FLAVOR

__version__ = "0.0.0-fake"
IS_FAKE = True


class _Namespace:
    def __init__(self, name, **members):
        self.__name__ = name
        self.__dict__.update(members)

    def __repr__(self):
        return "<fake namespace %s>" % self.__name__


arith = _Namespace("tvm.arith", Analyzer=_impl.Analyzer)
transform = _Namespace("tvm.transform", PassContext=_builder.PassContext)
target = _Namespace("tvm.target", Target=_builder.Target)
runtime = _Namespace("tvm.runtime")
if FLAVOR == "v0.20":
    nd = _Namespace("tvm.nd", array=_impl.make_array("tvm.nd.array"))
elif FLAVOR == "new":
    runtime.tensor = _impl.make_array("tvm.runtime.tensor")
    compile = _builder.compile  # noqa: A001
else:
    raise ImportError("FAKE_TVM_FLAVOR must be v0.20 or new, got %r" % FLAVOR)

from . import relax  # noqa: E402,F401
