// Transposed convolution: nn.conv2d_transpose and nn.conv1d_transpose (the 2-D kernel on
// [N, C, 1, W] views), shaders nn/conv{2,1}d_transpose: a gather, one output element per
// invocation.
#include "context.h"
#include "ops_internal.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::CheckFloat32;
using detail::CheckRank;
using detail::Fail;
using detail::U32;

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
  ConvTransposeImpl(p, op, "nn/conv1d_transpose",
                    detail::Reshaped(x, {x.dim(0), x.dim(1), 1, x.dim(2)}),
                    detail::Reshaped(w, {w.dim(0), w.dim(1), 1, w.dim(2)}),
                    detail::Reshaped(y, {y.dim(0), y.dim(1), 1, y.dim(2)}), y, a2);
}

}  // namespace ops
}  // namespace msc_vk
