// N-dimensional index decomposition for the dtype-generic kernels (copy, binary, where,
// gather/scatter): element e of a row-major index space `shape` (outermost first, padded with
// leading 1s) -> coordinates, using host-computed FastDiv magic numbers (util.glsl) instead of
// integer divisions. `div_s` packs the shift of dim d in bits [5d, 5d + 5) of one word
// (ops::detail::NdIndex on the host).
#ifndef MSC_VK_ND_GLSL
#define MSC_VK_ND_GLSL

uint NdShift(uint packed, int d) { return (packed >> (5 * d)) & 31u; }

// Kernels loop `for d = 5 .. 0` and stop below 6 - NDIMS (a specialization constant = the number
// of dims after merging; the leading pad dims have size 1), so a 2-D copy does two FastDivs.

// Coordinate of dim d and the remaining (outer) index: c = rest % shape[d], rest /= shape[d].
uint NdStep(inout uint rest, uint extent, uint m, uint packed, int d) {
  const uint q = FastDiv(rest, m, NdShift(packed, d));
  const uint c = rest - q * extent;
  rest = q;
  return c;
}

#endif
