// Elementwise ops: binary (shaders/common/binary.glsl), unary and conversions
// (shaders/common/unary.glsl), where / masked_fill (shaders/common/where.glsl) and the creation
// ops (shaders/common/fill.glsl, unary.glsl for full, one_hot.glsl, shape.comp), and fused
// elementwise chains (shaders/ew_chain.comp).
#include <cmath>
#include <limits>

#include "error.h"
#include "ops_internal.h"
#include "shader_registry.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::DTypeCode;
using detail::Fail;
using detail::U32;

// Element strides of `t` when read at the positions of `out` (numpy broadcasting: 0 on
// broadcast and missing leading dims).
std::vector<int64_t> BroadcastStrides(const Shape& t, const Shape& out) {
  std::vector<int64_t> own = detail::ContiguousStrides(t), s(out.size(), 0);
  const size_t lead = out.size() - t.size();
  for (size_t d = 0; d < t.size(); ++d) s[lead + d] = t[d] == 1 ? 0 : own[d];
  return s;
}

// ---- binary ----------------------------------------------------------------------------------

enum class Kind { kArith, kCompare, kLogical, kBitwise };
struct BinaryDef {
  const char* optype;
  uint32_t code;  // shaders/common/binary_ops.glsl B_*
  Kind kind;
};
// shaders/common/binary_ops.glsl's `msc_vk:binary` lines (cmake/OpTables.cmake).
constexpr BinaryDef kBinary[] = {
#include "binary_table.inc"
};

bool IsFloat(DType d) { return d == DType::kFloat32 || d == DType::kFloat16; }

// Dtype rules (torch promotion, as the relax backend's casts): arithmetic and bitwise ops
// compute in y's dtype (the promoted one; inputs of other dtypes are converted), comparisons in
// float32 when an input is a float else in integers, logical ops on truth values; comparisons
// and logical ops produce bool.
void BinaryImpl(Program& p, const BinaryDef& def, const char* stem, const Tensor& a,
                const Tensor& b, const Tensor& y) {
  const char* optype = def.optype;
  const uint32_t at = DTypeCode(optype, y, a), bt = DTypeCode(optype, y, b),
                 ct = DTypeCode(optype, y, y);
  if (def.kind == Kind::kBitwise) {
    for (const Tensor* t : {&a, &b, &y}) {
      if (IsFloat(t->dtype)) Fail(optype, y, "takes integer or bool tensors, got " + t->Describe());
    }
  }
  if ((def.kind == Kind::kCompare || def.kind == Kind::kLogical) && y.dtype != DType::kBool)
    Fail(optype, y, "output " + y.Describe() + " must be bool");
  const bool fdom = def.kind == Kind::kArith     ? IsFloat(y.dtype)
                    : def.kind == Kind::kCompare ? IsFloat(a.dtype) || IsFloat(b.dtype)
                                                 : false;
  Shape out;
  if (!detail::BroadcastShapes(a.shape, b.shape, &out) || out != y.shape) {
    Fail(optype, y,
         "output " + y.Describe() + " is not the broadcast of " + a.Describe() + " and " +
             b.Describe());
  }
  const int64_t total = y.numel();
  if (total == 0) return;
  struct {
    uint32_t shape[6], a_stride[6], b_stride[6], total, div_m[6], div_s;
  } push{};
  push.total = U32(total, optype, y, "elements");
  // vec4 modes: float32 arithmetic only (binary.glsl MODE 1..4).
  const bool f32 = a.dtype == DType::kFloat32 && b.dtype == DType::kFloat32 &&
                   y.dtype == DType::kFloat32 && def.kind == Kind::kArith;
  uint32_t mode = 0, ndims = 6;
  if (f32 && total % 4 == 0 && a.numel() == total && b.numel() == total)
    mode = 1;
  else if (f32 && total % 4 == 0 && a.numel() == total && b.numel() == 1)
    mode = 2;
  else if (f32 && total % 4 == 0 && a.numel() == 1 && b.numel() == total)
    mode = 3;
  if (mode == 0) {
    detail::Collapsed c = detail::Collapse(
        out, {BroadcastStrides(a.shape, out), BroadcastStrides(b.shape, out)}, optype, y, 6);
    const detail::NdIndex nd = detail::MakeNdIndex(c.shape, optype, y);
    for (int d = 0; d < 6; ++d) {
      push.shape[d] = nd.shape[d];
      push.div_m[d] = nd.div_m[d];
      push.a_stride[d] = U32(c.strides[0][d], optype, y, "stride");
      push.b_stride[d] = U32(c.strides[1][d], optype, y, "stride");
    }
    push.div_s = nd.div_s;
    ndims = nd.ndims;
    if (f32 && c.shape[5] % 4 == 0) mode = 4;  // 4 outputs per invocation along the innermost dim
  }
  const View va = (mode == 1 || mode == 2 || mode == 4) ? View::kTexelUvec4 : View::kTexelUint;
  const View vb = (mode == 1 || mode == 3 || mode == 4) ? View::kTexelUvec4 : View::kTexelUint;
  const std::string s = detail::VariantStem(stem, detail::NeedsExt({&a, &b, &y}));
  detail::Launch(p, s.c_str(), {InTexel(a, va), InTexel(b, vb), Out(y)}, push,
                 {mode, def.code, at, bt, ct, fdom ? 1u : 0u, ndims},
                 Grid1D(p.context(), mode == 0 ? total : total / 4, 64), y);
}

const BinaryDef& FindBinary(const std::string& optype, const Tensor& y) {
  for (const BinaryDef& d : kBinary) {
    if (optype == d.optype) return d;
  }
  throw Error("binary op '" + optype + "' for '" + y.name + "' is not a Vulkan binary op");
}

// ---- unary -----------------------------------------------------------------------------------

enum class Domain { kFloat, kInt, kBool, kPredicate };
struct UnaryDef {
  const char* optype;
  uint32_t code;  // shaders/common/unary_ops.glsl U_*
  // kFloat: any numeric x (integers converted to float32), y's dtype = x's;
  // kInt: also exact on integers; kBool: logical/bitwise not (y = x's dtype, no floats
  // for bitwise_not); kPredicate: isfinite/isinf/isnan (y bool).
  Domain domain;
};
// shaders/common/unary_ops.glsl's `msc_vk:unary` lines (cmake/OpTables.cmake).
constexpr UnaryDef kUnary[] = {
#include "unary_table.inc"
};

const UnaryDef& FindUnary(const std::string& optype, const Tensor& y) {
  for (const UnaryDef& d : kUnary) {
    if (optype == d.optype) return d;
  }
  throw Error("unary op '" + optype + "' for '" + y.name + "' is not a Vulkan unary op");
}

}  // namespace

Activation Activation::Unary(const std::string& optype, float p0, float p1) {
  for (const UnaryDef& d : kUnary) {
    if (optype != d.optype) continue;
    if (d.domain != Domain::kFloat && d.domain != Domain::kInt)
      throw Error("unary op '" + optype + "' is not float-valued: it cannot be an epilogue");
    return {true, p0, p1, static_cast<int32_t>(d.code)};
  }
  throw Error("epilogue '" + optype + "' is not a Vulkan unary op");
}

namespace {

struct UnaryPush {
  uint32_t total;
  float p0, p1;
  uint32_t i_lo[2], i_hi[2];
};

// Integer clip bounds: a_min rounded up, a_max down, infinite ones = the dtype's range.
void IntBounds(DType d, float lo, float hi, UnaryPush* push) {
  const double min = d == DType::kInt64 ? -9223372036854775808.0 : -2147483648.0;
  const double max = d == DType::kInt64 ? 9223372036854775807.0 : 2147483647.0;
  auto to_int = [&](double v) -> int64_t {
    if (std::isnan(v) || v <= min)
      return d == DType::kInt64 ? std::numeric_limits<int64_t>::min()
                                : std::numeric_limits<int32_t>::min();
    if (v >= max)
      return d == DType::kInt64 ? std::numeric_limits<int64_t>::max()
                                : std::numeric_limits<int32_t>::max();
    return static_cast<int64_t>(v);
  };
  detail::Words64(to_int(std::ceil(static_cast<double>(lo))), push->i_lo);
  detail::Words64(to_int(std::floor(static_cast<double>(hi))), push->i_hi);
}

void UnaryImpl(Program& p, const UnaryDef& def, const Tensor& x, const Tensor& y, float p0,
               float p1, bool x_scalar = false) {
  const char* optype = def.optype;
  const uint32_t xt = DTypeCode(optype, y, x), yt = DTypeCode(optype, y, y);
  const bool conversion = def.code == 0;  // astype / cast / full: y's dtype is free
  if (!conversion) {
    if (def.domain == Domain::kBool && IsFloat(x.dtype))
      Fail(optype, y, "takes integer or bool inputs, got " + x.Describe());
    const DType want = def.domain == Domain::kPredicate ? DType::kBool : x.dtype;
    // A float op on an integer input may produce a float output (torch's promotion).
    const bool promoted = def.domain == Domain::kFloat && !IsFloat(x.dtype) && IsFloat(y.dtype);
    if (y.dtype != want && !promoted)
      Fail(optype, y, "output " + y.Describe() + " must be " + DTypeName(want));
  }
  if (x_scalar) {
    if (x.numel() != 1) Fail(optype, y, "fill value " + x.Describe() + " must have one element");
  } else if (x.numel() != y.numel()) {
    Fail(optype, y, "input " + x.Describe() + " and output differ in size");
  }
  const int64_t total = y.numel();
  if (total == 0) return;
  UnaryPush push{U32(total, optype, y, "elements"), p0, p1, {0, 0}, {0, 0}};
  if (std::string(def.optype) == "clip" && !IsFloat(x.dtype)) IntBounds(x.dtype, p0, p1, &push);
  // vec4: float32 -> float32 with a float-valued op.
  const bool vec4 = !x_scalar && x.dtype == DType::kFloat32 && y.dtype == DType::kFloat32 &&
                    total % 4 == 0 && def.domain != Domain::kPredicate &&
                    def.domain != Domain::kBool;
  const std::string stem = detail::VariantStem("unary", detail::NeedsExt({&x, &y}));
  detail::Launch(p, stem.c_str(), {InTexel(x, vec4 ? View::kTexelUvec4 : View::kTexelUint), Out(y)},
                 push, {vec4 ? 1u : 0u, def.code, xt, yt, x_scalar ? 1u : 0u},
                 Grid1D(p.context(), vec4 ? total / 4 : total, 64), y);
}

// ---- fill (shaders/common/fill.glsl) -------------------------------------------------------

void FillImpl(Program& p, const char* optype, const Tensor& y, double start, double step) {
  const uint32_t yt = DTypeCode(optype, y, y);
  const int64_t total = y.numel();
  if (total == 0) return;
  struct {
    uint32_t total;
    float f_start, f_step;
    uint32_t i_start[2], i_step[2];
  } push{U32(total, optype, y, "elements"),
         static_cast<float>(start),
         static_cast<float>(step),
         {0, 0},
         {0, 0}};
  auto to_int = [](double v) {
    return std::isfinite(v) ? static_cast<int64_t>(std::trunc(v)) : int64_t{0};
  };
  detail::Words64(to_int(start), push.i_start);
  detail::Words64(to_int(step), push.i_step);
  const std::string stem = detail::VariantStem(ShaderStem(optype), detail::NeedsExt({&y}));
  detail::Launch(p, stem.c_str(), {Out(y)}, push, {yt}, Grid1D(p.context(), total, 64), y);
}

}  // namespace

// ---- binary ----------------------------------------------------------------------------------

void Binary(Program& p, const std::string& optype, const Tensor& a, const Tensor& b,
            const Tensor& y) {
  const BinaryDef& def = FindBinary(optype, y);
  BinaryImpl(p, def, "binary", a, b, y);
}
void Add(Program& p, const Tensor& a, const Tensor& b, const Tensor& y) {
  Binary(p, "add", a, b, y);
}
void Subtract(Program& p, const Tensor& a, const Tensor& b, const Tensor& y) {
  Binary(p, "subtract", a, b, y);
}
void Multiply(Program& p, const Tensor& a, const Tensor& b, const Tensor& y) {
  Binary(p, "multiply", a, b, y);
}
void Divide(Program& p, const Tensor& a, const Tensor& b, const Tensor& y) {
  Binary(p, "divide", a, b, y);
}

void BiasAdd(Program& p, const Tensor& x, const Tensor& bias, const Tensor& y, int64_t axis) {
  const char* op = "nn.bias_add";
  const int64_t ax = detail::NormAxis(axis, x.shape.size(), op, y);
  if (bias.numel() != x.shape[ax] || bias.shape.size() > 1) {
    Fail(op, y,
         "bias " + bias.Describe() + " must be 1-D with x.shape[" + std::to_string(ax) +
             "] = " + std::to_string(x.shape[ax]) + " elements");
  }
  if (y.shape != x.shape) Fail(op, y, "output " + y.Describe() + " must have x's shape");
  Tensor b = bias;  // [C] viewed as [C, 1, ..., 1] for numpy broadcasting
  b.shape.assign(x.shape.size() - ax, 1);
  b.shape[0] = x.shape[ax];
  BinaryDef def = FindBinary("add", y);
  def.optype = op;
  BinaryImpl(p, def, "nn/bias_add", x, b, y);
}

// ---- unary -----------------------------------------------------------------------------------

void Unary(Program& p, const std::string& optype, const Tensor& x, const Tensor& y, float p0,
           float p1) {
  UnaryImpl(p, FindUnary(optype, y), x, y, p0, p1);
}
void Relu(Program& p, const Tensor& x, const Tensor& y) { Unary(p, "nn.relu", x, y); }
void Sigmoid(Program& p, const Tensor& x, const Tensor& y) { Unary(p, "sigmoid", x, y); }
void Tanh(Program& p, const Tensor& x, const Tensor& y) { Unary(p, "tanh", x, y); }
void Gelu(Program& p, const Tensor& x, const Tensor& y) { Unary(p, "nn.gelu", x, y); }
void Clip(Program& p, const Tensor& x, const Tensor& y, float a_min, float a_max) {
  Unary(p, "clip", x, y, a_min, a_max);
}
void Astype(Program& p, const Tensor& x, const Tensor& y) { Unary(p, "astype", x, y); }
void Cast(Program& p, const Tensor& x, const Tensor& y) { Unary(p, "cast", x, y); }

// ---- where / masked_fill ---------------------------------------------------------------------

namespace {

void WhereImpl(Program& p, const char* optype, const char* stem, const Tensor& cond,
               const Tensor& a, const Tensor& b, const Tensor& y) {
  const uint32_t ct = DTypeCode(optype, y, cond), at = DTypeCode(optype, y, a),
                 bt = DTypeCode(optype, y, b), yt = DTypeCode(optype, y, y);
  Shape ab, out;
  if (!detail::BroadcastShapes(a.shape, b.shape, &ab) ||
      !detail::BroadcastShapes(cond.shape, ab, &out) || out != y.shape) {
    Fail(optype, y,
         "output " + y.Describe() + " is not the broadcast of " + cond.Describe() + ", " +
             a.Describe() + " and " + b.Describe());
  }
  const int64_t total = y.numel();
  if (total == 0) return;
  detail::Collapsed c =
      detail::Collapse(out,
                       {BroadcastStrides(cond.shape, out), BroadcastStrides(a.shape, out),
                        BroadcastStrides(b.shape, out)},
                       optype, y, 6);
  const detail::NdIndex nd = detail::MakeNdIndex(c.shape, optype, y);
  struct {
    uint32_t shape[6], c_stride[6], a_stride[6], b_stride[6], total, div_m[6], div_s;
  } push{};
  for (int d = 0; d < 6; ++d) {
    push.shape[d] = nd.shape[d];
    push.div_m[d] = nd.div_m[d];
    push.c_stride[d] = U32(c.strides[0][d], optype, y, "stride");
    push.a_stride[d] = U32(c.strides[1][d], optype, y, "stride");
    push.b_stride[d] = U32(c.strides[2][d], optype, y, "stride");
  }
  push.div_s = nd.div_s;
  push.total = U32(total, optype, y, "elements");
  const std::string s = detail::VariantStem(stem, detail::NeedsExt({&cond, &a, &b, &y}));
  detail::Launch(p, s.c_str(),
                 {detail::InElems(cond), detail::InElems(a), detail::InElems(b), Out(y)}, push,
                 {ct, static_cast<uint32_t>(DTypeSize(y.dtype)), at, bt, yt, nd.ndims},
                 Grid1D(p.context(), total, 64), y);
}

}  // namespace

void Where(Program& p, const Tensor& cond, const Tensor& x1, const Tensor& x2, const Tensor& y) {
  WhereImpl(p, "where", "where", cond, x1, x2, y);
}

void MaskedFill(Program& p, const Tensor& x, const Tensor& mask, const Tensor& value,
                const Tensor& y) {
  const char* op = "masked_fill";
  if (value.numel() != 1)
    Fail(op, y, "value " + value.Describe() + " must have exactly one element");
  if (y.shape != x.shape) Fail(op, y, "output " + y.Describe() + " must have x's shape");
  Tensor v = value;
  v.shape = {};
  WhereImpl(p, op, "masked_fill", mask, v, x, y);
}

// ---- creation --------------------------------------------------------------------------------

void Full(Program& p, const Tensor& fill_value, const Tensor& y) {
  UnaryImpl(p, FindUnary("full", y), fill_value, y, 0, 0, /*x_scalar=*/true);
}

void Fill(Program& p, const std::string& optype, const Tensor& y, double value) {
  static const char* const kOps[] = {"ones", "zeros", "ones_like", "zeros_like"};
  for (const char* op : kOps) {
    if (optype == op) return FillImpl(p, op, y, value, 0.0);
  }
  throw Error("fill op '" + optype + "' for '" + y.name +
              "' is not one of ones, zeros, ones_like, zeros_like");
}

void Arange(Program& p, const Tensor& y, double start, double end, double step) {
  const char* op = "arange";
  if (step == 0 || !std::isfinite(step)) Fail(op, y, "step must be finite and nonzero");
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((end - start) / step)));
  if (y.shape != Shape{n}) {
    Fail(op, y,
         "output " + y.Describe() + " does not match the computed shape " + ShapeToString({n}));
  }
  if (!IsFloat(y.dtype) && (start != std::trunc(start) || step != std::trunc(step))) {
    Fail(op, y, "integer output " + y.Describe() + " needs integral start and step");
  }
  FillImpl(p, op, y, start, step);
}

void OneHot(Program& p, const Tensor& indices, const Tensor& y, int64_t depth, int64_t axis,
            double on_value, double off_value) {
  const char* op = "one_hot";
  detail::CheckIndices(op, y, indices, "indices");
  const uint32_t yt = DTypeCode(op, y, y);
  const int64_t ax = detail::NormAxis(axis, indices.shape.size() + 1, op, y);
  Shape expect = indices.shape;
  expect.insert(expect.begin() + ax, depth);
  if (depth < 1 || y.shape != expect) {
    Fail(op, y,
         "output " + y.Describe() + " does not match the computed shape " + ShapeToString(expect));
  }
  const int64_t total = y.numel();
  if (total == 0) return;
  int64_t inner = 1;
  for (size_t d = ax + 1; d < y.shape.size(); ++d) inner *= y.shape[d];
  struct {
    uint32_t total, depth, inner;
    float f_on, f_off;
    uint32_t i_on[2], i_off[2], div_m[2], div_s[2];
  } push{};
  push.total = U32(total, op, y, "elements");
  push.depth = U32(depth, op, y, "depth");
  push.inner = U32(inner, op, y, "inner size");
  push.f_on = static_cast<float>(on_value);
  push.f_off = static_cast<float>(off_value);
  detail::Words64(static_cast<int64_t>(on_value), push.i_on);
  detail::Words64(static_cast<int64_t>(off_value), push.i_off);
  const detail::MagicDivider mi = detail::MakeMagicDivider(push.inner),
                             md = detail::MakeMagicDivider(push.depth);
  push.div_m[0] = mi.m;
  push.div_s[0] = mi.s;
  push.div_m[1] = md.m;
  push.div_s[1] = md.s;
  const std::string stem = detail::VariantStem("one_hot", detail::NeedsExt({&y}));
  detail::Launch(p, stem.c_str(), {detail::InElems(indices), Out(y)}, push, {yt},
                 Grid1D(p.context(), total, 64), y);
}

void ShapeOf(Program& p, const Tensor& y, const std::vector<int64_t>& values) {
  const char* op = "shape";
  const uint32_t yt = DTypeCode(op, y, y);
  if (y.dtype != DType::kInt64 && y.dtype != DType::kInt32)
    Fail(op, y, "output " + y.Describe() + " must be int64 or int32");
  const int64_t n = static_cast<int64_t>(values.size());
  if (y.shape != Shape{n})
    Fail(op, y, "output " + y.Describe() + " must be [" + std::to_string(n) + "]");
  if (n > 12) Fail(op, y, "at most 12 dims are supported");
  if (n == 0) return;
  struct {
    uint32_t n;
    uint32_t values[24];
  } push{};
  push.n = static_cast<uint32_t>(n);
  for (int64_t i = 0; i < n; ++i) detail::Words64(values[i], push.values + 2 * i);
  // int64 output is written as raw words: the plain variant suffices.
  detail::Launch(p, "shape", {Out(y)}, push, {yt}, {1, 1, 1}, y);
}

// ---- fused elementwise chains (shaders/ew_chain.comp) ----------------------------------------

namespace {

// ew_chain.comp IN_KIND and step KIND codes.
constexpr uint32_t kInFull = 0, kInOne = 1, kInBcastInner = 2, kInNone = 3, kInBcastOuter = 4;
constexpr uint32_t kStepUnary = 1, kStepBinary = 2, kStepWhere = 3;
constexpr size_t kChainSpecPerStep = 7, kChainSpecSteps = 16;  // step s at 16 + 7 s
constexpr size_t kChainBcastSlots = 3;  // broadcast inputs with strides in the push constants

// A step checked against the op tables: its kernel kind / op code and its output shape.
struct ChainPlan {
  uint32_t kind = 0, code = 0;
  Shape shape;
};

std::string StepLabel(size_t s, const ChainStep& st) {
  return "step " + std::to_string(s) + " ('" + st.optype + "')";
}

// The fallback: one Unary / Binary / Where dispatch per step, the intermediates in
// program-owned buffers (same kernels, same values).
void ChainUnfused(Program& p, const std::vector<Tensor>& inputs,
                  const std::vector<ChainStep>& steps, const std::vector<ChainPlan>& plan,
                  const Tensor& y) {
  std::vector<Tensor> results;
  for (size_t s = 0; s < steps.size(); ++s) {
    const Tensor out = s + 1 == steps.size() ? y
                                             : p.AddBuffer(y.name + ".step" + std::to_string(s),
                                                           DType::kFloat32, plan[s].shape);
    std::vector<Tensor> args;
    for (const ChainRef& r : steps[s].operands)
      args.push_back(r.step ? results[r.index] : inputs[r.index]);
    if (plan[s].kind == kStepUnary)
      UnaryImpl(p, FindUnary(steps[s].optype, out), args[0], out, steps[s].p0, steps[s].p1);
    else if (plan[s].kind == kStepBinary)
      Binary(p, steps[s].optype, args[0], args[1], out);
    else
      Where(p, args[0], args[1], args[2], out);
    results.push_back(out);
  }
}

}  // namespace

void ElementwiseChain(Program& p, const std::vector<Tensor>& inputs,
                      const std::vector<ChainStep>& steps, const Tensor& y) {
  const char* op = "elementwise chain";
  if (steps.empty() || steps.size() > kChainMaxSteps)
    Fail(op, y,
         "has " + std::to_string(steps.size()) + " steps; 1 to " + std::to_string(kChainMaxSteps) +
             " are supported");
  if (inputs.size() > kChainMaxInputs)
    Fail(op, y,
         "has " + std::to_string(inputs.size()) + " inputs; at most " +
             std::to_string(kChainMaxInputs) + " are supported");
  if (DTypeCode(op, y, y) > 1)
    Fail(op, y, "output " + y.Describe() + " must be float32 or float16");
  std::vector<uint32_t> in_dt(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) in_dt[k] = DTypeCode(op, y, inputs[k]);
  // Resolve the steps; check operands, dtypes and shapes as the unfused ops would.
  std::vector<ChainPlan> plan(steps.size());
  std::vector<bool> used(inputs.size(), false), value_use(inputs.size(), false);
  for (size_t s = 0; s < steps.size(); ++s) {
    const ChainStep& st = steps[s];
    ChainPlan& c = plan[s];
    size_t arity = 0;
    if (st.optype == "where") {
      c.kind = kStepWhere;
      arity = 3;
    } else {
      const BinaryDef* b = nullptr;
      for (const BinaryDef& d : kBinary) {
        if (st.optype == d.optype) b = &d;
      }
      const UnaryDef* u = nullptr;
      for (const UnaryDef& d : kUnary) {
        if (st.optype == d.optype) u = &d;
      }
      if (b && b->kind == Kind::kArith) {
        c = {kStepBinary, b->code, {}};
        arity = 2;
      } else if (u && u->code != 0 && (u->domain == Domain::kFloat || u->domain == Domain::kInt)) {
        c = {kStepUnary, u->code, {}};
        arity = 1;
      } else {
        Fail(op, y,
             StepLabel(s, st) +
                 " is not a float-valued elementwise op (the chain takes Unary's float ops, "
                 "Binary's arithmetic ops and where)");
      }
    }
    if (st.operands.size() != arity)
      Fail(op, y,
           StepLabel(s, st) + " takes " + std::to_string(arity) + " operands, got " +
               std::to_string(st.operands.size()));
    for (size_t o = 0; o < arity; ++o) {
      const ChainRef& r = st.operands[o];
      const Shape* shape = nullptr;
      if (r.step) {
        if (r.index >= s)
          Fail(op, y,
               StepLabel(s, st) + " reads the result of step " + std::to_string(r.index) +
                   ", which is not an earlier step");
        shape = &plan[r.index].shape;
      } else {
        if (r.index >= inputs.size())
          Fail(op, y,
               StepLabel(s, st) + " reads input " + std::to_string(r.index) + " of " +
                   std::to_string(inputs.size()));
        used[r.index] = true;
        if (!(c.kind == kStepWhere && o == 0)) value_use[r.index] = true;
        shape = &inputs[r.index].shape;
      }
      Shape out;
      if (o == 0) {
        c.shape = *shape;
      } else if (!detail::BroadcastShapes(c.shape, *shape, &out)) {
        Fail(op, y,
             StepLabel(s, st) + ": operand shapes " + ShapeToString(c.shape) + " and " +
                 ShapeToString(*shape) + " do not broadcast");
      } else {
        c.shape = out;
      }
    }
  }
  if (plan.back().shape != y.shape)
    Fail(op, y,
         "the last step computes shape " + ShapeToString(plan.back().shape) +
             ", not the output's " + ShapeToString(y.shape));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& x = inputs[k];
    if (value_use[k] && !IsFloat(x.dtype))
      Fail(op, y,
           "input " + std::to_string(k) + " " + x.Describe() +
               " must be float32 or float16 (only a where condition may have another dtype)");
    if (detail::SharesBytes(x, y))
      Fail(op, y,
           "input " + std::to_string(k) + " " + x.Describe() +
               " shares bytes with the output (the kernel reads it while writing)");
  }
  const int64_t total = y.numel();
  if (total == 0) return;

  // Input kinds; broadcast inputs get stride slots. The index space is collapsed over y and the
  // broadcast inputs (same-size inputs read element i, one-element inputs element 0).
  std::vector<uint32_t> kind(kChainMaxInputs, kInNone), slot(kChainMaxInputs, 0);
  std::vector<std::vector<int64_t>> strides = {detail::ContiguousStrides(y.shape)};
  std::vector<size_t> bcast;  // input index per slot
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!used[k]) continue;
    if (inputs[k].numel() == total) {
      kind[k] = kInFull;
    } else if (inputs[k].numel() == 1) {
      kind[k] = kInOne;
    } else {
      slot[k] = static_cast<uint32_t>(bcast.size());
      bcast.push_back(k);
      strides.push_back(BroadcastStrides(inputs[k].shape, y.shape));
    }
  }
  detail::Collapsed c = detail::Collapse(y.shape, strides, op, y, 0);
  if (c.shape.empty()) {  // one element
    c.shape = {1};
    for (auto& s : c.strides) s = {0};
  }
  const size_t D = c.shape.size(), B = bcast.size();
  if (D > 6 || B > kChainBcastSlots) return ChainUnfused(p, inputs, steps, plan, y);
  const detail::NdIndex nd = detail::MakeNdIndex(c.shape, op, y);
  struct {
    uint32_t w[32];
  } push{};
  push.w[0] = U32(total, op, y, "elements");
  push.w[1] = nd.div_s;
  for (size_t d = 0; d < 6; ++d) {
    push.w[2 + d] = nd.shape[d];
    push.w[8 + d] = nd.div_m[d];
  }
  for (size_t s = 0; s < B; ++s)
    for (size_t j = 0; j < D; ++j)
      push.w[14 + 6 * s + (6 - D) + j] = U32(c.strides[1 + s][j], op, y, "stride");
  const bool vec4 = c.shape.back() % 4 == 0;
  for (size_t s = 0; s < B; ++s)
    kind[bcast[s]] = c.strides[1 + s].back() == 1 ? kInBcastInner : kInBcastOuter;

  SpecConstants spec(kChainSpecSteps + kChainSpecPerStep * kChainMaxSteps, 0);
  spec[0] = vec4 ? 1u : 0u;
  spec[1] = static_cast<uint32_t>(D);
  spec[2] = static_cast<uint32_t>(steps.size());
  spec[3] = static_cast<uint32_t>(B);
  std::vector<Binding> bindings;
  for (size_t k = 0; k < kChainMaxInputs; ++k) {
    spec[4 + 3 * k] = kind[k];
    spec[5 + 3 * k] = k < inputs.size() ? in_dt[k] : 0u;
    spec[6 + 3 * k] = slot[k];
    const bool texel4 = vec4 && k < inputs.size() && inputs[k].dtype == DType::kFloat32 &&
                        (kind[k] == kInFull || kind[k] == kInBcastInner);
    // (step 0 reads an input: there is one; unused slots repeat input 0)
    bindings.push_back(
        InTexel(inputs[k < inputs.size() ? k : 0], texel4 ? View::kTexelUvec4 : View::kTexelUint));
  }
  bindings.push_back(Out(y));
  for (size_t s = 0; s < steps.size(); ++s) {
    const size_t at = kChainSpecSteps + kChainSpecPerStep * s;
    spec[at] = plan[s].kind;
    spec[at + 1] = plan[s].code;
    for (size_t o = 0; o < steps[s].operands.size(); ++o) {
      const ChainRef& r = steps[s].operands[o];
      spec[at + 2 + o] = r.step ? static_cast<uint32_t>(kChainMaxInputs) + r.index : r.index;
    }
    spec[at + 5] = SpecFloat(steps[s].p0);
    spec[at + 6] = SpecFloat(steps[s].p1);
  }
  detail::LaunchFloat(p, "ew_chain", std::move(bindings), push, spec,
                      Grid1D(p.context(), vec4 ? total / 4 : total, 64), y);
}

}  // namespace ops
}  // namespace msc_vk
