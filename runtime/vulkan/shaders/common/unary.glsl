// Elementwise unary ops and dtype conversions; included by unary.comp (every op of
// common/unary_ops.glsl's table: abs, nn.relu, astype, full, ...). The op is the specialization
// constant OP (the table's U_* code, which the host passes).
//
//   Y[i] = Op(X[X_SCALAR ? 0 : i])         X dtype XT, Y dtype YT (common/dtype.glsl codes)
//
// Domain: float ops (trig, exp/log, activations, erf...) load X as float32 (float16 widened,
// integers converted) and store converting to YT; abs, negative, sign, square, ceil/floor/round,
// relu, clip, identity on integer/bool X compute in ITYPE; bitwise_not/logical_not on
// integers/bool; isfinite/isinf/isnan -> bool. Identity (astype/cast/full) converts XT -> YT:
// float -> int truncates toward zero, nonzero (and NaN) -> true.
// Float formulas: common/unary_ops.glsl (shared with the fused chains of ew_chain.comp).
//
// VEC4 = 1 (XT = YT = float32, total % 4 == 0, float-valued op): one uvec4 texel per
// invocation (View::kTexelUvec4), else one element (View::kTexelUint).
// Bindings: 0 X (texel), 1 Y (storage). Push: total, p0, p1 (float params: clip bounds,
// leakyrelu alpha, softplus beta/threshold), i_lo[2], i_hi[2] (clip bounds for integer X as
// int64 words). Workgroup (64, 1, 1), 2-D grid folded by LinearId().
#include "dtype.glsl"
#include "util.glsl"
#include "unary_ops.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint VEC4 = 0;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint XT = DT_F32;
layout(constant_id = 3) const uint YT = DT_F32;
layout(constant_id = 4) const uint X_SCALAR = 0;

layout(set = 0, binding = 0) uniform usamplerBuffer X;
OUTPUT(1, Y)

layout(push_constant) uniform Push {
  uint total;
  float p0, p1;
  uint i_lo[2], i_hi[2];  // integer clip bounds (low word, high word)
} p;

float OpF(float x) { return UnaryF(OP, x, p.p0, p.p1); }

ITYPE ClipBound(uint lo, uint hi) {
#ifdef MSC_VK_EXT
  return int64_t(packUint2x32(uvec2(lo, hi)));
#else
  return int(lo);
#endif
}

ITYPE OpI(ITYPE x) {
  switch (OP) {
    case U_ABS: return abs(x);
    case U_NEGATIVE: return -x;
    case U_SIGN: return sign(x);
    case U_SQUARE: return x * x;
    case U_RELU: return max(x, ITYPE(0));
    case U_BITWISE_NOT: return ~x;
    case U_CLIP:
      return min(max(x, ClipBound(p.i_lo[0], p.i_lo[1])), ClipBound(p.i_hi[0], p.i_hi[1]));
    default: return x;  // identity, ceil, floor, round
  }
}

// Ops computed in the integer domain when X is an integer or bool tensor.
bool IntOp() {
  return OP == U_IDENTITY || OP == U_ABS || OP == U_NEGATIVE || OP == U_SIGN || OP == U_SQUARE ||
         OP == U_RELU || OP == U_BITWISE_NOT || OP == U_CLIP || OP == U_CEIL ||
         OP == U_FLOOR || OP == U_ROUND;
}

void Element(uint i) {
  const uint xi = X_SCALAR != 0 ? 0u : i;
  if (OP == U_ISFINITE || OP == U_ISINF || OP == U_ISNAN) {
    const float x = LoadF(X, XT, xi);
    StoreB_Y(YT, i, OP == U_ISNAN ? isnan(x) : (OP == U_ISINF ? isinf(x) : !(isnan(x) || isinf(x))));
  } else if (OP == U_LOGICAL_NOT || (OP == U_BITWISE_NOT && XT == DT_BOOL)) {
    StoreB_Y(YT, i, !LoadB(X, XT, xi));
  } else if (!IsFloatType(XT) && IntOp()) {
    if (XT == DT_BOOL && OP == U_IDENTITY) {
      StoreB_Y(YT, i, LoadB(X, XT, xi));
    } else {
      StoreI_Y(YT, i, OpI(LoadI(X, XT, xi)));
    }
  } else {
    StoreF_Y(YT, i, OpF(LoadF(X, XT, xi)));
  }
}

void main() {
  const uint i = LinearId();
  if (VEC4 != 0) {
    if (i * 4 >= p.total) return;
    const vec4 x = uintBitsToFloat(texelFetch(X, int(i)));
    vec4 y;
    for (int k = 0; k < 4; ++k) y[k] = OpF(x[k]);  // one copy of OpF in the SPIR-V
    Y4[i] = floatBitsToUint(y);
  } else if (i < p.total) {
    Element(i);
  }
}
