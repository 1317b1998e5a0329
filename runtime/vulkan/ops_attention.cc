// msc.attention (shaders msc/attention): one fused dispatch with an online softmax (ops.h,
// "attention and einsum"; einsum is in ops_einsum.cc).
#include <cmath>
#include <cstdlib>

#include "context.h"
#include "ops_internal.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::CheckRank;
using detail::Fail;
using detail::U32;

void CheckPermutation(const char* op, const Tensor& y, const std::array<int64_t, 4>& axes,
                      const char* what) {
  bool seen[4] = {false, false, false, false};
  for (int64_t a : axes) {
    if (a < 0 || a > 3 || seen[a]) {
      Fail(op, y,
           std::string(what) + " {" + std::to_string(axes[0]) + ", " + std::to_string(axes[1]) +
               ", " + std::to_string(axes[2]) + ", " + std::to_string(axes[3]) +
               "} is not a permutation of 0..3");
    }
    seen[a] = true;
  }
}

/// A view of rank 4 whose elements all lie inside its base (else Error naming the node).
void CheckView(const char* op, const Tensor& y, const StridedView& v, const char* role) {
  if (v.shape.size() != 4 || v.strides.size() != 4)
    Fail(op, y, std::string(role) + " " + v.Describe() + " must have rank 4");
  if (NumElements(v.shape) == 0) return;
  int64_t last = v.offset;
  bool ok = v.offset >= 0;
  for (size_t d = 0; d < 4; ++d) {
    ok = ok && v.strides[d] >= 0 && v.shape[d] >= 0;
    last += (v.shape[d] - 1) * v.strides[d];
  }
  if (!ok || last >= v.base.numel())
    Fail(op, y, std::string(role) + " " + v.Describe() + " reaches outside its tensor");
}

}  // namespace

StridedView::StridedView(const Tensor& whole)
    : base(whole), shape(whole.shape), strides(detail::ContiguousStrides(whole.shape)) {}

StridedView::StridedView(const Tensor& b, Shape s, std::vector<int64_t> st, int64_t off)
    : base(b), shape(std::move(s)), strides(std::move(st)), offset(off) {}

std::string StridedView::Describe() const {
  if (shape == base.shape && offset == 0 && strides == detail::ContiguousStrides(shape))
    return base.Describe();
  return base.Describe() + " viewed as " + ShapeToString(shape) + " strides " +
         ShapeToString(strides) + " from element " + std::to_string(offset);
}

void Attention(Program& p, const StridedView& q, const StridedView& k, const StridedView& v,
               const Tensor* mask, const Tensor& y, const AttentionAttrs& a) {
  const char* op = "msc.attention";
  detail::CheckFloat(op, y, {&q.base, &k.base, &v.base, &y});
  if (mask) detail::CheckFloat(op, y, {mask});
  CheckView(op, y, q, "query");
  CheckView(op, y, k, "key");
  CheckView(op, y, v, "value");
  CheckRank(op, y, y, 4, "output");
  CheckPermutation(op, y, a.q_axes, "axes");
  CheckPermutation(op, y, a.k_axes, "axes_1");
  CheckPermutation(op, y, a.v_axes, "axes_2");
  CheckPermutation(op, y, a.out_axes, "axes_3");
  // Sizes and element strides per relax dim (b, s, n, h) after permute_dims(t, axes).
  struct Dims {
    int64_t size[4], stride[4];
  };
  auto relax_dims = [](const StridedView& t, const std::array<int64_t, 4>& axes) {
    Dims d{};
    for (int r = 0; r < 4; ++r) {
      d.size[r] = t.shape[axes[r]];
      d.stride[r] = t.strides[axes[r]];
    }
    return d;
  };
  const Dims qd = relax_dims(q, a.q_axes), kd = relax_dims(k, a.k_axes),
             vd = relax_dims(v, a.v_axes);
  const int64_t B = qd.size[0], Sq = qd.size[1], N = qd.size[2], H = qd.size[3];
  const int64_t Skv = kd.size[1], Hv = vd.size[3];
  auto relax_shape = [](const Dims& d) {
    return ShapeToString({d.size[0], d.size[1], d.size[2], d.size[3]});
  };
  if (kd.size[0] != B || kd.size[2] != N || kd.size[3] != H) {
    Fail(op, y,
         "key " + k.Describe() + " is " + relax_shape(kd) +
             " as [B, S, N, H]; it must match query's " + relax_shape(qd) + " in B, N and H");
  }
  if (vd.size[0] != B || vd.size[1] != Skv || vd.size[2] != N) {
    Fail(op, y,
         "value " + v.Describe() + " is " + relax_shape(vd) +
             " as [B, S, N, H]; it must match key's " + relax_shape(kd) + " in B, S and N");
  }
  if (Skv == 0 && B * N * Sq * Hv > 0) Fail(op, y, "attention over zero keys");
  const int64_t o_relax[4] = {B, Sq, N, Hv};
  Shape expect(4);
  for (int d = 0; d < 4; ++d) expect[d] = o_relax[a.out_axes[d]];
  if (y.shape != expect) {
    Fail(op, y,
         "output " + y.Describe() + " does not match " + ShapeToString(expect) +
             " (the [B, Sq, N, Hv] result permuted by axes_3)");
  }
  struct {
    uint32_t B, N, Sq, Skv, H, Hv;
    uint32_t qs[4], ks[4], vs[4], os[4], ms[4];
    float scale;
    uint32_t causal, offset;
    uint32_t qo, ko, vo;
  } push{};
  push.B = U32(B, op, y, "batch");
  push.N = U32(N, op, y, "heads");
  push.Sq = U32(Sq, op, y, "query length");
  push.Skv = U32(Skv, op, y, "key length");
  push.H = U32(H, op, y, "head dim");
  push.Hv = U32(Hv, op, y, "value head dim");
  push.qo = U32(q.offset, op, y, "query offset");
  push.ko = U32(k.offset, op, y, "key offset");
  push.vo = U32(v.offset, op, y, "value offset");
  const std::vector<int64_t> ys = detail::ContiguousStrides(y.shape);
  for (int r = 0; r < 4; ++r) {
    push.qs[r] = U32(qd.stride[r], op, y, "stride");
    push.ks[r] = U32(kd.stride[r], op, y, "stride");
    push.vs[r] = U32(vd.stride[r], op, y, "stride");
    push.os[a.out_axes[r]] = U32(ys[r], op, y, "stride");
  }
  if (mask) {
    if (mask->shape.size() > 4) Fail(op, y, "mask " + mask->Describe() + " has more than 4 dims");
    const int64_t full[4] = {B, N, Sq, Skv};
    const std::vector<int64_t> ms = detail::ContiguousStrides(mask->shape);
    const size_t off = 4 - mask->shape.size();
    for (size_t d = 0; d < mask->shape.size(); ++d) {
      const int64_t m = mask->shape[d];
      if (m != 1 && m != full[off + d]) {
        Fail(op, y,
             "mask " + mask->Describe() +
                 " does not broadcast to [B, N, Sq, Skv] = " + ShapeToString({B, N, Sq, Skv}));
      }
      push.ms[off + d] = m == 1 ? 0 : U32(ms[d], op, y, "stride");
    }
  }
  push.scale = a.has_scale ? a.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(H)));
  if (a.causal_mask == "TopLeft") {
    push.causal = 1;
    push.offset = 0;
  } else if (a.causal_mask == "BottomRight") {
    push.causal = 1;
    push.offset = U32(std::llabs(Sq - Skv), op, y, "causal offset");
  } else if (!a.causal_mask.empty()) {
    Fail(op, y, "causal_mask '" + a.causal_mask + "' is not one of \"\", TopLeft, BottomRight");
  }
  if (B * N * Sq * Hv == 0) return;
  // CPU devices: one invocation per (row, 64 output dims), vec4 reads where the head dim is
  // contiguous and a multiple of 4; GPUs: one workgroup per row.
  // vec4 texels: h contiguous, and every row start (offset + other dims' strides) on a texel.
  auto vec4 = [](int64_t h, const uint32_t* s, uint32_t off) {
    return h % 4 == 0 && s[3] == 1 && s[0] % 4 == 0 && s[1] % 4 == 0 && s[2] % 4 == 0 &&
           off % 4 == 0;
  };
  const bool rows = !p.context().use_tiled_kernels();
  const bool qk4 = rows && vec4(H, push.qs, push.qo) && vec4(H, push.ks, push.ko);
  const bool v4 = rows && vec4(Hv, push.vs, push.vo);
  const View qk_view = qk4 ? View::kTexelVec4 : View::kTexelFloat;
  std::vector<Binding> bindings = {InTexel(q.base, qk_view), InTexel(k.base, qk_view),
                                   InTexel(v.base, v4 ? View::kTexelVec4 : View::kTexelFloat),
                                   InTexel(mask ? *mask : q.base), Out(y)};
  const uint64_t row_count = static_cast<uint64_t>(B * N * Sq);
  detail::LaunchFloat(p, "msc/attention", std::move(bindings), push,
                      {mask ? 1u : 0u, rows ? 1u : 0u, qk4 ? 1u : 0u, v4 ? 1u : 0u},
                      rows ? Grid1D(p.context(), row_count * ((Hv + 63) / 64), 64)
                           : Grid1D(p.context(), row_count, 1),
                      y);
}

}  // namespace ops
}  // namespace msc_vk
