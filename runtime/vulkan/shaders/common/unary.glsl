// Elementwise unary op; included by nn/relu.comp, sigmoid.comp, tanh.comp, nn/gelu.comp,
// clip.comp, which define `vec4 Op(vec4 x)` after the include (p.p0 / p.p1 are the op's float parameters).
//
//   Y[i] = Op(X[i])                                  float32, contiguous
//
// VEC4 = 1 (total % 4 == 0): one vec4 per invocation, vec4 texel view of X; VEC4 = 0: one float
// per invocation, float view. Bindings: 0 X (texel), 1 Y (storage). Workgroup (64, 1, 1), 2-D
// grid folded by LinearId() over total / 4 (VEC4) or total invocations.
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint VEC4 = 0;

layout(set = 0, binding = 0) uniform samplerBuffer X;
layout(std430, set = 0, binding = 1) writeonly buffer BufY { float Y[]; };
layout(std430, set = 0, binding = 1) writeonly buffer BufY4 { vec4 Y4[]; };

layout(push_constant) uniform Push {
  uint total;    // elements
  float p0, p1;  // op parameters (clip: min, max; may be -inf / +inf)
} p;

vec4 Op(vec4 x);

void main() {
  const uint i = LinearId();
  if (VEC4 != 0) {
    if (i * 4 < p.total) Y4[i] = Op(texelFetch(X, int(i)));
  } else if (i < p.total) {
    Y[i] = Op(vec4(Fetch(X, i))).x;
  }
}
