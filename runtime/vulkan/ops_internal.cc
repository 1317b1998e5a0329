#include <algorithm>

#include "context.h"
#include "error.h"
#include "ops_internal.h"
#include "shader_registry.h"

namespace msc_vk {
namespace ops {

std::array<uint32_t, 3> Grid1D(const Context& ctx, uint64_t invocations, uint32_t local_size) {
  const uint64_t groups = (invocations + local_size - 1) / local_size;
  const uint64_t max_x = std::min<uint64_t>(65535, ctx.limits().maxComputeWorkGroupCount[0]);
  if (groups <= max_x) return {static_cast<uint32_t>(groups), 1, 1};
  const uint64_t y = (groups + max_x - 1) / max_x;
  if (y > ctx.limits().maxComputeWorkGroupCount[1]) {
    throw Error("1-D problem of " + std::to_string(invocations) +
                " invocations exceeds the device's grid");
  }
  return {static_cast<uint32_t>(max_x), static_cast<uint32_t>(y), 1};
}

namespace detail {

void Fail(const char* optype, const Tensor& y, const std::string& message) {
  throw Error(std::string(optype) + " '" + y.name + "': " + message);
}

void CheckFloat32(const char* optype, const Tensor& y,
                  std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (!t->buffer) Fail(optype, y, "tensor " + t->Describe() + " has no buffer");
    if (t->dtype != DType::kFloat32) {
      Fail(optype, y,
           "tensor " + t->Describe() + " is " + DTypeName(t->dtype) +
               "; the Vulkan shaders take float32");
    }
  }
}

void CheckFloat(const char* optype, const Tensor& y, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (!t->buffer) Fail(optype, y, "tensor " + t->Describe() + " has no buffer");
    if (t->dtype != DType::kFloat32 && t->dtype != DType::kFloat16) {
      Fail(optype, y,
           "tensor " + t->Describe() + " is " + DTypeName(t->dtype) +
               "; the Vulkan shaders take float32 or float16");
    }
  }
}

std::string FloatStem(const std::string& stem, const std::vector<Binding>& bindings) {
  for (const Binding& b : bindings) {
    if (b.access != Access::kRead && b.view == View::kStorage &&
        b.tensor.dtype == DType::kFloat16) {
      const std::string variant = stem + "+f16";
      if (!FindEmbeddedShader(variant) && FindEmbeddedShader(stem))
        throw Error("kernel '" + b.tensor.name + "' writes float16, but shader '" + variant +
                    "' is not embedded (msc_vk_embed_shaders(... F16) compiles the float16 "
                    "variants; generate --precision fp16 projects pass it)");
      return variant;
    }
  }
  return stem;
}

void CheckFloatWeight(const char* optype, const Tensor& y, const Tensor& w) {
  if (!w.buffer) Fail(optype, y, "tensor " + w.Describe() + " has no buffer");
  if (w.dtype != DType::kFloat32 && w.dtype != DType::kFloat16) {
    Fail(optype, y,
         "weight " + w.Describe() + " is " + DTypeName(w.dtype) +
             "; the Vulkan shaders take float32 or float16 weights");
  }
}

void CheckRank(const char* optype, const Tensor& y, const Tensor& t, size_t rank,
               const char* role) {
  if (t.shape.size() != rank) {
    Fail(optype, y,
         std::string(role) + " " + t.Describe() + " must have " + std::to_string(rank) + " dims");
  }
}

uint32_t U32(int64_t v, const char* optype, const Tensor& y, const char* what) {
  if (v < 0 || v > 0xffffffffLL)
    Fail(optype, y, std::string(what) + " = " + std::to_string(v) + " is out of range");
  return static_cast<uint32_t>(v);
}

int64_t NormAxis(int64_t axis, size_t rank, const char* optype, const Tensor& y) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    Fail(optype, y,
         "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  return axis < 0 ? axis + r : axis;
}

std::vector<int64_t> ContiguousStrides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out) {
  const size_t n = std::max(a.size(), b.size());
  out->assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

Collapsed Collapse(const Shape& shape, const std::vector<std::vector<int64_t>>& strides,
                   const char* optype, const Tensor& y, size_t max_dims) {
  Collapsed c;
  c.strides.resize(strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !c.shape.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k)
      merge = c.strides[k].back() == strides[k][d] * shape[d];
    if (merge) {
      c.shape.back() *= shape[d];
      for (size_t k = 0; k < strides.size(); ++k) c.strides[k].back() = strides[k][d];
    } else {
      c.shape.push_back(shape[d]);
      for (size_t k = 0; k < strides.size(); ++k) c.strides[k].push_back(strides[k][d]);
    }
  }
  if (max_dims == 0) return c;
  if (c.shape.size() > max_dims) {
    Fail(optype, y,
         "the access pattern needs " + std::to_string(c.shape.size()) +
             " dims after collapsing; the shader handles " + std::to_string(max_dims));
  }
  while (c.shape.size() < max_dims) {
    c.shape.insert(c.shape.begin(), 1);
    for (auto& s : c.strides) s.insert(s.begin(), 0);
  }
  return c;
}

MagicDivider MakeMagicDivider(uint32_t d) {
  if (d == 0 || d >= (1u << 31))
    throw Error("MakeMagicDivider: divisor " + std::to_string(d) + " out of range");
  MagicDivider r;
  while ((uint64_t{1} << r.s) < d) ++r.s;
  r.m = static_cast<uint32_t>((uint64_t{1} << 32) * ((uint64_t{1} << r.s) - d) / d + 1);
  return r;
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.buffer == b.buffer && a.offset == b.offset && a.bytes() == b.bytes();
}

bool SharesBytes(const Tensor& a, const Tensor& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.bytes() && b.offset < a.offset + a.bytes();
}

uint32_t DTypeCode(const char* optype, const Tensor& y, const Tensor& t) {
  if (!t.buffer) Fail(optype, y, "tensor " + t.Describe() + " has no buffer");
  switch (t.dtype) {
    case DType::kFloat32:
      return 0;
    case DType::kFloat16:
      return 1;
    case DType::kInt32:
      return 2;
    case DType::kInt64:
      return 3;
    case DType::kBool:
      return 4;
    default:
      Fail(optype, y,
           "tensor " + t.Describe() + " is " + DTypeName(t.dtype) +
               "; the Vulkan kernels take float32, float16, int32, int64 and bool");
  }
}

bool NeedsExt(std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (t->dtype != DType::kFloat32 && t->dtype != DType::kInt32) return true;
  }
  return false;
}

std::string VariantStem(const std::string& stem, bool ext) { return ext ? stem + "+ext" : stem; }

void CheckIndices(const char* optype, const Tensor& y, const Tensor& t, const char* role) {
  if (!t.buffer) Fail(optype, y, "tensor " + t.Describe() + " has no buffer");
  if (t.dtype != DType::kInt32 && t.dtype != DType::kInt64)
    Fail(optype, y, std::string(role) + " " + t.Describe() + " must be int32 or int64");
}

void CheckSameDType(const char* optype, const Tensor& y,
                    std::initializer_list<const Tensor*> tensors) {
  DTypeCode(optype, y, y);
  for (const Tensor* t : tensors) {
    DTypeCode(optype, y, *t);
    if (t->dtype != y.dtype) {
      Fail(optype, y,
           "input " + t->Describe() + " and output " + y.Describe() + " differ in dtype");
    }
  }
}

void Words64(int64_t v, uint32_t out[2]) {
  const uint64_t u = static_cast<uint64_t>(v);
  out[0] = static_cast<uint32_t>(u);
  out[1] = static_cast<uint32_t>(u >> 32);
}

NdIndex MakeNdIndex(const std::vector<int64_t>& shape, const char* optype, const Tensor& y) {
  if (shape.size() > 6) {
    Fail(optype, y,
         "the index space has " + std::to_string(shape.size()) + " dims; the shader handles 6");
  }
  NdIndex n{};
  n.div_s = 0;
  for (int d = 0; d < 6; ++d) {
    const int lead = 6 - static_cast<int>(shape.size());
    n.shape[d] = d < lead ? 1 : U32(shape[d - lead], optype, y, "dim");
    const MagicDivider m = MakeMagicDivider(n.shape[d]);
    n.div_m[d] = m.m;
    n.div_s |= m.s << (5 * d);
  }
  n.ndims = 6;
  while (n.ndims > 1 && n.shape[6 - n.ndims] == 1) --n.ndims;
  return n;
}

}  // namespace detail
}  // namespace ops
}  // namespace msc_vk
