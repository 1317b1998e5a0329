// Attention, batch_matmul with transpose_a, msc.matmul, 1-D conv / pooling (the 2-D kernels on
// [N, C, 1, W] views), transposed convolution, resize2d and pad (ops_nn_ext.h).
#include <cmath>
#include <cstdlib>

#include "context.h"
#include "ops_internal.h"
#include "ops_nn_ext.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::CheckFloat32;
using detail::CheckRank;
using detail::Fail;
using detail::U32;

// A view of `t` with another shape (same bytes).
Tensor View4(const Tensor& t, const Shape& shape) {
  Tensor v = t;
  v.shape = shape;
  return v;
}

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

// torch's 1-D pooling output size (see ops_nn.cc PoolOut).
int64_t Pool1dOut(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t d,
                  bool ceil_mode) {
  const int64_t span = in + p0 + p1 - d * (k - 1) - 1;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p0) --out;
  return out;
}

void Conv1dImpl(Program& p, const char* op, const char* stem, const Tensor& x, const Tensor& w,
                const Tensor* bias, const Tensor& y, const Conv1dAttrs& a) {
  detail::CheckFloat(op, y, {&x, &y});
  detail::CheckFloatWeight(op, y, w);
  CheckRank(op, y, x, 3, "input");
  CheckRank(op, y, w, 3, "weight");
  CheckRank(op, y, y, 3, "output");
  if (a.stride < 1 || a.dilation < 1) Fail(op, y, "strides and dilation must be >= 1");
  if (a.padding[0] < 0 || a.padding[1] < 0) Fail(op, y, "padding must be >= 0");
  const int64_t N = x.dim(0), W = x.dim(2), O = w.dim(0), KW = w.dim(2);
  const int64_t OW = (W + a.padding[0] + a.padding[1] - a.dilation * (KW - 1) - 1) / a.stride + 1;
  if (y.shape != Shape{N, O, OW}) {
    Fail(op, y,
         "output " + y.Describe() + " does not match the computed shape " +
             ShapeToString({N, O, OW}));
  }
  detail::ConvImpl(
      p, op, stem, View4(x, {N, x.dim(1), 1, W}), View4(w, {O, w.dim(1), 1, KW}), bias,
      View4(y, {N, O, 1, OW}),
      Conv2dAttrs{
          {1, a.stride}, {0, a.padding[0], 0, a.padding[1]}, {1, a.dilation}, a.groups, a.act});
}

void Pool1dImpl(Program& p, const char* op, const char* stem, const Tensor& x, const Tensor& y,
                const Pool1dAttrs& a, bool adaptive) {
  detail::CheckFloat(op, y, {&x, &y});
  CheckRank(op, y, x, 3, "input");
  CheckRank(op, y, y, 3, "output");
  const int64_t N = x.dim(0), C = x.dim(1), W = x.dim(2);
  int64_t OW = y.dim(2);
  if (!adaptive) {
    if (a.pool_size < 1 || a.stride < 1 || a.dilation < 1)
      Fail(op, y, "pool_size, strides and dilation must be >= 1");
    if (a.padding[0] < 0 || a.padding[1] < 0) Fail(op, y, "padding must be >= 0");
    OW = Pool1dOut(W, a.pool_size, a.stride, a.padding[0], a.padding[1], a.dilation, a.ceil_mode);
  }
  if (y.shape != Shape{N, C, OW} || OW < 1) {
    Fail(op, y,
         "output " + y.Describe() + " does not match the computed shape " +
             ShapeToString({N, C, OW}));
  }
  Pool2dAttrs a2;
  a2.pool_size = {1, a.pool_size};
  a2.strides = {1, a.stride};
  a2.padding = {0, a.padding[0], 0, a.padding[1]};
  a2.dilation = {1, a.dilation};
  a2.ceil_mode = a.ceil_mode;
  a2.count_include_pad = a.count_include_pad;
  detail::PoolImpl(p, op, stem, View4(x, {N, C, 1, W}), View4(y, {N, C, 1, OW}), a2, adaptive);
}

struct ConvTPush {
  uint32_t N, C, H, W, O, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, groups;
};

// x [N, C, H, W], w [C, O/groups, KH, KW] -> y [N, O, OH, OW]; `y_shown` is the caller's output
// (for errors: its rank may be 3).
void ConvTransposeImpl(Program& p, const char* op, const char* stem, const Tensor& x,
                       const Tensor& w, const Tensor& y, const Tensor& y_shown,
                       const ConvTranspose2dAttrs& a) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t KH = w.dim(2), KW = w.dim(3), G = a.groups;
  if (G < 1 || C % G != 0 || w.dim(0) != C) {
    Fail(op, y_shown,
         "groups = " + std::to_string(G) + " does not fit input " + x.Describe() + " and weight " +
             w.Describe() + " (IOHW: weight dim 0 must be the input channels)");
  }
  for (int64_t v : {a.strides[0], a.strides[1], a.dilation[0], a.dilation[1]}) {
    if (v < 1) Fail(op, y_shown, "strides and dilation must be >= 1");
  }
  for (int64_t v : {a.padding[0], a.padding[1], a.padding[2], a.padding[3], a.output_padding[0],
                    a.output_padding[1]}) {
    if (v < 0) Fail(op, y_shown, "padding and output_padding must be >= 0");
  }
  const int64_t O = w.dim(1) * G;
  const int64_t OH = (H - 1) * a.strides[0] - a.padding[0] - a.padding[2] +
                     a.dilation[0] * (KH - 1) + a.output_padding[0] + 1;
  const int64_t OW = (W - 1) * a.strides[1] - a.padding[1] - a.padding[3] +
                     a.dilation[1] * (KW - 1) + a.output_padding[1] + 1;
  if (y.shape != Shape{N, O, OH, OW} || OH < 1 || OW < 1) {
    Shape expect = y_shown.shape.size() == 3 ? Shape{N, O, OW} : Shape{N, O, OH, OW};
    Fail(op, y_shown,
         "output " + y_shown.Describe() + " does not match the computed shape " +
             ShapeToString(expect));
  }
  ConvTPush push{U32(N, op, y, "N"),
                 U32(C, op, y, "C"),
                 U32(H, op, y, "H"),
                 U32(W, op, y, "W"),
                 U32(O, op, y, "O"),
                 U32(OH, op, y, "OH"),
                 U32(OW, op, y, "OW"),
                 U32(KH, op, y, "KH"),
                 U32(KW, op, y, "KW"),
                 U32(a.strides[0], op, y, "stride"),
                 U32(a.strides[1], op, y, "stride"),
                 U32(a.padding[0], op, y, "padding"),
                 U32(a.padding[1], op, y, "padding"),
                 U32(a.dilation[0], op, y, "dilation"),
                 U32(a.dilation[1], op, y, "dilation"),
                 U32(G, op, y, "groups")};
  if (y.numel() >= (int64_t{1} << 31) || x.numel() >= (int64_t{1} << 31))
    Fail(op, y_shown, "tensors of 2^31 elements or more are not supported");
  detail::Launch(p, stem, {InTexel(x), InTexel(w), Out(y)}, push, {},
                 Grid1D(p.context(), y.numel(), 64), y);
}

}  // namespace

// ---- attention -------------------------------------------------------------------------------

void Attention(Program& p, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
               const Tensor& y, const AttentionAttrs& a) {
  const char* op = "msc.attention";
  detail::CheckFloat(op, y, {&q, &k, &v, &y});
  if (mask) detail::CheckFloat(op, y, {mask});
  CheckRank(op, y, q, 4, "query");
  CheckRank(op, y, k, 4, "key");
  CheckRank(op, y, v, 4, "value");
  CheckRank(op, y, y, 4, "output");
  CheckPermutation(op, y, a.q_axes, "axes");
  CheckPermutation(op, y, a.k_axes, "axes_1");
  CheckPermutation(op, y, a.v_axes, "axes_2");
  CheckPermutation(op, y, a.out_axes, "axes_3");
  // Sizes and element strides per relax dim (b, s, n, h) after permute_dims(t, axes).
  struct Dims {
    int64_t size[4], stride[4];
  };
  auto relax_dims = [](const Tensor& t, const std::array<int64_t, 4>& axes) {
    const std::vector<int64_t> st = detail::ContiguousStrides(t.shape);
    Dims d{};
    for (int r = 0; r < 4; ++r) {
      d.size[r] = t.shape[axes[r]];
      d.stride[r] = st[axes[r]];
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
  } push{};
  push.B = U32(B, op, y, "batch");
  push.N = U32(N, op, y, "heads");
  push.Sq = U32(Sq, op, y, "query length");
  push.Skv = U32(Skv, op, y, "key length");
  push.H = U32(H, op, y, "head dim");
  push.Hv = U32(Hv, op, y, "value head dim");
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
  const bool rows = !p.context().use_tiled_kernels();
  const bool qk4 = rows && H % 4 == 0 && push.qs[3] == 1 && push.ks[3] == 1;
  const bool v4 = rows && Hv % 4 == 0 && push.vs[3] == 1;
  const View qk_view = qk4 ? View::kTexelVec4 : View::kTexelFloat;
  std::vector<Binding> bindings = {InTexel(q, qk_view), InTexel(k, qk_view),
                                   InTexel(v, v4 ? View::kTexelVec4 : View::kTexelFloat),
                                   InTexel(mask ? *mask : q), Out(y)};
  const uint64_t row_count = static_cast<uint64_t>(B * N * Sq);
  detail::LaunchFloat(p, "msc/attention", std::move(bindings), push,
                      {mask ? 1u : 0u, rows ? 1u : 0u, qk4 ? 1u : 0u, v4 ? 1u : 0u},
                      rows ? Grid1D(p.context(), row_count * ((Hv + 63) / 64), 64)
                           : Grid1D(p.context(), row_count, 1),
                      y);
}

// ---- GEMM variants ---------------------------------------------------------------------------

void BatchMatmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, bool transpose_a,
                 bool transpose_b) {
  const char* op = "nn.batch_matmul";
  CheckRank(op, y, a, 3, "input a");
  CheckRank(op, y, b, 3, "input b");
  detail::MatmulImpl(p, op, "nn/batch_matmul", a, b, y, transpose_a, transpose_b, {});
}

void MscMatmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, Activation act) {
  detail::MatmulImpl(p, "msc.matmul", "msc/matmul", a, b, y, false, false, act);
}

// ---- 1-D convolution and pooling -------------------------------------------------------------

void Conv1d(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, const Conv1dAttrs& a) {
  Conv1dImpl(p, "nn.conv1d", "nn/conv1d", x, w, nullptr, y, a);
}

void Conv1dBias(Program& p, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                const Conv1dAttrs& a) {
  Conv1dImpl(p, "msc.conv1d_bias", "msc/conv1d_bias", x, w, &bias, y, a);
}

void MaxPool1d(Program& p, const Tensor& x, const Tensor& y, const Pool1dAttrs& a) {
  Pool1dImpl(p, "nn.max_pool1d", "nn/max_pool1d", x, y, a, false);
}

void AvgPool1d(Program& p, const Tensor& x, const Tensor& y, const Pool1dAttrs& a) {
  Pool1dImpl(p, "nn.avg_pool1d", "nn/avg_pool1d", x, y, a, false);
}

void AdaptiveAvgPool1d(Program& p, const Tensor& x, const Tensor& y) {
  Pool1dImpl(p, "nn.adaptive_avg_pool1d", "nn/adaptive_avg_pool1d", x, y, Pool1dAttrs{}, true);
}

// ---- transposed convolution ------------------------------------------------------------------

void Conv2dTranspose(Program& p, const Tensor& x, const Tensor& w, const Tensor& y,
                     const ConvTranspose2dAttrs& a) {
  const char* op = "nn.conv2d_transpose";
  CheckFloat32(op, y, {&x, &w, &y});
  CheckRank(op, y, x, 4, "input");
  CheckRank(op, y, w, 4, "weight");
  CheckRank(op, y, y, 4, "output");
  ConvTransposeImpl(p, op, "nn/conv2d_transpose", x, w, y, y, a);
}

void Conv1dTranspose(Program& p, const Tensor& x, const Tensor& w, const Tensor& y,
                     const ConvTranspose1dAttrs& a) {
  const char* op = "nn.conv1d_transpose";
  CheckFloat32(op, y, {&x, &y});
  detail::CheckFloatWeight(op, y, w);
  CheckRank(op, y, x, 3, "input");
  CheckRank(op, y, w, 3, "weight");
  CheckRank(op, y, y, 3, "output");
  ConvTranspose2dAttrs a2;
  a2.strides = {1, a.stride};
  a2.padding = {0, a.padding[0], 0, a.padding[1]};
  a2.output_padding = {0, a.output_padding};
  a2.dilation = {1, a.dilation};
  a2.groups = a.groups;
  ConvTransposeImpl(p, op, "nn/conv1d_transpose", View4(x, {x.dim(0), x.dim(1), 1, x.dim(2)}),
                    View4(w, {w.dim(0), w.dim(1), 1, w.dim(2)}),
                    View4(y, {y.dim(0), y.dim(1), 1, y.dim(2)}), y, a2);
}

// ---- resize2d --------------------------------------------------------------------------------

void Resize2d(Program& p, const Tensor& x, const Tensor& y, const Resize2dAttrs& a) {
  const char* op = "image.resize2d";
  CheckFloat32(op, y, {&x, &y});
  CheckRank(op, y, x, 4, "input");
  CheckRank(op, y, y, 4, "output");
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t OH = y.dim(2), OW = y.dim(3);
  if (y.dim(0) != N || y.dim(1) != C)
    Fail(op, y, "output " + y.Describe() + " must keep N, C of input " + x.Describe());
  if (H < 1 || W < 1) Fail(op, y, "input " + x.Describe() + " is empty");
  auto index_of = [&](const std::string& v, std::initializer_list<const char*> names,
                      const char* attr) {
    uint32_t i = 0;
    for (const char* n : names) {
      if (v == n) return i;
      ++i;
    }
    std::string all;
    for (const char* n : names) all += std::string(all.empty() ? "" : ", ") + n;
    Fail(op, y, std::string(attr) + " '" + v + "' is not supported (one of: " + all + ")");
  };
  const uint32_t method = index_of(a.method, {"nearest_neighbor", "linear", "cubic"}, "method");
  const uint32_t coord = index_of(
      a.coordinate_transformation_mode,
      {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"},
      "coordinate_transformation_mode");
  std::string rounding = a.rounding_method;
  if (rounding.empty()) rounding = coord == 1 ? "round" : "floor";  // TOPI's default
  const uint32_t round =
      index_of(rounding, {"round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"},
               "rounding_method");
  // TOPI can_convert_multiply_to_intdiv: nearest + asymmetric with an integer upscale factor
  // indexes by integer division.
  auto int_factor = [&](int64_t in, int64_t out) -> uint32_t {
    if (method != 0 || coord != 2 || out % in != 0) return 0;
    const double factor = static_cast<double>(out / in);
    const double check = 1.0 / (1e-5 * static_cast<double>(in) + 1e-5);
    return factor > check ? 0 : static_cast<uint32_t>(out / in);
  };
  struct {
    uint32_t NC, H, W, OH, OW;
    float scale_h, scale_w, align_h, align_w;
    uint32_t factor_h, factor_w;
    float alpha;
    uint32_t exclude;
  } push{U32(N * C, op, y, "N*C"),
         U32(H, op, y, "H"),
         U32(W, op, y, "W"),
         U32(OH, op, y, "OH"),
         U32(OW, op, y, "OW"),
         static_cast<float>(H) / static_cast<float>(OH),
         static_cast<float>(W) / static_cast<float>(OW),
         OH > 1 ? static_cast<float>(H - 1) / static_cast<float>(OH - 1) : 0.0f,
         OW > 1 ? static_cast<float>(W - 1) / static_cast<float>(OW - 1) : 0.0f,
         int_factor(H, OH),
         int_factor(W, OW),
         a.cubic_alpha,
         a.cubic_exclude ? 1u : 0u};
  if (y.numel() == 0) return;
  detail::Launch(p, "image/resize2d", {InTexel(x), Out(y)}, push, {method, coord, round},
                 Grid1D(p.context(), y.numel(), 64), y);
}

// ---- pad -------------------------------------------------------------------------------------

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
