// Elementwise unary ops and dtype conversions; included by one 4-line .comp per optype (abs.comp,
// nn/relu.comp, astype.comp, full.comp, ...). The op is the specialization constant OP (host:
// ops::UnaryOp, same numbering), so every stem compiles to the same kernel.
//
//   Y[i] = Op(X[X_SCALAR ? 0 : i])         X dtype XT, Y dtype YT (common/dtype.glsl codes)
//
// Domain: float ops (trig, exp/log, activations, erf...) load X as float32 (float16 widened,
// integers converted) and store converting to YT; abs, negative, sign, square, ceil/floor/round,
// relu, clip, identity on integer/bool X compute in ITYPE; bitwise_not/logical_not on
// integers/bool; isfinite/isinf/isnan -> bool. Identity (astype/cast/full) converts XT -> YT:
// float -> int truncates toward zero, nonzero (and NaN) -> true.
// Formulas: asin/acos via two-argument atan (Mesa's asin/acos are ~1e-4 off), erf from Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7); tanh as
// sign(x) (1 - 2 / (exp(2|x|) + 1)) (no inf/inf); gelu_tanh as torch GELU(approximate='tanh');
// selu constants from Klambauer et al. 2017; softplus as torch (linear where beta x >
// threshold); round = roundEven (half to even, as numpy/torch).
//
// VEC4 = 1 (XT = YT = float32, total % 4 == 0, float-valued op): one uvec4 texel per
// invocation (View::kTexelUvec4), else one element (View::kTexelUint).
// Bindings: 0 X (texel), 1 Y (storage). Push: total, p0, p1 (float params: clip bounds,
// leakyrelu alpha, softplus beta/threshold), i_lo[2], i_hi[2] (clip bounds for integer X as
// int64 words). Workgroup (64, 1, 1), 2-D grid folded by LinearId().
#include "dtype.glsl"
#include "util.glsl"

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

// ops::UnaryOp
const uint U_IDENTITY = 0u, U_ABS = 1u, U_ACOS = 2u, U_ACOSH = 3u, U_ASIN = 4u, U_ASINH = 5u,
           U_ATAN = 6u, U_ATANH = 7u, U_CEIL = 8u, U_COS = 9u, U_COSH = 10u, U_ERF = 11u,
           U_EXP = 12u, U_FLOOR = 13u, U_LOG = 14u, U_NEGATIVE = 15u, U_ROUND = 16u,
           U_RSQRT = 17u, U_SIGN = 18u, U_SIN = 19u, U_SINH = 20u, U_SQRT = 21u, U_SQUARE = 22u,
           U_TAN = 23u, U_ISFINITE = 24u, U_ISINF = 25u, U_ISNAN = 26u, U_LOGICAL_NOT = 27u,
           U_BITWISE_NOT = 28u, U_RELU = 29u, U_SIGMOID = 30u, U_TANH = 31u, U_GELU = 32u,
           U_GELU_TANH = 33u, U_SILU = 34u, U_LEAKYRELU = 35u, U_SOFTPLUS = 36u, U_SELU = 37u,
           U_CLIP = 38u;

float Erf(float x) {
  const float a = abs(x);
  const float t = 1.0 / (1.0 + 0.3275911 * a);
  const float poly =
      t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign(x) * (1.0 - poly * exp(-a * a));
}

float SafeTanh(float x) { return sign(x) * (1.0 - 2.0 / (exp(2.0 * abs(x)) + 1.0)); }
float Sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

float OpF(float x) {
  switch (OP) {
    case U_ABS: return abs(x);
    case U_ACOS: return atan(sqrt((1.0 - x) * (1.0 + x)), x);  // GLSL acos: ~1e-4 error
    case U_ACOSH: return acosh(x);
    case U_ASIN: return atan(x, sqrt((1.0 - x) * (1.0 + x)));
    case U_ASINH: return sign(x) * log(abs(x) + sqrt(x * x + 1.0));
    case U_ATAN: return atan(x);
    case U_ATANH: return 0.5 * log((1.0 + x) / (1.0 - x));
    case U_CEIL: return ceil(x);
    case U_COS: return cos(x);
    case U_COSH: return 0.5 * (exp(x) + exp(-x));
    case U_ERF: return Erf(x);
    case U_EXP: return exp(x);
    case U_FLOOR: return floor(x);
    case U_LOG: return log(x);
    case U_NEGATIVE: return -x;
    case U_ROUND: return roundEven(x);
    case U_RSQRT: return inversesqrt(x);
    case U_SIGN: return isnan(x) ? x : sign(x);
    case U_SIN: return sin(x);
    case U_SINH: return 0.5 * (exp(x) - exp(-x));
    case U_SQRT: return sqrt(x);
    case U_SQUARE: return x * x;
    case U_TAN: return tan(x);
    case U_RELU: return max(x, 0.0);
    case U_SIGMOID: return Sigmoid(x);
    case U_TANH: return SafeTanh(x);
    case U_GELU: return 0.5 * x * (1.0 + Erf(x * 0.70710678118654752));
    case U_GELU_TANH:
      return 0.5 * x * (1.0 + SafeTanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
    case U_SILU: return x * Sigmoid(x);
    case U_LEAKYRELU: return x > 0.0 ? x : p.p0 * x;
    case U_SOFTPLUS: return p.p0 * x > p.p1 ? x : log(1.0 + exp(p.p0 * x)) / p.p0;
    case U_SELU:
      return 1.0507009873554805 * (x > 0.0 ? x : 1.6732632423543772 * (exp(x) - 1.0));
    case U_CLIP: return min(max(x, p.p0), p.p1);
    default: return x;  // identity
  }
}

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
