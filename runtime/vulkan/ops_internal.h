// Internal helpers of the ops_*.cc files (not part of the API used by generated code).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "ops.h"

namespace msc_vk {
namespace ops {
namespace detail {

// Throws Error("<optype> '<y.name>': <message>").
[[noreturn]] void Fail(const char* optype, const Tensor& y, const std::string& message);
// Every tensor must be float32 with a buffer.
void CheckFloat32(const char* optype, const Tensor& y,
                  std::initializer_list<const Tensor*> tensors);
// Every tensor must be float32 or float16 with a buffer: an activation of a float kernel (at
// generate --precision fp16 activations are stored as float16: R16 texel views widen them on
// fetch, the kernel's "+f16" variant rounds its output on store; FloatStem).
void CheckFloat(const char* optype, const Tensor& y, std::initializer_list<const Tensor*> tensors);
// The kernel of a float shader (one with the "f16" variant, shaders/common/util.glsl OUT_T) for
// these bindings: `stem`, or "<stem>+f16" when the storage buffer it writes is float16.
std::string FloatStem(const std::string& stem, const std::vector<Binding>& bindings);
// A weight operand read through a float texel view (conv, linear / dense): float32, or float16
// (generate --precision fp16: the view widens it, the kernel computes in float32), with a buffer.
void CheckFloatWeight(const char* optype, const Tensor& y, const Tensor& w);
// t must have `rank` dims; `role` names it ("input", "weight").
void CheckRank(const char* optype, const Tensor& y, const Tensor& t, size_t rank, const char* role);
// Checked narrowing for push constants.
uint32_t U32(int64_t v, const char* optype, const Tensor& y, const char* what);
// Axis in [-rank, rank) -> [0, rank).
int64_t NormAxis(int64_t axis, size_t rank, const char* optype, const Tensor& y);

// Row-major element strides.
std::vector<int64_t> ContiguousStrides(const Shape& shape);
// numpy broadcast of two shapes; false when incompatible.
bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out);

// An index space of <= max_dims dims with one stride vector per operand.
struct Collapsed {
  std::vector<int64_t> shape;  // exactly max_dims dims, outermost first (padded with 1)
  std::vector<std::vector<int64_t>> strides;  // per operand, max_dims each (padded with 0)
};
// Drops size-1 dims, merges dims d, d+1 where every operand has stride[d] == stride[d+1] *
// shape[d+1], and pads to max_dims dims. Fails when more than max_dims dims remain (with
// max_dims = 0: never fails, no padding).
Collapsed Collapse(const Shape& shape, const std::vector<std::vector<int64_t>>& strides,
                   const char* optype, const Tensor& y, size_t max_dims = 4);

// Magic numbers for shaders/common/util.glsl FastDiv(n, m, s) == n / d (n < 2^31, 1 <= d < 2^31):
// s = ceil(log2 d), m = floor(2^32 * (2^s - d) / d) + 1, n / d = (umulhi(n, m) + n) >> s.
struct MagicDivider {
  uint32_t m = 1, s = 0;
};
MagicDivider MakeMagicDivider(uint32_t d);

// True when both tensors are the same bytes of the same buffer.
bool SameBytes(const Tensor& a, const Tensor& b);
// True when the tensors' byte ranges intersect in one buffer (a kernel reading one while writing
// the other would race).
bool SharesBytes(const Tensor& a, const Tensor& b);

// `t` with another shape over the same bytes (the 1-D ops run the 2-D kernels on [N, C, 1, W]).
inline Tensor Reshaped(const Tensor& t, const Shape& shape) {
  Tensor v = t;
  v.shape = shape;
  return v;
}

// ---- dtype-generic kernels (shaders/common/dtype.glsl) -------------------------------------

// The shader's dtype code of t (float32 0, float16 1, int32 2, int64 3, bool 4); Fail for the
// other dtypes and for a tensor without a buffer.
uint32_t DTypeCode(const char* optype, const Tensor& y, const Tensor& t);
// Whether a kernel over these tensors needs the "+ext" shader variant: some dtype is not
// float32/int32 (see shaders/common/dtype.glsl).
bool NeedsExt(std::initializer_list<const Tensor*> tensors);
// `stem` or `stem`+"+ext".
std::string VariantStem(const std::string& stem, bool ext);
// t must be an int32/int64 tensor with a buffer (`role`: "indices").
void CheckIndices(const char* optype, const Tensor& y, const Tensor& t, const char* role);
// All tensors must have the same dtype as `y` (data movement).
void CheckSameDType(const char* optype, const Tensor& y,
                    std::initializer_list<const Tensor*> tensors);
// A read-only raw-element texel binding (View::kTexelUint).
inline Binding InElems(const Tensor& t) { return InTexel(t, View::kTexelUint); }
// Two little-endian words of a 64-bit integer (push constants).
void Words64(int64_t v, uint32_t out[2]);

// A <= 6-dim index space as shaders/common/nd.glsl decomposes it: shape padded with leading
// 1s, FastDiv magic per dim and the 5-bit shifts packed into one word.
struct NdIndex {
  uint32_t shape[6], div_m[6], div_s;
  uint32_t ndims;  // dims after dropping the leading size-1 ones (>= 1): the NDIMS spec constant
};
NdIndex MakeNdIndex(const std::vector<int64_t>& shape, const char* optype, const Tensor& y);

// Adds a kernel for shader `stem` and dispatches it on `grid`; the kernel is named y.name.
template <class P>
void Launch(Program& p, const char* stem, std::vector<Binding> bindings, const P& push,
            const SpecConstants& spec, const std::array<uint32_t, 3>& grid, const Tensor& y) {
  Kernel& k = p.AddKernel(stem, std::move(bindings), push, spec, y.name);
  p.Dispatch(k, grid[0], grid[1], grid[2]);
}

// Launch for a float shader: its "+f16" variant when the output binding is float16 (FloatStem).
template <class P>
void LaunchFloat(Program& p, const char* stem, std::vector<Binding> bindings, const P& push,
                 const SpecConstants& spec, const std::array<uint32_t, 3>& grid, const Tensor& y) {
  const std::string kernel = FloatStem(stem, bindings);
  Launch(p, kernel.c_str(), std::move(bindings), push, spec, grid, y);
}

}  // namespace detail
}  // namespace ops
}  // namespace msc_vk
