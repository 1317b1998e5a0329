// The epilogue activation of the convolution and GEMM kernels (conv2d.glsl, gemm.glsl), chosen by
// the specialization constant ACT (ops::Activation::Spec): 0 none, 1 clamp(v, act_min, act_max)
// (relu: 0, +inf; clip), 16 + code: the unary op `code` of unary_ops.glsl with parameters
// (act_min, act_max), as ops::Unary computes it (nn.gelu, nn.silu, sigmoid, ...).
// Include it after declaring ACT and a push block `p` with float act_min, act_max.
//
// A kernel applies the activation to its whole register block at once, after bias and residual
// and before its stores: ACT_ROWS8 for `vec4 v[ROWS][2]` (8 values per row), ACT_GRID for
// `float v[ROWS][COLS]`. The unary op runs in one loop that is not unrolled, so UnaryF's switch
// is inlined once per block instead of once per stored value: glslc -O inlines it before the
// driver folds ACT, and per-value inlining made conv2d / matmul SPIR-V ~8x larger and lavapipe's
// pipeline compile ~10x slower. The loop works on a copy of the block (constant indices only in
// the kernel's own arrays), and without a unary op (ACT < 16) it is dead code.
#ifndef MSC_VK_ACT_GLSL
#define MSC_VK_ACT_GLSL

#ifdef MSC_VK_ACT
#include "unary_ops.glsl"

float ActUnary(float v) { return UnaryF(ACT - 16u, v, p.act_min, p.act_max); }
#endif

#define ACT_ROWS8(v, ROWS)                                                            \
  if (ACT == 1u) {                                                                    \
    [[unroll]] for (uint i_ = 0; i_ < (ROWS); ++i_) {                                 \
      v[i_][0] = clamp(v[i_][0], p.act_min, p.act_max);                               \
      v[i_][1] = clamp(v[i_][1], p.act_min, p.act_max);                               \
    }                                                                                 \
  } ACT_UNARY_ROWS8(v, ROWS)

#ifdef MSC_VK_ACT
#define ACT_UNARY_ROWS8(v, ROWS)                                                      \
  else if (ACT >= 16u) {                                                              \
    float t_[(ROWS) * 8];                                                             \
    [[unroll]] for (uint i_ = 0; i_ < (ROWS) * 8; ++i_) t_[i_] = v[i_ / 8][(i_ / 4) % 2][i_ % 4]; \
    [[dont_unroll]] for (uint i_ = 0; i_ < (ROWS) * 8; ++i_) t_[i_] = ActUnary(t_[i_]); \
    [[unroll]] for (uint i_ = 0; i_ < (ROWS) * 8; ++i_) v[i_ / 8][(i_ / 4) % 2][i_ % 4] = t_[i_]; \
  }
#else
#define ACT_UNARY_ROWS8(v, ROWS)
#endif

#define ACT_GRID(v, ROWS, COLS)                                                               \
  if (ACT == 1u) {                                                                            \
    [[unroll]] for (uint i_ = 0; i_ < (ROWS); ++i_)                                           \
      [[unroll]] for (uint j_ = 0; j_ < (COLS); ++j_)                                         \
        v[i_][j_] = clamp(v[i_][j_], p.act_min, p.act_max);                                   \
  } ACT_UNARY_GRID(v, ROWS, COLS)

#ifdef MSC_VK_ACT
#define ACT_UNARY_GRID(v, ROWS, COLS)                                                         \
  else if (ACT >= 16u) {                                                                      \
    float t_[(ROWS) * (COLS)];                                                                \
    [[unroll]] for (uint i_ = 0; i_ < (ROWS) * (COLS); ++i_) t_[i_] = v[i_ / (COLS)][i_ % (COLS)]; \
    [[dont_unroll]] for (uint i_ = 0; i_ < (ROWS) * (COLS); ++i_) t_[i_] = ActUnary(t_[i_]); \
    [[unroll]] for (uint i_ = 0; i_ < (ROWS) * (COLS); ++i_) v[i_ / (COLS)][i_ % (COLS)] = t_[i_]; \
  }
#else
#define ACT_UNARY_GRID(v, ROWS, COLS)
#endif

#endif  // MSC_VK_ACT_GLSL
