// ONNX shape / layout / indexing ops -> MSC tensor and index optypes (opdefs/tensor.yaml,
// index.yaml, reduce.yaml for cumsum/topk, core.yaml for get_item).
//
// The mapping follows TVM v0.20's relax ONNX frontend (python/tvm/relax/frontend/onnx/
// onnx_frontend.py) where that is correct: Reshape -> reshape, Transpose -> permute_dims, Split ->
// split + one get_item per output (MSC's node for a relax TupleGetItem, named "<split>.<k>"),
// Slice -> strided_slice, Gather -> take, Expand -> broadcast_to, Trilu -> tril/triu, TopK ->
// topk + get_item. Where TVM v0.20 is wrong or refuses, the ONNX operator spec
// (onnx/docs/Operators.md, opsets 1-17) decides:
//   * Slice with a negative step: strided_slice with the positive step over the same elements,
//     then flip (exact, and every backend expresses positive strides);
//   * CumSum reverse=1: flip -> cumsum -> flip (TVM flips only the result);
//   * ScatterElements keeps its reduction (TVM drops it);
//   * OneHot maps negative indices to index + depth first (TOPI's one_hot does not);
//   * Compress with a constant condition: take with the constant indices (TVM needs nonzero);
//   * EyeLike, and NonZero of a constant, fold to constants.
// Parameters MSC takes as static attrs (shapes, axes, starts/ends/steps, repeats, k, depth) must
// be import-time constants; anything else fails with a reason naming the input. Ops whose output
// shape depends on run-time values (NonZero, Unique, Compress with a run-time condition) fail.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "generator/frontend/onnx/const_eval.h"
#include "generator/frontend/onnx/convert.h"
#include "generator/frontend/onnx/tensor_proto.h"
#include "generator/ir/attr_format.h"
#include "generator/weights/values.h"

namespace msc::frontend::onnx_import {

namespace {

using C = ConvertContext;
using ir::AttrBool;
using ir::AttrDouble;
using ir::AttrInt;
using ir::AttrInts;

/// Elements of a static shape: 0 when any dim is 0, even after dims whose product overflows (an
/// empty constant; found by fuzz_onnx, a signed overflow here), as weights::ShapeNumel.
int64_t Numel(const std::vector<int64_t>& shape) { return weights::ShapeNumel(shape); }

std::string ShapeStr(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + "]";
}

/// "input k ('name')" for messages.
std::string InputLabel(const C& c, int k) {
  return "input " + std::to_string(k) + " ('" + c.InName(k) + "')";
}

OutSpec Spec(const std::string& dtype, const std::vector<int64_t>& shape) {
  return {dtype, shape, {}};
}

/// The spec of an emitted MSC tensor (a copy: Info() refers into the growing node list).
OutSpec SpecOf(const C& c, const std::string& tensor) {
  const ir::MSCTensor& t = c.Info(tensor);
  return {t.dtype, t.shape, t.prims};
}

/// One MSC node with one output; returns the output tensor.
std::string Emit1(C& c, const std::string& optype, const std::vector<std::string>& ins,
                  const ir::OrderedMap<std::string>& attrs, const OutSpec& out) {
  return c.Emit(optype, ins, attrs, {out})[0];
}

/// Whether MakeTensor / MakeIntTensor write `dtype` (the folder's dtypes).
bool Writable(const std::string& dtype) {
  static const std::set<std::string> kDtypes = {"float32", "float64", "int8",  "int16",
                                                "int32",   "int64",   "uint8", "bool"};
  return kDtypes.count(dtype) > 0;
}

/// Fails unless every dim of input k is static; `what` names the op's need in the message.
void RequireStatic(const C& c, int k, const std::string& what) {
  if (!c.In(k).prims.empty())
    c.Fail(what + " needs the static shape of " + InputLabel(c, k) + ", which has symbolic dims");
}

/// `axis` of input k normalized to [0, rank); a 0-d input has no axis.
int64_t InputAxis(const C& c, int64_t axis, int k) {
  if (c.Rank(k) == 0) c.Fail(InputLabel(c, k) + " is 0-d: it has no axis " + std::to_string(axis));
  return NormAxis(c, axis, c.Rank(k));
}

/// Input k's spec with the static sizes `dims` (axis -> size) put in, other dims (and symbolic
/// ones) kept.
OutSpec Resized(const C& c, int k, const std::map<int64_t, int64_t>& dims) {
  const Value& v = c.In(k);
  OutSpec o{v.dtype, v.shape, v.prims};
  for (const auto& [axis, size] : dims) {
    o.shape[axis] = size;
    if (!o.prims.empty()) o.prims[axis] = std::to_string(size);
  }
  return o;
}

/// Size of `axis` of input k; Fails when it is symbolic (`what` names the need).
int64_t StaticDim(const C& c, int k, int64_t axis, const std::string& what) {
  const int64_t n = c.In(k).shape[axis];
  if (n < 0)
    c.Fail(what + " needs the static size of axis " + std::to_string(axis) + " of " +
           InputLabel(c, k) + ", which is symbolic ('" + c.In(k).prims[axis] + "')");
  return n;
}

[[noreturn]] void FailNotConst(const C& c, int k, const std::string& what) {
  c.Fail(what + " (" + InputLabel(c, k) +
         ") must be a constant (an initializer or computable at import): MSC takes it as a "
         "static attribute");
}

/// The integers of input k: its constant value. An input with a static zero-size shape is known
/// to be empty even when it is a graph input. Fails otherwise.
std::vector<int64_t> IntsInput(const C& c, int k, const std::string& what) {
  if (c.IsConst(k)) return c.ConstInts(k);
  const Value& v = c.In(k);
  if (v.prims.empty() && !v.shape.empty() && Numel(v.shape) == 0) return {};
  FailNotConst(c, k, what);
}

/// The one number of a 0-d or 1-element constant input k.
double ScalarInput(const C& c, int k, const std::string& what) {
  if (!c.IsConst(k)) FailNotConst(c, k, what);
  const std::vector<double> v = c.ConstDoubles(k);
  if (v.size() != 1)
    c.Fail(what + " (" + InputLabel(c, k) + ") must hold one value, it holds " +
           std::to_string(v.size()));
  return v[0];
}

/// ScalarInput as an int64 (an int64 tensor in valid models; float values are truncated). A value
/// outside int64's range is an error (found by tests/fuzz/fuzz_onnx: the cast was undefined).
int64_t IntScalarInput(const C& c, int k, const std::string& what) {
  const double v = ScalarInput(c, k, what);
  if (!FitsInt64(v))
    c.Fail(what + " (" + InputLabel(c, k) + ") is " + AttrDouble(v) + ", not an int64");
  return static_cast<int64_t>(v);
}

/// Binds each present ONNX output k to get_item(k) of the tuple `fields`, named "<producer>.<k>"
/// as MSC names a relax TupleGetItem.
void BindTuple(C& c, const std::vector<std::string>& fields) {
  const std::string producer = fields.at(0).substr(0, fields[0].rfind(':'));
  for (size_t k = 0; k < fields.size(); ++k) {
    if (!c.HasOut(static_cast<int>(k))) continue;
    const OutSpec spec = SpecOf(c, fields[k]);
    auto out = c.Emit("get_item", fields, Attrs({{"index", AttrInt(static_cast<int64_t>(k))}}),
                      {spec}, {}, producer + "." + std::to_string(k));
    c.Bind(static_cast<int>(k), out[0]);
  }
}

/// flip(x, axis) with x's spec.
std::string Flip(C& c, const std::string& x, int64_t axis) {
  return Emit1(c, "flip", {x}, Attrs({{"axis", AttrInt(axis)}}), SpecOf(c, x));
}

// --- shape and layout

/// Reshape: opset 1-4 `shape` attr, opset >= 5 constant `shape` input; a 0 copies the input dim
/// (unless allowzero=1, opset 14), one -1 is inferred. MSC's attr is the resolved shape (relax
/// resolves 0 and -1 against the static input shape).
void Reshape(C& c) {
  std::vector<int64_t> shape =
      c.opset < 5 ? c.attrs.Ints("shape") : IntsInput(c, 1, "the target shape");
  const bool allowzero = c.attrs.Int("allowzero", 0) != 0;
  const Value& x = c.In(0);
  if (!x.prims.empty()) {
    const OutSpec out = c.Out(0);
    // Symbolic dims: the output shape ONNX inferred (-1 for its one symbolic dim at most).
    int64_t unknown = std::count(out.shape.begin(), out.shape.end(), -1);
    if (unknown > 1)
      c.Fail("reshape to " + ShapeStr(shape) + " leaves " + std::to_string(unknown) +
             " symbolic dims; a static reshape attr can infer only one");
    c.EmitOut("reshape", {c.T(0)}, Attrs({{"shape", AttrInts(out.shape)}}));
    return;
  }
  int64_t infer = -1, known = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && !allowzero) {
      if (d >= x.shape.size())
        c.Fail("target shape " + ShapeStr(shape) + ": dim " + std::to_string(d) +
               " is 0 (copy the input dim) but the input has rank " +
               std::to_string(x.shape.size()));
      shape[d] = x.shape[d];
    }
    if (shape[d] == -1) {
      if (infer >= 0) c.Fail("target shape " + ShapeStr(shape) + " has more than one -1");
      infer = static_cast<int64_t>(d);
    } else if (shape[d] < -1) {
      c.Fail("target shape " + ShapeStr(shape) + " has a negative dim other than -1");
    } else if (__builtin_mul_overflow(known, shape[d], &known)) {  // found by fuzz_onnx
      c.Fail("target shape " + ShapeStr(shape) + " has more elements than int64 can count");
    }
  }
  if (infer >= 0) {
    if (known == 0) c.Fail("target shape " + ShapeStr(shape) + " infers -1 next to a 0 dim");
    shape[infer] = Numel(x.shape) / known;
  }
  if (Numel(shape) != Numel(x.shape))
    c.Fail("cannot reshape " + ShapeStr(x.shape) + " to " + ShapeStr(shape));
  c.Bind(0,
         Emit1(c, "reshape", {c.T(0)}, Attrs({{"shape", AttrInts(shape)}}), Spec(x.dtype, shape)));
}

/// Transpose: permute_dims by `perm` ("" = reverse, as relax writes axes=None).
void Transpose(C& c) {
  const int64_t rank = c.Rank(0);
  std::string axes;
  if (c.attrs.Has("perm")) {
    std::vector<int64_t> perm = c.attrs.Ints("perm");
    if (static_cast<int64_t>(perm.size()) != rank)
      c.Fail("perm has " + std::to_string(perm.size()) + " entries for an input of rank " +
             std::to_string(rank));
    std::set<int64_t> seen;
    for (int64_t& p : perm) {
      p = NormAxis(c, p, rank);
      if (!seen.insert(p).second) c.Fail("perm repeats axis " + std::to_string(p));
    }
    axes = AttrInts(perm);
  }
  c.EmitOut("permute_dims", {c.T(0)}, Attrs({{"axes", axes}}));
}

/// Concat along `axis` (opset 1: default 1; later required).
void Concat(C& c) {
  const int64_t axis = c.attrs.Int("axis", c.opset < 4 ? 1 : 0);
  InputAxis(c, axis, 0);
  std::vector<std::string> ins;
  for (int k = 0; k < c.NumInputs(); ++k)
    if (c.Has(k)) ins.push_back(c.T(k));
  c.EmitOut("concat", ins, Attrs({{"axis", AttrInt(axis)}}));
}

/// Split into NumOutputs() pieces along `axis`: sizes from the `split` attr (opset 2-12; opset 1
/// also as input 1), the constant `split` input (opset 13), `num_outputs` (opset 18: pieces of
/// ceil(dim / n), the last smaller), else equal pieces. MSC's
/// indices_or_sections: the section count ("3") for equal pieces, else the split points ("2,5").
void Split(C& c) {
  const int64_t axis = InputAxis(c, c.attrs.Int("axis", 0), 0);
  const int64_t dim = StaticDim(c, 0, axis, "Split");
  const int n = c.NumOutputs();
  std::vector<int64_t> sizes;
  if (c.attrs.Has("split")) {
    if (c.opset >= 13) c.Fail("the 'split' attribute was replaced by input 1 in opset 13");
    sizes = c.attrs.Ints("split");
  } else if ((c.opset == 1 || c.opset >= 13) && c.Has(1)) {
    sizes = IntsInput(c, 1, "the split sizes");
  }
  std::string sections;
  if (sizes.empty() && c.opset >= 18 && c.attrs.Has("num_outputs")) {
    // Split-18: ceil(dim / num_outputs) per piece, the last one smaller when it does not divide.
    const int64_t k = c.attrs.Int("num_outputs", 0);
    if (k != n)
      c.Fail("num_outputs is " + std::to_string(k) + ", the node has " + std::to_string(n) +
             " outputs");
    const int64_t chunk = (dim + n - 1) / n;
    for (int i = 0; i < n; ++i) sizes.push_back(std::clamp<int64_t>(dim - chunk * i, 0, chunk));
    if (dim % n == 0) sizes.clear();  // equal pieces: the section count below
  }
  if (sizes.empty()) {
    if (dim % n != 0)
      c.Fail("cannot split dim " + std::to_string(axis) + " of size " + std::to_string(dim) +
             " into " + std::to_string(n) + " equal pieces");
    sizes.assign(n, dim / n);
    sections = AttrInt(n);
  } else {
    if (static_cast<int>(sizes.size()) != n)
      c.Fail("split has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n) +
             " outputs");
    int64_t total = 0;
    std::vector<int64_t> points;
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (sizes[k] < 0) c.Fail("split size " + std::to_string(sizes[k]) + " is negative");
      total += sizes[k];
      if (k + 1 < sizes.size()) points.push_back(total);
    }
    if (total != dim)
      c.Fail("split sizes " + ShapeStr(sizes) + " sum to " + std::to_string(total) + ", dim " +
             std::to_string(axis) + " has size " + std::to_string(dim));
    sections = points.empty() ? AttrInt(1) : AttrInts(points);
  }
  std::vector<OutSpec> outs;
  for (int64_t s : sizes) outs.push_back(Resized(c, 0, {{axis, s}}));
  auto fields = c.Emit("split", {c.T(0)},
                       Attrs({{"indices_or_sections", sections}, {"axis", AttrInt(axis)}}), outs);
  BindTuple(c, fields);
}

/// Axes of Squeeze / Unsqueeze: the `axes` attr before opset 13, optional input 1 after.
std::vector<int64_t> SqueezeAxes(const C& c) {
  if (c.opset < 13) return c.attrs.Ints("axes");
  return c.Has(1) ? IntsInput(c, 1, "the axes") : std::vector<int64_t>{};
}

/// Squeeze: squeeze over `axes` ("" = every size-1 dim).
void Squeeze(C& c) {
  std::vector<int64_t> axes = SqueezeAxes(c);
  const Value& x = c.In(0);
  for (int64_t a : axes) {
    const int64_t d = InputAxis(c, a, 0);
    if (StaticDim(c, 0, d, "Squeeze") != 1)
      c.Fail("axis " + std::to_string(a) + " has size " + std::to_string(x.shape[d]) +
             ", not 1 (input shape " + ShapeStr(x.shape) + ")");
  }
  if (axes.empty() && !x.prims.empty())
    c.Fail("Squeeze without axes needs the static shape of the input (symbolic dims)");
  c.EmitOut("squeeze", {c.T(0)}, Attrs({{"axis", axes.empty() ? "" : AttrInts(axes)}}));
}

/// Unsqueeze: one expand_dims with the axes as positions of the output (relax's semantics,
/// normalized against the output rank and sorted).
void Unsqueeze(C& c) {
  std::vector<int64_t> axes = SqueezeAxes(c);
  if (axes.empty()) c.Fail("Unsqueeze needs at least one axis");
  const int64_t rank = c.Rank(0) + static_cast<int64_t>(axes.size());
  for (int64_t& a : axes) a = NormAxis(c, a, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    c.Fail("axes repeat an axis: " + ShapeStr(axes));
  c.EmitOut("expand_dims", {c.T(0)}, Attrs({{"axis", AttrInts(axes)}}));
}

/// Slice: opset 1-9 attrs starts/ends/axes; opset >= 10 constant inputs starts, ends, axes, steps.
/// Bounds are clamped as the spec says (numpy rules), then written as non-negative begin/end of a
/// positive stride; a negative step takes the same elements with stride -step and flips them.
void Slice(C& c) {
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = c.attrs.Ints("starts");
    ends = c.attrs.Ints("ends");
    axes = c.attrs.Ints("axes");
  } else {
    starts = IntsInput(c, 1, "starts");
    ends = IntsInput(c, 2, "ends");
    if (c.Has(3)) axes = IntsInput(c, 3, "axes");
    if (c.Has(4)) steps = IntsInput(c, 4, "steps");
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.Fail("starts, ends, axes and steps have different lengths (" + std::to_string(starts.size()) +
           ", " + std::to_string(ends.size()) + ", " + std::to_string(axes.size()) + ", " +
           std::to_string(steps.size()) + ")");
  std::vector<int64_t> begin, end, strides, flips;
  std::map<int64_t, int64_t> sizes;
  std::set<int64_t> seen;
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t& ax = axes[k];
    ax = InputAxis(c, ax, 0);
    if (!seen.insert(ax).second) c.Fail("axes repeat axis " + std::to_string(ax));
    const int64_t n = StaticDim(c, 0, ax, "Slice"), s = steps[k];
    if (s == 0) c.Fail("step 0 on axis " + std::to_string(ax));
    int64_t lo = starts[k], hi = ends[k];
    if (lo < 0) lo += n;
    if (hi < 0) hi += n;
    int64_t count, first;
    if (s > 0) {
      lo = std::clamp<int64_t>(lo, 0, n);
      hi = std::clamp<int64_t>(hi, 0, n);
      count = hi > lo ? (hi - lo + s - 1) / s : 0;
      first = lo;
    } else {
      lo = std::clamp<int64_t>(lo, -1, n - 1);
      hi = std::clamp<int64_t>(hi, -1, n - 1);
      count = lo > hi ? (lo - hi - s - 1) / (-s) : 0;
      first = count ? lo + (count - 1) * s : 0;  // the smallest index taken
      if (count > 1) flips.push_back(ax);
    }
    const int64_t stride = s > 0 ? s : -s;
    begin.push_back(first);
    end.push_back(count ? first + (count - 1) * stride + 1 : first);
    strides.push_back(stride);
    sizes[ax] = count;
  }
  const OutSpec out = Resized(c, 0, sizes);
  std::string y = Emit1(c, "strided_slice", {c.T(0)},
                        Attrs({{"axes", AttrInts(axes)},
                               {"begin", AttrInts(begin)},
                               {"end", AttrInts(end)},
                               {"strides", AttrInts(strides)},
                               {"assume_inbound", AttrBool(false)}}),
                        out);
  for (int64_t ax : flips) y = Flip(c, y, ax);
  c.Bind(0, y);
}

/// Expand: broadcast_to the ONNX output shape (numpy broadcasting of the input with the constant
/// `shape`, which may be shorter or hold 1s); the input itself when nothing changes.
void Expand(C& c) {
  IntsInput(c, 1, "the target shape");
  const OutSpec out = c.Out(0);
  if (out.shape == c.In(0).shape && out.prims == c.In(0).prims) return c.Bind(0, c.T(0));
  c.EmitOut("broadcast_to", {c.T(0)}, Attrs({{"shape", AttrInts(out.shape)}}));
}

/// Tile: opset 1 (inputs tiles, axis: repeat along one axis), opset >= 6 constant `repeats`.
void Tile(C& c) {
  const int64_t rank = c.Rank(0);
  std::vector<int64_t> repeats;
  if (c.opset < 6) {
    const int64_t tiles = IntScalarInput(c, 1, "tiles");
    const int64_t axis = InputAxis(c, IntScalarInput(c, 2, "axis"), 0);
    repeats.assign(rank, 1);
    repeats[axis] = tiles;
  } else {
    repeats = IntsInput(c, 1, "repeats");
  }
  if (static_cast<int64_t>(repeats.size()) != rank)
    c.Fail("repeats has " + std::to_string(repeats.size()) + " entries for rank " +
           std::to_string(rank));
  for (int64_t r : repeats)
    if (r < 1) c.Fail("repeats " + ShapeStr(repeats) + ": MSC's tile repeats are >= 1");
  c.EmitOut("tile", {c.T(0)}, Attrs({{"repeats", AttrInts(repeats)}}));
}

/// Trilu (opset 14): triu (upper=1) / tril with the diagonal offset k (constant input 1).
void Trilu(C& c) {
  const int64_t k = c.Has(1) ? IntScalarInput(c, 1, "k") : 0;
  if (c.Rank(0) < 2)
    c.Fail("the input has rank " + std::to_string(c.Rank(0)) + ", Trilu needs >= 2");
  c.EmitOut(c.attrs.Int("upper", 1) ? "triu" : "tril", {c.T(0)}, Attrs({{"k", AttrInt(k)}}));
}

// --- indexing

/// Gather: take along `axis`; indices may be negative (take counts them from the end).
void Gather(C& c) {
  const int64_t axis = c.attrs.Int("axis", 0);
  InputAxis(c, axis, 0);
  c.EmitOut("take", {c.T(0), c.T(1)}, Attrs({{"axis", AttrInt(axis)}}));
}

void GatherElements(C& c) {
  const int64_t axis = c.attrs.Int("axis", 0);
  InputAxis(c, axis, 0);
  if (c.Rank(1) != c.Rank(0)) c.Fail("indices and data have different ranks");
  c.EmitOut("gather_elements", {c.T(0), c.T(1)}, Attrs({{"axis", AttrInt(axis)}}));
}

void GatherND(C& c) {
  const int64_t batch_dims = c.attrs.Int("batch_dims", 0);
  if (batch_dims < 0) c.Fail("batch_dims " + std::to_string(batch_dims) + " is negative");
  c.EmitOut("gather_nd", {c.T(0), c.T(1)}, Attrs({{"batch_dims", AttrInt(batch_dims)}}));
}

/// ONNX reduction names -> MSC's ("none" = "update").
std::string ScatterReduction(const C& c, const std::vector<std::string>& allowed) {
  std::string r = c.attrs.Str("reduction", "none");
  if (r == "none") r = "update";
  if (std::find(allowed.begin(), allowed.end(), r) == allowed.end())
    c.Fail("reduction '" + c.attrs.Str("reduction", "none") + "' is not supported");
  return r;
}

/// Scatter (opset 9-10) / ScatterElements (11, reduction since 16).
void ScatterElements(C& c) {
  const int64_t axis = c.attrs.Int("axis", 0);
  InputAxis(c, axis, 0);
  const std::string reduction = ScatterReduction(c, {"update", "add", "mul", "max", "min"});
  c.EmitOut("scatter_elements", {c.T(0), c.T(1), c.T(2)},
            Attrs({{"axis", AttrInt(axis)}, {"reduction", reduction}}));
}

void ScatterND(C& c) {
  const std::string reduction = ScatterReduction(c, {"update", "add", "mul", "max", "min"});
  c.EmitOut("scatter_nd", {c.T(0), c.T(1), c.T(2)}, Attrs({{"reduction", reduction}}));
}

/// OneHot: indices (any numeric dtype, cast to int64; negative ones count from depth) expanded to
/// a new dim of size depth at `axis`; values = [off, on] in the output dtype. Indices outside
/// [-depth, depth) are all off in ONNX; one_hot implementations differ there (torch's F.one_hot
/// raises), so only in-range indices are exact.
void OneHot(C& c) {
  const int64_t depth = IntScalarInput(c, 1, "depth");
  if (depth < 1) c.Fail("depth " + std::to_string(depth) + " must be >= 1");
  if (!c.IsConst(2)) FailNotConst(c, 2, "values");
  const std::vector<double> values = c.ConstDoubles(2);
  if (values.size() != 2) c.Fail("values must hold [off_value, on_value]");
  const OutSpec out = c.Out(0);
  // The new axis, normalized against the output rank (TOPI's one_hot mishandles negative axes
  // other than -1).
  const int64_t axis = NormAxis(c, c.attrs.Int("axis", -1), static_cast<int64_t>(out.shape.size()));
  // Integer indices (relax's one_hot and the backends take int32/int64; ONNX casts others to
  // int64), negative ones moved to index + depth.
  const Value& idx = c.In(0);
  const std::string dtype = idx.dtype == "int32" || idx.dtype == "int64" ? idx.dtype : "int64";
  std::string indices;
  if (c.IsConst(0)) {
    std::vector<double> v = c.ConstDoubles(0);
    for (double& e : v) {
      e = std::trunc(e);
      if (e < 0) e += static_cast<double>(depth);
    }
    indices = c.ConstTensor(MakeTensor(dtype, idx.shape, v));
  } else {
    // where(indices < 0, indices + depth, indices)
    const OutSpec like{dtype, idx.shape, idx.prims};
    std::string x = c.T(0);
    if (dtype != idx.dtype) x = Emit1(c, "astype", {x}, Attrs({{"dtype", dtype}}), like);
    const std::string neg =
        Emit1(c, "less", {x, Scalar(c, dtype, 0)}, {}, {"bool", idx.shape, idx.prims});
    const std::string wrapped =
        Emit1(c, "add", {x, Scalar(c, dtype, static_cast<double>(depth))}, {}, like);
    indices = Emit1(c, "where", {neg, wrapped, x}, {}, like);
  }
  c.EmitOut("one_hot", {indices},
            Attrs({{"depth", AttrInt(depth)},
                   {"axis", AttrInt(axis)},
                   {"on_value", AttrDouble(values[1])},
                   {"off_value", AttrDouble(values[0])}}));
}

/// Compress: the slices of the input (flattened when `axis` is absent) where the constant 1-D
/// condition is true -> take with constant indices. A run-time condition gives a run-time shape.
void Compress(C& c) {
  if (!c.IsConst(1))
    c.Fail("the condition (" + InputLabel(c, 1) +
           ") must be a constant: with a run-time condition the output shape is only known at "
           "run time, which MSC's static graphs cannot express");
  const std::vector<double> cond = c.ConstDoubles(1);
  if (c.Rank(1) != 1) c.Fail("the condition must be 1-D");
  RequireStatic(c, 0, "Compress");
  const Value& x = c.In(0);
  std::string data = c.T(0);
  std::vector<int64_t> shape = x.shape;
  int64_t axis = 0;
  if (c.attrs.Has("axis")) {
    axis = InputAxis(c, c.attrs.Int("axis", 0), 0);
  } else {
    shape = {Numel(x.shape)};
    data = Emit1(c, "reshape", {data}, Attrs({{"shape", AttrInts(shape)}}), Spec(x.dtype, shape));
  }
  if (static_cast<int64_t>(cond.size()) > shape[axis])
    c.Fail("the condition has " + std::to_string(cond.size()) + " entries, the axis only " +
           std::to_string(shape[axis]));
  std::vector<int64_t> picked;
  for (size_t k = 0; k < cond.size(); ++k)
    if (cond[k] != 0) picked.push_back(static_cast<int64_t>(k));
  if (picked.empty()) c.Fail("the condition selects nothing (a zero-size output)");
  const std::string indices =
      c.ConstTensor(MakeIntTensor("int64", {static_cast<int64_t>(picked.size())}, picked));
  shape[axis] = static_cast<int64_t>(picked.size());
  c.Bind(0,
         Emit1(c, "take", {data, indices}, Attrs({{"axis", AttrInt(axis)}}), Spec(x.dtype, shape)));
}

/// NonZero: only of a constant (folded to its [rank, count] int64 indices).
void NonZero(C& c) {
  if (!c.IsConst(0))
    c.Fail(
        "the number of non-zero elements, and so the output shape, is only known at run "
        "time, which MSC's static graphs cannot express");
  const Value& x = c.In(0);
  const std::vector<double> v = c.ConstDoubles(0);
  std::vector<int64_t> shape = x.shape.empty() ? std::vector<int64_t>{1} : x.shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> hits;
  for (size_t k = 0; k < v.size(); ++k)
    if (v[k] != 0) hits.push_back(static_cast<int64_t>(k));
  const int64_t n = static_cast<int64_t>(hits.size());
  std::vector<int64_t> out(rank * n);
  for (int64_t j = 0; j < n; ++j) {
    int64_t rem = hits[j];
    for (int64_t d = rank - 1; d >= 0; --d) {
      out[d * n + j] = rem % shape[d];
      rem /= shape[d];
    }
  }
  c.BindConst(0, MakeIntTensor("int64", {rank, n}, out));
}

// --- creation

/// ConstantOfShape: the folder makes small ones constants; a larger one is `full` of a scalar.
void ConstantOfShape(C& c) {
  const std::vector<int64_t> shape = IntsInput(c, 0, "the shape");
  weights::Tensor value = MakeTensor("float32", {}, {0.0});
  if (const onnx::TensorProto* t = c.attrs.Tensor("value")) {
    weights::Tensor v = TensorFromProto(*t, "", c.Label() + " attribute 'value'");
    const std::vector<double> d = TensorDoubles(v);
    if (d.size() != 1) c.Fail("attribute 'value' must hold one element");
    if (!Writable(v.dtype)) c.Fail("attribute 'value' of dtype " + v.dtype + " is not supported");
    value = MakeTensor(v.dtype, {}, d);
  }
  for (int64_t d : shape)
    if (d < 0) c.Fail("shape " + ShapeStr(shape) + " has a negative dim");
  c.Bind(0, Emit1(c, "full", {c.ConstTensor(value)},
                  Attrs({{"shape", AttrInts(shape)}, {"dtype", value.dtype}}),
                  Spec(value.dtype, shape)));
}

/// Range with constant start/limit/delta (the folder makes small ones constants) -> arange.
void Range(C& c) {
  const double start = ScalarInput(c, 0, "start"), limit = ScalarInput(c, 1, "limit"),
               delta = ScalarInput(c, 2, "delta");
  if (delta == 0) c.Fail("delta is 0");
  c.EmitOut("arange", {},
            Attrs({{"start", AttrDouble(start)},
                   {"end", AttrDouble(limit)},
                   {"step", AttrDouble(delta)},
                   {"dtype", c.Out(0).dtype}}));
}

/// EyeLike: a constant of the input's static 2-D shape, 1 on the k-th diagonal.
void EyeLike(C& c) {
  RequireStatic(c, 0, "EyeLike");
  const OutSpec out = c.Out(0);
  if (out.shape.size() != 2) c.Fail("the input must be 2-D");
  const int64_t k = c.attrs.Int("k", 0);
  if (!Writable(out.dtype)) c.Fail("output dtype " + out.dtype + " is not supported");
  const int64_t rows = out.shape[0], cols = out.shape[1];
  std::vector<double> v(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) v[i * cols + i + k] = 1;
  c.BindConst(0, MakeTensor(out.dtype, out.shape, v));
}

// --- scans and sorting

/// CumSum: cumsum along the constant `axis` input; exclusive is cumsum's own attr; reverse=1 is
/// flip -> cumsum -> flip.
void CumSum(C& c) {
  const int64_t axis = InputAxis(c, IntScalarInput(c, 1, "axis"), 0);
  const bool exclusive = c.attrs.Int("exclusive", 0) != 0;
  const bool reverse = c.attrs.Int("reverse", 0) != 0;
  std::string x = c.T(0);
  if (reverse) x = Flip(c, x, axis);
  std::string y =
      Emit1(c, "cumsum", {x},
            Attrs({{"axis", AttrInt(axis)}, {"dtype", ""}, {"exclusive", AttrBool(exclusive)}}),
            SpecOf(c, x));
  if (reverse) y = Flip(c, y, axis);
  c.Bind(0, y);
}

/// TopK: k from the attr (opset 1-9) or the constant input K; outputs values and int64 indices
/// through get_item. sorted=0 leaves the order unspecified, so the sorted result is valid.
void TopK(C& c) {
  const int64_t k = c.opset < 10 ? c.attrs.Int("k", -1) : IntScalarInput(c, 1, "K");
  const int64_t axis = c.attrs.Int("axis", -1);
  const int64_t d = InputAxis(c, axis, 0);
  const int64_t n = StaticDim(c, 0, d, "TopK");
  if (k < 1 || k > n)
    c.Fail("k = " + std::to_string(k) + " is outside [1, " + std::to_string(n) +
           "] (MSC's topk needs k >= 1)");
  const OutSpec values = Resized(c, 0, {{d, k}});
  OutSpec indices = values;
  indices.dtype = "int64";
  auto fields = c.Emit("topk", {c.T(0)},
                       Attrs({{"k", AttrInt(k)},
                              {"axis", AttrInt(axis)},
                              {"ret_type", "both"},
                              {"largest", AttrBool(c.attrs.Int("largest", 1) != 0)},
                              {"dtype", "int64"}}),
                       {values, indices});
  BindTuple(c, fields);
}

// --- ops that reach a converter only when the importer could not fold them

/// Shape of a static input (the folder leaves large or non-foldable constants, e.g. float16
/// weights, to the converter): an int64 constant of dims[start:end] (start/end: opset 15,
/// clamped). Symbolic dims are only known at run time.
void Shape(C& c) {
  const Value& x = c.In(0);
  if (!x.prims.empty())
    c.Fail(
        "the input has symbolic dims: its shape is only known at run time (Shape is folded "
        "at import for static shapes only)");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t start = c.attrs.Int("start", 0), end = c.attrs.Int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  const std::vector<int64_t> dims(x.shape.begin() + start, x.shape.begin() + end);
  c.BindConst(0, MakeIntTensor("int64", {static_cast<int64_t>(dims.size())}, dims));
}

/// Size of a static input: an int64 0-d constant.
void Size(C& c) {
  const Value& x = c.In(0);
  if (!x.prims.empty())
    c.Fail(
        "the input has symbolic dims: its size is only known at run time (Size is folded at "
        "import for static shapes only)");
  c.BindConst(0, MakeIntTensor("int64", {}, {Numel(x.shape)}));
}

void Constant(C& c) {
  if (c.attrs.Has("sparse_value")) c.Fail("sparse constants (sparse_value) are not supported");
  if (c.attrs.Has("value_string") || c.attrs.Has("value_strings"))
    c.Fail("string constants have no MSC dtype");
  c.Fail("no supported value attribute (value, value_float(s), value_int(s))");
}

void Unique(C& c) {
  c.Fail(
      "the number of unique elements, and so the output shape, is only known at run time, "
      "which MSC's static graphs cannot express");
}

// --- sequences: MSC has no sequence type; a sequence whose structure is known at import time
// (SequenceEmpty / SequenceConstruct, items inserted and erased at constant positions) is kept
// as its list of tensors, and the ops that read it become ordinary nodes (ONNX spec, opset 11).

/// The constant position input `k` of a sequence op on `n` items, normalized; `end` is the
/// default when the input is omitted; an insert position may be n (append).
size_t SeqPos(const C& c, int k, size_t n, int64_t end, bool insert) {
  int64_t pos = end;
  if (c.Has(k)) {
    const std::vector<int64_t> v = IntsInput(c, k, "the position");
    if (v.size() != 1) c.Fail("the position must hold one value");
    pos = v[0];
  }
  const auto len = static_cast<int64_t>(n);
  if (pos < 0) pos += len;
  if (pos < 0 || pos > len || (pos == len && !insert))
    c.Fail("position " + std::to_string(pos) + " is out of range for a sequence of " +
           std::to_string(n) + " tensors");
  return static_cast<size_t>(pos);
}

void SequenceInsert(C& c) {
  std::vector<Value> items = c.Seq(0);
  const Value& t = c.In(1);
  if (t.items) c.Fail("input 1 must be a tensor");
  const size_t pos = SeqPos(c, 2, items.size(), static_cast<int64_t>(items.size()), true);
  items.insert(items.begin() + static_cast<std::ptrdiff_t>(pos), t);
  c.BindSeq(0, std::move(items));
}

void SequenceErase(C& c) {
  std::vector<Value> items = c.Seq(0);
  if (items.empty()) c.Fail("erase from an empty sequence");
  const size_t pos = SeqPos(c, 1, items.size(), -1, false);
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(pos));
  c.BindSeq(0, std::move(items));
}

/// ConcatFromSequence: concat along `axis`, or with new_axis = 1 a stack (each item given a new
/// dim at `axis`, which may then be rank).
void ConcatFromSequence(C& c) {
  const std::vector<Value>& items = c.Seq(0);
  if (items.empty()) c.Fail("the sequence is empty");
  const bool new_axis = c.attrs.Int("new_axis", 0) != 0;
  const auto rank = static_cast<int64_t>(items[0].shape.size());
  int64_t axis = c.attrs.Int("axis", 0);
  const int64_t out_rank = rank + (new_axis ? 1 : 0);
  if (axis < -out_rank || axis >= std::max<int64_t>(out_rank, 1))
    c.Fail("axis " + std::to_string(axis) + " is out of range for rank " +
           std::to_string(out_rank));
  if (axis < 0) axis += out_rank;
  std::vector<std::string> ins;
  for (const Value& v : items) {
    std::string t = c.T(v);
    if (new_axis) {
      std::vector<int64_t> shape = v.shape;
      shape.insert(shape.begin() + axis, 1);
      std::vector<std::string> prims = v.prims;
      if (!prims.empty()) prims.insert(prims.begin() + axis, "1");
      t = c.Emit("expand_dims", {t}, Attrs({{"axis", AttrInts({axis})}}),
                 {{v.dtype, shape, prims}})[0];
    }
    ins.push_back(t);
  }
  // ONNX's inference leaves the concatenated dim unknown (it does not track items); with static
  // items it is their sum.
  bool all_static = true;
  OutSpec out{items[0].dtype, items[0].shape, {}};
  if (new_axis) out.shape.insert(out.shape.begin() + axis, 0);
  out.shape[static_cast<size_t>(axis)] = 0;
  for (const Value& v : items) {
    if (static_cast<int64_t>(v.shape.size()) != rank)
      c.Fail("the sequence's tensors differ in rank (" + std::to_string(v.shape.size()) + " and " +
             std::to_string(rank) + ")");
    all_static = all_static && v.prims.empty() && v.dtype == out.dtype;
    out.shape[static_cast<size_t>(axis)] += new_axis ? 1 : v.shape.at(static_cast<size_t>(axis));
  }
  if (!all_static) {
    c.EmitOut("concat", ins, Attrs({{"axis", AttrInt(axis)}}));
    return;
  }
  c.Bind(0, c.Emit("concat", ins, Attrs({{"axis", AttrInt(axis)}}), {out})[0]);
}

}  // namespace

void RegisterTensorOps(ConverterMap& m) {
  m["SequenceEmpty"] = [](C& c) { c.BindSeq(0, {}); };
  m["SequenceConstruct"] = [](C& c) {
    std::vector<Value> items;
    for (int k = 0; k < c.NumInputs(); ++k) {
      if (c.In(k).items) c.Fail("input " + std::to_string(k) + " must be a tensor");
      items.push_back(c.In(k));
    }
    c.BindSeq(0, std::move(items));
  };
  m["SequenceInsert"] = SequenceInsert;
  m["SequenceErase"] = SequenceErase;
  m["SequenceAt"] = [](C& c) {
    const std::vector<Value>& items = c.Seq(0);
    c.BindItem(0, items[SeqPos(c, 1, items.size(), 0, false)]);
  };
  m["SequenceLength"] = [](C& c) {
    c.BindConst(0, MakeIntTensor("int64", {}, {static_cast<int64_t>(c.Seq(0).size())}));
  };
  m["ConcatFromSequence"] = ConcatFromSequence;
  // OptionalGetElement of a tensor (not an optional) is the tensor (ONNX spec, opset 18).
  m["OptionalGetElement"] = [](C& c) {
    if (c.In(0).items) c.Fail("input 0 must be a tensor or an optional tensor");
    c.Bind(0, c.T(0));
  };
  m["Reshape"] = Reshape;
  m["Transpose"] = Transpose;
  m["Concat"] = Concat;
  m["Split"] = Split;
  m["Squeeze"] = Squeeze;
  m["Unsqueeze"] = Unsqueeze;
  m["Slice"] = Slice;
  m["Expand"] = Expand;
  m["Tile"] = Tile;
  m["Trilu"] = Trilu;
  m["Gather"] = Gather;
  m["GatherElements"] = GatherElements;
  m["GatherND"] = GatherND;
  m["Scatter"] = ScatterElements;
  m["ScatterElements"] = ScatterElements;
  m["ScatterND"] = ScatterND;
  m["OneHot"] = OneHot;
  m["Compress"] = Compress;
  m["NonZero"] = NonZero;
  m["ConstantOfShape"] = ConstantOfShape;
  m["Range"] = Range;
  m["EyeLike"] = EyeLike;
  m["CumSum"] = CumSum;
  m["TopK"] = TopK;
  m["Shape"] = Shape;
  m["Size"] = Size;
  m["Constant"] = Constant;
  m["Unique"] = Unique;
}

}  // namespace msc::frontend::onnx_import
