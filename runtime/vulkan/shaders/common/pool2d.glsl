// 2-D pooling over NCHW, one output element per invocation; included by nn/max_pool2d.comp
// (POOL_MAX), nn/avg_pool2d.comp (POOL_AVG), nn/adaptive_avg_pool2d.comp (POOL_ADAPTIVE).
//
//   max: Y = max over the window of valid input pixels (padding never wins)
//   avg: TOPI's pool_impl_nd (include/tvm/topi/nn/pooling.h): the sum over the window positions
//        (h0 + kh*dh, w0 + kw*dw) inside the input, divided by their count, or with
//        count_include_pad by the count of positions inside the input plus its declared padding
//        (h < H + pb, w < W + pr; ceil_mode's extra tail does not count); at least 1
//   adaptive avg: window [floor(oh*H/OH), ceil((oh+1)*H/OH)) x (same for w)
// ceil_mode only changes OH/OW, which the host passes in.
// Bindings: 0 X (texel float), 1 Y (storage). Workgroup (64, 1, 1), 2-D grid folded by
// LinearId() over N*C*OH*OW.
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) uniform samplerBuffer X;
layout(std430, set = 0, binding = 1) writeonly buffer BufY { OUT_T Y[]; };

layout(push_constant) uniform Push {
  uint NC, H, W, OH, OW;
  uint KH, KW;
  uint sh, sw;
  uint pt, pl, pb, pr;  // padding top, left, bottom, right
  uint dh, dw;          // dilation (max and avg pooling)
  uint count_include_pad;
} p;

#if defined(POOL_MAX)
// Row-block max pooling (ROWS = 1): square window POOL_K in {2, 3}, stride POOL_S in {1, 2} both
// ways, dilation 1. Each invocation computes PR (2) output rows x PC (8) output columns of one
// (n, c) plane, fetching each input row of its window once; no integer division per output.
// Invocation i (LinearId) computes block i % B of plane i / B (B = ceil(OH/2) * ceil(OW/8)), so
// small images fill whole workgroups: a 1-D grid of ceil(N*C*B / 64) workgroups (Grid1D).
layout(constant_id = 0) const uint ROWS = 0;
layout(constant_id = 1) const uint POOL_K = 3;
layout(constant_id = 2) const uint POOL_S = 2;
#define PR 2
#define PC 8

void MaxRowsMain() {
  const uint K = POOL_K, S = POOL_S, L = (PC - 1) * POOL_S + POOL_K;  // input columns per row
  const uint bw = (p.OW + PC - 1) / PC, bh = (p.OH + PR - 1) / PR;
  const uint gid = LinearId();
  if (gid >= p.NC * bh * bw) return;
  const uint plane = gid / (bh * bw), id = gid % (bh * bw);
  const uint oh0 = (id / bw) * PR, ow0 = (id % bw) * PC;
  const int ih0 = int(oh0 * S) - int(p.pt), iw0 = int(ow0 * S) - int(p.pl);
  bool colok[17];
  [[unroll]] for (uint j = 0; j < L; ++j) colok[j] = uint(iw0 + int(j)) < p.W;
  float m[PR][PC];
  [[unroll]] for (uint r = 0; r < PR; ++r) [[unroll]] for (uint j = 0; j < PC; ++j) m[r][j] = -1.0 / 0.0;
  const uint xbase = plane * p.H * p.W;
  [[unroll]] for (uint ir = 0; ir < (PR - 1) * POOL_S + POOL_K; ++ir) {
    const int ih = ih0 + int(ir);
    const bool rowok = uint(ih) < p.H;
    const int rbase = int(xbase) + ih * int(p.W) + iw0;
    float xr[17];
    [[unroll]] for (uint j = 0; j < L; ++j) {
      const bool ok = rowok && colok[j];
      const float v = texelFetch(X, ok ? rbase + int(j) : 0).x;
      xr[j] = ok ? v : -1.0 / 0.0;  // padding never wins
    }
    [[unroll]] for (uint r = 0; r < PR; ++r) {
      if (ir >= r * S && ir < r * S + K) {
        [[unroll]] for (uint kw = 0; kw < K; ++kw) {
          [[unroll]] for (uint j = 0; j < PC; ++j) m[r][j] = max(m[r][j], xr[j * S + kw]);
        }
      }
    }
  }
  [[unroll]] for (uint r = 0; r < PR; ++r) {
    if (oh0 + r < p.OH) {
      const uint row = (plane * p.OH + oh0 + r) * p.OW + ow0;
      [[unroll]] for (uint j = 0; j < PC; ++j) {
        if (ow0 + j < p.OW) Y[row + j] = OUT_T(m[r][j]);
      }
    }
  }
}
#endif

void main() {
#if defined(POOL_MAX)
  if (ROWS != 0) {
    MaxRowsMain();
    return;
  }
#endif
  const uint i = LinearId();
  if (i >= p.NC * p.OH * p.OW) return;
  const uint ow = i % p.OW, t = i / p.OW;
  const uint oh = t % p.OH, nc = t / p.OH;
  const uint base = nc * p.H * p.W;
#if defined(POOL_MAX)
  const int h0 = int(oh * p.sh) - int(p.pt), w0 = int(ow * p.sw) - int(p.pl);
  float m = -1.0 / 0.0;
  for (uint kh = 0; kh < p.KH; ++kh) {
    const int ih = h0 + int(kh * p.dh);
    if (uint(ih) >= p.H) continue;
    for (uint kw = 0; kw < p.KW; ++kw) {
      const int iw = w0 + int(kw * p.dw);
      if (uint(iw) < p.W) m = max(m, Fetch(X, base + uint(ih) * p.W + uint(iw)));
    }
  }
  Y[i] = OUT_T(m);
#elif defined(POOL_AVG)
  const int h0 = int(oh * p.sh) - int(p.pt), w0 = int(ow * p.sw) - int(p.pl);
  float s = 0.0;
  uint valid = 0u, region = 0u;
  for (uint kh = 0; kh < p.KH; ++kh) {
    const int ih = h0 + int(kh * p.dh);
    if (ih >= int(p.H + p.pb)) break;
    for (uint kw = 0; kw < p.KW; ++kw) {
      const int iw = w0 + int(kw * p.dw);
      if (iw >= int(p.W + p.pr)) break;
      ++region;
      if (uint(ih) < p.H && uint(iw) < p.W) {
        s += Fetch(X, base + uint(ih) * p.W + uint(iw));
        ++valid;
      }
    }
  }
  Y[i] = OUT_T(s / float(max(p.count_include_pad != 0 ? region : valid, 1u)));
#else  // POOL_ADAPTIVE
  const int hs = int((oh * p.H) / p.OH), he = int(((oh + 1) * p.H + p.OH - 1) / p.OH);
  const int ws = int((ow * p.W) / p.OW), we = int(((ow + 1) * p.W + p.OW - 1) / p.OW);
  float s = 0.0;
  for (int ih = hs; ih < he; ++ih) {
    for (int iw = ws; iw < we; ++iw) s += Fetch(X, base + uint(ih) * p.W + uint(iw));
  }
  Y[i] = OUT_T(s / float((he - hs) * (we - ws)));
#endif
}
