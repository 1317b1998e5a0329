// tril / triu / trilu: raw copy keeping the elements on one side of the k-th diagonal of the
// last two dims, zero (all bits clear: 0, 0.0, false) elsewhere.
//
//   row = (i / cols) % rows, col = i % cols
//   UPPER = 0 (tril): keep col - row <= k;   UPPER = 1 (triu): keep col - row >= k
// ESIZE: element size in bytes. Bindings: 0 X (View::kTexelUint), 1 Y (storage). Push: total,
// rows, cols, k, div_m[2], div_s[2] (FastDiv magic for cols, rows). Workgroup (64, 1, 1), 2-D
// grid folded by LinearId() over total.
#include "dtype.glsl"
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint UPPER = 0;
layout(constant_id = 1) const uint ESIZE = 4;

layout(set = 0, binding = 0) uniform usamplerBuffer X;
OUTPUT(1, Y)

layout(push_constant) uniform Push {
  uint total, rows, cols;
  int k;
  uint div_m[2], div_s[2];  // [0]: cols, [1]: rows
} p;

void main() {
  const uint i = LinearId();
  if (i >= p.total) return;
  const uint q = FastDiv(i, p.div_m[0], p.div_s[0]);
  const int col = int(i - q * p.cols);
  const int row = int(q - FastDiv(q, p.div_m[1], p.div_s[1]) * p.rows);
  const bool keep = UPPER != 0 ? col - row >= p.k : col - row <= p.k;
  StoreRaw_Y(ESIZE, i, keep ? LoadRaw(X, i) : uvec2(0u));
}
