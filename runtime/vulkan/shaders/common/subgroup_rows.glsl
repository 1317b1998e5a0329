// Rows of a register-blocked GEMM's A (weight) block shared through the subgroup, included by
// gemm.glsl and conv2d.glsl, which declare the specialization constant SG (the subgroup size, 4,
// 8 or 16; 0: off). In the "+sg" variant (MSC_VK_SUBGROUP, SPIR-V 1.3) lane l fetches rows
// r * SG + l into v[r], and SHUFFLE_ROW(v, i) hands row i to every lane (subgroupShuffle from lane
// i % SG). Shuffled where the row is used, so that only the fetched rows stay live. Every lane of
// the subgroup must take part.
#ifdef MSC_VK_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#define SUBGROUP_VARIANT true
#define SUBGROUP_LANE gl_SubgroupInvocationID
#define SHUFFLE_ROW(v, i) subgroupShuffle(v[(i) / SG], (i) % SG)
#else
#define SUBGROUP_VARIANT false
#define SUBGROUP_LANE 0u
#define SHUFFLE_ROW(v, i) v[0]  // not reached: callers shuffle only in the variant, SG != 0
#endif
