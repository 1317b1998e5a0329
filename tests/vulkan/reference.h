// Naive CPU reference implementations (float32, row-major, double accumulation) used to check
// the Vulkan shaders. Shapes follow runtime/vulkan/ops.h.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "dtype.h"

namespace ref {

using Vec = std::vector<float>;
using msc_vk::Shape;

// x [N, C, H, W], w [O, C/groups, KH, KW], bias [O] or empty -> y [N, O, OH, OW].
Vec Conv2d(const Vec& x, const Shape& xs, const Vec& w, const Shape& ws, const Vec& bias,
           std::array<int64_t, 2> stride, std::array<int64_t, 4> pad, std::array<int64_t, 2> dil,
           int64_t groups, Shape* ys);
// c[b, M, N] = a[b, M, K] @ (trans_b ? b[b, N, K]^T : b[b, K, N]) (+ bias[N]); batch count `batch`
// for both (pass a/b batch strides 0 for broadcast).
Vec Gemm(const Vec& a, const Vec& b, const Vec& bias, int64_t batch, int64_t M, int64_t N,
         int64_t K, bool trans_b, int64_t a_bstride, int64_t b_bstride);
// numpy-broadcast binary op: op 0 add, 1 subtract, 2 multiply, 3 divide.
Vec Binary(const Vec& a, const Shape& as, const Vec& b, const Shape& bs, int op, Shape* ys);
// x viewed as [outer, L, inner]; softmax over L.
Vec Softmax(const Vec& x, int64_t outer, int64_t L, int64_t inner);
// kind 0 max, 1 avg; torch semantics.
Vec Pool2d(const Vec& x, const Shape& xs, int kind, std::array<int64_t, 2> k,
           std::array<int64_t, 2> s, std::array<int64_t, 4> pad, std::array<int64_t, 2> dil,
           bool ceil_mode, bool count_include_pad, Shape* ys);
Vec AdaptiveAvgPool2d(const Vec& x, const Shape& xs, int64_t OH, int64_t OW);
// General strided gather: out[i] = x[offset + sum c_d * stride_d] over `shape`.
Vec Gather(const Vec& x, const Shape& shape, const std::vector<int64_t>& stride, int64_t offset);
// Mean over the dims with reduce[d] (keepdims layout of the output is the caller's business).
Vec Mean(const Vec& x, const Shape& xs, const std::vector<bool>& reduce);

}  // namespace ref
