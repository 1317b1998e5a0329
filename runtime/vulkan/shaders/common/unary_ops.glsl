// Float32 semantics of the unary ops, shared by unary.glsl (one op per kernel: the OP
// specialization constant) and ew_chain.comp (a program of ops in specialization constants), so
// a fused elementwise chain computes exactly what the unfused ops do.
//
// Codes: ops::UnaryOp (host table kUnary in ops_elementwise.cc), U_* below.
// Formulas: asin/acos via two-argument atan (Mesa's asin/acos are ~1e-4 off), erf from
// Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7); tanh as sign(x) (1 - 2 / (exp(2|x|) + 1)) (no
// inf/inf); gelu_tanh as torch GELU(approximate='tanh'); selu constants from Klambauer et al.
// 2017; softplus as torch (linear where beta x > threshold); round = roundEven (half to even, as
// numpy/torch).
#ifndef MSC_VK_UNARY_OPS_GLSL
#define MSC_VK_UNARY_OPS_GLSL

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

// The float-valued op `op` on a float32 value; p0 / p1: clip bounds, leakyrelu alpha, softplus
// beta / threshold. Identity for codes without a float meaning (identity, predicates, logical and
// bitwise not). Called with a specialization constant, the switch folds to the one op.
float UnaryF(uint op, float x, float p0, float p1) {
  switch (op) {
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
    case U_LEAKYRELU: return x > 0.0 ? x : p0 * x;
    case U_SOFTPLUS: return p0 * x > p1 ? x : log(1.0 + exp(p0 * x)) / p0;
    case U_SELU:
      return 1.0507009873554805 * (x > 0.0 ? x : 1.6732632423543772 * (exp(x) - 1.0));
    case U_CLIP: return min(max(x, p0), p1);
    default: return x;  // identity
  }
}

#endif
