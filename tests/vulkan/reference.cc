#include "reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ref {

Vec Conv2d(const Vec& x, const Shape& xs, const Vec& w, const Shape& ws, const Vec& bias,
           std::array<int64_t, 2> st, std::array<int64_t, 4> pad, std::array<int64_t, 2> dil,
           int64_t groups, Shape* ys) {
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], O = ws[0], KH = ws[2], KW = ws[3];
  const int64_t OH = (H + pad[0] + pad[2] - dil[0] * (KH - 1) - 1) / st[0] + 1;
  const int64_t OW = (W + pad[1] + pad[3] - dil[1] * (KW - 1) - 1) / st[1] + 1;
  const int64_t Cg = C / groups, Og = O / groups;
  *ys = {N, O, OH, OW};
  Vec y(N * O * OH * OW);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = bias.empty() ? 0.0 : bias[o];
          const int64_t g = o / Og;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * st[0] - pad[0] + kh * dil[0],
                              iw = ow * st[1] - pad[1] + kw * dil[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                s += double(w[((o * Cg + c) * KH + kh) * KW + kw]) *
                     x[((n * C + g * Cg + c) * H + ih) * W + iw];
              }
          y[((n * O + o) * OH + oh) * OW + ow] = static_cast<float>(s);
        }
  return y;
}

Vec Gemm(const Vec& a, const Vec& b, const Vec& bias, int64_t batch, int64_t M, int64_t N,
         int64_t K, bool trans_b, int64_t a_bstride, int64_t b_bstride) {
  Vec c(batch * M * N);
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = bias.empty() ? 0.0 : bias[n];
        for (int64_t k = 0; k < K; ++k) {
          const float bv = trans_b ? b[z * b_bstride + n * K + k] : b[z * b_bstride + k * N + n];
          s += double(a[z * a_bstride + m * K + k]) * bv;
        }
        c[(z * M + m) * N + n] = static_cast<float>(s);
      }
  return c;
}

Vec Binary(const Vec& a, const Shape& as, const Vec& b, const Shape& bs, int op, Shape* ys) {
  const size_t r = std::max(as.size(), bs.size());
  Shape A(r, 1), B(r, 1), Y(r);
  std::copy(as.begin(), as.end(), A.begin() + (r - as.size()));
  std::copy(bs.begin(), bs.end(), B.begin() + (r - bs.size()));
  for (size_t d = 0; d < r; ++d) Y[d] = std::max(A[d], B[d]);
  *ys = Y;
  Vec y(msc_vk::NumElements(Y));
  std::vector<int64_t> idx(r, 0);
  for (size_t i = 0; i < y.size(); ++i) {
    int64_t ai = 0, bi = 0;
    for (size_t d = 0; d < r; ++d) {
      ai = ai * A[d] + (A[d] == 1 ? 0 : idx[d]);
      bi = bi * B[d] + (B[d] == 1 ? 0 : idx[d]);
    }
    const float u = a[ai], v = b[bi];
    y[i] = op == 0 ? u + v : op == 1 ? u - v : op == 2 ? u * v : u / v;
    for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
      if (++idx[d] < Y[d]) break;
      idx[d] = 0;
    }
  }
  return y;
}

Vec Softmax(const Vec& x, int64_t outer, int64_t L, int64_t inner) {
  Vec y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t n = 0; n < inner; ++n) {
      double m = -INFINITY, s = 0;
      for (int64_t l = 0; l < L; ++l) m = std::max<double>(m, x[(o * L + l) * inner + n]);
      for (int64_t l = 0; l < L; ++l) s += std::exp(x[(o * L + l) * inner + n] - m);
      for (int64_t l = 0; l < L; ++l)
        y[(o * L + l) * inner + n] =
            static_cast<float>(std::exp(x[(o * L + l) * inner + n] - m) / s);
    }
  return y;
}

Vec Pool2d(const Vec& x, const Shape& xs, int kind, std::array<int64_t, 2> k,
           std::array<int64_t, 2> s, std::array<int64_t, 4> pad, std::array<int64_t, 2> dil,
           bool ceil_mode, bool cip, Shape* ys) {
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  auto out = [&](int64_t in, int64_t kk, int64_t ss, int64_t p0, int64_t p1, int64_t d) {
    const int64_t span = in + p0 + p1 - d * (kk - 1) - 1;
    int64_t o = (ceil_mode ? (span + ss - 1) / ss : span / ss) + 1;
    if (ceil_mode && (o - 1) * ss >= in + p0) --o;
    return o;
  };
  const int64_t OH = out(H, k[0], s[0], pad[0], pad[2], dil[0]),
                OW = out(W, k[1], s[1], pad[1], pad[3], dil[1]);
  *ys = {N, C, OH, OW};
  Vec y(N * C * OH * OW);
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const float* xp = &x[nc * H * W];
        float r;
        if (kind == 0) {
          r = -std::numeric_limits<float>::infinity();
          for (int64_t i = 0; i < k[0]; ++i)
            for (int64_t j = 0; j < k[1]; ++j) {
              const int64_t ih = oh * s[0] - pad[0] + i * dil[0],
                            iw = ow * s[1] - pad[1] + j * dil[1];
              if (ih >= 0 && ih < H && iw >= 0 && iw < W) r = std::max(r, xp[ih * W + iw]);
            }
        } else {
          int64_t hs = oh * s[0] - pad[0], ws = ow * s[1] - pad[1];
          int64_t he = std::min(hs + k[0], H + pad[2]), we = std::min(ws + k[1], W + pad[3]);
          const int64_t area = (he - hs) * (we - ws);
          hs = std::max<int64_t>(hs, 0);
          ws = std::max<int64_t>(ws, 0);
          he = std::min(he, H);
          we = std::min(we, W);
          double sum = 0;
          for (int64_t ih = hs; ih < he; ++ih)
            for (int64_t iw = ws; iw < we; ++iw) sum += xp[ih * W + iw];
          r = static_cast<float>(sum / (cip ? area : (he - hs) * (we - ws)));
        }
        y[(nc * OH + oh) * OW + ow] = r;
      }
  return y;
}

Vec AdaptiveAvgPool2d(const Vec& x, const Shape& xs, int64_t OH, int64_t OW) {
  const int64_t NC = xs[0] * xs[1], H = xs[2], W = xs[3];
  Vec y(NC * OH * OW);
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t hs = oh * H / OH, he = ((oh + 1) * H + OH - 1) / OH;
        const int64_t ws = ow * W / OW, we = ((ow + 1) * W + OW - 1) / OW;
        double s = 0;
        for (int64_t ih = hs; ih < he; ++ih)
          for (int64_t iw = ws; iw < we; ++iw) s += x[(nc * H + ih) * W + iw];
        y[(nc * OH + oh) * OW + ow] = static_cast<float>(s / ((he - hs) * (we - ws)));
      }
  return y;
}

Vec Gather(const Vec& x, const Shape& shape, const std::vector<int64_t>& stride, int64_t offset) {
  Vec y(msc_vk::NumElements(shape));
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t i = 0; i < y.size(); ++i) {
    int64_t src = offset;
    for (size_t d = 0; d < shape.size(); ++d) src += idx[d] * stride[d];
    y[i] = x[src];
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return y;
}

Vec Mean(const Vec& x, const Shape& xs, const std::vector<bool>& reduce) {
  Shape out;
  int64_t count = 1;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (reduce[d])
      count *= xs[d];
    else
      out.push_back(xs[d]);
  }
  std::vector<double> acc(msc_vk::NumElements(out), 0.0);
  std::vector<int64_t> idx(xs.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < xs.size(); ++d) {
      if (!reduce[d]) o = o * xs[d] + idx[d];
    }
    acc[o] += x[i];
    for (int d = static_cast<int>(xs.size()) - 1; d >= 0; --d) {
      if (++idx[d] < xs[d]) break;
      idx[d] = 0;
    }
  }
  Vec y(acc.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(acc[i] / count);
  return y;
}

}  // namespace ref
