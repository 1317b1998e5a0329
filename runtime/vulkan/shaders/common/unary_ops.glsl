// Float32 semantics of the unary ops, shared by unary.glsl (one op per kernel: the OP
// specialization constant) and ew_chain.comp (a program of ops in specialization constants), so
// a fused elementwise chain computes exactly what the unfused ops do.
//
// Formulas: asin/acos via two-argument atan (Mesa's asin/acos are ~1e-4 off), erf from
// Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7); tanh as sign(x) (1 - 2 / (exp(2|x|) + 1)) (no
// inf/inf); gelu_tanh as torch GELU(approximate='tanh'); selu constants from Klambauer et al.
// 2017; softplus as torch (linear where beta x > threshold); round = roundEven (half to even, as
// numpy/torch).
#ifndef MSC_VK_UNARY_OPS_GLSL
#define MSC_VK_UNARY_OPS_GLSL

// The unary table: one line per op code, `// msc_vk:unary OPTYPE... DOMAIN`. The runtime's
// host table (ops_elementwise.cc kUnary) is generated from these lines (cmake/OpTables.cmake), so
// a new unary op is a line here and its case in UnaryF (and OpI for an exact integer op).
// DOMAIN: float (any numeric x computed in float32, y has x's dtype), int (also exact on
// integers), bool (logical/bitwise not on integers or bool, no floats), predicate (y bool).
// A code is the host's OP specialization constant; a new op takes an unused number.
const uint U_IDENTITY = 0u;     // msc_vk:unary astype cast full int
const uint U_ABS = 1u;          // msc_vk:unary abs int
const uint U_ACOS = 2u;         // msc_vk:unary acos float
const uint U_ACOSH = 3u;        // msc_vk:unary acosh float
const uint U_ASIN = 4u;         // msc_vk:unary asin float
const uint U_ASINH = 5u;        // msc_vk:unary asinh float
const uint U_ATAN = 6u;         // msc_vk:unary atan float
const uint U_ATANH = 7u;        // msc_vk:unary atanh float
const uint U_CEIL = 8u;         // msc_vk:unary ceil int
const uint U_COS = 9u;          // msc_vk:unary cos float
const uint U_COSH = 10u;        // msc_vk:unary cosh float
const uint U_ERF = 11u;         // msc_vk:unary erf float
const uint U_EXP = 12u;         // msc_vk:unary exp float
const uint U_FLOOR = 13u;       // msc_vk:unary floor int
const uint U_LOG = 14u;         // msc_vk:unary log float
const uint U_NEGATIVE = 15u;    // msc_vk:unary negative int
const uint U_ROUND = 16u;       // msc_vk:unary round int
const uint U_RSQRT = 17u;       // msc_vk:unary rsqrt float
const uint U_SIGN = 18u;        // msc_vk:unary sign int
const uint U_SIN = 19u;         // msc_vk:unary sin float
const uint U_SINH = 20u;        // msc_vk:unary sinh float
const uint U_SQRT = 21u;        // msc_vk:unary sqrt float
const uint U_SQUARE = 22u;      // msc_vk:unary square int
const uint U_TAN = 23u;         // msc_vk:unary tan float
const uint U_ISFINITE = 24u;    // msc_vk:unary isfinite predicate
const uint U_ISINF = 25u;       // msc_vk:unary isinf predicate
const uint U_ISNAN = 26u;       // msc_vk:unary isnan predicate
const uint U_LOGICAL_NOT = 27u; // msc_vk:unary logical_not predicate
const uint U_BITWISE_NOT = 28u; // msc_vk:unary bitwise_not bool
const uint U_RELU = 29u;        // msc_vk:unary nn.relu int
const uint U_SIGMOID = 30u;     // msc_vk:unary sigmoid float
const uint U_TANH = 31u;        // msc_vk:unary tanh float
const uint U_GELU = 32u;        // msc_vk:unary nn.gelu float
const uint U_GELU_TANH = 33u;   // msc_vk:unary nn.gelu_tanh msc.gelu float
const uint U_SILU = 34u;        // msc_vk:unary nn.silu float
const uint U_LEAKYRELU = 35u;   // msc_vk:unary nn.leakyrelu float
const uint U_SOFTPLUS = 36u;    // msc_vk:unary nn.softplus float
const uint U_SELU = 37u;        // msc_vk:unary nn.selu float
const uint U_CLIP = 38u;        // msc_vk:unary clip int

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
