// Binary (shaders/common/binary.glsl) and unary (shaders/common/unary.glsl) elementwise ops.
#include "ops_internal.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::CheckFloat32;
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

void Binary(Program& p, const char* optype, const char* stem, const Tensor& a, const Tensor& b,
            const Tensor& y) {
  CheckFloat32(optype, y, {&a, &b, &y});
  Shape out;
  if (!detail::BroadcastShapes(a.shape, b.shape, &out) || out != y.shape) {
    Fail(optype, y,
         "output " + y.Describe() + " is not the broadcast of " + a.Describe() + " and " +
             b.Describe());
  }
  const int64_t total = y.numel();
  struct {
    uint32_t shape[4], a_stride[4], b_stride[4], total, div_m[4], div_s[4];
  } push{};
  push.total = U32(total, optype, y, "elements");
  uint32_t mode = 0;
  if (total % 4 == 0 && a.numel() == total && b.numel() == total)
    mode = 1;
  else if (total % 4 == 0 && a.numel() == total && b.numel() == 1)
    mode = 2;
  else if (total % 4 == 0 && a.numel() == 1 && b.numel() == total)
    mode = 3;
  if (mode == 0) {
    detail::Collapsed c = detail::Collapse(
        out, {BroadcastStrides(a.shape, out), BroadcastStrides(b.shape, out)}, optype, y);
    for (int d = 0; d < 4; ++d) {
      push.shape[d] = U32(c.shape[d], optype, y, "dim");
      push.a_stride[d] = U32(c.strides[0][d], optype, y, "stride");
      push.b_stride[d] = U32(c.strides[1][d], optype, y, "stride");
      const detail::MagicDivider m = detail::MakeMagicDivider(push.shape[d]);
      push.div_m[d] = m.m;
      push.div_s[d] = m.s;
    }
    if (c.shape[3] % 4 == 0) mode = 4;  // 4 outputs per invocation along the innermost dim
  }
  const View va = (mode == 1 || mode == 2 || mode == 4) ? View::kTexelVec4 : View::kTexelFloat;
  const View vb = (mode == 1 || mode == 3 || mode == 4) ? View::kTexelVec4 : View::kTexelFloat;
  detail::Launch(p, stem, {InTexel(a, va), InTexel(b, vb), Out(y)}, push, {mode},
                 Grid1D(p.context(), mode == 0 ? total : total / 4, 64), y);
}

void Unary(Program& p, const char* optype, const char* stem, const Tensor& x, const Tensor& y,
           float p0 = 0, float p1 = 0) {
  CheckFloat32(optype, y, {&x, &y});
  if (x.numel() != y.numel())
    Fail(optype, y, "input " + x.Describe() + " and output differ in size");
  const int64_t total = y.numel();
  const bool vec4 = total % 4 == 0;
  struct {
    uint32_t total;
    float p0, p1;
  } push{U32(total, optype, y, "elements"), p0, p1};
  detail::Launch(p, stem, {InTexel(x, vec4 ? View::kTexelVec4 : View::kTexelFloat), Out(y)}, push,
                 {vec4 ? 1u : 0u}, Grid1D(p.context(), vec4 ? total / 4 : total, 64), y);
}

}  // namespace

void Add(Program& p, const Tensor& a, const Tensor& b, const Tensor& y) {
  Binary(p, "add", "add", a, b, y);
}
void Subtract(Program& p, const Tensor& a, const Tensor& b, const Tensor& y) {
  Binary(p, "subtract", "subtract", a, b, y);
}
void Multiply(Program& p, const Tensor& a, const Tensor& b, const Tensor& y) {
  Binary(p, "multiply", "multiply", a, b, y);
}
void Divide(Program& p, const Tensor& a, const Tensor& b, const Tensor& y) {
  Binary(p, "divide", "divide", a, b, y);
}

void Relu(Program& p, const Tensor& x, const Tensor& y) { Unary(p, "nn.relu", "nn/relu", x, y); }
void Sigmoid(Program& p, const Tensor& x, const Tensor& y) { Unary(p, "sigmoid", "sigmoid", x, y); }
void Tanh(Program& p, const Tensor& x, const Tensor& y) { Unary(p, "tanh", "tanh", x, y); }
void Gelu(Program& p, const Tensor& x, const Tensor& y) { Unary(p, "nn.gelu", "nn/gelu", x, y); }
void Clip(Program& p, const Tensor& x, const Tensor& y, float a_min, float a_max) {
  Unary(p, "clip", "clip", x, y, a_min, a_max);
}

}  // namespace ops
}  // namespace msc_vk
