// Conv2d / Conv2dBias, Conv1d / Conv1dBias (the 2-D kernels on [N, C, 1, W] views) and the GEMM
// family: linear, dense, matmul, batch_matmul, msc.matmul (shaders/common/conv2d.glsl, gemm.glsl).
//
// Convolution algorithms (conv2d.glsl's kernels, "<stem>@<kernel>": KernelStem), picked per call
// by PickConvAlgo():
//   direct    any convolution (implicit GEMM, 16 channels x 8 pixels per invocation);
//   gemm1x1   1x1, stride 1, no padding, groups 1: a register-blocked GEMM W [O, C] @ X[n] [C, HW];
//   im2col    any other groups-1 convolution: an im2col workspace [N, C*KH*KW, HW] and the
//             register-blocked GEMM (at most kIm2colMaxBytes of workspace, else direct);
//   depthwise groups == C == O, 3x3 or 5x5, stride 1 or 2, dilation 1: 2 rows x 8 columns of one
//             channel per invocation, input rows fetched once per block;
//   winograd  3x3, stride 1, dilation 1, groups 1, constant weights (Program::IsConstant), at least
//             kWinogradMinChannels input and output channels: F(2x2, 3x3) or F(4x4, 3x3)
//             (WinogradTile) as input transform + 16 or 36 batched GEMMs + output transform,
//             weights transformed once on the host at the first Run() (Program::AddSetup) into a
//             program-owned buffer.
// Every algorithm applies the fused residual (Conv2dAttrs::residual) in the dispatch that stores y
// (conv2d.glsl RES): y = act(conv + bias + residual); the GEMM family the same (gemm.glsl RES).
// gemm1x1, im2col, depthwise and winograd are used on CPU devices (lavapipe, where they were
// measured faster: scripts/bench_vulkan.py); GPUs keep the direct kernel. The environment variable
// MSC_VK_CONV=direct forces the direct kernel everywhere (A/B comparisons, tests); MSC_VK_CONV=fast
// allows the other algorithms on every device type; MSC_VK_CONV_OFF=im2col,winograd (any of
// gemm1x1, im2col, depthwise, winograd) turns single algorithms off (depthwise_vec4: the
// depthwise kernel's vec4 row fetches; gemm1x1_xu4: the 1x1 GEMM's unaligned vec4 X fetches).
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "context.h"
#include "ops_internal.h"
#include "shader_registry.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::CheckRank;
using detail::Fail;
using detail::U32;

// Output channels per invocation in shaders/common/conv2d.glsl (CONV_BM).
constexpr int64_t kConvBM = 16;

struct ConvPush {
  uint32_t N, C, H, W, O, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw, groups;
  float act_min, act_max;
};

// detail::Launch, with the kernel's profile row (Program::Profile) named "<stem> [label]" so that
// `--profile` shows the time per convolution algorithm. `kernel`: the shader module to run, one of
// conv2d.glsl's kernels (KernelStem: "<stem>@gemm1x1", with "+sg" / "+act"), with "+f16" appended
// when the output binding is float16 (detail::FloatStem).
template <class P>
void LaunchAs(Program& p, const char* stem, const char* label, std::vector<Binding> bindings,
              const P& push, const SpecConstants& spec, const std::array<uint32_t, 3>& grid,
              const Tensor& y, const std::string& kernel) {
  const std::string name = detail::FloatStem(kernel, bindings);
  Kernel& k = p.AddKernel(name, std::move(bindings), push, spec, y.name);
  k.stem = std::string(stem) + " [" + label + "]" +
           (std::getenv("MSC_VK_PROFILE_NODES") ? " " + y.name : std::string());
  p.Dispatch(k, grid[0], grid[1], grid[2]);
}

// The fused residual (ops.h): float32 or float16, y's shape, and no byte shared with y (the kernel
// reads it while it writes y).
void CheckResidual(const char* optype, const Tensor& y, const Tensor* r) {
  if (!r) return;
  detail::CheckFloat(optype, y, {r});
  if (r->shape != y.shape) {
    Fail(optype, y,
         "residual " + r->Describe() + " does not have the output's shape " +
             ShapeToString(y.shape) + " (a fused residual is not broadcast)");
  }
  if (detail::SharesBytes(*r, y)) {
    Fail(optype, y,
         "residual " + r->Describe() +
             " shares bytes with the output (the kernel reads it while writing the output)");
  }
}

// The binding after Y in conv2d.glsl / gemm.glsl (R): the residual, through a vec4 view when the
// kernel reads it as vec4s (`vec4`); without one, a one-float view of the first element of
// `other`, a tensor the kernel reads anyway (Vulkan needs every binding the shader declares bound;
// with RES = 0 it is never read, and a one-texel view stays within maxTexelBufferElements).
Binding ResidualBinding(const Tensor* r, const Tensor& other, bool vec4) {
  if (r) return InTexel(*r, vec4 ? View::kTexelVec4 : View::kTexelFloat);
  Tensor first = other;
  first.dtype = DType::kFloat32;
  first.shape = {1};
  return InTexel(first);
}

// conv2d.glsl's specialization constants `s` (ids 0, 1, ...) with RES (id 7) = 1 when `res` and
// SG (id 8) = `sg`; the ids in between get the shader's defaults.
SpecConstants ConvSpec(SpecConstants s, bool res, uint32_t sg = 0, bool xu4 = false) {
  if (!res && sg == 0 && !xu4) return s;
  static const uint32_t kDefaults[7] = {0, 0, 0, 0, 2, 3, 1};  // ACT .. DW_S
  for (size_t i = s.size(); i < 7; ++i) s.push_back(kDefaults[i]);
  s.push_back(res ? 1u : 0u);
  if (sg != 0 || xu4) s.push_back(sg);
  if (xu4) s.insert(s.end(), {0u, 0u, 1u});  // DW_XVEC4, DW_OFF, XU4
  return s;
}

// The kernel of a register-blocked GEMM (gemm.glsl; conv2d.glsl's gemm1x1, wino_gemm and
// im2col_gemm): "<stem>+sg" with *sg (the shaders' SG) = the device's subgroup size when its
// compute subgroups shuffle, the size is 4, 8 or 16 (it divides the 64-lane workgroup and the
// 16-row block) and that variant is embedded; else `stem` with *sg = 0 (A rows fetched per
// invocation).
std::string SubgroupStem(Program& p, const std::string& stem, uint32_t* sg) {
  const uint32_t size = p.context().features().subgroup_shuffle_size;
  const std::string variant = stem + "+sg";
  const bool ok = (size == 4 || size == 8 || size == 16) && FindEmbeddedShader(variant) != nullptr;
  *sg = ok ? size : 0u;
  return ok ? variant : stem;
}

// The kernel for an epilogue `act`: "<kernel>+act" (compiled with -DMSC_VK_ACT, see
// shaders/common/act.glsl) when act is a unary op, else `kernel`. Throws msc_vk::Error naming y
// when that variant is not embedded (msc_vk_embed_shaders(... ACT) compiles it).
std::string ActStem(const std::string& kernel, const Activation& act, const char* optype,
                    const Tensor& y) {
  if (act.unary < 0) return kernel;
  const std::string variant = kernel + "+act";
  if (!FindEmbeddedShader(variant))
    Fail(optype, y,
         "a unary epilogue needs shader '" + variant +
             "', which is not embedded (msc_vk_embed_shaders(... ACT) compiles the epilogue "
             "variants; generated projects pass it when a node has one)");
  return variant;
}

// One of conv2d.glsl's kernels, its own SPIR-V module: "<stem>@<kernel>", `kernel` a name on the
// .comp's "// msc_vk:kernel" lines (direct, wino_input, gemm1x1, wino_gemm, wino_output,
// depthwise, im2col, im2col_gemm; EmbedShaders.cmake).
std::string KernelStem(const char* stem, const char* kernel) {
  return std::string(stem) + "@" + kernel;
}

// Largest im2col workspace (bytes); bigger convolutions stay direct.
constexpr int64_t kIm2colMaxBytes = int64_t{256} << 20;

// Winograd pays for its transforms only with enough channels to share them.
constexpr int64_t kWinogradMinChannels = 16;

enum class ConvAlgo { kDirect, kGemm1x1, kWinograd, kDepthwise, kIm2col };

// Whether MSC_VK_CONV_OFF (a comma-separated list) names `algo`.
bool AlgoOff(const char* algo) {
  const char* env = std::getenv("MSC_VK_CONV_OFF");
  if (!env) return false;
  const std::string list = std::string(",") + env + ",";
  return list.find(std::string(",") + algo + ",") != std::string::npos;
}

ConvAlgo PickConvAlgo(const Program& p, const Tensor& w, int64_t C, int64_t O, int64_t KH,
                      int64_t KW, int64_t G, const Conv2dAttrs& a) {
  const char* env = std::getenv("MSC_VK_CONV");
  const std::string mode = env ? env : "";
  if (mode == "direct") return ConvAlgo::kDirect;
  const bool cpu = p.context().info().type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  if (!cpu && mode != "fast") return ConvAlgo::kDirect;
  const bool stride1 = a.strides[0] == 1 && a.strides[1] == 1;
  const bool no_pad =
      a.padding[0] == 0 && a.padding[1] == 0 && a.padding[2] == 0 && a.padding[3] == 0;
  if (G == 1 && KH == 1 && KW == 1 && stride1 && no_pad && !AlgoOff("gemm1x1")) {
    return ConvAlgo::kGemm1x1;
  }
  const bool square_stride = a.strides[0] == a.strides[1] && a.strides[0] <= 2;
  if (G == C && G == O && KH == KW && (KH == 3 || KH == 5) && square_stride && a.dilation[0] == 1 &&
      a.dilation[1] == 1 && !AlgoOff("depthwise")) {
    return ConvAlgo::kDepthwise;
  }
  if (G == 1 && KH == 3 && KW == 3 && stride1 && a.dilation[0] == 1 && a.dilation[1] == 1 &&
      C >= kWinogradMinChannels && O >= kWinogradMinChannels && p.IsConstant(w) &&
      !AlgoOff("winograd")) {
    return ConvAlgo::kWinograd;
  }
  // im2col + GEMM beats the direct kernel on lavapipe for the 3-channel stems (C*KH*KW % 4 != 0:
  // ~1.6x with the zero-padded weights), strided 1x1 (~2x) and strided 3x3 convolutions (~1.2x).
  if (G == 1 && !AlgoOff("im2col")) {
    return ConvAlgo::kIm2col;
  }
  return ConvAlgo::kDirect;
}

// U[xi, o, c] = (G w[o, c] G^T)[xi] for a 3x3 kernel with conv2d.glsl's G for F(FxF, 3x3)
// (F = 4: on the points 0, -1, 1, 1/2, -2, see there), computed in double. w: [O, C, 3, 3]
// row-major; u: [(F+2)^2, O, C].
void WinogradWeights(const float* w, int64_t O, int64_t C, int F, float* u) {
  static const double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static const double G4[6][3] = {{1, 0, 0},
                                  {-1.0 / 3, 1.0 / 3, -1.0 / 3},
                                  {1.0 / 3, 1.0 / 3, 1.0 / 3},
                                  {-16.0 / 15, -8.0 / 15, -4.0 / 15},
                                  {1.0 / 15, -2.0 / 15, 4.0 / 15},
                                  {0, 0, 1}};
  const int S = F + 2;
  const double(*G)[3] = F == 2 ? G2 : G4;
  const int64_t plane = O * C;
  for (int64_t oc = 0; oc < plane; ++oc) {
    const float* g = w + oc * 9;
    double t[6][3];  // G g
    for (int i = 0; i < S; ++i) {
      for (int j = 0; j < 3; ++j) {
        t[i][j] = G[i][0] * g[0 * 3 + j] + G[i][1] * g[1 * 3 + j] + G[i][2] * g[2 * 3 + j];
      }
    }
    for (int i = 0; i < S; ++i) {
      for (int j = 0; j < S; ++j) {
        u[(i * S + j) * plane + oc] =
            static_cast<float>(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
      }
    }
  }
}

// Winograd tile size for an OH x OW output of N images: F(4x4,3x3) does 36 GEMMs over T4 tiles,
// F(2x2,3x3) 16 over T2 = ~4 T4; the GEMM works in blocks of 8 tiles, so F = 4 only pays when
// its block-rounded work is smaller (not on 7x7 images: T4 = 4 is half a block).
// MSC_VK_WINOGRAD_TILE=2 or 4 forces one (tests, A/B comparisons).
int WinogradTile(int64_t N, int64_t OH, int64_t OW) {
  if (const char* env = std::getenv("MSC_VK_WINOGRAD_TILE")) {
    if (std::strcmp(env, "2") == 0) return 2;
    if (std::strcmp(env, "4") == 0) return 4;
  }
  auto work = [&](int64_t F) {
    const int64_t T = N * ((OH + F - 1) / F) * ((OW + F - 1) / F);
    return (F + 2) * (F + 2) * ((T + 7) / 8 * 8);
  };
  return work(4) < work(2) ? 4 : 2;
}

// Reads a float32 or float16 tensor to the host as floats (mapped memory or a staging download).
std::vector<float> ReadFloats(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  std::vector<uint16_t> half(t.dtype == DType::kFloat16 ? out.size() : 0);
  void* dst = half.empty() ? static_cast<void*>(out.data()) : static_cast<void*>(half.data());
  if (t.buffer->mapped()) {
    std::memcpy(dst, t.buffer->mapped() + t.offset, t.bytes());
  } else {
    t.buffer->Download(t.offset, dst, t.bytes());
  }
  for (size_t i = 0; i < half.size(); ++i) out[i] = HalfToFloat(half[i]);
  return out;
}

// Uploads floats into a float32 tensor, or rounded to nearest even into a float16 one.
void UploadFloats(const Tensor& t, const std::vector<float>& data) {
  if (t.dtype != DType::kFloat16) {
    t.buffer->Upload(t.offset, data.data(), data.size() * sizeof(float));
    return;
  }
  std::vector<uint16_t> half(data.size());
  for (size_t i = 0; i < data.size(); ++i) half[i] = FloatToHalf(data[i]);
  t.buffer->Upload(t.offset, half.data(), half.size() * sizeof(uint16_t));
}

// Winograd F(FxF, 3x3): three dispatches over program-owned workspaces (see conv2d.glsl). The
// shaders index U, V and M with 32-bit element offsets (checked here).
void WinogradConv(Program& p, const char* optype, const char* stem, const Tensor& x,
                  const Tensor& w, const Tensor* bias, const Tensor& y, ConvPush push,
                  const Activation& act, const Tensor* residual) {
  const int64_t N = push.N, C = push.C, O = push.O;
  const int F = WinogradTile(N, push.OH, push.OW);
  const int64_t XI = (F + 2) * (F + 2);
  const int64_t T = N * ((push.OH + F - 1) / F) * ((push.OW + F - 1) / F), Tp = (T + 3) / 4 * 4;
  U32(XI * std::max({C * Tp, O * Tp, O * C}), optype, y, "Winograd workspace elements");
  // U is float32 even for float16 weights (--precision fp16): U rounded to float16 made errors of
  // 3% on a 17-channel F(4x4) case (the transforms' coefficients, up to 8 in A, amplify U's
  // rounding; test_conv_algos "float16 weights").
  const Tensor u = p.AddBuffer(y.name + ".winograd_u", DType::kFloat32, {XI, O, C});
  const Tensor v = p.AddBuffer(y.name + ".winograd_v", DType::kFloat32, {XI, C, Tp});
  const Tensor m = p.AddBuffer(y.name + ".winograd_m", DType::kFloat32, {XI, O, Tp});
  p.AddSetup([w, u, O, C, F, XI] {
    const std::vector<float> wf = ReadFloats(w);
    std::vector<float> uf(static_cast<size_t>(XI * O * C));
    WinogradWeights(wf.data(), O, C, F, uf.data());
    UploadFloats(u, uf);
  });
  // The residual is read by the output transform only (R's float view: STORE4 = 0 there).
  auto bind = [&](const Tensor& in, View in_view, View w_view, const Tensor& out, const Tensor* r) {
    std::vector<Binding> b = {InTexel(in, in_view), InTexel(u, w_view)};
    if (bias) b.push_back(InTexel(*bias));
    b.push_back(Out(out));
    b.push_back(ResidualBinding(r, in, false));
    return b;
  };
  // The transforms: one invocation per (channel, tile), channels packed together.
  LaunchAs(p, stem, "winograd in", bind(x, View::kTexelFloat, View::kTexelFloat, v, nullptr), push,
           {0u, 0u, 0u, 0u, uint32_t(F)},
           Grid1D(p.context(), U32(C * Tp, optype, y, "Winograd input invocations"), 64), y,
           KernelStem(stem, "wino_input"));
  ConvPush g = push;  // the GEMM: rows O, K = C, columns Tp, XI batches
  g.N = static_cast<uint32_t>(XI);
  g.OH = 1;
  g.OW = U32(Tp, optype, y, "tiles");
  const bool wvec4 = C % 4 == 0;
  uint32_t sg = 0;
  const std::string gemm_stem = SubgroupStem(p, KernelStem(stem, "wino_gemm"), &sg);
  LaunchAs(
      p, stem, "winograd gemm",
      bind(v, View::kTexelVec4, wvec4 ? View::kTexelVec4 : View::kTexelFloat, m, nullptr), g,
      ConvSpec({0u, wvec4 ? 1u : 0u, 0u, 1u, uint32_t(F)}, false, sg),
      {U32(((O + kConvBM - 1) / kConvBM * ((Tp + 7) / 8) + 63) / 64, optype, y, "grid x"), 1u, g.N},
      y, gemm_stem);
  LaunchAs(p, stem, "winograd out", bind(m, View::kTexelFloat, View::kTexelFloat, y, residual),
           push, ConvSpec({act.Spec(), 0u, 0u, 0u, uint32_t(F)}, residual != nullptr),
           Grid1D(p.context(), U32(O * T, optype, y, "Winograd output invocations"), 64), y,
           ActStem(KernelStem(stem, "wino_output"), act, optype, y));
}

void Conv(Program& p, const char* optype, const char* stem, const Tensor& x, const Tensor& w,
          const Tensor* bias, const Tensor& y, const Conv2dAttrs& a) {
  detail::CheckFloat(optype, y, {&x, &y});
  detail::CheckFloatWeight(optype, y, w);
  if (bias) detail::CheckFloat(optype, y, {bias});
  CheckRank(optype, y, x, 4, "input");
  CheckRank(optype, y, w, 4, "weight");
  CheckRank(optype, y, y, 4, "output");
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t O = w.dim(0), KH = w.dim(2), KW = w.dim(3), G = a.groups;
  if (G < 1 || C % G != 0 || O % G != 0 || w.dim(1) != C / G) {
    Fail(optype, y,
         "groups = " + std::to_string(G) + " does not fit input " + x.Describe() + " and weight " +
             w.Describe());
  }
  for (int64_t v : {a.strides[0], a.strides[1], a.dilation[0], a.dilation[1]}) {
    if (v < 1) Fail(optype, y, "strides and dilation must be >= 1");
  }
  for (int64_t v : a.padding) {
    if (v < 0) Fail(optype, y, "padding must be >= 0");
  }
  const int64_t OH =
      (H + a.padding[0] + a.padding[2] - a.dilation[0] * (KH - 1) - 1) / a.strides[0] + 1;
  const int64_t OW =
      (W + a.padding[1] + a.padding[3] - a.dilation[1] * (KW - 1) - 1) / a.strides[1] + 1;
  if (y.shape != Shape{N, O, OH, OW}) {
    Fail(optype, y,
         "output " + y.Describe() + " does not match the computed shape " +
             ShapeToString({N, O, OH, OW}));
  }
  if (bias && bias->numel() != O)
    Fail(optype, y, "bias " + bias->Describe() + " must have " + std::to_string(O) + " elements");
  const Tensor* res = a.residual;
  CheckResidual(optype, y, res);

  const int64_t Cg = C / G, Og = O / G, kdim = Cg * KH * KW;
  const bool depthwise = Cg == 1 && Og == 1;
  // The depthwise kernel fetches single weights: it needs the float view of W whatever KH*KW is
  // (a vec4 view made it read weight 4*i for weight i when KH*KW % 4 == 0, e.g. 2x2 or 1x4).
  const bool wvec4 = !depthwise && kdim % 4 == 0;
  const bool store4 = (OH * OW) % 4 == 0;
  ConvPush push{U32(N, optype, y, "N"),
                U32(C, optype, y, "C"),
                U32(H, optype, y, "H"),
                U32(W, optype, y, "W"),
                U32(O, optype, y, "O"),
                U32(OH, optype, y, "OH"),
                U32(OW, optype, y, "OW"),
                U32(KH, optype, y, "KH"),
                U32(KW, optype, y, "KW"),
                U32(a.strides[0], optype, y, "stride"),
                U32(a.strides[1], optype, y, "stride"),
                U32(a.padding[0], optype, y, "padding"),
                U32(a.padding[1], optype, y, "padding"),
                U32(a.dilation[0], optype, y, "dilation"),
                U32(a.dilation[1], optype, y, "dilation"),
                U32(G, optype, y, "groups"),
                a.act.min,
                a.act.max};
  // The 1-D convolutions (Conv1d, on [N, C, 1, W] views) keep the direct kernel.
  const bool conv2d =
      std::strcmp(stem, "nn/conv2d") == 0 || std::strcmp(stem, "msc/conv2d_bias") == 0;
  ConvAlgo algo = conv2d ? PickConvAlgo(p, w, C, O, KH, KW, G, a) : ConvAlgo::kDirect;
  // The depthwise kernel counts its invocations (images x channels x blocks) in 32 bits;
  // Winograd takes at most 65535 input and output channels; im2col's workspace is at most
  // kIm2colMaxBytes.
  if (algo == ConvAlgo::kIm2col && N * kdim * ((OH * OW + 3) / 4 * 4) * 4 > kIm2colMaxBytes) {
    algo = ConvAlgo::kDirect;
  }
  if ((algo == ConvAlgo::kDepthwise && N * C * ((OH + 1) / 2) * ((OW + 7) / 8) > 0xffffffffLL) ||
      (algo == ConvAlgo::kWinograd && std::max(C, O) > 65535)) {
    algo = ConvAlgo::kDirect;
  }
  if (algo == ConvAlgo::kWinograd) {
    WinogradConv(p, optype, stem, x, w, bias, y, push, a.act, res);
    return;
  }
  if (algo == ConvAlgo::kDepthwise) {
    // Rows of X as vec4 texels when they are whole texels (W % 4 == 0).
    const bool xvec4 = W % 4 == 0 && !AlgoOff("depthwise_vec4");
    std::vector<Binding> bindings = {InTexel(x, xvec4 ? View::kTexelVec4 : View::kTexelFloat),
                                     InTexel(w)};
    if (bias) bindings.push_back(InTexel(*bias));
    bindings.push_back(Out(y));
    bindings.push_back(ResidualBinding(res, x, OW % 4 == 0));  // STORE4 here: OW % 4 == 0
    const int64_t blocks = (OH + 1) / 2 * ((OW + 7) / 8);
    const uint32_t off = static_cast<uint32_t>((4 - a.padding[1] % 4) % 4);  // DW_OFF
    // One invocation per (plane, block), planes packed together (7x7 images: 4 blocks each).
    const uint64_t invocations = U32(N * C * blocks, optype, y, "depthwise invocations");
    LaunchAs(p, stem, "depthwise", std::move(bindings), push,
             {a.act.Spec(), 0u, 1u, OW % 4 == 0 ? 1u : 0u, 2u, uint32_t(KH), uint32_t(a.strides[0]),
              res ? 1u : 0u, 0u, xvec4 ? 1u : 0u, off},
             Grid1D(p.context(), invocations, 64), y,
             ActStem(KernelStem(stem, "depthwise"), a.act, optype, y));
    return;
  }
  if (algo == ConvAlgo::kIm2col) {
    const int64_t P = OH * OW, Pp = (P + 3) / 4 * 4;
    // Constant weights with K % 4 != 0 (the C = 3 stems: K = 147) are copied once into rows
    // zero-padded to Kp = K rounded up to 4, so that the GEMM reads them as vec4s.
    const bool pad_k = kdim % 4 != 0 && p.IsConstant(w);
    const int64_t Kp = pad_k ? (kdim + 3) / 4 * 4 : kdim;
    Tensor wk = w;
    if (pad_k) {
      wk = p.AddBuffer(y.name + ".weight_padded", w.dtype, {O, Kp});
      p.AddSetup([w, wk, O, kdim, Kp] {
        const std::vector<float> wf = ReadFloats(w);
        std::vector<float> padded(static_cast<size_t>(O * Kp), 0.0f);
        for (int64_t o = 0; o < O; ++o)
          std::copy(wf.begin() + o * kdim, wf.begin() + (o + 1) * kdim, padded.begin() + o * Kp);
        UploadFloats(wk, padded);
      });
    }
    const bool kvec4 = Kp % 4 == 0;
    const Tensor b = p.AddBuffer(y.name + ".im2col", DType::kFloat32, {N, Kp, Pp});
    std::vector<Binding> in = {InTexel(x), InTexel(w)};
    if (bias) in.push_back(InTexel(*bias));
    in.push_back(Out(b));
    in.push_back(ResidualBinding(nullptr, x, false));
    // One invocation per (row, 8 columns) of each image's B; WVEC4 = 1 here: rows padded to Kp.
    std::array<uint32_t, 3> grid = Grid1D(
        p.context(), U32(Kp * ((Pp + 7) / 8), optype, y, "im2col invocations per image"), 64);
    grid[2] = U32(N, optype, y, "grid z");
    LaunchAs(p, stem, "im2col", std::move(in), push, {0u, pad_k ? 1u : 0u}, grid, y,
             KernelStem(stem, "im2col"));
    ConvPush g = push;  // the GEMM: rows O, K = C*KH*KW, columns P
    g.C = U32(Kp, optype, y, "K");
    std::vector<Binding> mm = {InTexel(b, View::kTexelVec4),
                               InTexel(wk, kvec4 ? View::kTexelVec4 : View::kTexelFloat)};
    if (bias) mm.push_back(InTexel(*bias));
    mm.push_back(Out(y));
    mm.push_back(ResidualBinding(res, b, store4));
    const int64_t blocks = (O + kConvBM - 1) / kConvBM * ((P + 7) / 8);
    uint32_t sg = 0;
    const std::string gemm_stem = SubgroupStem(p, KernelStem(stem, "im2col_gemm"), &sg);
    LaunchAs(p, stem, "im2col gemm", std::move(mm), g,
             ConvSpec({a.act.Spec(), kvec4 ? 1u : 0u, 0u, store4 ? 1u : 0u}, res != nullptr, sg),
             {U32((blocks + 63) / 64, optype, y, "grid x"), 1u, U32(N, optype, y, "grid z")}, y,
             ActStem(gemm_stem, a.act, optype, y));
    return;
  }
  const bool gemm = algo == ConvAlgo::kGemm1x1;
  // 1x1 GEMM rows of X at unaligned offsets (P % 4 != 0) read as vec4 texels (conv2d.glsl XU4):
  // the view must reach X's last element as a whole texel, inside X's buffer.
  const bool xu4 = gemm && !store4 && x.offset + (x.bytes() + 15) / 16 * 16 <= x.buffer->size() &&
                   !AlgoOff("gemm1x1_xu4");
  std::vector<Binding> bindings = {
      InTexel(x, gemm && (store4 || xu4) ? View::kTexelVec4 : View::kTexelFloat),
      InTexel(w, wvec4 ? View::kTexelVec4 : View::kTexelFloat)};
  if (bias) bindings.push_back(InTexel(*bias));
  bindings.push_back(Out(y));
  bindings.push_back(ResidualBinding(res, x, store4));
  const uint64_t pixel_blocks = (OH * OW + 7) / 8;
  if (gemm) {
    const int64_t blocks = (O + kConvBM - 1) / kConvBM * static_cast<int64_t>(pixel_blocks);
    const std::array<uint32_t, 3> grid = {U32((blocks + 63) / 64, optype, y, "grid x"), 1u,
                                          U32(N, optype, y, "grid z")};
    uint32_t sg = 0;
    const std::string gemm_stem = SubgroupStem(p, KernelStem(stem, "gemm1x1"), &sg);
    LaunchAs(
        p, stem, "1x1 gemm", std::move(bindings), push,
        ConvSpec({a.act.Spec(), wvec4 ? 1u : 0u, 0u, store4 ? 1u : 0u}, res != nullptr, sg, xu4),
        grid, y, ActStem(gemm_stem, a.act, optype, y));
    return;
  }
  // One invocation per (channel block, pixel block), channel blocks packed together.
  std::array<uint32_t, 3> grid =
      Grid1D(p.context(),
             U32(G * ((Og + kConvBM - 1) / kConvBM) * static_cast<int64_t>(pixel_blocks), optype, y,
                 "direct conv invocations per image"),
             64);
  grid[2] = U32(N, optype, y, "grid z");
  LaunchAs(p, stem, depthwise ? "depthwise direct" : "direct", std::move(bindings), push,
           ConvSpec({a.act.Spec(), wvec4 ? 1u : 0u, depthwise ? 1u : 0u, store4 ? 1u : 0u},
                    res != nullptr),
           grid, y, ActStem(KernelStem(stem, "direct"), a.act, optype, y));
}

struct GemmPush {
  uint32_t M, N, K, batch_ndim;
  uint32_t bshape[4], a_bstride[4], b_bstride[4];
  float act_min, act_max;
  float norm_eps;
};

// Bits of gemm.glsl's NORM specialization constant.
constexpr uint32_t kNormOn = 1, kNormKeepY = 2, kNormGamma = 4, kNormBeta = 8;
// The most columns a fused layer_norm's row may have: ceil(N / 8) invocations in one workgroup,
// their 16 partial sums each in shared memory (16 KiB at 256).
constexpr int64_t kNormMaxColumns = 2048;

// Whether `norm` can run in the GEMM's own dispatch (see NormEpilogue): the register path, a norm
// over y's last axis holding the GEMM's N columns, an output of y's shape and dtype, float32
// parameters of N elements, and rows that fit one workgroup on this device.
bool NormInKernel(Program& p, const Tensor& y, const NormEpilogue& norm, bool tiled, int64_t N) {
  const Tensor& z = *norm.out;
  const int64_t rank = static_cast<int64_t>(y.shape.size());
  if (tiled || rank == 0 || y.shape.back() != N || N > kNormMaxColumns) return false;
  if (norm.axes.size() != 1 || (norm.axes[0] != -1 && norm.axes[0] != rank - 1)) return false;
  if (z.shape != y.shape || z.dtype != y.dtype) return false;
  for (const Tensor* t : {norm.gamma, norm.beta})
    if (t && (t->numel() != N || t->dtype != DType::kFloat32)) return false;
  const VkPhysicalDeviceLimits& lim = p.context().limits();
  const uint64_t local = static_cast<uint64_t>(((N + 7) / 8 + 15) / 16 * 16);  // at most
  return local <= lim.maxComputeWorkGroupInvocations && local <= lim.maxComputeWorkGroupSize[0] &&
         local * 16 * 4 + 16 * 4 + 2 * 64 * 16 * 4 <= lim.maxComputeSharedMemorySize;
}

// y[batch..., M, N] = a[batch_a..., M, K] @ b'[batch_b..., K, N] with the batch dims of a and b
// right-aligned against y's and broadcast (stride 0) where they are 1.
// y = act(... (+ bias) (+ *residual)); the residual is checked by the callers (CheckResidual).
void Gemm(Program& p, const char* optype, const char* stem, const Tensor& a, const Shape& a_batch,
          const Tensor& b, const Shape& b_batch, const Tensor* bias, const Tensor& y,
          const Shape& y_batch, int64_t M, int64_t N, int64_t K, bool trans_b, Activation act,
          bool trans_a, const Tensor* residual, const NormEpilogue* norm) {
  const size_t nb = y_batch.size();
  std::vector<int64_t> as(nb, 0), bs(nb, 0);
  int64_t a_step = M * K, b_step = K * N;
  for (size_t i = 0; i < nb; ++i) {
    const size_t d = nb - 1 - i;  // from the innermost batch dim
    if (i < a_batch.size()) {
      const int64_t dim = a_batch[a_batch.size() - 1 - i];
      as[d] = dim == 1 ? 0 : a_step;
      a_step *= dim;
    }
    if (i < b_batch.size()) {
      const int64_t dim = b_batch[b_batch.size() - 1 - i];
      bs[d] = dim == 1 ? 0 : b_step;
      b_step *= dim;
    }
  }
  detail::Collapsed c = detail::Collapse(y_batch, {as, bs}, optype, y);
  GemmPush push{};
  push.M = U32(M, optype, y, "M");
  push.N = U32(N, optype, y, "N");
  push.K = U32(K, optype, y, "K");
  push.batch_ndim = 4;
  int64_t batch = 1;
  for (int d = 0; d < 4; ++d) {
    push.bshape[d] = U32(c.shape[d], optype, y, "batch dim");
    push.a_bstride[d] = U32(c.strides[0][d], optype, y, "batch stride");
    push.b_bstride[d] = U32(c.strides[1][d], optype, y, "batch stride");
    batch *= c.shape[d];
  }
  push.act_min = act.min;
  push.act_max = act.max;
  // GPUs: shared-memory tiles of 64x64 (16x16 invocations); CPU devices: 16x8 register blocks.
  const bool tiled = p.context().use_tiled_kernels();
  uint32_t sg = 0;
  const std::string kernel =
      ActStem(tiled ? std::string(stem) : SubgroupStem(p, stem, &sg), act, optype, y);
  const bool vec4 = !tiled && !trans_a && K % 4 == 0 && N % 4 == 0;
  const View view = vec4 ? View::kTexelVec4 : View::kTexelFloat;
  if (norm) {
    const Tensor* z = norm->out;
    if (!z) Fail(optype, y, "layer_norm epilogue without an output tensor");
    if (detail::SharesBytes(*z, y))
      Fail(optype, y, "layer_norm epilogue output " + z->Describe() + " shares bytes with y");
    if (residual && detail::SharesBytes(*z, *residual))
      Fail(optype, y,
           "layer_norm epilogue output " + z->Describe() + " shares bytes with the residual");
  }
  const bool fuse_norm = norm && NormInKernel(p, y, *norm, tiled, N);
  uint32_t norm_bits = 0;
  if (fuse_norm) {
    norm_bits = kNormOn | (norm->keep_y ? kNormKeepY : 0u) | (norm->gamma ? kNormGamma : 0u) |
                (norm->beta ? kNormBeta : 0u);
    push.norm_eps = static_cast<float>(norm->epsilon);
  }
  // The register path: 64-wide workgroups; with the fused norm one workgroup per row block,
  // ceil(N / 8) invocations rounded up to whole subgroups (of at least 8 lanes).
  const int64_t lanes = std::max<int64_t>(8, sg);
  const uint32_t local_x = tiled ? 16u
                           : fuse_norm
                               ? static_cast<uint32_t>(((N + 7) / 8 + lanes - 1) / lanes * lanes)
                               : 64u;
  std::vector<Binding> bindings = {InTexel(a, view), InTexel(b, view)};
  if (bias) bindings.push_back(InTexel(*bias));
  bindings.push_back(Out(y));
  bindings.push_back(ResidualBinding(residual, a, vec4));
  // Z, Gamma, Beta (read and written with NORM only; else views of y and a).
  bindings.push_back(Out(fuse_norm ? *norm->out : y));
  bindings.push_back(ResidualBinding(fuse_norm ? norm->gamma : nullptr, a, false));
  bindings.push_back(ResidualBinding(fuse_norm ? norm->beta : nullptr, a, false));
  const std::array<uint32_t, 3> grid =
      tiled ? std::array<uint32_t, 3>{U32((N + 63) / 64, optype, y, "grid x"),
                                      U32((M + 63) / 64, optype, y, "grid y"),
                                      U32(batch, optype, y, "grid z")}
            : std::array<uint32_t, 3>{
                  U32(((N + 7) / 8 + local_x - 1) / local_x, optype, y, "grid x"),
                  U32((M + 15) / 16, optype, y, "grid y"), U32(batch, optype, y, "grid z")};
  detail::LaunchFloat(p, kernel.c_str(), std::move(bindings), push,
                      {trans_b ? 1u : 0u, act.Spec(), vec4 ? 1u : 0u, tiled ? 1u : 0u, local_x,
                       tiled ? 16u : 1u, trans_a ? 1u : 0u, residual ? 1u : 0u, sg, norm_bits},
                      grid, y);
  if (norm && !fuse_norm)
    LayerNorm(p, y, norm->gamma, norm->beta, *norm->out, norm->axes, norm->epsilon);
}

void LinearLike(Program& p, const char* optype, const char* stem, const Tensor& x, const Tensor& w,
                const Tensor* bias, const Tensor& y, Activation act, const Tensor* residual,
                const NormEpilogue* norm) {
  detail::CheckFloat(optype, y, {&x, &y});
  detail::CheckFloatWeight(optype, y, w);
  if (bias) detail::CheckFloat(optype, y, {bias});
  CheckRank(optype, y, w, 2, "weight");
  if (x.shape.empty() || y.shape.empty()) Fail(optype, y, "input and output need at least one dim");
  const int64_t N = w.dim(0), K = w.dim(1);
  if (x.dim(-1) != K)
    Fail(optype, y, "input " + x.Describe() + " does not match weight " + w.Describe() + " (K)");
  Shape expect = x.shape;
  expect.back() = N;
  if (y.shape != expect)
    Fail(optype, y, "output " + y.Describe() + " does not match " + ShapeToString(expect));
  if (bias && bias->numel() != N)
    Fail(optype, y, "bias " + bias->Describe() + " must have " + std::to_string(N) + " elements");
  CheckResidual(optype, y, residual);
  Gemm(p, optype, stem, x, {}, w, {}, bias, y, {}, x.numel() / K, N, K, true, act, false, residual,
       norm);
}

void MatmulLike(Program& p, const char* optype, const char* stem, const Tensor& a, const Tensor& b,
                const Tensor& y, bool trans_b, Activation act, bool trans_a = false,
                const Tensor* residual = nullptr, const NormEpilogue* norm = nullptr) {
  detail::CheckFloat(optype, y, {&a, &b, &y});
  if (a.shape.empty() || b.shape.empty()) Fail(optype, y, "operands must have at least one dim");
  const bool a1 = a.shape.size() == 1, b1 = b.shape.size() == 1;
  trans_a = trans_a && !a1;
  const int64_t M = a1 ? 1 : (trans_a ? a.dim(-1) : a.dim(-2));
  const int64_t K = trans_a ? a.dim(-2) : a.dim(-1);
  const int64_t N = b1 ? 1 : (trans_b ? b.dim(-2) : b.dim(-1));
  const int64_t Kb = b1 ? b.dim(0) : (trans_b ? b.dim(-1) : b.dim(-2));
  if (K != Kb) Fail(optype, y, "inner dims differ: " + a.Describe() + " @ " + b.Describe());
  const Shape a_batch(a.shape.begin(), a.shape.end() - (a1 ? 1 : 2));
  const Shape b_batch(b.shape.begin(), b.shape.end() - (b1 ? 1 : 2));
  Shape batch;
  if (!detail::BroadcastShapes(a_batch, b_batch, &batch)) {
    Fail(optype, y, "batch dims of " + a.Describe() + " and " + b.Describe() + " do not broadcast");
  }
  Shape expect = batch;
  if (!a1) expect.push_back(M);
  if (!b1) expect.push_back(N);
  if (y.shape != expect)
    Fail(optype, y, "output " + y.Describe() + " does not match " + ShapeToString(expect));
  CheckResidual(optype, y, residual);
  Gemm(p, optype, stem, a, a_batch, b, b_batch, nullptr, y, batch, M, N, K, trans_b && !b1, act,
       trans_a, residual, norm);
}

void Conv1dImpl(Program& p, const char* op, const char* stem, const Tensor& x, const Tensor& w,
                const Tensor* bias, const Tensor& y, const Conv1dAttrs& a) {
  detail::CheckFloat(op, y, {&x, &y});
  detail::CheckFloatWeight(op, y, w);
  CheckRank(op, y, x, 3, "input");
  CheckRank(op, y, w, 3, "weight");
  CheckRank(op, y, y, 3, "output");
  if (a.stride < 1 || a.dilation < 1) Fail(op, y, "strides and dilation must be >= 1");
  if (a.padding[0] < 0 || a.padding[1] < 0) Fail(op, y, "padding must be >= 0");
  const int64_t N = x.dim(0), W = x.dim(2), O = w.dim(0), KW = w.dim(2);
  const int64_t OW = (W + a.padding[0] + a.padding[1] - a.dilation * (KW - 1) - 1) / a.stride + 1;
  if (y.shape != Shape{N, O, OW}) {
    Fail(op, y,
         "output " + y.Describe() + " does not match the computed shape " +
             ShapeToString({N, O, OW}));
  }
  Conv(p, op, stem, detail::Reshaped(x, {N, x.dim(1), 1, W}),
       detail::Reshaped(w, {O, w.dim(1), 1, KW}), bias, detail::Reshaped(y, {N, O, 1, OW}),
       Conv2dAttrs{
           {1, a.stride}, {0, a.padding[0], 0, a.padding[1]}, {1, a.dilation}, a.groups, a.act});
}

}  // namespace

void Conv2d(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dAttrs& a) {
  Conv(p, "nn.conv2d", "nn/conv2d", x, w, nullptr, y, a);
}

void Conv2dBias(Program& p, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                const Conv2dAttrs& a) {
  Conv(p, "msc.conv2d_bias", "msc/conv2d_bias", x, w, &bias, y, a);
}

void Conv1d(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, const Conv1dAttrs& a) {
  Conv1dImpl(p, "nn.conv1d", "nn/conv1d", x, w, nullptr, y, a);
}

void Conv1dBias(Program& p, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                const Conv1dAttrs& a) {
  Conv1dImpl(p, "msc.conv1d_bias", "msc/conv1d_bias", x, w, &bias, y, a);
}

void Linear(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, Activation act,
            const Tensor* residual, const NormEpilogue& norm) {
  LinearLike(p, "msc.linear", "msc/linear", x, w, nullptr, y, act, residual,
             norm.out ? &norm : nullptr);
}

void LinearBias(Program& p, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                Activation act, const Tensor* residual, const NormEpilogue& norm) {
  LinearLike(p, "msc.linear_bias", "msc/linear_bias", x, w, &bias, y, act, residual,
             norm.out ? &norm : nullptr);
}

void Dense(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, Activation act,
           const Tensor* residual, const NormEpilogue& norm) {
  LinearLike(p, "nn.dense", "nn/dense", x, w, nullptr, y, act, residual,
             norm.out ? &norm : nullptr);
}

void Matmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, bool transpose_b,
            Activation act, const Tensor* residual, const NormEpilogue& norm) {
  MatmulLike(p, "matmul", "matmul", a, b, y, transpose_b, act, false, residual,
             norm.out ? &norm : nullptr);
}

void BatchMatmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, bool transpose_b) {
  detail::CheckRank("nn.batch_matmul", y, a, 3, "input a");
  detail::CheckRank("nn.batch_matmul", y, b, 3, "input b");
  MatmulLike(p, "nn.batch_matmul", "nn/batch_matmul", a, b, y, transpose_b, {});
}

void BatchMatmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, bool transpose_a,
                 bool transpose_b) {
  const char* op = "nn.batch_matmul";
  CheckRank(op, y, a, 3, "input a");
  CheckRank(op, y, b, 3, "input b");
  MatmulLike(p, op, "nn/batch_matmul", a, b, y, transpose_b, {}, transpose_a);
}

void MscMatmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, Activation act) {
  MatmulLike(p, "msc.matmul", "msc/matmul", a, b, y, false, act, false);
}

}  // namespace ops
}  // namespace msc_vk
