// nn.pad, constant / edge / reflect (shaders nn/pad): unpadded dims merged, at most 8 left.
#include <string>
#include <vector>

#include "context.h"
#include "ops_internal.h"

namespace msc_vk {
namespace ops {

using detail::CheckFloat32;
using detail::Fail;
using detail::U32;

void Pad(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& pad_width,
         const std::string& pad_mode, float pad_value) {
  const char* op = "nn.pad";
  CheckFloat32(op, y, {&x, &y});
  const size_t rank = x.shape.size();
  if (pad_width.size() != 2 * rank) {
    Fail(op, y,
         "pad_width has " + std::to_string(pad_width.size()) + " values; input " + x.Describe() +
             " needs " + std::to_string(2 * rank) + " (before, after per dim)");
  }
  uint32_t mode = 0;
  if (pad_mode == "edge") {
    mode = 1;
  } else if (pad_mode == "reflect") {
    mode = 2;
  } else if (pad_mode != "constant") {
    Fail(op, y, "pad_mode '" + pad_mode + "' is not one of constant, edge, reflect");
  }
  Shape expect(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t b = pad_width[2 * d], e = pad_width[2 * d + 1];
    if (b < 0 || e < 0) Fail(op, y, "negative pad_width (cropping) is not supported");
    if (mode != 0 && x.shape[d] == 0 && b + e > 0)
      Fail(op, y, pad_mode + " padding of the empty dim " + std::to_string(d));
    if (mode == 2 && (b >= x.shape[d] || e >= x.shape[d]) && b + e > 0) {
      Fail(op, y,
           "reflect padding needs pads < the dim size: dim " + std::to_string(d) + " of " +
               x.Describe() + " has pads " + std::to_string(b) + ", " + std::to_string(e));
    }
    expect[d] = x.shape[d] + b + e;
  }
  if (y.shape != expect)
    Fail(op, y, "output " + y.Describe() + " does not match " + ShapeToString(expect));
  if (y.numel() == 0) return;
  // The kernel binds x as a texel view, which cannot be empty.
  if (x.numel() == 0) Fail(op, y, "padding an empty input " + x.Describe() + " is not supported");
  // Merge adjacent dims that are both unpadded (outermost first); drop size-1 unpadded dims.
  std::vector<int64_t> in, out, before;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t b = pad_width[2 * d], e = pad_width[2 * d + 1];
    if (x.shape[d] == 1 && b == 0 && e == 0) continue;
    const bool unpadded = b == 0 && e == 0;
    if (unpadded && !in.empty() && before.back() == 0 && out.back() == in.back()) {
      in.back() *= x.shape[d];
      out.back() *= x.shape[d];
    } else {
      in.push_back(x.shape[d]);
      out.push_back(expect[d]);
      before.push_back(b);
    }
  }
  if (in.size() > 8) {
    Fail(op, y,
         "the padding pattern needs " + std::to_string(in.size()) +
             " dims after merging unpadded ones; the shader handles 8");
  }
  while (in.size() < 8) {
    in.insert(in.begin(), 1);
    out.insert(out.begin(), 1);
    before.insert(before.begin(), 0);
  }
  struct {
    uint32_t in_shape[8], out_shape[8], before[8];
    uint32_t total;
    float pad_value;
  } push{};
  for (int d = 0; d < 8; ++d) {
    push.in_shape[d] = U32(in[d], op, y, "dim");
    push.out_shape[d] = U32(out[d], op, y, "dim");
    push.before[d] = U32(before[d], op, y, "pad");
  }
  push.total = U32(y.numel(), op, y, "output elements");
  push.pad_value = pad_value;
  detail::Launch(p, "nn/pad", {InTexel(x), Out(y)}, push, {mode},
                 Grid1D(p.context(), y.numel(), 64), y);
}

}  // namespace ops
}  // namespace msc_vk
