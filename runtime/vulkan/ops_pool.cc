// Pooling: max / avg / adaptive avg, 2-D (shaders nn/*_pool2d on common/pool2d.glsl) and 1-D (the
// same kernels on [N, C, 1, W] views, shaders nn/*_pool1d).
#include <algorithm>
#include <string>

#include "ops_internal.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::CheckRank;
using detail::Fail;
using detail::U32;

struct PoolPush {
  uint32_t NC, H, W, OH, OW, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, count_include_pad;
};

// torch's output size rule (incl. ceil_mode: the last window must start inside the input or
// its left padding).
int64_t PoolOut(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t d,
                bool ceil_mode) {
  const int64_t span = in + p0 + p1 - d * (k - 1) - 1;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p0) --out;
  return out;
}

void Pool(Program& p, const char* optype, const char* stem, const Tensor& x, const Tensor& y,
          const Pool2dAttrs& a, bool adaptive) {
  detail::CheckFloat(optype, y, {&x, &y});
  CheckRank(optype, y, x, 4, "input");
  CheckRank(optype, y, y, 4, "output");
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  int64_t OH = y.dim(2), OW = y.dim(3);
  if (!adaptive) {
    for (int64_t v : {a.pool_size[0], a.pool_size[1], a.strides[0], a.strides[1], a.dilation[0],
                      a.dilation[1]}) {
      if (v < 1) Fail(optype, y, "pool_size, strides and dilation must be >= 1");
    }
    OH = PoolOut(H, a.pool_size[0], a.strides[0], a.padding[0], a.padding[2], a.dilation[0],
                 a.ceil_mode);
    OW = PoolOut(W, a.pool_size[1], a.strides[1], a.padding[1], a.padding[3], a.dilation[1],
                 a.ceil_mode);
  }
  if (y.shape != Shape{N, C, OH, OW} || OH < 1 || OW < 1) {
    Fail(optype, y,
         "output " + y.Describe() + " does not match the computed shape " +
             ShapeToString({N, C, OH, OW}));
  }
  PoolPush push{U32(N * C, optype, y, "N*C"),
                U32(H, optype, y, "H"),
                U32(W, optype, y, "W"),
                U32(OH, optype, y, "OH"),
                U32(OW, optype, y, "OW"),
                U32(a.pool_size[0], optype, y, "pool_size"),
                U32(a.pool_size[1], optype, y, "pool_size"),
                U32(a.strides[0], optype, y, "strides"),
                U32(a.strides[1], optype, y, "strides"),
                U32(a.padding[0], optype, y, "padding"),
                U32(a.padding[1], optype, y, "padding"),
                U32(a.padding[2], optype, y, "padding"),
                U32(a.padding[3], optype, y, "padding"),
                U32(a.dilation[0], optype, y, "dilation"),
                U32(a.dilation[1], optype, y, "dilation"),
                a.count_include_pad ? 1u : 0u};
  // Max pooling with a common square window (resnet, squeezenet: 3x3 stride 2): the row-block
  // kernel of pool2d.glsl (ROWS = 1).
  const int64_t k = a.pool_size[0], s = a.strides[0];
  if (!adaptive && std::string(stem) == "nn/max_pool2d" && k == a.pool_size[1] &&
      (k == 2 || k == 3) && s == a.strides[1] && (s == 1 || s == 2) && a.dilation[0] == 1 &&
      a.dilation[1] == 1 && N * C * ((OH + 1) / 2) * ((OW + 7) / 8) <= 0xffffffffLL &&
      y.numel() > 0) {
    // One invocation per (plane, block), planes packed together (13x13 images: 14 blocks each).
    const int64_t blocks = (OH + 1) / 2 * ((OW + 7) / 8);
    detail::LaunchFloat(p, stem, {InTexel(x), Out(y)}, push,
                        {1u, static_cast<uint32_t>(k), static_cast<uint32_t>(s)},
                        Grid1D(p.context(), static_cast<uint64_t>(N * C * blocks), 64), y);
    return;
  }
  detail::LaunchFloat(p, stem, {InTexel(x), Out(y)}, push, {}, Grid1D(p.context(), y.numel(), 64),
                      y);
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
    OW = PoolOut(W, a.pool_size, a.stride, a.padding[0], a.padding[1], a.dilation, a.ceil_mode);
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
  Pool(p, op, stem, detail::Reshaped(x, {N, C, 1, W}), detail::Reshaped(y, {N, C, 1, OW}), a2,
       adaptive);
}

}  // namespace

void MaxPool2d(Program& p, const Tensor& x, const Tensor& y, const Pool2dAttrs& a) {
  Pool(p, "nn.max_pool2d", "nn/max_pool2d", x, y, a, false);
}

void AvgPool2d(Program& p, const Tensor& x, const Tensor& y, const Pool2dAttrs& a) {
  Pool(p, "nn.avg_pool2d", "nn/avg_pool2d", x, y, a, false);
}

void AdaptiveAvgPool2d(Program& p, const Tensor& x, const Tensor& y) {
  Pool(p, "nn.adaptive_avg_pool2d", "nn/adaptive_avg_pool2d", x, y, Pool2dAttrs{}, true);
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

}  // namespace ops
}  // namespace msc_vk
