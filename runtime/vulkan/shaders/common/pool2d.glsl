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
layout(std430, set = 0, binding = 1) writeonly buffer BufY { float Y[]; };

layout(push_constant) uniform Push {
  uint NC, H, W, OH, OW;
  uint KH, KW;
  uint sh, sw;
  uint pt, pl, pb, pr;  // padding top, left, bottom, right
  uint dh, dw;          // dilation (max and avg pooling)
  uint count_include_pad;
} p;

void main() {
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
  Y[i] = m;
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
  Y[i] = s / float(max(p.count_include_pad != 0 ? region : valid, 1u));
#else  // POOL_ADAPTIVE
  const int hs = int((oh * p.H) / p.OH), he = int(((oh + 1) * p.H + p.OH - 1) / p.OH);
  const int ws = int((ow * p.W) / p.OW), we = int(((ow + 1) * p.W + p.OW - 1) / p.OW);
  float s = 0.0;
  for (int ih = hs; ih < he; ++ih) {
    for (int iw = ws; iw < we; ++iw) s += Fetch(X, base + uint(ih) * p.W + uint(iw));
  }
  Y[i] = s / float((he - hs) * (we - ws));
#endif
}
