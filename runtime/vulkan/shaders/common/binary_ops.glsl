// Float32 semantics of the arithmetic binary ops, shared by binary.glsl (one op per kernel: the
// OP specialization constant) and ew_chain.comp (a program of ops in specialization constants),
// so a fused elementwise chain computes exactly what the unfused ops do.
//
// Codes: ops::BinaryOp (host table kBinary in ops_elementwise.cc), B_* below.
// Float semantics follow torch: maximum/minimum propagate NaN; floor_divide and floor_mod use
// fmod with a sign fix-up (aten div_floor_floating / remainder); power handles negative bases
// with integer exponents, 0^0 = 1 and 0^negative = inf.
#ifndef MSC_VK_BINARY_OPS_GLSL
#define MSC_VK_BINARY_OPS_GLSL

// ops::BinaryOp
const uint B_ADD = 0u, B_SUBTRACT = 1u, B_MULTIPLY = 2u, B_DIVIDE = 3u, B_POWER = 4u,
           B_MAXIMUM = 5u, B_MINIMUM = 6u, B_FLOOR_DIVIDE = 7u, B_FLOOR_MOD = 8u, B_EQUAL = 9u,
           B_NOT_EQUAL = 10u, B_GREATER = 11u, B_GREATER_EQUAL = 12u, B_LESS = 13u,
           B_LESS_EQUAL = 14u, B_LOGICAL_AND = 15u, B_LOGICAL_OR = 16u, B_LOGICAL_XOR = 17u,
           B_BITWISE_AND = 18u, B_BITWISE_OR = 19u, B_BITWISE_XOR = 20u;

float FMod(float a, float b) { return a - b * trunc(a / b); }

float Pow(float a, float b) {
  if (b == 0.0 || a == 1.0) return 1.0;  // also for a NaN operand (C pow, torch)
  if (isnan(a) || isnan(b)) return a + b;
  if (a == 0.0) return b > 0.0 ? 0.0 : 1.0 / 0.0;
  const float r = exp2(b * log2(abs(a)));
  if (a > 0.0) return r;
  if (b != trunc(b)) return 0.0 / 0.0;  // negative base, fractional exponent: NaN
  return FMod(b, 2.0) == 0.0 ? r : -r;
}

// The arithmetic op `op` (B_ADD .. B_FLOOR_MOD) on float32 values; `a` for other codes. Called
// with a specialization constant, the switch folds to the one op.
float BinaryF(uint op, float a, float b) {
  switch (op) {
    case B_ADD: return a + b;
    case B_SUBTRACT: return a - b;
    case B_MULTIPLY: return a * b;
    case B_DIVIDE: return a / b;
    case B_POWER: return Pow(a, b);
    case B_MAXIMUM: return isnan(a) || isnan(b) ? a + b : max(a, b);
    case B_MINIMUM: return isnan(a) || isnan(b) ? a + b : min(a, b);
    case B_FLOOR_DIVIDE: {
      // aten div_floor_floating: exact quotient of (a - fmod(a, b)) / b, rounded.
      if (b == 0.0) return a / b;
      const float mod = FMod(a, b);
      float div = (a - mod) / b;
      if (mod != 0.0 && ((b < 0.0) != (mod < 0.0))) div -= 1.0;
      if (div == 0.0) return 0.0 * (a / b);  // signed zero
      float fl = floor(div);
      if (div - fl > 0.5) fl += 1.0;
      return fl;
    }
    case B_FLOOR_MOD: {
      // aten remainder: fmod, then the sign of b.
      const float mod = FMod(a, b);
      return mod != 0.0 && ((b < 0.0) != (mod < 0.0)) ? mod + b : mod;
    }
    default: return a;
  }
}

#endif
