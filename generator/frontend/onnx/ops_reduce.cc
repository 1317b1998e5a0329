// ONNX reductions and arg-reductions -> MSC reduce optypes (opdefs/reduce.yaml, tensor.yaml).
//
// ReduceSum/Mean/Max/Min/Prod map to sum/mean/max/min/prod; the others are composed as TVM
// v0.20's relax ONNX frontend composes them (python/tvm/relax/frontend/onnx/onnx_frontend.py),
// which is the ONNX spec's formula (onnx/docs/Operators.md):
//   ReduceL1 = sum(|x|), ReduceL2 = sqrt(sum(x * x)), ReduceSumSquare = sum(x * x),
//   ReduceLogSum = log(sum(x)),
//   ReduceLogSumExp = log(sum(exp(x - max(x)))) + max(x) (max and sum keep dims; squeezed after
//   when keepdims=0).
// Axes: the `axes` attr (ReduceSum before opset 13, every other reduction up to opset 17) or
// the constant `axes` input (ReduceSum from opset 13, the others from 18); none = all axes
// ("" in MSC), unless
// noop_with_empty_axes=1 makes the node an identity. keepdims defaults to 1.
// ArgMax/ArgMin -> argmax/argmin (int64); select_last_index=1 is
// (n - 1) - argmax(flip(x, axis)), the first hit in the flipped axis being the last in x.
#include <algorithm>

#include "generator/frontend/onnx/const_eval.h"
#include "generator/frontend/onnx/convert.h"
#include "generator/ir/attr_format.h"

namespace msc::frontend::onnx_import {

namespace {

using C = ConvertContext;
using ir::AttrBool;
using ir::AttrInt;
using ir::AttrInts;

std::string Emit1(C& c, const std::string& optype, const std::vector<std::string>& ins,
                  const ir::OrderedMap<std::string>& attrs, const OutSpec& out) {
  return c.Emit(optype, ins, attrs, {out})[0];
}

/// The axes and keepdims of one reduction node.
struct Reduce {
  std::vector<int64_t> axes;  ///< as written (may be negative); empty = all axes
  bool keepdims = true;
  bool identity = false;  ///< noop_with_empty_axes=1 without axes
  OutSpec in;             ///< the input's spec
  OutSpec out;            ///< the reduced spec (keepdims applied)
  OutSpec kept;           ///< the reduced spec with keepdims=1

  ir::OrderedMap<std::string> MscAttrs(bool keep) const {
    return Attrs({{"axis", axes.empty() ? "" : AttrInts(axes)}, {"keepdims", AttrBool(keep)}});
  }
};

Reduce ReduceArgs(C& c) {
  Reduce r;
  const Value& x = c.In(0);
  r.in = {x.dtype, x.shape, x.prims};
  const int64_t since = ReduceAxesInputSince(c.node.op_type());
  if (c.opset >= since) {
    if (c.attrs.Has("axes"))
      c.Fail("the 'axes' attribute was replaced by input 1 in opset " + std::to_string(since));
    if (c.Has(1)) {
      // A graph input of static shape [0] is known to be empty without being a constant.
      const Value& a = c.In(1);
      const bool known_empty = a.prims.empty() && a.shape.size() == 1 && a.shape[0] == 0;
      if (c.IsConst(1))
        r.axes = c.ConstInts(1);
      else if (!known_empty)
        c.Fail("the axes (input 1 ('" + c.InName(1) +
               "')) must be a constant (an initializer or computable at import): MSC takes them "
               "as a static attribute");
    }
    r.identity = r.axes.empty() && c.attrs.Int("noop_with_empty_axes", 0) != 0;
  } else {
    r.axes = c.attrs.Ints("axes");
  }
  r.keepdims = c.attrs.Int("keepdims", 1) != 0;
  const int64_t rank = c.Rank(0);
  std::vector<bool> reduced(rank, r.axes.empty());
  for (int64_t a : r.axes) {
    const int64_t d = NormAxis(c, a, rank);
    if (reduced[d] && !r.axes.empty()) c.Fail("axes repeat axis " + std::to_string(d));
    reduced[d] = true;
  }
  r.out.dtype = r.kept.dtype = x.dtype;
  for (int64_t d = 0; d < rank; ++d) {
    const std::string prim = x.prims.empty() ? "" : x.prims[d];
    r.kept.shape.push_back(reduced[d] ? 1 : x.shape[d]);
    r.kept.prims.push_back(reduced[d] ? "1" : prim);
    if (reduced[d] && !r.keepdims) continue;
    r.out.shape.push_back(r.kept.shape.back());
    r.out.prims.push_back(r.kept.prims.back());
  }
  if (x.prims.empty()) r.out.prims.clear(), r.kept.prims.clear();
  return r;
}

/// `optype` over the node's axes; `pre` (an elementwise MSC optype applied first: "abs",
/// "square" as x * x) and `post` ("sqrt", "log") compose the L1/L2/log variants.
Converter Reduction(const std::string& optype, const std::string& pre = "",
                    const std::string& post = "") {
  return [optype, pre, post](C& c) {
    const Reduce r = ReduceArgs(c);
    std::string x = c.T(0);
    if (r.identity) return c.Bind(0, x);
    if (pre == "abs") x = Emit1(c, "abs", {x}, {}, r.in);
    if (pre == "square") x = Emit1(c, "multiply", {x, x}, {}, r.in);
    std::string y = Emit1(c, optype, {x}, r.MscAttrs(r.keepdims), r.out);
    if (!post.empty()) y = Emit1(c, post, {y}, {}, r.out);
    c.Bind(0, y);
  };
}

/// log(sum(exp(x - max(x)))) + max(x), numerically stable (TVM's ReduceLogSumExp).
void ReduceLogSumExp(C& c) {
  const Reduce r = ReduceArgs(c);
  const std::string x = c.T(0);
  if (r.identity) return c.Bind(0, x);
  const std::string mx = Emit1(c, "max", {x}, r.MscAttrs(true), r.kept);
  std::string e = Emit1(c, "subtract", {x, mx}, {}, r.in);
  e = Emit1(c, "exp", {e}, {}, r.in);
  std::string y = Emit1(c, "sum", {e}, r.MscAttrs(true), r.kept);
  y = Emit1(c, "log", {y}, {}, r.kept);
  y = Emit1(c, "add", {y, mx}, {}, r.kept);
  if (!r.keepdims)
    y = Emit1(c, "squeeze", {y}, Attrs({{"axis", r.axes.empty() ? "" : AttrInts(r.axes)}}), r.out);
  c.Bind(0, y);
}

/// ArgMax / ArgMin along `axis` (default 0), keepdims (default 1), select_last_index (opset 12).
Converter ArgReduce(const std::string& optype) {
  return [optype](C& c) {
    if (c.Rank(0) == 0) c.Fail("the input is 0-d: it has no axis to reduce");
    const int64_t axis = NormAxis(c, c.attrs.Int("axis", 0), c.Rank(0));
    const bool keepdims = c.attrs.Int("keepdims", 1) != 0;
    const ir::OrderedMap<std::string> attrs =
        Attrs({{"axis", AttrInt(axis)}, {"keepdims", AttrBool(keepdims)}});
    if (!c.attrs.Int("select_last_index", 0)) return void(c.EmitOut(optype, {c.T(0)}, attrs));
    const Value& in = c.In(0);
    const int64_t n = in.shape[axis];
    if (n < 0) c.Fail("select_last_index=1 needs the static size of axis " + std::to_string(axis));
    const OutSpec out = c.Out(0);
    const std::string flipped = Emit1(c, "flip", {c.T(0)}, Attrs({{"axis", AttrInt(axis)}}),
                                      {in.dtype, in.shape, in.prims});
    const std::string first = Emit1(c, optype, {flipped}, attrs, out);
    c.Bind(0, Emit1(c, "subtract", {Scalar(c, out.dtype, static_cast<double>(n - 1)), first}, {},
                    out));
  };
}

}  // namespace

void RegisterReduceOps(ConverterMap& m) {
  m["ReduceSum"] = Reduction("sum");
  m["ReduceMean"] = Reduction("mean");
  m["ReduceMax"] = Reduction("max");
  m["ReduceMin"] = Reduction("min");
  m["ReduceProd"] = Reduction("prod");
  m["ReduceL1"] = Reduction("sum", "abs");
  m["ReduceL2"] = Reduction("sum", "square", "sqrt");
  m["ReduceSumSquare"] = Reduction("sum", "square");
  m["ReduceLogSum"] = Reduction("sum", "", "log");
  m["ReduceLogSumExp"] = ReduceLogSumExp;
  m["ArgMax"] = ArgReduce("argmax");
  m["ArgMin"] = ArgReduce("argmin");
}

}  // namespace msc::frontend::onnx_import
