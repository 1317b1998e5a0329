// Transposed 2-D convolution (the gradient of conv2d w.r.t. its input), included by
// nn/conv2d_transpose.comp and nn/conv1d_transpose.comp ([N, C, 1, W] views, KH = 1).
//   Y[n, o, oh, ow] = sum_{c in group g, kh, kw} X[n, c, ih, iw] * W[c, o - g*Og, kh, kw]
//   over the (kh, kw) with oh + pt - kh*dh == ih*sh and ow + pl - kw*dw == iw*sw exactly,
//   0 <= ih < H, 0 <= iw < W;  g = o / Og, Og = O / groups, channels of g: [g*Cg, (g+1)*Cg).
// X: NCHW, W: IOHW [C, O/groups, KH, KW] (relax / torch ConvTranspose layout), Y: NCHW with
// OH = (H-1)*sh - pt - pb + dh*(KH-1) + output_padding_h + 1 (the host checks it).
// One output element per invocation (a gather: no atomics, no zero fill).
// Bindings: 0 X, 1 W (texel float), 2 Y (storage). Workgroup (64, 1, 1), 2-D grid folded by
// LinearId() over N*O*OH*OW.
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) uniform samplerBuffer X;
layout(set = 0, binding = 1) uniform samplerBuffer Wt;
layout(std430, set = 0, binding = 2) writeonly buffer BufY { float Y[]; };

layout(push_constant) uniform Push {
  uint N, C, H, W;
  uint O, OH, OW;
  uint KH, KW;
  uint sh, sw;  // strides
  uint pt, pl;  // padding top, left
  uint dh, dw;  // dilation
  uint groups;
} p;

void main() {
  const uint i = LinearId();
  if (i >= p.N * p.O * p.OH * p.OW) return;
  const uint ow = i % p.OW, t0 = i / p.OW;
  const uint oh = t0 % p.OH, t1 = t0 / p.OH;
  const uint o = t1 % p.O, n = t1 / p.O;
  const uint Cg = p.C / p.groups, Og = p.O / p.groups;
  const uint g = o / Og, oo = o % Og;
  const uint c0 = g * Cg;
  const uint hw = p.H * p.W, khw = p.KH * p.KW;
  float acc = 0.0;
  for (uint kh = 0; kh < p.KH; ++kh) {
    const int th = int(oh + p.pt) - int(kh * p.dh);
    if (th < 0) break;  // th only decreases with kh
    const uint ih = uint(th) / p.sh;
    if (ih * p.sh != uint(th) || ih >= p.H) continue;
    for (uint kw = 0; kw < p.KW; ++kw) {
      const int tw = int(ow + p.pl) - int(kw * p.dw);
      if (tw < 0) break;
      const uint iw = uint(tw) / p.sw;
      if (iw * p.sw != uint(tw) || iw >= p.W) continue;
      uint xi = (n * p.C + c0) * hw + ih * p.W + iw;
      uint wi = (c0 * Og + oo) * khw + kh * p.KW + kw;
      for (uint c = 0; c < Cg; ++c, xi += hw, wi += Og * khw) acc = fma(Fetch(X, xi), Fetch(Wt, wi), acc);
    }
  }
  Y[i] = acc;
}
