"""Fake tvm.tirx (TVM after the tir -> tirx rename); absent in the v0.20 flavor."""
from .. import _impl as _I

if _I.FLAVOR != "new":
    raise ImportError("fake tvm (%s): tvm.tirx does not exist yet" % _I.FLAVOR)

PrimExpr = _I.PrimExpr
Var = _I.Var
IntImm = _I.IntImm
FloatImm = _I.FloatImm
globals().update(_I.BINOP_CLASSES)
