// Float32 semantics of the arithmetic binary ops, shared by binary.glsl (one op per kernel: the
// OP specialization constant) and ew_chain.comp (a program of ops in specialization constants),
// so a fused elementwise chain computes exactly what the unfused ops do.
//
// Float semantics follow torch: maximum/minimum propagate NaN; floor_divide and floor_mod use
// fmod with a sign fix-up (aten div_floor_floating / remainder); power handles negative bases
// with integer exponents, 0^0 = 1 and 0^negative = inf.
#ifndef MSC_VK_BINARY_OPS_GLSL
#define MSC_VK_BINARY_OPS_GLSL

// The binary table: one line per op code, `// msc_vk:binary OPTYPE... KIND`. The runtime's
// host table (ops_elementwise.cc kBinary) is generated from these lines (cmake/OpTables.cmake), so
// a new binary op is a line here and its case in BinaryF (and binary.glsl's integer switch).
// KIND: arith (computed in y's dtype), compare (bool y; float32 when an input is a float),
// logical (on truth values, bool y), bitwise (integer or bool tensors only).
// A code is the host's OP specialization constant; a new op takes an unused number.
const uint B_ADD = 0u;            // msc_vk:binary add arith
const uint B_SUBTRACT = 1u;       // msc_vk:binary subtract arith
const uint B_MULTIPLY = 2u;       // msc_vk:binary multiply arith
const uint B_DIVIDE = 3u;         // msc_vk:binary divide arith
const uint B_POWER = 4u;          // msc_vk:binary power arith
const uint B_MAXIMUM = 5u;        // msc_vk:binary maximum arith
const uint B_MINIMUM = 6u;        // msc_vk:binary minimum arith
const uint B_FLOOR_DIVIDE = 7u;   // msc_vk:binary floor_divide arith
const uint B_FLOOR_MOD = 8u;      // msc_vk:binary floor_mod arith
const uint B_EQUAL = 9u;          // msc_vk:binary equal compare
const uint B_NOT_EQUAL = 10u;     // msc_vk:binary not_equal compare
const uint B_GREATER = 11u;       // msc_vk:binary greater compare
const uint B_GREATER_EQUAL = 12u; // msc_vk:binary greater_equal compare
const uint B_LESS = 13u;          // msc_vk:binary less compare
const uint B_LESS_EQUAL = 14u;    // msc_vk:binary less_equal compare
const uint B_LOGICAL_AND = 15u;   // msc_vk:binary logical_and logical
const uint B_LOGICAL_OR = 16u;    // msc_vk:binary logical_or logical
const uint B_LOGICAL_XOR = 17u;   // msc_vk:binary logical_xor logical
const uint B_BITWISE_AND = 18u;   // msc_vk:binary bitwise_and bitwise
const uint B_BITWISE_OR = 19u;    // msc_vk:binary bitwise_or bitwise
const uint B_BITWISE_XOR = 20u;   // msc_vk:binary bitwise_xor bitwise

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
