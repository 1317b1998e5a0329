// Direct 2-D convolution as an implicit GEMM, included by nn/conv2d.comp and
// msc/conv2d_bias.comp (HAS_BIAS).
//
//   Y[n, o, oh, ow] = act( sum_{c, kh, kw} W[o, c, kh, kw] * X[n, g*Cg + c, ih, iw] (+ bias[o]) )
//   ih = oh*sh - pt + kh*dh,  iw = ow*sw - pl + kw*dw  (outside the input: 0)
//   X: NCHW, W: OIHW with I = C / groups (Cg), Y: NCHW; o in group g = o / Og, Og = O / groups.
//
// Each invocation computes CONV_BM (16) output channels x CONV_BN (8) consecutive output pixels
// (flattened oh*OW + ow); the channels are the same for the whole workgroup. DEPTHWISE
// (Cg == 1 and Og == 1) computes 1 channel x 8 pixels instead.
//
// Bindings: 0 X (texel float), 1 W (texel: float, or vec4 when WVEC4), [2 bias (texel float)],
//           last Y (storage).
// Workgroup (64, 1, 1). Grid: x = ceil(ceil(OH*OW / 8) / 64),
//                            y = groups * ceil(Og / 16), z = N.
#include "util.glsl"

#define CONV_BM 16
#define CONV_BN 8

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(constant_id = 0) const uint ACT = 0;        // 1: v = clamp(v, act_min, act_max)
layout(constant_id = 1) const uint WVEC4 = 0;      // 1: W view is vec4 (Cg*KH*KW % 4 == 0)
layout(constant_id = 2) const uint DEPTHWISE = 0;  // 1: Cg == 1 and Og == 1
layout(constant_id = 3) const uint STORE4 = 0;     // 1: OH*OW % 4 == 0, vec4 stores

layout(set = 0, binding = 0) uniform samplerBuffer X;
layout(set = 0, binding = 1) uniform samplerBuffer Wt;
#ifdef HAS_BIAS
layout(set = 0, binding = 2) uniform samplerBuffer Bias;
layout(std430, set = 0, binding = 3) writeonly buffer BufY { float Y[]; };
layout(std430, set = 0, binding = 3) writeonly buffer BufY4 { vec4 Y4[]; };
#else
layout(std430, set = 0, binding = 2) writeonly buffer BufY { float Y[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufY4 { vec4 Y4[]; };
#endif

layout(push_constant) uniform Push {
  uint N, C, H, W;
  uint O, OH, OW;
  uint KH, KW;
  uint sh, sw;   // strides
  uint pt, pl;   // padding top, left (bottom/right only shape OH/OW)
  uint dh, dw;   // dilation
  uint groups;
  float act_min, act_max;
} p;

// Writes 8 outputs (pixels p0..p0+7 of one output channel row starting at element `row`).
void Store8(uint row, uint p0, uint ohw, vec4 v0, vec4 v1) {
  if (ACT != 0) {
    v0 = clamp(v0, p.act_min, p.act_max);
    v1 = clamp(v1, p.act_min, p.act_max);
  }
  const uint c = row + p0;
  if (STORE4 != 0 && p0 + 8 <= ohw) {
    Y4[c >> 2] = v0;
    Y4[(c >> 2) + 1] = v1;
  } else {
    [[unroll]] for (uint j = 0; j < 4; ++j) {
      if (p0 + j < ohw) Y[c + j] = v0[j];
      if (p0 + j + 4 < ohw) Y[c + j + 4] = v1[j];
    }
  }
}

void main() {
  const uint ohw = p.OH * p.OW;
  const uint p0 = gl_GlobalInvocationID.x * CONV_BN;
  if (p0 >= ohw) return;
  const uint Cg = p.C / p.groups, Og = p.O / p.groups;
  const uint blocks = (Og + CONV_BM - 1) / CONV_BM;
  const uint g = gl_WorkGroupID.y / blocks;
  const uint o0 = (gl_WorkGroupID.y % blocks) * CONV_BM;
  const uint n = gl_WorkGroupID.z;
  const uint hw = p.H * p.W;

  int ih0[CONV_BN], iw0[CONV_BN];
  [[unroll]] for (uint j = 0; j < CONV_BN; ++j) {
    const uint pix = min(p0 + j, ohw - 1);
    ih0[j] = int((pix / p.OW) * p.sh) - int(p.pt);
    iw0[j] = int((pix % p.OW) * p.sw) - int(p.pl);
  }
  const uint xbase = (n * p.C + g * Cg) * hw;

  if (DEPTHWISE != 0) {
    vec4 acc0 = vec4(0.0), acc1 = vec4(0.0);
    uint widx = g * p.KH * p.KW;
    for (uint kh = 0; kh < p.KH; ++kh) {
      for (uint kw = 0; kw < p.KW; ++kw) {
        const float w = Fetch(Wt, widx++);
        vec4 x0, x1;
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          const int ih = ih0[j] + int(kh * p.dh), iw = iw0[j] + int(kw * p.dw);
          const bool ok = uint(ih) < p.H && uint(iw) < p.W;
          const float v = Fetch(X, ok ? xbase + uint(ih) * p.W + uint(iw) : 0u);
          x0[j] = ok ? v : 0.0;
          const int ih1 = ih0[j + 4] + int(kh * p.dh), iw1 = iw0[j + 4] + int(kw * p.dw);
          const bool ok1 = uint(ih1) < p.H && uint(iw1) < p.W;
          const float v1 = Fetch(X, ok1 ? xbase + uint(ih1) * p.W + uint(iw1) : 0u);
          x1[j] = ok1 ? v1 : 0.0;
        }
        acc0 = fma(vec4(w), x0, acc0);
        acc1 = fma(vec4(w), x1, acc1);
      }
    }
#ifdef HAS_BIAS
    const float b = Fetch(Bias, g);
    acc0 += b;
    acc1 += b;
#endif
    Store8((n * p.O + g) * ohw, p0, ohw, acc0, acc1);
    return;
  }

  int pbase[CONV_BN];  // ih0 * W + iw0: element offset of each pixel's window origin in a channel
  [[unroll]] for (uint j = 0; j < CONV_BN; ++j) pbase[j] = ih0[j] * int(p.W) + iw0[j];
  const uint kdim = Cg * p.KH * p.KW;
  uint wrow[CONV_BM];  // element index of W[o, 0, 0, 0] (channels clamped to the group)
  [[unroll]] for (uint i = 0; i < CONV_BM; ++i) wrow[i] = (g * Og + min(o0 + i, Og - 1)) * kdim;

  vec4 acc[CONV_BM][2];
  [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
    acc[i][0] = vec4(0.0);
    acc[i][1] = vec4(0.0);
  }
  uint c = 0, kh = 0, kw = 0;  // decoded k = (c * KH + kh) * KW + kw
  for (uint k = 0; k < kdim; k += 4) {
    vec4 w[CONV_BM];
    if (WVEC4 != 0) {
      [[unroll]] for (uint i = 0; i < CONV_BM; ++i) w[i] = texelFetch(Wt, int((wrow[i] + k) >> 2));
    } else {
      // Past the end of kdim the weights are never used (the t loop below skips those k).
      [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
        [[unroll]] for (uint t = 0; t < 4; ++t) w[i][t] = Fetch(Wt, wrow[i] + min(k + t, kdim - 1));
      }
    }
    [[unroll]] for (uint t = 0; t < 4; ++t) {
      if (WVEC4 != 0 || k + t < kdim) {  // kdim % 4 == 0 with WVEC4: no tail
        const int dy = int(kh * p.dh), dx = int(kw * p.dw);
        const int koff = int(xbase + c * hw) + dy * int(p.W) + dx;
        vec4 x0, x1;
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          const bool ok = uint(ih0[j] + dy) < p.H && uint(iw0[j] + dx) < p.W;
          const float v = texelFetch(X, ok ? pbase[j] + koff : 0).x;
          x0[j] = ok ? v : 0.0;
          const bool ok1 = uint(ih0[j + 4] + dy) < p.H && uint(iw0[j + 4] + dx) < p.W;
          const float v1 = texelFetch(X, ok1 ? pbase[j + 4] + koff : 0).x;
          x1[j] = ok1 ? v1 : 0.0;
        }
        [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
          acc[i][0] = fma(vec4(w[i][t]), x0, acc[i][0]);
          acc[i][1] = fma(vec4(w[i][t]), x1, acc[i][1]);
        }
        // Advance (c, kh, kw) without branches (cheaper under SIMD execution masks).
        const bool wrap_w = ++kw == p.KW;
        kw = wrap_w ? 0u : kw;
        kh += wrap_w ? 1u : 0u;
        const bool wrap_h = kh == p.KH;
        kh = wrap_h ? 0u : kh;
        c += wrap_h ? 1u : 0u;
      }
    }
  }

  [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
    if (o0 + i < Og) {
      const uint o = g * Og + o0 + i;
#ifdef HAS_BIAS
      const float b = Fetch(Bias, o);
#else
      const float b = 0.0;
#endif
      Store8((n * p.O + o) * ohw, p0, ohw, acc[i][0] + b, acc[i][1] + b);
    }
  }
}
