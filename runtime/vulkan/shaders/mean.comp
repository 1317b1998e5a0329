// mean over axes (keepdims only changes the output shape): the host collapses X to <= 4 dims
// `shape` (outermost first) and sets bit d of `reduce_mask` for reduced dims.
//   Y[i] = scale * sum over the reduced coordinates of X[kept coordinates of i, reduced ones]
// scale = 1 / (number of reduced elements). One output element per invocation.
// Bindings: 0 X (texel float), 1 Y (storage). Workgroup (64, 1, 1), 2-D grid folded by
// LinearId() over the output elements.
#version 450
#include "common/util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) uniform samplerBuffer X;
layout(std430, set = 0, binding = 1) writeonly buffer BufY { float Y[]; };

layout(push_constant) uniform Push {
  uint shape[4];
  uint reduce_mask;
  uint total;  // output elements
  float scale;
} p;

void main() {
  const uint i = LinearId();
  if (i >= p.total) return;
  uint stride[4], count[4];
  stride[3] = 1;
  [[unroll]] for (int d = 2; d >= 0; --d) stride[d] = stride[d + 1] * p.shape[d + 1];
  uint rest = i, base = 0;
  [[unroll]] for (int d = 3; d >= 0; --d) {
    if ((p.reduce_mask & (1u << d)) != 0) {
      count[d] = p.shape[d];
    } else {
      count[d] = 1;
      base += (rest % p.shape[d]) * stride[d];
      rest /= p.shape[d];
    }
  }
  float s = 0.0;
  for (uint a = 0; a < count[0]; ++a)
    for (uint b = 0; b < count[1]; ++b)
      for (uint c = 0; c < count[2]; ++c) {
        const uint row = base + a * stride[0] + b * stride[1] + c * stride[2];
        for (uint d = 0; d < count[3]; ++d) s += Fetch(X, row + d);
      }
  Y[i] = s * p.scale;
}
