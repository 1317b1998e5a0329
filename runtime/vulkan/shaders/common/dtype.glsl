// Element types for the dtype-generic shaders (unary, binary, where, copy, creation, indexing).
// Include it first (it enables extensions), then util.glsl.
//
// Reads: every input is a uniform texel buffer of raw element bits (`usamplerBuffer`; host view
// View::kTexelUint = one texel per element in R8/R16/R32/R32G32_UINT by element size, or
// View::kTexelUvec4 = four 4-byte elements per texel). Integer texel formats keep the bits as
// they are (a float view could flush denormal patterns); floats are reinterpreted with
// uintBitsToFloat, float16 widened with unpackHalf2x16 (exact).
// Writes: storage buffers declared per element size by OUTPUT(binding, Name) below.
//
#ifdef MSC_VK_EXT
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define ITYPE int64_t
#define IUNSIGNED uint64_t
#else
#define ITYPE int
#define IUNSIGNED uint
#endif

// The dtype of each tensor is a specialization constant with these codes (host:
// ops::detail::DTypeCode):
const uint DT_F32 = 0u;
const uint DT_F16 = 1u;
const uint DT_I32 = 2u;
const uint DT_I64 = 3u;
const uint DT_BOOL = 4u;
//
// Computation domains: float32 for float32/float16 (float16 is storage only), ITYPE for the
// integers, bool as 0/1 integers. Conversions on store: float -> int truncates toward zero
// (GLSL), anything -> bool is `value != 0` (NaN -> true), bool -> 0/1.
//
// Variants (runtime/vulkan/cmake/EmbedShaders.cmake): the plain build handles float32 and
// int32 (4-byte) tensors plus int64 values inside the int32 range written as sign-extended
// pairs (indices), and needs no optional device feature; the "+ext" build (MSC_VK_EXT) handles
// every dtype: 8/16-bit storage for bool/float16 stores and 64-bit integer arithmetic
// (ITYPE = int64_t), which need storageBuffer8BitAccess, storageBuffer16BitAccess, shaderInt64.

bool IsFloatType(uint dt) { return dt == DT_F32 || dt == DT_F16; }

// One element (element index i) of a kTexelUint view as the domain types.
float LoadF(usamplerBuffer t, uint dt, uint i) {
  const uvec4 v = texelFetch(t, int(i));
  if (dt == DT_F32) return uintBitsToFloat(v.x);
  if (dt == DT_F16) return unpackHalf2x16(v.x).x;
  if (dt == DT_BOOL) return v.x != 0u ? 1.0 : 0.0;
#ifdef MSC_VK_EXT
  if (dt == DT_I64) return float(int64_t(packUint2x32(v.xy)));
#endif
  return float(int(v.x));  // int32 (and int64 in the int32 range)
}

ITYPE LoadI(usamplerBuffer t, uint dt, uint i) {
  const uvec4 v = texelFetch(t, int(i));
  if (dt == DT_F32) return ITYPE(uintBitsToFloat(v.x));
  if (dt == DT_F16) return ITYPE(unpackHalf2x16(v.x).x);
  if (dt == DT_BOOL) return v.x != 0u ? ITYPE(1) : ITYPE(0);
#ifdef MSC_VK_EXT
  if (dt == DT_I64) return int64_t(packUint2x32(v.xy));
#endif
  return ITYPE(int(v.x));
}

bool LoadB(usamplerBuffer t, uint dt, uint i) {
  const uvec4 v = texelFetch(t, int(i));
  if (dt == DT_F32) return !(uintBitsToFloat(v.x) == 0.0);
  if (dt == DT_F16) return !(unpackHalf2x16(v.x).x == 0.0);
  if (dt == DT_I64) return (v.x | v.y) != 0u;
  return v.x != 0u;
}

// An index tensor element (int32 or int64, read as its low 32 bits: valid for |index| < 2^31).
int LoadIndex(usamplerBuffer t, uint i) { return int(texelFetch(t, int(i)).x); }

// Raw bits of one element: .x the (low) word, .y the high word of 8-byte elements.
uvec2 LoadRaw(usamplerBuffer t, uint i) { return texelFetch(t, int(i)).xy; }

// OUTPUT(B, Y) declares binding B as storage views Y32 (uint), Y64 (uvec2: 8-byte elements as
// two words), Y4 (uvec4), and with MSC_VK_EXT Y8 (uint8_t), Y16 (uint16_t); plus functions
// StoreF_Y / StoreI_Y / StoreB_Y (dt, i, value): convert a domain value to dtype dt and store
// element i; StoreRaw_Y(size, i, bits): store an element of `size` bytes; LoadF_Y / LoadI_Y
// (dt, i): read element i back (read-modify-write kernels; declare with OUTPUT_RW).
#ifdef MSC_VK_EXT
#define OUTPUT_EXT_DECL(B, Y, ACCESS)                                                    \
  layout(std430, set = 0, binding = B) ACCESS buffer Buf8##Y { uint8_t Y##8[]; };      \
  layout(std430, set = 0, binding = B) ACCESS buffer Buf16##Y { uint16_t Y##16[]; };
#define STORE_EXT_F(Y)                                                        \
  if (dt == DT_F16) { Y##16[i] = uint16_t(packHalf2x16(vec2(v, 0.0)));      \
                      return; }                                               \
  if (dt == DT_I64) { Y##64[i] = unpackUint2x32(uint64_t(int64_t(v)));       \
                      return; }                                               \
  if (dt == DT_BOOL) { Y##8[i] = uint8_t(v == 0.0 ? 0u : 1u); return; }
#define STORE_EXT_I(Y)                                                                   \
  if (dt == DT_F16) { Y##16[i] = uint16_t(packHalf2x16(vec2(float(v), 0.0))); return; } \
  if (dt == DT_I64) { Y##64[i] = unpackUint2x32(uint64_t(v)); return; }                 \
  if (dt == DT_BOOL) { Y##8[i] = uint8_t(v != 0 ? 1u : 0u); return; }
#define STORE_EXT_RAW(Y)                                \
  if (size == 1u) { Y##8[i] = uint8_t(v.x); return; }   \
  if (size == 2u) { Y##16[i] = uint16_t(v.x); return; }
#define LOAD_EXT_F(Y)                                                \
  if (dt == DT_F16) return unpackHalf2x16(uint(Y##16[i])).x;         \
  if (dt == DT_I64) return float(int64_t(packUint2x32(Y##64[i])));   \
  if (dt == DT_BOOL) return float(uint(Y##8[i]));
#define LOAD_EXT_I(Y)                                                \
  if (dt == DT_F16) return ITYPE(unpackHalf2x16(uint(Y##16[i])).x);  \
  if (dt == DT_I64) return int64_t(packUint2x32(Y##64[i]));          \
  if (dt == DT_BOOL) return ITYPE(uint(Y##8[i]));
#else
#define OUTPUT_EXT_DECL(B, Y, ACCESS)
// Without MSC_VK_EXT: int64 stores are sign-extended int32 values, bool/float16 do not occur.
#define STORE_EXT_F(Y) \
  if (dt == DT_I64) { const int w = int(v); Y##64[i] = uvec2(uint(w), w < 0 ? ~0u : 0u); return; }
#define STORE_EXT_I(Y) \
  if (dt == DT_I64) { Y##64[i] = uvec2(uint(v), v < 0 ? ~0u : 0u); return; }
#define STORE_EXT_RAW(Y)
#define LOAD_EXT_F(Y) \
  if (dt == DT_I64) return float(int(Y##64[i].x));
#define LOAD_EXT_I(Y) \
  if (dt == DT_I64) return int(Y##64[i].x);
#endif

#define OUTPUT_DECL(B, Y, ACCESS)                                                      \
  layout(std430, set = 0, binding = B) ACCESS buffer Buf32##Y { uint Y##32[]; };       \
  layout(std430, set = 0, binding = B) ACCESS buffer Buf64##Y { uvec2 Y##64[]; };      \
  layout(std430, set = 0, binding = B) ACCESS buffer Buf4##Y { uvec4 Y##4[]; };        \
  OUTPUT_EXT_DECL(B, Y, ACCESS)                                                        \
  void StoreF_##Y(uint dt, uint i, float v) {                                          \
    if (dt == DT_F32) { Y##32[i] = floatBitsToUint(v); return; }                       \
    if (dt == DT_I32) { Y##32[i] = uint(int(v)); return; }                             \
    STORE_EXT_F(Y)                                                                     \
  }                                                                                    \
  void StoreI_##Y(uint dt, uint i, ITYPE v) {                                          \
    if (dt == DT_F32) { Y##32[i] = floatBitsToUint(float(v)); return; }                \
    if (dt == DT_I32) { Y##32[i] = uint(int(v)); return; }                             \
    STORE_EXT_I(Y)                                                                     \
  }                                                                                    \
  void StoreB_##Y(uint dt, uint i, bool b) { StoreI_##Y(dt, i, b ? ITYPE(1) : ITYPE(0)); } \
  void StoreRaw_##Y(uint size, uint i, uvec2 v) {                                      \
    if (size == 4u) { Y##32[i] = v.x; return; }                                        \
    if (size == 8u) { Y##64[i] = v; return; }                                          \
    STORE_EXT_RAW(Y)                                                                   \
  }

#define OUTPUT(B, Y) OUTPUT_DECL(B, Y, writeonly)

// Readable and writable output (scatter): OUTPUT plus LoadF_Y / LoadI_Y.
#define OUTPUT_RW(B, Y)                                                      \
  OUTPUT_DECL(B, Y, )                                                        \
  float LoadF_##Y(uint dt, uint i) {                                         \
    if (dt == DT_F32) return uintBitsToFloat(Y##32[i]);                      \
    if (dt == DT_I32) return float(int(Y##32[i]));                           \
    LOAD_EXT_F(Y)                                                            \
    return 0.0;                                                              \
  }                                                                          \
  ITYPE LoadI_##Y(uint dt, uint i) {                                         \
    if (dt == DT_F32) return ITYPE(uintBitsToFloat(Y##32[i]));               \
    if (dt == DT_I32) return ITYPE(int(Y##32[i]));                           \
    LOAD_EXT_I(Y)                                                            \
    return ITYPE(0);                                                         \
  }
