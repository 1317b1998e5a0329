#include "generator/frontend/onnx/inference_guard.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include <onnx/defs/shape_inference.h>

#include "generator/common/error.h"

namespace msc::frontend::onnx_import {
namespace {

using onnx::InferenceContext;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

/// Byte size of one element of ONNX TensorProto.DataType `t` (onnx.proto3); 0 for strings and
/// unknown types.
int64_t OnnxItemSize(int t) {
  switch (t) {
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::BOOL:
      return 1;
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return 2;
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32:
      return 4;
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::COMPLEX64:
      return 8;
    case onnx::TensorProto::COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

/// a * b for a, b >= 0; nullopt when it does not fit in int64.
std::optional<int64_t> MulNonNegative(int64_t a, int64_t b) {
  if (a != 0 && b > kInt64Max / a) return std::nullopt;
  return a * b;
}

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// ---- checks run inside inference (they throw onnx::InferenceError through fail_shape_inference)

/// The type of input `k`, or nullptr when the node has no such input, it is omitted, or its
/// producer's inference did not conclude.
const onnx::TypeProto* InputType(InferenceContext& ctx, size_t k) {
  return k < ctx.getNumInputs() ? ctx.getInputType(k) : nullptr;
}

/// Input `k`'s shape when it is a tensor with a known shape; nullptr when its type or shape is
/// unknown. Fails when input `k` is typed but not a dense tensor (ONNX's hasInputShape is true
/// for sparse tensors, sequences and optionals, whose tensor_type() then reads as rank 0).
const onnx::TensorShapeProto* TensorShape(InferenceContext& ctx, size_t k) {
  const onnx::TypeProto* t = InputType(ctx, k);
  if (t == nullptr || t->value_case() == onnx::TypeProto::VALUE_NOT_SET) return nullptr;
  if (!t->has_tensor_type()) fail_shape_inference("input ", k, " is not a dense tensor");
  return t->tensor_type().has_shape() ? &t->tensor_type().shape() : nullptr;
}

int Rank(InferenceContext& ctx, size_t k) {
  const onnx::TensorShapeProto* s = TensorShape(ctx, k);
  return s ? s->dim_size() : -1;
}

void RequireRank(InferenceContext& ctx, size_t k, int rank) {
  const int r = Rank(ctx, k);
  if (r >= 0 && r != rank) fail_shape_inference("input ", k, " must have rank ", rank);
}

void RequireTyped(InferenceContext& ctx, size_t k) {
  if (InputType(ctx, k) == nullptr) fail_shape_inference("the type of input ", k, " is unknown");
}

int64_t IntAttr(InferenceContext& ctx, const char* name, int64_t fallback) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a != nullptr && a->has_i() ? a->i() : fallback;
}

/// The int64 values of a constant input (initializer, Constant or folded): its TensorProto
/// (int64_data or raw_data) or its symbolic form (a shape's dims); nullopt when neither is known.
std::optional<std::vector<int64_t>> ConstInts(InferenceContext& ctx, size_t k) {
  if (k >= ctx.getNumInputs()) return std::nullopt;
  if (const onnx::TensorProto* t = ctx.getInputData(k)) {
    std::vector<int64_t> v;
    if (t->data_type() == onnx::TensorProto::INT64) {
      v.assign(t->int64_data().begin(), t->int64_data().end());
      if (t->has_raw_data()) {
        v.resize(t->raw_data().size() / 8);
        if (!v.empty()) std::memcpy(v.data(), t->raw_data().data(), v.size() * 8);
      }
    } else if (t->data_type() == onnx::TensorProto::INT32) {  // ONNX's ParseData reads both
      v.assign(t->int32_data().begin(), t->int32_data().end());
      if (t->has_raw_data()) {
        std::vector<int32_t> w(t->raw_data().size() / 4);
        if (!w.empty()) std::memcpy(w.data(), t->raw_data().data(), w.size() * 4);
        v.assign(w.begin(), w.end());
      }
    } else {
      return std::nullopt;
    }
    return v;
  }
  if (const onnx::TensorShapeProto* s = ctx.getSymbolicInput(k)) {
    std::vector<int64_t> v;
    for (const auto& d : s->dim()) {
      if (!d.has_dim_value()) return std::nullopt;
      v.push_back(d.dim_value());
    }
    return v;
  }
  return std::nullopt;
}

/// Element count of a constant input's data (TensorProto dims or symbolic length); -1 unknown.
int64_t ConstNumel(InferenceContext& ctx, size_t k) {
  if (k >= ctx.getNumInputs()) return -1;
  if (const onnx::TensorProto* t = ctx.getInputData(k)) {
    int64_t n = 1;
    for (int64_t d : t->dims()) {
      auto m = MulNonNegative(n, d < 0 ? 0 : d);
      if (!m) return -1;
      n = *m;
    }
    return n;
  }
  if (const onnx::TensorShapeProto* s = ctx.getSymbolicInput(k)) return s->dim_size();
  return -1;
}

// The checks, one per crash site (onnx v1.12.0 file:line of the unsafe read in each comment).

// Gemm-6 (math/old.cc:2324): dims 0/1 of A and B read without a rank check.
void GemmRank2(InferenceContext& ctx) {
  RequireRank(ctx, 0, 2);
  RequireRank(ctx, 1, 2);
}

// RNN-1, LSTM-1, GRU-3 RNNShapeInference1 (rnn/old.cc): X dims 0 and 1 read without a rank check.
// These op types have no converter yet (CheckOpTypes stops them); guarded for when they get one.
void RnnRank3(InferenceContext& ctx) { RequireRank(ctx, 0, 3); }

// convPoolShapeInference (nn/defs.cc:90-180, old.cc:294-384): without kernel_shape the kernel is
// W's dims 2.. (never compared with X's rank); with auto_pad SAME_* a loop subtracts the stride
// from each spatial dim until it is smaller (dim / stride iterations: a hang on a huge dim).
void ConvPool(InferenceContext& ctx, bool has_weight) {
  const int rx = Rank(ctx, 0);
  if (has_weight) {
    const int rw = Rank(ctx, 1);
    if (rx >= 0 && rw >= 0 && rx != rw)
      fail_shape_inference("X has rank ", rx, " but W has rank ", rw);
  }
  // ONNX runs the loop whenever auto_pad is given and is not VALID (NOTSET and unknown strings
  // included) and there is no pads attribute.
  const onnx::AttributeProto* pad = ctx.getAttribute("auto_pad");
  if (pad == nullptr || pad->s() == "VALID" || ctx.getAttribute("pads") != nullptr || rx < 3)
    return;
  const onnx::AttributeProto* strides = ctx.getAttribute("strides");
  const onnx::TensorShapeProto& shape = *TensorShape(ctx, 0);
  for (int i = 2; i < rx; ++i) {
    const int64_t stride =
        strides != nullptr && i - 2 < strides->ints_size() ? strides->ints(i - 2) : 1;
    constexpr int64_t kMaxSteps = int64_t{1} << 28;
    if (stride > 1 && shape.dim(i).has_dim_value() && shape.dim(i).dim_value() / stride > kMaxSteps)
      fail_shape_inference("spatial dim ", i, " is too large for auto_pad");
  }
}
void Conv(InferenceContext& ctx) { ConvPool(ctx, true); }
void Pool(InferenceContext& ctx) { ConvPool(ctx, false); }

// convTransposeShapeInference (nn/defs.cc:1127-1206, old.cc:1126-1187): W dim 1 read without a
// rank check, the kernel (W's dims 2..) indexed up to X's rank.
void ConvTranspose(InferenceContext& ctx) {
  const int rx = Rank(ctx, 0), rw = Rank(ctx, 1);
  if (rw >= 0 && rw < 3) fail_shape_inference("W must have rank >= 3");
  if (rx >= 0 && rw >= 0 && rx != rw)
    fail_shape_inference("X has rank ", rx, " but W has rank ", rw);
}

// Reshape (tensor/defs.cc:352, old.cc:212/331): inputProduct % outputProduct is INT64_MIN % -1
// (SIGFPE) when products wrap or a negative X dim is copied by a target 0.
void Reshape(InferenceContext& ctx) {
  if (const onnx::TensorShapeProto* s = TensorShape(ctx, 0)) {
    int64_t n = 1;
    for (const auto& d : s->dim()) {
      if (!d.has_dim_value()) continue;
      if (d.dim_value() < 0) fail_shape_inference("X has a negative dim");
      auto m = MulNonNegative(n, d.dim_value());
      if (!m) fail_shape_inference("X has more elements than int64 can count");
      n = *m;
    }
  }
  if (auto target = ConstInts(ctx, 1)) {
    int64_t n = 1;
    for (int64_t v : *target) {
      if (v <= 0) continue;
      auto m = MulNonNegative(n, v);
      if (!m) fail_shape_inference("the target shape has more elements than int64 can count");
      n = *m;
    }
  }
}

// DepthToSpace (tensor/defs.cc:2022, old.cc:1686/3131): blocksize * blocksize wraps to 0 for
// multiples of 2^32, then a dim is divided by it (SIGFPE).
void DepthToSpace(InferenceContext& ctx) {
  const int64_t b = IntAttr(ctx, "blocksize", 1);
  if (b > 3037000499) fail_shape_inference("blocksize ", b, " is too large");  // b*b fits int64
}

// GatherND (tensor/defs.cc:3200, old.cc:2094/3782): data dims read from indices.dim(-1) +
// batch_dims, only checked from above.
// The sum is computed in int64 and only compared from above, so two huge values wrap negative.
void GatherNd(InferenceContext& ctx) {
  constexpr int64_t kMaxRank = 64;
  const int64_t b = IntAttr(ctx, "batch_dims", 0);
  if (b < 0 || b > kMaxRank) fail_shape_inference("batch_dims ", b, " is out of range");
  if (const onnx::TensorShapeProto* s = TensorShape(ctx, 1)) {
    if (s->dim_size() == 0) return;
    const auto& last = s->dim(s->dim_size() - 1);
    if (last.has_dim_value() && (last.dim_value() < 0 || last.dim_value() > kMaxRank))
      fail_shape_inference("the last dim of indices (", last.dim_value(), ") is out of range");
  }
}

// LayerNormalization-17 (nn/defs.cc:2303): axis += rank without a range check, then the Mean
// output's dim `axis` is written.
void LayerNorm(InferenceContext& ctx) {
  const int r = Rank(ctx, 0);
  const int64_t axis = IntAttr(ctx, "axis", -1);
  if (r >= 0 && (axis < -r || axis >= r))
    fail_shape_inference("axis ", axis, " is out of range for rank ", r);
}

// EyeLike-9 (generator/defs.cc:304): the input's shape is propagated without a null check when
// `dtype` is set.
void EyeLike(InferenceContext& ctx) { RequireTyped(ctx, 0); }

// Einsum-12 (math/defs.cc:2440): without "->", each letter indexes a 26-entry array as c - 'a'.
// Einsum-12/28 of onnx 1.23 (math/utils.cc:378): a character other than a letter in a term of the
// left-hand side (after its one "...") is counted without advancing: an endless loop.
void Einsum(InferenceContext& ctx) {
  const onnx::AttributeProto* eq = ctx.getAttribute("equation");
  if (eq == nullptr) return;
  std::string text;
  for (char c : eq->s())
    if (c != ' ') text += c;
  const std::string lhs = text.substr(0, text.find("->"));
  size_t begin = 0;
  for (;;) {
    const size_t end = std::min(lhs.find(',', begin), lhs.size());
    std::string term = lhs.substr(begin, end - begin);
    const size_t dots = term.find("...");
    if (dots != std::string::npos) term.erase(dots, 3);
    for (char c : term)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
        fail_shape_inference("equation term '", lhs.substr(begin, end - begin),
                             "' may hold only letters and one '...'");
    if (end == lhs.size()) break;
    begin = end + 1;
  }
}

// Split-18 (tensor/defs.cc:716-729 of onnx 1.23): with num_outputs, the sizes vector has
// num_outputs entries (allocated as given) but is read for every node output; constant split
// sizes are summed without an overflow check.
void Split18(InferenceContext& ctx) {
  if (const onnx::AttributeProto* n = ctx.getAttribute("num_outputs"))
    if (n->i() != static_cast<int64_t>(ctx.getNumOutputs()))
      fail_shape_inference("num_outputs ", n->i(), " differs from the ", ctx.getNumOutputs(),
                           " outputs");
  if (auto split = ConstInts(ctx, 1)) {
    int64_t total = 0;
    for (int64_t v : *split)
      if (v < 0 || __builtin_add_overflow(total, v, &total))
        fail_shape_inference("split sizes must be >= 0 and sum within int64");
  }
}

// Resize-11..19 (tensor/utils.cc:67, 322 of onnx 1.23): output dims are static_cast<int64_t> of
// floor(dim * scale) or round(scale * dim) without a range check (undefined for inf, NaN, huge);
// keep_aspect_ratio_policy divides by the input dims.
void Resize(InferenceContext& ctx) {
  const onnx::TensorShapeProto* x = TensorShape(ctx, 0);
  if (size_t k2 = 2; k2 < ctx.getNumInputs())
    if (const onnx::TensorProto* t = ctx.getInputData(k2))
      if (t->data_type() == onnx::TensorProto::FLOAT) {
        std::vector<float> v(t->float_data().begin(), t->float_data().end());
        if (t->has_raw_data()) {
          v.resize(t->raw_data().size() / 4);
          if (!v.empty()) std::memcpy(v.data(), t->raw_data().data(), v.size() * 4);
        }
        for (size_t i = 0; i < v.size(); ++i) {
          const double d = x && static_cast<int>(i) < x->dim_size() && x->dim(i).has_dim_value()
                               ? static_cast<double>(x->dim(i).dim_value())
                               : 1.0;
          if (!std::isfinite(v[i]) || v[i] < 0 || std::fabs(d * v[i]) > 9.0e18)
            fail_shape_inference("scale ", v[i], " is not finite, >= 0 and within int64");
        }
      }
  const onnx::AttributeProto* policy = ctx.getAttribute("keep_aspect_ratio_policy");
  if (policy != nullptr && policy->s() != "stretch" && ConstInts(ctx, 3) && x)
    for (const auto& d : x->dim())
      if (!d.has_dim_value() || d.dim_value() <= 0)
        fail_shape_inference("keep_aspect_ratio_policy needs known input dims > 0");
}

// Range-11/27 (generator/utils.h:27 of onnx 1.23): limit - start in T (int overflow) and
// ceil((limit - start) / delta) cast to int64 (undefined for delta 0 and huge counts).
void Range(InferenceContext& ctx) {
  auto scalar = [&](size_t k) -> std::optional<double> {
    if (k >= ctx.getNumInputs()) return std::nullopt;
    const onnx::TensorProto* t = ctx.getInputData(k);
    if (t == nullptr) return std::nullopt;
    if (auto v = ConstInts(ctx, k))
      return v->size() == 1 ? std::optional<double>((*v)[0]) : std::nullopt;
    if (t->data_type() == onnx::TensorProto::FLOAT || t->data_type() == onnx::TensorProto::DOUBLE) {
      const bool f = t->data_type() == onnx::TensorProto::FLOAT;
      if (t->has_raw_data() && t->raw_data().size() == (f ? 4u : 8u)) {
        if (f) {
          float x;
          std::memcpy(&x, t->raw_data().data(), 4);
          return x;
        }
        double x;
        std::memcpy(&x, t->raw_data().data(), 8);
        return x;
      }
      if (f && t->float_data_size() == 1) return t->float_data(0);
      if (!f && t->double_data_size() == 1) return t->double_data(0);
    }
    return std::nullopt;
  };
  const auto start = scalar(0), limit = scalar(1), delta = scalar(2);
  if (!start || !limit || !delta) return;
  const double n = (*limit - *start) / *delta;
  if (*delta == 0 || !std::isfinite(n) || std::fabs(n) > 9.0e15)
    fail_shape_inference("Range's element count is not a finite int64");
}

// Shape-15's data propagation (tensor/defs.cc:435) reads the input's type without a null check;
// a failed inference skips it.
void ShapeOp(InferenceContext& ctx) { RequireTyped(ctx, 0); }

// Slice-13's data propagation (tensor/defs.cc:1020): `for (int i = start; i < end; i += step)`
// truncates an int64 step (a step of 2^32 - 1 reads dim -1; a multiple of 2^32 never ends).
void Slice(InferenceContext& ctx) {
  // Only the data propagation of a Slice of shape data (or of an int initializer) loops over
  // the steps; a Slice of an ordinary tensor keeps its large steps.
  // onnx 1.23's propagation also makes shape data of any rank-1 input from its declared length.
  if (ctx.getNumInputs() == 0 ||
      (ctx.getSymbolicInput(0) == nullptr && ctx.getInputData(0) == nullptr && Rank(ctx, 0) != 1))
    return;
  if (auto steps = ConstInts(ctx, 4))
    for (int64_t s : *steps)
      if (s == 0 || s > (int64_t{1} << 30) || s < -(int64_t{1} << 30))
        fail_shape_inference("step ", s, " is out of range");
}

// Add/Sub/Mul-14 data propagation (MathOpDataPropagator, math/defs.cc:33) lets sizes (0, 1)
// through, then reads dim i of the empty one.
void MathOp(InferenceContext& ctx) {
  const int64_t a = ConstNumel(ctx, 0), b = ConstNumel(ctx, 1);
  if (a >= 0 && b >= 0 && (a == 0) != (b == 0))
    fail_shape_inference("one operand is empty and the other is not");
}

// Expand-8/13 and ConstantOfShape-9 (getShapeInput): one output dim per element of the shape
// input, whose length may be any declared dim: a rank of billions.
void ShapeInputLength(InferenceContext& ctx, size_t k) {
  constexpr int64_t kMaxRank = 64;
  if (const onnx::TensorShapeProto* s = TensorShape(ctx, k))
    if (s->dim_size() == 1 && s->dim(0).has_dim_value() && s->dim(0).dim_value() > kMaxRank)
      fail_shape_inference("the shape input has more than ", kMaxRank, " elements");
}
void Expand(InferenceContext& ctx) { ShapeInputLength(ctx, 1); }
void ConstantOfShape(InferenceContext& ctx) { ShapeInputLength(ctx, 0); }

/// Schemas `op` with since_version in [from, until) run `check` before their inference.
struct Guard {
  const char* op;
  int from, until;
  void (*check)(InferenceContext&);
};

constexpr int kAll = 1 << 20;  // every version up to the newest

const Guard kGuards[] = {
    {"Gemm", 1, 7, GemmRank2},  // Gemm-7 and later check the rank themselves
    {"RNN", 1, 7, RnnRank3},
    {"GRU", 1, 7, RnnRank3},
    {"LSTM", 1, 7, RnnRank3},
    {"Conv", 1, kAll, Conv},
    {"MaxPool", 1, kAll, Pool},
    {"AveragePool", 1, kAll, Pool},
    {"LpPool", 1, kAll, Pool},
    {"ConvTranspose", 1, kAll, ConvTranspose},
    {"Reshape", 1, kAll, Reshape},
    {"DepthToSpace", 1, kAll, DepthToSpace},
    {"GatherND", 1, kAll, GatherNd},
    {"LayerNormalization", 1, kAll, LayerNorm},
    {"EyeLike", 1, kAll, EyeLike},
    {"Einsum", 1, kAll, Einsum},
    {"Shape", 15, kAll, ShapeOp},
    {"Slice", 13, kAll, Slice},
    {"Add", 14, kAll, MathOp},
    {"Sub", 14, kAll, MathOp},
    {"Mul", 14, kAll, MathOp},
    {"Expand", 1, kAll, Expand},
    {"ConstantOfShape", 1, kAll, ConstantOfShape},
    {"Split", 18, kAll, Split18},
    {"Resize", 11, kAll, Resize},
    {"Range", 11, kAll, Range},
};

/// Op types with a data propagation function (onnx 1.23: tensor/defs.cc, math/defs.cc). Its
/// context (shape_inference/implementation.h:483) turns a rank-1 input into shape data with one
/// dim per element, unbounded: a declared [2^40] hangs. Such an input is never shape data (a
/// shape has at most kMaxPropagated dims), so propagation is skipped for it.
const char* const kPropagators[] = {"Cast",      "Size", "Concat", "Gather", "Slice", "Squeeze",
                                    "Unsqueeze", "Add",  "Sub",    "Mul",    "Shape"};
constexpr int64_t kMaxPropagated = 1024;

bool LongRank1Input(onnx::DataPropagationContext& ctx) {
  for (size_t k = 0; k < ctx.getNumInputs(); ++k) {
    const onnx::TypeProto* t = ctx.getInputType(k);
    if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) continue;
    const auto& shape = t->tensor_type().shape();
    if (shape.dim_size() == 1 && shape.dim(0).has_dim_value() &&
        shape.dim(0).dim_value() > kMaxPropagated)
      return true;
  }
  return false;
}

class GuardedSchemas final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* s =
        onnx::OpSchemaRegistry::Instance()->GetSchema(key, max_version, domain);
    if (s == nullptr || !(domain.empty() || domain == "ai.onnx")) return s;
    const Guard* guard = nullptr;
    for (const Guard& g : kGuards)
      if (s->Name() == g.op && s->SinceVersion() >= g.from && s->SinceVersion() < g.until)
        guard = &g;
    bool propagates = false;
    for (const char* op : kPropagators) propagates = propagates || s->Name() == op;
    if (guard == nullptr && !propagates) return s;
    const std::string cache_key = key + "@" + std::to_string(s->SinceVersion());
    auto it = patched_.find(cache_key);
    if (it == patched_.end()) {
      onnx::OpSchema copy = *s;
      if (guard)
        copy.TypeAndShapeInferenceFunction([inner = s->GetTypeAndShapeInferenceFunction(),
                                            check = guard->check](InferenceContext& ctx) {
          check(ctx);
          if (inner) inner(ctx);
        });
      if (propagates)
        copy.PartialDataPropagationFunction(
            [inner = s->GetDataPropagationFunction()](onnx::DataPropagationContext& ctx) {
              if (inner && !LongRank1Input(ctx)) inner(ctx);
            });
      it = patched_.emplace(cache_key, std::move(copy)).first;
    }
    return &it->second;
  }

 private:
  mutable std::map<std::string, onnx::OpSchema> patched_;
};

/// Whether two declarations of one value (dense tensors or untyped) agree: the same element type
/// where both name one, the same rank where both have a shape, the same size where both give a
/// dim_value.
bool Compatible(const onnx::ValueInfoProto& a, const onnx::ValueInfoProto& b) {
  if (!a.type().has_tensor_type() || !b.type().has_tensor_type()) return true;
  const auto& ta = a.type().tensor_type();
  const auto& tb = b.type().tensor_type();
  if (ta.elem_type() != 0 && tb.elem_type() != 0 && ta.elem_type() != tb.elem_type()) return false;
  if (!ta.has_shape() || !tb.has_shape()) return true;
  if (ta.shape().dim_size() != tb.shape().dim_size()) return false;
  for (int k = 0; k < ta.shape().dim_size(); ++k) {
    const auto &da = ta.shape().dim(k), &db = tb.shape().dim(k);
    if (da.has_dim_value() && db.has_dim_value() && da.dim_value() != db.dim_value()) return false;
  }
  return true;
}

/// "FLOAT16 [2, 5]", "FLOAT [?, 3]" (unknown dims as ?), "FLOAT (no shape)" for messages.
std::string Describe(const onnx::ValueInfoProto& v) {
  const auto& t = v.type().tensor_type();
  std::string s = onnx::TensorProto::DataType_IsValid(t.elem_type())
                      ? onnx::TensorProto::DataType_Name(
                            static_cast<onnx::TensorProto::DataType>(t.elem_type()))
                      : "type " + std::to_string(t.elem_type());
  if (!t.has_shape()) return s + " (no shape)";
  s += " [";
  for (int k = 0; k < t.shape().dim_size(); ++k) {
    if (k) s += ", ";
    s += t.shape().dim(k).has_dim_value() ? std::to_string(t.shape().dim(k).dim_value()) : "?";
  }
  return s + "]";
}

/// Checks one declared value (graph input / output / value_info); `what` names it.
void CheckValue(const std::string& path, const onnx::ValueInfoProto& v, const std::string& what) {
  const std::string where = path + ": " + what + " " + Quoted(v.name());
  if (!v.has_type() || v.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return;
  if (!v.type().has_tensor_type()) {
    const char* kind = v.type().has_sequence_type()        ? "a sequence"
                       : v.type().has_map_type()           ? "a map"
                       : v.type().has_optional_type()      ? "an optional"
                       : v.type().has_sparse_tensor_type() ? "a sparse tensor"
                                                           : "not a tensor";
    throw Error(where + " is " + kind + ": only dense tensors can be imported");
  }
  if (!v.type().tensor_type().has_shape()) return;
  int64_t n = 1;
  const auto& shape = v.type().tensor_type().shape();
  for (int k = 0; k < shape.dim_size(); ++k) {
    if (!shape.dim(k).has_dim_value()) continue;
    const int64_t d = shape.dim(k).dim_value();
    if (d < 0)
      throw Error(where + ": dimension " + std::to_string(k) + " is " + std::to_string(d) +
                  " (dims must be >= 0)");
    auto m = MulNonNegative(n, d);
    if (!m) throw Error(where + ": " + Describe(v) + " has more elements than int64 can count");
    n = *m;
  }
}

}  // namespace

void CheckDeclarations(const std::string& path, const onnx::GraphProto& graph) {
  // name -> its first declaration, to compare the others with.
  std::map<std::string, std::pair<const onnx::ValueInfoProto*, std::string>> first;
  auto check = [&](const onnx::ValueInfoProto& v, const std::string& what) {
    CheckValue(path, v, what);
    auto [it, added] = first.emplace(v.name(), std::make_pair(&v, what));
    if (!added && !Compatible(*it->second.first, v))
      throw Error(path + ": " + what + " " + Quoted(v.name()) + " is declared " + Describe(v) +
                  " but " + it->second.second + " " + Quoted(v.name()) + " is " +
                  Describe(*it->second.first));
  };
  for (const auto& v : graph.input()) check(v, "graph input");
  for (const auto& v : graph.output()) check(v, "graph output");
  for (const auto& v : graph.value_info()) check(v, "value_info");
}

void CheckConstantPayloads(const std::string& path, const onnx::GraphProto& graph) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (node.op_type() != "Constant" || !(node.domain().empty() || node.domain() == "ai.onnx"))
      continue;
    for (const auto& a : node.attribute()) {
      if (a.name() != "value" || !a.has_t() || !a.t().has_raw_data()) continue;
      const onnx::TensorProto& t = a.t();
      const int64_t item = OnnxItemSize(t.data_type());
      if (item == 0) continue;
      std::optional<int64_t> n = 1;
      for (int64_t d : t.dims()) n = d < 0 || !n ? std::nullopt : MulNonNegative(*n, d);
      const std::string label =
          node.name().empty() ? (node.output_size() ? node.output(0) : "#" + std::to_string(i))
                              : node.name();
      const std::string where = path + ": node " + Quoted(label) + " (Constant): value";
      if (!n || !MulNonNegative(*n, item)) throw Error(where + " has invalid dims");
      if (static_cast<int64_t>(t.raw_data().size()) != *n * item)
        throw Error(where + " holds " + std::to_string(t.raw_data().size()) +
                    " bytes of raw_data, its shape needs " + std::to_string(*n * item));
    }
  }
}

const onnx::ISchemaRegistry* GuardedSchemaRegistry() {
  static const GuardedSchemas registry;
  return &registry;
}

}  // namespace msc::frontend::onnx_import
