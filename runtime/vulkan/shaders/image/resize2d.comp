// image.resize2d on NCHW, exactly TOPI's formulas (python/tvm/topi/image/resize.py: get_inx,
// get_closest_index, _resize_2d, _cubic_spline_weights), float32 coordinate math without
// contraction (precise):
//   in = (o + 0.5) * scale - 0.5          half_pixel                 scale = float(in) / float(out)
//        align * o                        align_corners              align = float(in-1) / float(out-1)
//        scale * o                        asymmetric                         (0 when out == 1)
//        out > 1 ? (o + 0.5)*scale - 0.5 : 0   pytorch_half_pixel
//        (o + 0.5) * scale                tf_half_pixel_for_nn
//   nearest: index by ROUND (round = half away from zero, floor(in + 1e-5), ceil(in - 1e-5),
//            round_prefer_floor = ceil(in - 0.5), round_prefer_ceil = floor(in + 0.5)); TOPI's
//            integer path for asymmetric integer upscales: index = o / factor (factor > 0).
//   linear:  bilinear between floor(in) and floor(in) + 1.
//   cubic:   4x4 taps at floor(in) - 1 .. + 2 with Keys weights (alpha); cubic_exclude zeroes
//            taps outside the image and renormalizes.
// Every tap index is clamped to the image.
// Spec constants: 0 METHOD (0 nearest, 1 linear, 2 cubic), 1 COORD (0 half_pixel,
// 1 align_corners, 2 asymmetric, 3 pytorch_half_pixel, 4 tf_half_pixel_for_nn), 2 ROUND
// (0 round, 1 floor, 2 ceil, 3 round_prefer_floor, 4 round_prefer_ceil).
// Bindings: 0 X (texel float), 1 Y (storage). Workgroup (64, 1, 1), 2-D grid folded by
// LinearId() over N*C*OH*OW.
#version 450
#include "common/util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint METHOD = 1;
layout(constant_id = 1) const uint COORD = 0;
layout(constant_id = 2) const uint ROUND = 0;

layout(set = 0, binding = 0) uniform samplerBuffer X;
layout(std430, set = 0, binding = 1) writeonly buffer BufY { float Y[]; };

layout(push_constant) uniform Push {
  uint NC, H, W, OH, OW;
  float scale_h, scale_w;  // float(H) / float(OH), float(W) / float(OW)
  float align_h, align_w;  // float(H-1) / float(OH-1), ... (0 for a 1-pixel output)
  uint factor_h, factor_w; // > 0: nearest + asymmetric integer path, index = o / factor
  float alpha;             // cubic spline coefficient
  uint exclude;            // cubic_exclude
} p;

float InCoord(uint o, uint out_size, float scale, float align) {
  precise float r;
  const float x = float(o);
  if (COORD == 0) {
    r = (x + 0.5) * scale - 0.5;
  } else if (COORD == 1) {
    r = align * x;
  } else if (COORD == 2) {
    r = scale * x;
  } else if (COORD == 3) {
    r = out_size > 1 ? (x + 0.5) * scale - 0.5 : 0.0;
  } else {
    r = (x + 0.5) * scale;
  }
  return r;
}

int Nearest(float v) {
  precise float r;
  if (ROUND == 0) {
    r = sign(v) * floor(abs(v) + 0.5);
  } else if (ROUND == 1) {
    r = floor(v + 1e-5);
  } else if (ROUND == 2) {
    r = ceil(v - 1e-5);
  } else if (ROUND == 3) {
    r = ceil(v - 0.5);
  } else {
    r = floor(v + 0.5);
  }
  return int(r);
}

float Pixel(uint base, int y, int x) {
  const uint yy = uint(clamp(y, 0, int(p.H) - 1)), xx = uint(clamp(x, 0, int(p.W) - 1));
  return Fetch(X, base + yy * p.W + xx);
}

// Keys cubic weights for taps at floor(in) - 1 .. floor(in) + 2 (fraction t), TOPI order.
vec4 CubicWeights(float t, int first, uint size) {
  const float a = p.alpha, t2 = t * t, t3 = t2 * t;
  vec4 w = vec4(a * (t3 - 2.0 * t2 + t), (a + 2.0) * t3 - (3.0 + a) * t2 + 1.0,
                -(a + 2.0) * t3 + (3.0 + 2.0 * a) * t2 - a * t, -a * t3 + a * t2);
  if (p.exclude != 0) {
    [[unroll]] for (int k = 0; k < 4; ++k) {
      const int idx = first + k;
      if (idx < 0 || idx >= int(size)) w[k] = 0.0;
    }
    w /= (w.x + w.y + w.z + w.w);
  }
  return w;
}

void main() {
  const uint i = LinearId();
  if (i >= p.NC * p.OH * p.OW) return;
  const uint ox = i % p.OW, t = i / p.OW;
  const uint oy = t % p.OH, nc = t / p.OH;
  const uint base = nc * p.H * p.W;
  if (METHOD == 0) {
    const int y = p.factor_h > 0 ? int(oy / p.factor_h) : Nearest(InCoord(oy, p.OH, p.scale_h, p.align_h));
    const int x = p.factor_w > 0 ? int(ox / p.factor_w) : Nearest(InCoord(ox, p.OW, p.scale_w, p.align_w));
    Y[i] = Pixel(base, y, x);
    return;
  }
  const float in_y = InCoord(oy, p.OH, p.scale_h, p.align_h);
  const float in_x = InCoord(ox, p.OW, p.scale_w, p.align_w);
  const float fy = floor(in_y), fx = floor(in_x);
  const int y0 = int(fy), x0 = int(fx);
  const float ty = in_y - fy, tx = in_x - fx;
  if (METHOD == 1) {
    const float top = Pixel(base, y0, x0) * (1.0 - tx) + Pixel(base, y0, x0 + 1) * tx;
    const float bottom = Pixel(base, y0 + 1, x0) * (1.0 - tx) + Pixel(base, y0 + 1, x0 + 1) * tx;
    Y[i] = top * (1.0 - ty) + bottom * ty;
    return;
  }
  const vec4 wy = CubicWeights(ty, y0 - 1, p.H), wx = CubicWeights(tx, x0 - 1, p.W);
  float v = 0.0;
  [[unroll]] for (int j = 0; j < 4; ++j) {
    float row = 0.0;
    [[unroll]] for (int k = 0; k < 4; ++k) row += Pixel(base, y0 - 1 + j, x0 - 1 + k) * wx[k];
    v += row * wy[j];
  }
  Y[i] = v;
}
