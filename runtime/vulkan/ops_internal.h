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

// An index space of <= 4 dims with one stride vector per operand.
struct Collapsed {
  std::vector<int64_t> shape;                 // exactly 4 dims, outermost first (padded with 1)
  std::vector<std::vector<int64_t>> strides;  // per operand, 4 each (padded with 0)
};
// Drops size-1 dims, merges dims d, d+1 where every operand has stride[d] == stride[d+1] *
// shape[d+1], and pads to 4 dims. Fails when more than 4 dims remain.
Collapsed Collapse(const Shape& shape, const std::vector<std::vector<int64_t>>& strides,
                   const char* optype, const Tensor& y);

// Magic numbers for shaders/common/util.glsl FastDiv(n, m, s) == n / d (n < 2^31, 1 <= d < 2^31):
// s = ceil(log2 d), m = floor(2^32 * (2^s - d) / d) + 1, n / d = (umulhi(n, m) + n) >> s.
struct MagicDivider {
  uint32_t m = 1, s = 0;
};
MagicDivider MakeMagicDivider(uint32_t d);

// True when both tensors are the same bytes of the same buffer.
bool SameBytes(const Tensor& a, const Tensor& b);

// Adds a kernel for shader `stem` and dispatches it on `grid`; the kernel is named y.name.
template <class P>
void Launch(Program& p, const char* stem, std::vector<Binding> bindings, const P& push,
            const SpecConstants& spec, const std::array<uint32_t, 3>& grid, const Tensor& y) {
  Kernel& k = p.AddKernel(stem, std::move(bindings), push, spec, y.name);
  p.Dispatch(k, grid[0], grid[1], grid[2]);
}

}  // namespace detail
}  // namespace ops
}  // namespace msc_vk
