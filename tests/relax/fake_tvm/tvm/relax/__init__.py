"""Fake tvm.relax (see tvm/_impl.py)."""
from .. import _builder as _B
from .. import _impl as _I

BlockBuilder = _B.BlockBuilder
Var = _I.RelaxVar
TensorStructInfo = _I.TensorStructInfo
TupleStructInfo = _I.TupleStructInfo
ShapeExpr = _I.ShapeExpr
Tuple = _I.Tuple
TupleGetItem = _I.TupleGetItem
Expr = _I.Expr
Constant = _I.Constant
PrimValue = _I.PrimValue
PrimStructInfo = _I.PrimStructInfo
ShapeStructInfo = _I.ShapeStructInfo
const = _I.const
VirtualMachine = _B.VirtualMachine
IRModule = _B.IRModule


class _Namespace:
    def __init__(self, name):
        self.__name__ = name

    def __repr__(self):
        return "<fake namespace %s>" % self.__name__


transform = _Namespace("relax.transform")
transform.BindParams = _B.BindParams
transform.LegalizeOps = _B.LegalizeOps
transform.DecomposeOpsForInference = _B.DecomposeOpsForInference
backend = _Namespace("relax.backend")
backend.DispatchSortScan = _B.DispatchSortScan
if _I.FLAVOR == "v0.20":
    build = _B.build

# relax.op.*: one function per entry of relax_ops.json, taking exactly its parameters.
op = _Namespace("relax.op")
for _path in _I.SIGNATURES:
    if not _path.startswith("relax.op."):
        continue
    _ns = op
    _parts = _path.split(".")[2:]
    for _p in _parts[:-1]:
        if not hasattr(_ns, _p):
            setattr(_ns, _p, _Namespace(_ns.__name__ + "." + _p))
        _ns = getattr(_ns, _p)
    setattr(_ns, _parts[-1], _I.make_op(_path))
