// Normalization over groups of elements, included by nn/layer_norm.comp, nn/group_norm.comp
// and nn/rms_norm.comp (NORM_RMS).
//
// The host (ops_norm.cc) describes X as kept dims (one normalization group per kept coordinate)
// and reduced dims (the elements of a group), each with X strides and gamma/beta strides:
//   kept    kshape[4], kstride[4], kgstride[4]   (the groups in row-major order of kshape)
//   reduced rshape[4], rstride[4], rgstride[4]
// For element e of group i: x = X[xoff], g = gamma[goff], xoff / goff = sums of coord * stride.
//   layer / group norm: Y = (x - mean) / sqrt(var + epsilon) * g + b   (population variance, two
//                       passes: mean, then squared deviations)
//   rms norm:           Y = x / sqrt(mean(x^2) + epsilon) * g
// gamma / beta are applied when bits 0 / 1 of `flags` are set (else their bindings are unused).
// Y has X's shape and strides.
//
// COOP = 0: one group per invocation (workgroup (64, 1, 1), grid folded by LinearId()).
// COOP = 1: one group per workgroup (grid folded over the groups as workgroups); the lanes split
//           the innermost reduced dim; sums combine through shared memory.
// Bindings: 0 X, 1 gamma, 2 beta (texel float), 3 Y (storage).
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint COOP = 0;

layout(set = 0, binding = 0) uniform samplerBuffer X;
layout(set = 0, binding = 1) uniform samplerBuffer Gamma;
layout(set = 0, binding = 2) uniform samplerBuffer Beta;
layout(std430, set = 0, binding = 3) writeonly buffer BufY { OUT_T Y[]; };

layout(push_constant) uniform Push {
  uint kshape[4], kstride[4], kgstride[4];
  uint rshape[4], rstride[4], rgstride[4];
  uint total;  // groups
  uint count;  // elements per group
  float epsilon;
  uint flags;  // bit 0: gamma, bit 1: beta
} p;

shared float partial[64];

// This lane's sum of x (mode 0), (x - center)^2 (mode 1) or x^2 (mode 2) over the group.
float PartialSum(uint base, uint lane, uint step, int mode, float center) {
  float acc = 0.0;
  for (uint a = 0; a < p.rshape[0]; ++a) {
    for (uint b = 0; b < p.rshape[1]; ++b) {
      for (uint c = 0; c < p.rshape[2]; ++c) {
        const uint row = base + a * p.rstride[0] + b * p.rstride[1] + c * p.rstride[2];
        for (uint d = lane; d < p.rshape[3]; d += step) {
          const float v = Fetch(X, row + d * p.rstride[3]);
          acc += mode == 0 ? v : (mode == 1 ? (v - center) * (v - center) : v * v);
        }
      }
    }
  }
  return acc;
}

// Sum of one value per lane (COOP), returned to every lane. Uniform control flow.
float WorkgroupSum(float v) {
  const uint lane = gl_LocalInvocationID.x;
  partial[lane] = v;
  barrier();
  [[unroll]] for (uint s = 32; s > 0; s >>= 1) {
    if (lane < s) partial[lane] += partial[lane + s];
    barrier();
  }
  const float r = partial[0];
  barrier();
  return r;
}

float GroupSum(uint base, uint lane, uint step, int mode, float center) {
  const float s = PartialSum(base, lane, step, mode, center);
  return COOP != 0 ? WorkgroupSum(s) : s;
}

void main() {
  const uint i = COOP != 0 ? gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x : LinearId();
  if (i >= p.total) return;  // uniform per workgroup when COOP
  const uint lane = COOP != 0 ? gl_LocalInvocationID.x : 0;
  const uint step = COOP != 0 ? 64 : 1;
  uint rest = i, base = 0, gbase = 0;
  [[unroll]] for (int d = 3; d >= 0; --d) {
    const uint c = rest % p.kshape[d];
    rest /= p.kshape[d];
    base += c * p.kstride[d];
    gbase += c * p.kgstride[d];
  }
  const float n = float(p.count);
#ifdef NORM_RMS
  const float mean = 0.0;
  const float inv = inversesqrt(GroupSum(base, lane, step, 2, 0.0) / n + p.epsilon);
#else
  const float mean = GroupSum(base, lane, step, 0, 0.0) / n;
  const float inv = inversesqrt(GroupSum(base, lane, step, 1, mean) / n + p.epsilon);
#endif
  const bool has_gamma = (p.flags & 1u) != 0, has_beta = (p.flags & 2u) != 0;
  for (uint a = 0; a < p.rshape[0]; ++a) {
    for (uint b = 0; b < p.rshape[1]; ++b) {
      for (uint c = 0; c < p.rshape[2]; ++c) {
        const uint row = base + a * p.rstride[0] + b * p.rstride[1] + c * p.rstride[2];
        const uint grow = gbase + a * p.rgstride[0] + b * p.rgstride[1] + c * p.rgstride[2];
        for (uint d = lane; d < p.rshape[3]; d += step) {
          const uint e = row + d * p.rstride[3], g = grow + d * p.rgstride[3];
          float v = (Fetch(X, e) - mean) * inv;
          if (has_gamma) v *= Fetch(Gamma, g);
          if (has_beta) v += Fetch(Beta, g);
          Y[e] = OUT_T(v);
        }
      }
    }
  }
}
