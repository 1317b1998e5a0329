// Helpers shared by the msc_vk shaders.
//
// Conventions of every shader in this tree:
//  * set 0 only; read-only tensors are uniform texel buffers (`uniform samplerBuffer`, R32_SFLOAT
//    view = one float per texel, or R32G32B32A32_SFLOAT view = one vec4 per texel, chosen by the
//    host together with a specialization constant); written tensors are storage buffers.
//    On CPU devices a texel fetch is a vector gather, a storage-buffer load a per-lane loop.
//  * 1-D work uses a 2-D grid (x <= 65535 workgroups) folded by LinearId().
//  * All sizes and offsets are in elements (float32), never bytes.
#extension GL_EXT_control_flow_attributes : require

// Element type of the float kernels' outputs (conv, GEMM, pooling, softmax, normalization,
// batch_norm, attention): float32, or float16 in their "+f16" variants (MSC_VK_F16, picked per
// dispatch for a float16 output: generate --precision fp16). Only storage is 16-bit (the
// storageBuffer16BitAccess feature, no shaderFloat16): kernels compute and accumulate in float32
// and round once, on store: Y[i] = OUT_T(v), Y4[i] = OUT_T4(v) (OpFConvert; the conversion must
// be the stored value itself: without shaderFloat16 no float16 temporaries). Their inputs need
// nothing: R16 texel views widen float16 on fetch.
#ifdef MSC_VK_F16
#extension GL_EXT_shader_16bit_storage : require
#define OUT_T float16_t
#define OUT_T4 f16vec4
#else
#define OUT_T float
#define OUT_T4 vec4
#endif

// Invocation index of a 1-D problem dispatched as a (gx, gy, 1) grid of 1-D workgroups.
uint LinearId() {
  return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
}

// n / d without an integer division (a per-lane loop on CPU devices): magic (m, s) from
// ops::detail::MagicDivider(d) on the host; exact for n < 2^31.
uint FastDiv(uint n, uint m, uint s) {
  uint hi, lo;
  umulExtended(n, m, hi, lo);
  return (hi + n) >> s;
}

// One float of a texel buffer with an R32_SFLOAT view.
float Fetch(samplerBuffer t, uint i) { return texelFetch(t, int(i)).x; }
