// nn.gelu (erf form, torch approximate='none'): Y = 0.5 * X * (1 + erf(X / sqrt(2))).
// erf: Abramowitz & Stegun 7.1.26, |error| <= 1.5e-7.
// Bindings (X, Y), push and specialization constants: see common/unary.glsl.
#version 450
#include "common/unary.glsl"

vec4 Erf(vec4 x) {
  const vec4 a = abs(x);
  const vec4 t = 1.0 / (1.0 + 0.3275911 * a);
  const vec4 poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign(x) * (1.0 - poly * exp(-a * a));
}

vec4 Op(vec4 x) { return 0.5 * x * (1.0 + Erf(x * 0.70710678118654752)); }
