"""Expected `graph.inspect()` results of TVM MSC v0.20 for small torch models.

Transcribed (static-shape variants only) from apache/tvm
`tests/python/contrib/test_msc/test_graph_build.py` (the expected dicts that test compared
with `translate.from_torch(model, input_info)` + `graph.inspect()`): node names, input/output
names (aliases), shapes, dtypes, LAYOUTS (incl. MSC quirks such as "ADBC" for squeeze inputs)
and optype counts.  Cases whose torch semantics we deliberately change (integer indexing) and
ops we do not support are left out.
"""
import torch
from torch.nn import Module

def I(name, shape, layout, dtype="float32"):
    return {"name": name, "shape": shape, "dtype": dtype, "layout": layout}

CASES = []
def case(name, model, shapes, inputs, outputs, nodes):
    CASES.append((name, model, shapes, {"inputs": inputs, "outputs": outputs, "nodes": nodes}))

class Conv2D1(Module):
    def __init__(self): super().__init__(); self.conv = torch.nn.Conv2d(3, 6, 7, bias=True)
    def forward(self, data): return self.conv(data)
class Conv2D2(Module):
    def __init__(self): super().__init__(); self.conv = torch.nn.Conv2d(3, 6, 7, bias=False)
    def forward(self, data): return self.conv(data)
case("conv2d_bias", Conv2D1(), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"NCHW")], [I("conv2d",[1,6,4,4],"NCHW")], {"total": 2, "input": 1, "msc.conv2d_bias": 1})
case("conv2d", Conv2D2(), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"NCHW")], [I("conv2d",[1,6,4,4],"NCHW")], {"total": 2, "input": 1, "nn.conv2d": 1})
class Conv1D1(Module):
    def __init__(self): super().__init__(); self.conv = torch.nn.Conv1d(3, 6, 7, bias=True)
    def forward(self, data): return self.conv(data)
case("conv1d_bias", Conv1D1(), [[1,3,10]], [I("inp_0",[1,3,10],"NCW")], [I("conv1d",[1,6,4],"NCW")], {"total": 2, "input": 1, "msc.conv1d_bias": 1})
class Dense1(Module):
    def __init__(self): super().__init__(); self.linear = torch.nn.Linear(10, 7, bias=True)
    def forward(self, data): return self.linear(data)
class Dense2(Module):
    def __init__(self): super().__init__(); self.linear = torch.nn.Linear(10, 7, bias=False)
    def forward(self, data): return self.linear(data)
class MatMul1(Module):
    def forward(self, x, y): return torch.matmul(x, y)
case("linear_bias", Dense1(), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"NCHW")], [I("matmul",[1,3,10,7],"NCHW")], {"total": 2, "input": 1, "msc.linear_bias": 1})
case("linear", Dense2(), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"NCHW")], [I("matmul",[1,3,10,7],"NCHW")], {"total": 2, "input": 1, "msc.linear": 1})
case("matmul", MatMul1(), [[10,30],[30,20]], [I("inp_0",[10,30],"NC"), I("inp_1",[30,20],"IO")], [I("matmul",[10,20],"NC")], {"total": 3, "input": 2, "matmul": 1})
class BMM(Module):
    def forward(self, x, y): return torch.bmm(x, y)
case("bmm", BMM(), [[1,128,256],[1,256,512]], [I("inp_0",[1,128,256],"NCD"), I("inp_1",[1,256,512],"NIO")], [I("matmul",[1,128,512],"NCD")], {"total": 3, "input": 2, "matmul": 1})
class ReLU(Module):
    def __init__(self): super().__init__(); self.relu = torch.nn.ReLU()
    def forward(self, data): return self.relu(data)
class ReLU1(Module):
    def forward(self, data): return torch.nn.functional.relu(data)
for m in (ReLU(), ReLU1()):
    case("relu", m, [[1,10]], [I("inp_0",[1,10],"AB")], [I("relu",[1,10],"AB")], {"total": 2, "input": 1, "nn.relu": 1})
class ReLU6(Module):
    def __init__(self): super().__init__(); self.relu6 = torch.nn.ReLU6()
    def forward(self, data): return self.relu6(data)
case("relu6", ReLU6(), [[1,10]], [I("inp_0",[1,10],"")], [I("clip",[1,10],"")], {"total": 2, "input": 1, "clip": 1})
for k, kw, out in ((1, dict(kernel_size=[1,1]), [1,3,10,10]), (2, dict(kernel_size=[2,2], dilation=[2,3]), [1,3,4,4]), (3, dict(kernel_size=[4,4], padding=2, stride=2), [1,3,6,6])):
    case(f"maxpool{k}", torch.nn.Sequential(torch.nn.MaxPool2d(**kw)), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"NCHW")], [I("max_pool2d",out,"NCHW")], {"total": 2, "input": 1, "nn.max_pool2d": 1})
for k, kw, out in ((1, dict(kernel_size=[1,1]), [1,3,10,10]), (2, dict(kernel_size=[4,4], stride=2, padding=2, ceil_mode=True), [1,3,6,6])):
    case(f"avgpool{k}", torch.nn.Sequential(torch.nn.AvgPool2d(**kw)), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"NCHW")], [I("avg_pool2d",out,"NCHW")], {"total": 2, "input": 1, "nn.avg_pool2d": 1})
case("adaptive", torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d([10,10])), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"NCHW")], [I("adaptive_avg_pool2d",[1,3,10,10],"NCHW")], {"total": 2, "input": 1, "nn.adaptive_avg_pool2d": 1})
case("flatten", torch.nn.Flatten(2, -1), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"")], [I("reshape",[1,3,100],"")], {"total": 2, "input": 1, "reshape": 1})
case("batchnorm", torch.nn.Sequential(torch.nn.BatchNorm2d(3)), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"NCHW")], [I("batch_norm.0",[1,3,10,10],"NCHW")], {"total": 3, "input": 1, "nn.batch_norm": 1, "get_item": 1})
case("dropout", torch.nn.Sequential(torch.nn.Dropout(0.5)), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"")], [I("inp_0",[1,3,10,10],"")], {"total": 1, "input": 1})
case("layernorm", torch.nn.Sequential(torch.nn.LayerNorm((10,10))), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"NCHW")], [I("layer_norm",[1,3,10,10],"NCHW")], {"total": 2, "input": 1, "nn.layer_norm": 1})
case("silu", torch.nn.Sequential(torch.nn.SiLU()), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"ABCD")], [I("silu",[1,3,10,10],"ABCD")], {"total": 2, "input": 1, "nn.silu": 1})
case("softmax", torch.nn.Sequential(torch.nn.Softmax(dim=1)), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"ABCD")], [I("softmax",[1,3,10,10],"ABCD")], {"total": 2, "input": 1, "nn.softmax": 1})
for opn, fn in (("add", lambda a, b: a + b), ("subtract", lambda a, b: a - b), ("multiply", lambda a, b: a * b), ("divide", lambda a, b: a / b)):
    class B1(Module):
        def __init__(self, f): super().__init__(); self.f = f
        def forward(self, lhs, rhs): return self.f(lhs, rhs)
    class B2(Module):
        def __init__(self, f): super().__init__(); self.f = f
        def forward(self, lhs): return self.f(lhs, 1.0)
    case(opn+"1", B1(fn), [[1,3,10,10]]*2, [I("inp_0",[1,3,10,10],"ABCD"), I("inp_1",[1,3,10,10],"ABCD")], [I(opn,[1,3,10,10],"ABCD")], {"total": 3, "input": 2, opn: 1})
    case(opn+"2", B2(fn), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"ABCD")], [I(opn,[1,3,10,10],"ABCD")], {"total": 3, "input": 1, "constant": 1, opn: 1})
class Squeeze1(Module):
    def forward(self, data): return data.squeeze(1)
class Squeeze2(Module):
    def forward(self, data): return data.squeeze()
case("squeeze1", Squeeze1(), [[10,1,4,1]], [I("inp_0",[10,1,4,1],"ADBC")], [I("squeeze",[10,4,1],"ABC")], {"total": 2, "input": 1, "squeeze": 1})
case("squeeze2", Squeeze2(), [[10,1,4,1]], [I("inp_0",[10,1,4,1],"ACBD")], [I("squeeze",[10,4],"AB")], {"total": 2, "input": 1, "squeeze": 1})
class Unsqueeze1(Module):
    def forward(self, data): return data.unsqueeze(1)
class Unsqueeze2(Module):
    def forward(self, data): return data.unsqueeze(-1)
case("unsqueeze1", Unsqueeze1(), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"ACDE")], [I("expand_dims",[1,1,3,10,10],"ABCDE")], {"total": 2, "input": 1, "expand_dims": 1})
case("unsqueeze2", Unsqueeze2(), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"ABCE")], [I("expand_dims",[1,3,10,10,1],"ABCDE")], {"total": 2, "input": 1, "expand_dims": 1})
class Slice2(Module):
    def forward(self, x): return x[:, None, None, :, None]
case("slice2", Slice2(), [[1,16]], [I("inp_0",[1,16],"AB")], [I("reshape",[1,1,1,16,1],"CDAEB")], {"total": 3, "input": 1, "strided_slice": 1, "reshape": 1})
for nm, fn, opn in (("sigmoid", torch.sigmoid, "sigmoid"), ("gelu", torch.nn.functional.gelu, "nn.gelu"), ("tanh", torch.tanh, "tanh")):
    class U(Module):
        def __init__(self, f): super().__init__(); self.f = f
        def forward(self, data): return self.f(data)
    case(nm, U(fn), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"ABCD")], [I(nm,[1,3,10,10],"ABCD")], {"total": 2, "input": 1, opn: 1})
class Clamp(Module):
    def forward(self, data): return torch.clamp(data, min=0.1, max=0.5)
case("clamp", Clamp(), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"")], [I("clip",[1,3,10,10],"")], {"total": 2, "input": 1, "clip": 1})
class Split1(Module):
    def forward(self, data): return torch.split(data, 1, dim=1)
class Split2(Module):
    def forward(self, data): return torch.split(data, [1, 2], dim=1)
class Chunk(Module):
    def forward(self, data): return torch.chunk(data, 3, dim=1)
class Mean(Module):
    def forward(self, data): return data.mean(-1)
class MeanKeepDim(Module):
    def forward(self, data): return data.mean(-1, keepdim=True)
case("mean1", Mean(), [[1,256]], [I("inp_0",[1,256],"AB")], [I("mean",[1],"A")], {"total": 2, "input": 1, "mean": 1})
case("mean2", MeanKeepDim(), [[1,256]], [I("inp_0",[1,256],"AB")], [I("mean",[1,1],"AB")], {"total": 2, "input": 1, "mean": 1})
class Permute(Module):
    def forward(self, x): return x.permute(0, 3, 2, 1)
case("permute", Permute(), [[1,2,3,4]], [I("inp_0",[1,2,3,4],"ADCB")], [I("permute_dims",[1,4,3,2],"ABCD")], {"total": 2, "input": 1, "permute_dims": 1})
class Reshape(Module):
    def forward(self, x): return x.reshape(-1, 12)
class View(Module):
    def forward(self, x): return x.view(-1, 12)
for m in (Reshape(), View()):
    case("reshape", m, [[1,2,3,4]], [I("inp_0",[1,2,3,4],"")], [I("reshape",[2,12],"")], {"total": 2, "input": 1, "reshape": 1})
class Transpose(Module):
    def forward(self, x): return x.transpose(1, 3)
case("transpose", Transpose(), [[1,2,3,4]], [I("inp_0",[1,2,3,4],"ADCB")], [I("permute_dims",[1,4,3,2],"ABCD")], {"total": 2, "input": 1, "permute_dims": 1})
class Cat1(Module):
    def forward(self, data, data1, data2): return torch.cat((data, data1, data2), dim=1)
case("cat", Cat1(), [[1,3,10,10]]*3, [I("inp_0",[1,3,10,10],""), I("inp_1",[1,3,10,10],""), I("inp_2",[1,3,10,10],"")], [I("concat",[1,9,10,10],"ABCD")], {"total": 4, "input": 3, "concat": 1})
class Ident1(Module):
    def forward(self, x): return (x,)
case("unit_tuple", Ident1(), [[1,256]], [I("inp_0",[1,256],"")], [I("tuple",[1,256],"")], {"total": 2, "input": 1, "tuple": 1})
class Ident2(Module):
    def forward(self, x, y): return (x, y)
case("tuple2", Ident2(), [[1,256],[2,256]], [I("inp_0",[1,256],""), I("inp_1",[2,256],"")], [I("tuple_0",[1,256],""), I("tuple_1",[2,256],"")], {"total": 3, "input": 2, "tuple": 1})
case("split1", Split1(), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"ABCD")], [I(f"split_{i}",[1,1,10,10],"ABCD") for i in range(3)], {"total": 2, "input": 1, "split": 1})
case("split2", Split2(), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"ABCD")], [I("split_0",[1,1,10,10],"ABCD"), I("split_1",[1,2,10,10],"ABCD")], {"total": 2, "input": 1, "split": 1})
case("chunk", Chunk(), [[1,3,10,10]], [I("inp_0",[1,3,10,10],"ABCD")], [I(f"split_{i}",[1,1,10,10],"ABCD") for i in range(3)], {"total": 2, "input": 1, "split": 1})
