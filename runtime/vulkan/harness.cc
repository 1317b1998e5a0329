#include "harness.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>

#include "bench.h"
#include "context.h"
#include "dtype.h"
#include "error.h"
#include "model.h"
#include "safetensors.h"

namespace msc_vk {
namespace {

long ParseInt(const std::string& opt, const std::string& v, long min) {
  char* end = nullptr;
  long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || x < min) {
    throw Error("option " + opt + " expects an integer >= " + std::to_string(min) + ", got '" + v +
                "'");
  }
  return x;
}

double ParseDouble(const std::string& opt, const std::string& v) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(x >= 0)) {
    throw Error("option " + opt + " expects a non-negative number, got '" + v + "'");
  }
  return x;
}

// Golden data: a directory with inputs.safetensors + outputs.safetensors (as python/msc_export
// writes them), or one safetensors file holding both.
struct Golden {
  std::unique_ptr<SafetensorsFile> inputs, outputs;
};

Golden OpenGolden(const std::string& path) {
  Golden g;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    g.inputs =
        std::make_unique<SafetensorsFile>(path + "/inputs.safetensors", "golden inputs file");
    g.outputs =
        std::make_unique<SafetensorsFile>(path + "/outputs.safetensors", "golden outputs file");
  } else {
    g.inputs = std::make_unique<SafetensorsFile>(path, "golden file");
    g.outputs = std::make_unique<SafetensorsFile>(path, "golden file");
  }
  return g;
}

void LoadInputs(Model& model, const SafetensorsFile& file) {
  for (size_t i = 0; i < model.inputs().size(); ++i) {
    const Tensor& t = model.inputs()[i];
    std::vector<uint8_t> data(t.bytes());
    file.Read(t.name, t.dtype, t.shape, data.data(), data.size());
    model.SetInput(i, data.data(), data.size());
  }
}

constexpr double kMinGoldenMagnitude = 1e-3;

// Largest finite |x| of n float32 / float16 values (0 when none is finite).
double MaxFiniteMagnitude(DType dtype, const uint8_t* data, size_t n) {
  double best = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double v;
    if (dtype == DType::kFloat32) {
      float f;
      std::memcpy(&f, data + 4 * i, 4);
      v = f;
    } else {
      uint16_t h;
      std::memcpy(&h, data + 2 * i, 2);
      v = HalfToFloat(h);
    }
    if (std::isfinite(v)) best = std::max(best, std::fabs(v));
  }
  return best;
}

int GoldenCheck(Model& model, const MainOptions& opt) {
  Golden golden = OpenGolden(opt.golden);
  LoadInputs(model, *golden.inputs);
  model.Run();
  bool pass = true;
  for (size_t i = 0; i < model.outputs().size(); ++i) {
    const Tensor& t = model.outputs()[i];
    std::vector<uint8_t> actual(t.bytes()), expected(t.bytes());
    model.GetOutput(i, actual.data(), actual.size());
    golden.outputs->Read(t.name, t.dtype, t.shape, expected.data(), expected.size());
    // float32 / float16 within the tolerance, every other dtype (ints, bool) exactly.
    CompareResult r;
    if (t.dtype == DType::kFloat32) {
      r = CompareFloat32(t.name, reinterpret_cast<const float*>(actual.data()),
                         reinterpret_cast<const float*>(expected.data()), t.numel(), opt.tol);
    } else if (t.dtype == DType::kFloat16) {
      r = CompareFloat16(t.name, reinterpret_cast<const uint16_t*>(actual.data()),
                         reinterpret_cast<const uint16_t*>(expected.data()), t.numel(), opt.tol);
    } else {
      r = CompareExact(t.name, actual.data(), expected.data(), t.numel(), DTypeSize(t.dtype));
    }
    std::printf("%s\n", r.Summary().c_str());
    pass = pass && r.pass();
    // A float golden output whose largest finite |value| is at most kMinGoldenMagnitude cannot
    // tell a right result from a wrong one at the tolerance: the case itself is invalid.
    if (t.dtype == DType::kFloat32 || t.dtype == DType::kFloat16) {
      const double magnitude = MaxFiniteMagnitude(t.dtype, expected.data(), t.numel());
      if (t.numel() > 0 && !(magnitude > kMinGoldenMagnitude)) {
        std::printf(
            "output '%s': invalid golden case: max |expected| = %.3e <= %g (degenerate float "
            "output)\n",
            t.name.c_str(), magnitude, kMinGoldenMagnitude);
        pass = false;
      }
    }
  }
  std::printf("program: %zu dispatches\n", model.program().num_dispatches());
  std::printf("golden check: %s\n", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}

// --save-outputs: the outputs on the golden inputs, written to opt.save_outputs.
void SaveOutputs(Model& model, const MainOptions& opt) {
  LoadInputs(model, *OpenGolden(opt.golden).inputs);
  model.Run();
  std::vector<SafetensorsTensor> outputs;
  for (size_t i = 0; i < model.outputs().size(); ++i) {
    const Tensor& t = model.outputs()[i];
    SafetensorsTensor out{t.name, t.dtype, t.shape, std::vector<uint8_t>(t.bytes())};
    model.GetOutput(i, out.data.data(), out.data.size());
    outputs.push_back(std::move(out));
  }
  WriteSafetensors(opt.save_outputs, outputs);
  std::printf("outputs written to %s\n", opt.save_outputs.c_str());
}

void Bench(Model& model, const MainOptions& opt) {
  bool have_golden = false;
  try {
    LoadInputs(model, *OpenGolden(opt.golden).inputs);
    have_golden = true;
  } catch (const Error& e) {
    std::printf("note: benchmarking with zero inputs (%s)\n", e.what());
  }
  if (!have_golden) {
    for (size_t i = 0; i < model.inputs().size(); ++i) {
      std::vector<uint8_t> zeros(model.inputs()[i].bytes());
      model.SetInput(i, zeros.data(), zeros.size());
    }
  }
  // Warm-up first, then the profile restarts: --profile reports the timed runs only (the first
  // run also compiles shaders on llvmpipe and runs Program setup work).
  for (int i = 0; i < opt.warmup; ++i) model.Run();
  model.program().ResetProfile();
  BenchStats s = Benchmark([&] { model.Run(); }, 0, opt.bench);
  std::printf("bench: %s\n", s.Summary().c_str());
}

// The entries of a per-stem timing map (Program::Profile / PipelineStats: each has total_ns), most
// time first, and *total = the sum of their total_ns.
template <class Entry>
std::vector<std::pair<std::string, Entry>> MostTimeFirst(const std::map<std::string, Entry>& stats,
                                                         double* total) {
  std::vector<std::pair<std::string, Entry>> rows(stats.begin(), stats.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.total_ns > b.second.total_ns; });
  *total = 0;
  for (const auto& r : rows) *total += r.second.total_ns;
  return rows;
}

// "profile: ..." then one line per op type, most GPU time first:
//   "  nn/conv2d            20 dispatches    12.345 ms   45.6%"
void PrintProfile(const Program& program) {
  const size_t runs = program.profiled_runs();
  if (runs == 0) return;
  double total = 0;
  const auto rows = MostTimeFirst(program.Profile(), &total);
  std::printf(
      "profile: GPU time per op type, mean of %zu run(s) (timestamps; each dispatch with "
      "the barrier before it): %.3f ms\n",
      runs, total / runs / 1e6);
  for (const auto& [stem, e] : rows)
    std::printf("  %-28s %4zu dispatches %10.3f ms %6.1f%%\n", stem.c_str(), e.dispatches,
                e.total_ns / runs / 1e6, total > 0 ? 100.0 * e.total_ns / total : 0.0);
}

// "pipelines: ..." then one line per shader stem, most creation time first (start-up):
//   "  nn/conv2d@gemm1x1+sg                    3 pipelines    120.000 ms   14.8%"
// `build_ms`: the whole model build (weights, buffers, pipelines), for scale.
void PrintPipelines(const Program& program, double build_ms) {
  double total = 0;
  const auto rows = MostTimeFirst(program.PipelineStats(), &total);
  size_t count = 0;
  for (const auto& r : rows) count += r.second.pipelines;
  std::printf("pipelines: %zu created in %.3f ms on the host (model build: %.3f ms), per shader:\n",
              count, total / 1e6, build_ms);
  for (const auto& [stem, e] : rows)
    std::printf("  %-36s %4zu pipelines %10.3f ms %6.1f%%\n", stem.c_str(), e.pipelines,
                e.total_ns / 1e6, total > 0 ? 100.0 * e.total_ns / total : 0.0);
}

}  // namespace

std::string Usage(const std::string& program) {
  return "usage: " + program +
         " [--device INDEX] [--weights PATH] [--golden PATH] [--atol X] [--rtol X]\n"
         "       [--bench N] [--warmup N] [--profile] [--validation] [--verbose] [--list-devices]\n"
         "       [--save-outputs FILE]\n"
         "Runs the golden check (default) or N timed inferences (--bench N); --profile adds the\n"
         "GPU time per op type, from timestamp queries around every dispatch, and the host time\n"
         "spent creating pipelines per shader (start-up). --save-outputs\n"
         "writes the outputs on the golden inputs to FILE (safetensors) instead of checking them.\n"
         "Environment: MSC_VK_DEVICE=INDEX selects the device when --device is absent.\n";
}

MainOptions ParseMainOptions(const std::vector<std::string>& args, const MainOptions& defaults) {
  MainOptions o = defaults;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw Error("option " + a + " needs a value");
      return args[++i];
    };
    if (a == "--device")
      o.device = static_cast<int>(ParseInt(a, value(), 0));
    else if (a == "--bench")
      o.bench = static_cast<int>(ParseInt(a, value(), 1));
    else if (a == "--warmup")
      o.warmup = static_cast<int>(ParseInt(a, value(), 0));
    else if (a == "--weights")
      o.weights = value();
    else if (a == "--golden")
      o.golden = value();
    else if (a == "--atol")
      o.tol.atol = ParseDouble(a, value());
    else if (a == "--rtol")
      o.tol.rtol = ParseDouble(a, value());
    else if (a == "--validation")
      o.validation = true;
    else if (a == "--verbose")
      o.verbose = true;
    else if (a == "--profile")
      o.profile = true;
    else if (a == "--list-devices")
      o.list_devices = true;
    else if (a == "--save-outputs")
      o.save_outputs = value();
    else if (a == "-h" || a == "--help")
      o.help = true;
    else
      throw Error("unknown option '" + a + "'");
  }
  if (o.bench > 0 && !o.save_outputs.empty())
    throw Error("options --bench and --save-outputs exclude each other");
  return o;
}

int RunMain(int argc, char** argv, const BuildFn& build, const MainOptions& defaults) {
  const std::string program = argc > 0 ? argv[0] : "model";
  try {
    MainOptions opt = ParseMainOptions(std::vector<std::string>(argv, argv + argc), defaults);
    if (opt.help) {
      std::printf("%s", Usage(program).c_str());
      return 0;
    }
    if (opt.list_devices) {
      for (const DeviceInfo& d : ListDevices())
        std::printf("%d: %s (%s)\n", d.index, d.name.c_str(), DeviceTypeName(d.type));
      return 0;
    }
    ContextOptions copt;
    copt.device_index = opt.device;
    copt.validation = opt.validation;
    copt.verbose = opt.verbose;
    Context ctx(copt);
    std::printf("device: %s\n", ctx.Describe().c_str());
    const auto build_start = std::chrono::steady_clock::now();
    std::unique_ptr<Model> model = build(ctx, opt.weights);
    const double build_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - build_start)
            .count();
    if (opt.profile) model->program().EnableProfiling();
    int status = 0;
    if (opt.bench > 0) {
      Bench(*model, opt);
    } else if (!opt.save_outputs.empty()) {
      SaveOutputs(*model, opt);
    } else {
      status = GoldenCheck(*model, opt);
    }
    if (opt.profile) {
      PrintProfile(model->program());
      PrintPipelines(model->program(), build_ms);
    }
    model.reset();
    if (ctx.message_count() > 0) {
      std::printf("FAIL: %zu Vulkan validation message(s) reported\n", ctx.message_count());
      status = 1;
    }
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}

}  // namespace msc_vk
