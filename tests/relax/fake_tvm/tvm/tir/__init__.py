"""Fake tvm.tir (TVM v0.20); with FAKE_TVM_FLAVOR=new it is gone, as after the tirx rename."""
from .. import _impl as _I

if _I.FLAVOR != "v0.20":
    raise ImportError("fake tvm (%s): tvm.tir does not exist, use tvm.tirx" % _I.FLAVOR)

PrimExpr = _I.PrimExpr
Var = _I.Var
IntImm = _I.IntImm
FloatImm = _I.FloatImm
globals().update(_I.BINOP_CLASSES)
