// Conv2d / Conv2dBias and the GEMM family (shaders/common/conv2d.glsl, shaders/common/gemm.glsl).
#include "context.h"
#include "ops_internal.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::CheckFloat32;
using detail::CheckRank;
using detail::Fail;
using detail::U32;

// Output channels per invocation in shaders/common/conv2d.glsl (CONV_BM).
constexpr int64_t kConvBM = 16;

struct ConvPush {
  uint32_t N, C, H, W, O, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, groups;
  float act_min, act_max;
};

void Conv(Program& p, const char* optype, const char* stem, const Tensor& x, const Tensor& w,
          const Tensor* bias, const Tensor& y, const Conv2dAttrs& a) {
  CheckFloat32(optype, y, {&x, &w, &y});
  if (bias) CheckFloat32(optype, y, {bias});
  CheckRank(optype, y, x, 4, "input");
  CheckRank(optype, y, w, 4, "weight");
  CheckRank(optype, y, y, 4, "output");
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t O = w.dim(0), KH = w.dim(2), KW = w.dim(3), G = a.groups;
  if (G < 1 || C % G != 0 || O % G != 0 || w.dim(1) != C / G) {
    Fail(optype, y,
         "groups = " + std::to_string(G) + " does not fit input " + x.Describe() + " and weight " +
             w.Describe());
  }
  for (int64_t v : {a.strides[0], a.strides[1], a.dilation[0], a.dilation[1]}) {
    if (v < 1) Fail(optype, y, "strides and dilation must be >= 1");
  }
  for (int64_t v : a.padding) {
    if (v < 0) Fail(optype, y, "padding must be >= 0");
  }
  const int64_t OH =
      (H + a.padding[0] + a.padding[2] - a.dilation[0] * (KH - 1) - 1) / a.strides[0] + 1;
  const int64_t OW =
      (W + a.padding[1] + a.padding[3] - a.dilation[1] * (KW - 1) - 1) / a.strides[1] + 1;
  if (y.shape != Shape{N, O, OH, OW}) {
    Fail(optype, y,
         "output " + y.Describe() + " does not match the computed shape " +
             ShapeToString({N, O, OH, OW}));
  }
  if (bias && bias->numel() != O)
    Fail(optype, y, "bias " + bias->Describe() + " must have " + std::to_string(O) + " elements");

  const int64_t Cg = C / G, Og = O / G, kdim = Cg * KH * KW;
  const bool depthwise = Cg == 1 && Og == 1;
  // The depthwise kernel fetches single weights: it needs the float view of W whatever KH*KW is
  // (a vec4 view made it read weight 4*i for weight i when KH*KW % 4 == 0, e.g. 2x2 or 1x4).
  const bool wvec4 = !depthwise && kdim % 4 == 0;
  const bool store4 = (OH * OW) % 4 == 0;
  ConvPush push{U32(N, optype, y, "N"),
                U32(C, optype, y, "C"),
                U32(H, optype, y, "H"),
                U32(W, optype, y, "W"),
                U32(O, optype, y, "O"),
                U32(OH, optype, y, "OH"),
                U32(OW, optype, y, "OW"),
                U32(KH, optype, y, "KH"),
                U32(KW, optype, y, "KW"),
                U32(a.strides[0], optype, y, "stride"),
                U32(a.strides[1], optype, y, "stride"),
                U32(a.padding[0], optype, y, "padding"),
                U32(a.padding[1], optype, y, "padding"),
                U32(a.dilation[0], optype, y, "dilation"),
                U32(a.dilation[1], optype, y, "dilation"),
                U32(G, optype, y, "groups"),
                a.act.min,
                a.act.max};
  std::vector<Binding> bindings = {InTexel(x),
                                   InTexel(w, wvec4 ? View::kTexelVec4 : View::kTexelFloat)};
  if (bias) bindings.push_back(InTexel(*bias));
  bindings.push_back(Out(y));
  const uint64_t pixel_blocks = (OH * OW + 7) / 8;
  const std::array<uint32_t, 3> grid = {
      U32((pixel_blocks + 63) / 64, optype, y, "grid x"),
      U32(G * ((Og + kConvBM - 1) / kConvBM), optype, y, "grid y"), U32(N, optype, y, "grid z")};
  detail::Launch(p, stem, std::move(bindings), push,
                 {a.act.enabled ? 1u : 0u, wvec4 ? 1u : 0u, depthwise ? 1u : 0u, store4 ? 1u : 0u},
                 grid, y);
}

struct GemmPush {
  uint32_t M, N, K, batch_ndim;
  uint32_t bshape[4], a_bstride[4], b_bstride[4];
  float act_min, act_max;
};

// y[batch..., M, N] = a[batch_a..., M, K] @ b'[batch_b..., K, N] with the batch dims of a and b
// right-aligned against y's and broadcast (stride 0) where they are 1.
void Gemm(Program& p, const char* optype, const char* stem, const Tensor& a, const Shape& a_batch,
          const Tensor& b, const Shape& b_batch, const Tensor* bias, const Tensor& y,
          const Shape& y_batch, int64_t M, int64_t N, int64_t K, bool trans_b, Activation act,
          bool trans_a = false) {
  const size_t nb = y_batch.size();
  std::vector<int64_t> as(nb, 0), bs(nb, 0);
  int64_t a_step = M * K, b_step = K * N;
  for (size_t i = 0; i < nb; ++i) {
    const size_t d = nb - 1 - i;  // from the innermost batch dim
    if (i < a_batch.size()) {
      const int64_t dim = a_batch[a_batch.size() - 1 - i];
      as[d] = dim == 1 ? 0 : a_step;
      a_step *= dim;
    }
    if (i < b_batch.size()) {
      const int64_t dim = b_batch[b_batch.size() - 1 - i];
      bs[d] = dim == 1 ? 0 : b_step;
      b_step *= dim;
    }
  }
  detail::Collapsed c = detail::Collapse(y_batch, {as, bs}, optype, y);
  GemmPush push{};
  push.M = U32(M, optype, y, "M");
  push.N = U32(N, optype, y, "N");
  push.K = U32(K, optype, y, "K");
  push.batch_ndim = 4;
  int64_t batch = 1;
  for (int d = 0; d < 4; ++d) {
    push.bshape[d] = U32(c.shape[d], optype, y, "batch dim");
    push.a_bstride[d] = U32(c.strides[0][d], optype, y, "batch stride");
    push.b_bstride[d] = U32(c.strides[1][d], optype, y, "batch stride");
    batch *= c.shape[d];
  }
  push.act_min = act.min;
  push.act_max = act.max;
  // GPUs: shared-memory tiles of 64x64 (16x16 invocations); CPU devices: 16x8 register blocks.
  const bool tiled = p.context().use_tiled_kernels();
  const bool vec4 = !tiled && !trans_a && K % 4 == 0 && N % 4 == 0;
  const View view = vec4 ? View::kTexelVec4 : View::kTexelFloat;
  std::vector<Binding> bindings = {InTexel(a, view), InTexel(b, view)};
  if (bias) bindings.push_back(InTexel(*bias));
  bindings.push_back(Out(y));
  const std::array<uint32_t, 3> grid =
      tiled ? std::array<uint32_t, 3>{U32((N + 63) / 64, optype, y, "grid x"),
                                      U32((M + 63) / 64, optype, y, "grid y"),
                                      U32(batch, optype, y, "grid z")}
            : std::array<uint32_t, 3>{U32(((N + 7) / 8 + 63) / 64, optype, y, "grid x"),
                                      U32((M + 15) / 16, optype, y, "grid y"),
                                      U32(batch, optype, y, "grid z")};
  detail::Launch(p, stem, std::move(bindings), push,
                 {trans_b ? 1u : 0u, act.enabled ? 1u : 0u, vec4 ? 1u : 0u, tiled ? 1u : 0u,
                  tiled ? 16u : 64u, tiled ? 16u : 1u, trans_a ? 1u : 0u},
                 grid, y);
}

void LinearLike(Program& p, const char* optype, const char* stem, const Tensor& x, const Tensor& w,
                const Tensor* bias, const Tensor& y, Activation act) {
  CheckFloat32(optype, y, {&x, &w, &y});
  if (bias) CheckFloat32(optype, y, {bias});
  CheckRank(optype, y, w, 2, "weight");
  if (x.shape.empty() || y.shape.empty()) Fail(optype, y, "input and output need at least one dim");
  const int64_t N = w.dim(0), K = w.dim(1);
  if (x.dim(-1) != K)
    Fail(optype, y, "input " + x.Describe() + " does not match weight " + w.Describe() + " (K)");
  Shape expect = x.shape;
  expect.back() = N;
  if (y.shape != expect)
    Fail(optype, y, "output " + y.Describe() + " does not match " + ShapeToString(expect));
  if (bias && bias->numel() != N)
    Fail(optype, y, "bias " + bias->Describe() + " must have " + std::to_string(N) + " elements");
  Gemm(p, optype, stem, x, {}, w, {}, bias, y, {}, x.numel() / K, N, K, true, act);
}

void MatmulLike(Program& p, const char* optype, const char* stem, const Tensor& a, const Tensor& b,
                const Tensor& y, bool trans_b, Activation act, bool trans_a = false) {
  CheckFloat32(optype, y, {&a, &b, &y});
  if (a.shape.empty() || b.shape.empty()) Fail(optype, y, "operands must have at least one dim");
  const bool a1 = a.shape.size() == 1, b1 = b.shape.size() == 1;
  trans_a = trans_a && !a1;
  const int64_t M = a1 ? 1 : (trans_a ? a.dim(-1) : a.dim(-2));
  const int64_t K = trans_a ? a.dim(-2) : a.dim(-1);
  const int64_t N = b1 ? 1 : (trans_b ? b.dim(-2) : b.dim(-1));
  const int64_t Kb = b1 ? b.dim(0) : (trans_b ? b.dim(-1) : b.dim(-2));
  if (K != Kb) Fail(optype, y, "inner dims differ: " + a.Describe() + " @ " + b.Describe());
  const Shape a_batch(a.shape.begin(), a.shape.end() - (a1 ? 1 : 2));
  const Shape b_batch(b.shape.begin(), b.shape.end() - (b1 ? 1 : 2));
  Shape batch;
  if (!detail::BroadcastShapes(a_batch, b_batch, &batch)) {
    Fail(optype, y, "batch dims of " + a.Describe() + " and " + b.Describe() + " do not broadcast");
  }
  Shape expect = batch;
  if (!a1) expect.push_back(M);
  if (!b1) expect.push_back(N);
  if (y.shape != expect)
    Fail(optype, y, "output " + y.Describe() + " does not match " + ShapeToString(expect));
  Gemm(p, optype, stem, a, a_batch, b, b_batch, nullptr, y, batch, M, N, K, trans_b && !b1, act,
       trans_a);
}

}  // namespace

namespace detail {

void ConvImpl(Program& p, const char* optype, const char* stem, const Tensor& x, const Tensor& w,
              const Tensor* bias, const Tensor& y, const Conv2dAttrs& a) {
  Conv(p, optype, stem, x, w, bias, y, a);
}

void MatmulImpl(Program& p, const char* optype, const char* stem, const Tensor& a, const Tensor& b,
                const Tensor& y, bool transpose_a, bool transpose_b, Activation act) {
  MatmulLike(p, optype, stem, a, b, y, transpose_b, act, transpose_a);
}

}  // namespace detail

void Conv2d(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dAttrs& a) {
  Conv(p, "nn.conv2d", "nn/conv2d", x, w, nullptr, y, a);
}

void Conv2dBias(Program& p, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                const Conv2dAttrs& a) {
  Conv(p, "msc.conv2d_bias", "msc/conv2d_bias", x, w, &bias, y, a);
}

void Linear(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, Activation act) {
  LinearLike(p, "msc.linear", "msc/linear", x, w, nullptr, y, act);
}

void LinearBias(Program& p, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                Activation act) {
  LinearLike(p, "msc.linear_bias", "msc/linear_bias", x, w, &bias, y, act);
}

void Dense(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, Activation act) {
  LinearLike(p, "nn.dense", "nn/dense", x, w, nullptr, y, act);
}

void Matmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, bool transpose_b,
            Activation act) {
  MatmulLike(p, "matmul", "matmul", a, b, y, transpose_b, act);
}

void BatchMatmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, bool transpose_b) {
  detail::CheckRank("nn.batch_matmul", y, a, 3, "input a");
  detail::CheckRank("nn.batch_matmul", y, b, 3, "input b");
  MatmulLike(p, "nn.batch_matmul", "nn/batch_matmul", a, b, y, transpose_b, {});
}

}  // namespace ops
}  // namespace msc_vk
