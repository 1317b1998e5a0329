// nn.pad: Y[o] = X[src(o)] per dim d: s = o_d - before[d];
//   constant: s outside [0, in_d) -> pad_value
//   edge:     s clamped to [0, in_d - 1]
//   reflect:  s < 0 -> -s, s >= in_d -> 2*(in_d - 1) - s (the host checks pads < in_d)
// The host merges adjacent dims that need no padding (<= 8 dims, outermost first, padded with
// size-1 dims in front).
// Spec constant 0 MODE: 0 constant, 1 edge, 2 reflect.
// Bindings: 0 X (texel float), 1 Y (storage). Workgroup (64, 1, 1), 2-D grid folded by
// LinearId() over the output elements.
#version 450
#include "common/util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint MODE = 0;

layout(set = 0, binding = 0) uniform samplerBuffer X;
layout(std430, set = 0, binding = 1) writeonly buffer BufY { float Y[]; };

layout(push_constant) uniform Push {
  uint in_shape[8];
  uint out_shape[8];
  uint before[8];
  uint total;  // output elements
  float pad_value;
} p;

void main() {
  const uint i = LinearId();
  if (i >= p.total) return;
  uint rest = i, src = 0, stride = 1;
  bool inside = true;
  [[unroll]] for (int d = 7; d >= 0; --d) {
    const int n = int(p.in_shape[d]);
    int s = int(rest % p.out_shape[d]) - int(p.before[d]);
    rest /= p.out_shape[d];
    if (MODE == 0) {
      inside = inside && s >= 0 && s < n;
    } else if (MODE == 1) {
      s = clamp(s, 0, n - 1);
    } else {
      s = s < 0 ? -s : (s >= n ? 2 * (n - 1) - s : s);
    }
    src += uint(s) * stride;
    stride *= p.in_shape[d];
  }
  const float v = Fetch(X, inside ? src : 0u);  // never an out-of-range fetch
  Y[i] = inside ? v : p.pad_value;
}
