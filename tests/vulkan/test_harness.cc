// safetensors reader, weights, golden comparator, bench statistics and RunMain (the generated
// projects' main) including its error paths.
#include <sys/stat.h>
#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>

#include "example_model.h"
#include "test_util.h"

using msc_vk::DType;

namespace {

std::vector<uint8_t> Bytes(const std::vector<float>& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  return {p, p + v.size() * 4};
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

// Raw safetensors file from a header string and a data section.
void WriteRaw(const std::string& path, const std::string& header, size_t data_bytes) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((uint64_t{header.size()} >> (8 * i)) & 0xff);
  WriteFile(path, out + header + std::string(data_bytes, '\0'));
}

// Captures what `fn` writes to stdout and stderr (file descriptors 1 and 2).
struct Captured {
  int status;
  std::string out, err;
};
template <class F>
Captured Capture(F&& fn) {
  const std::string out_path = vkt::TempPath("stdout"), err_path = vkt::TempPath("stderr");
  std::fflush(stdout);
  std::fflush(stderr);
  const int old_out = dup(1), old_err = dup(2);
  FILE* fo = std::fopen(out_path.c_str(), "w");
  FILE* fe = std::fopen(err_path.c_str(), "w");
  dup2(fileno(fo), 1);
  dup2(fileno(fe), 2);
  Captured c{fn(), "", ""};
  std::fflush(stdout);
  std::fflush(stderr);
  dup2(old_out, 1);
  dup2(old_err, 2);
  close(old_out);
  close(old_err);
  std::fclose(fo);
  std::fclose(fe);
  c.out = ReadFile(out_path);
  c.err = ReadFile(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return c;
}

struct ExampleFiles {
  std::string weights = vkt::TempPath("example_weights.safetensors");
  std::string golden = vkt::TempPath("example_golden.safetensors");
  std::map<std::string, std::vector<float>> w;
  std::vector<float> input, probs;

  ExampleFiles() {
    w["conv1.weight"] = vkt::Random(8 * 3 * 3 * 3, 1);
    w["conv1.bias"] = vkt::Random(8, 2);
    w["dw.weight"] = vkt::Random(8 * 9, 3);
    w["fc.weight"] = vkt::Random(80, 4, -2, 2);
    w["fc.bias"] = vkt::Random(10, 5);
    input = vkt::Random(3 * 16 * 16, 6);
    probs = ExampleModelReference(input, w);
    msc_vk::WriteSafetensors(
        weights, {{"conv1.weight", DType::kFloat32, {8, 3, 3, 3}, Bytes(w["conv1.weight"])},
                  {"conv1.bias", DType::kFloat32, {8}, Bytes(w["conv1.bias"])},
                  {"dw.weight", DType::kFloat32, {8, 1, 3, 3}, Bytes(w["dw.weight"])},
                  {"fc.weight", DType::kFloat32, {10, 8}, Bytes(w["fc.weight"])},
                  {"fc.bias", DType::kFloat32, {10}, Bytes(w["fc.bias"])}});
    WriteGolden(golden, probs);
  }
  ~ExampleFiles() {
    std::remove(weights.c_str());
    std::remove(golden.c_str());
  }
  void WriteGolden(const std::string& path, const std::vector<float>& out) const {
    msc_vk::WriteSafetensors(path, {{"input", DType::kFloat32, {1, 3, 16, 16}, Bytes(input)},
                                    {"probs", DType::kFloat32, {1, 10}, Bytes(out)}});
  }
  Captured Main(std::vector<std::string> args) const {
    args.insert(args.begin(), "example_model");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(&a[0]);
    msc_vk::MainOptions defaults;
    defaults.weights = weights;
    defaults.golden = golden;
    return Capture([&] {
      return msc_vk::RunMain(static_cast<int>(argv.size()), argv.data(), BuildExampleModel,
                             defaults);
    });
  }
};

}  // namespace

TEST_CASE("safetensors: round trip and validation errors name the file and tensor") {
  const std::string path = vkt::TempPath("t.safetensors");
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  msc_vk::WriteSafetensors(path, {{"a", DType::kFloat32, {2, 3}, Bytes(a)},
                                  {"b", DType::kInt64, {2}, std::vector<uint8_t>(16, 7)}});
  {
    msc_vk::SafetensorsFile f(path, "weights file");
    CHECK(f.Names() == std::vector<std::string>{"a", "b"});
    std::vector<float> got(6);
    f.Read("a", DType::kFloat32, {2, 3}, got.data(), 24);
    CHECK(got == a);
    CHECK(f.ReadBytes("b") == std::vector<uint8_t>(16, 7));
    const std::string where = "weights file '" + path + "': tensor 'a'";
    vkt::ExpectError(
        [&] {
          f.Read("a", DType::kFloat16, {2, 3}, got.data(), 12);
        },
        where + " has dtype F32 (float32), expected F16 (float16)");
    vkt::ExpectError(
        [&] {
          f.Read("a", DType::kFloat32, {3, 2, 1}, got.data(), 24);
        },
        where + " has shape [2, 3], expected [3, 2, 1]");
    vkt::ExpectError([&] { f.Entry("c"); },
                     "weights file '" + path + "' has no tensor 'c' (it has 2 tensors: a, b)");
  }
  const std::string full = ReadFile(path);
  WriteFile(path, full.substr(0, full.size() - 4));
  vkt::ExpectError([&] { msc_vk::SafetensorsFile f(path, "weights file"); },
                   "tensor 'b': data_offsets [24, 40] lie outside the data section of 36 bytes "
                   "(truncated file?)");
  WriteFile(path, full.substr(0, 20));
  vkt::ExpectError([&] { msc_vk::SafetensorsFile f(path); },
                   "exceeds the file size of 20 bytes (truncated or not a safetensors file)");
  WriteFile(path, "abc");
  vkt::ExpectError([&] { msc_vk::SafetensorsFile f(path); },
                   "3 bytes is too short for a safetensors header");
  WriteRaw(path, "{not json", 0);
  vkt::ExpectError([&] { msc_vk::SafetensorsFile f(path); }, "header is not valid JSON");
  WriteRaw(path, R"({"q":{"dtype":"Q8","shape":[2],"data_offsets":[0,2]}})", 2);
  vkt::ExpectError([&] { msc_vk::SafetensorsFile f(path); },
                   "tensor 'q': unsupported dtype \"Q8\"");
  WriteRaw(path, R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 20);
  vkt::ExpectError([&] { msc_vk::SafetensorsFile f(path); },
                   "tensor 'w': float32 [2, 3] needs 24 bytes but data_offsets cover 20");
  WriteRaw(path, R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8);
  vkt::ExpectError([&] { msc_vk::SafetensorsFile f(path); },
                   "has a non-integer or negative dimension");
  std::remove(path.c_str());
  vkt::ExpectError([&] { msc_vk::SafetensorsFile f(path, "golden file"); },
                   "golden file '" + path + "' not found or not readable");
}

TEST_CASE("Weights: uploaded once; wrong dtype or size names the file and tensor") {
  const std::string path = vkt::TempPath("w.safetensors");
  const auto w = vkt::Random(12, 1);
  msc_vk::WriteSafetensors(path, {{"fc.weight", DType::kFloat32, {3, 4}, Bytes(w)},
                                  {"fc.bias", DType::kFloat16, {3}, std::vector<uint8_t>(6, 0)}});
  for (msc_vk::Context* ctx : {&vkt::Ctx(), &vkt::StagingCtx()}) {
    msc_vk::Weights ws(*ctx, path, {{"fc.weight", DType::kFloat32, {3, 4}}});
    const msc_vk::Tensor& t = ws.Get("fc.weight");
    std::vector<float> back(12);
    t.buffer->Download(t.offset, back.data(), t.bytes());
    CHECK(back == w);
    vkt::ExpectError([&] { ws.Get("nope"); }, "weight 'nope' was not declared");
    vkt::ExpectError(
        [&] {
          msc_vk::Weights bad(*ctx, path, {{"fc.bias", DType::kFloat32, {3}}});
        },
        "weights file '" + path +
            "': tensor 'fc.bias' has dtype F16 (float16), expected F32 (float32)");
    vkt::ExpectError(
        [&] {
          msc_vk::Weights bad(*ctx, path, {{"fc.weight", DType::kFloat32, {4, 4}}});
        },
        "tensor 'fc.weight' has shape [3, 4], expected [4, 4]");
    vkt::ExpectNoValidationMessages(*ctx);
  }
  std::remove(path.c_str());
}

TEST_CASE("golden comparator: |a - b| <= atol + rtol * |b|, NaN matches only NaN") {
  const float inf = INFINITY, nan = NAN;
  std::vector<float> e = {1, 2, -3, 1000, 0, inf};
  std::vector<float> a = {1.0005f, 2, -3.001f, 1000.9f, 0.0009f, inf};
  msc_vk::CompareResult r = msc_vk::CompareFloat32("y", a.data(), e.data(), a.size());
  CHECK(r.pass());
  CHECK(r.max_abs_error == doctest::Approx(0.9).epsilon(1e-3));
  CHECK(r.Summary().find("output 'y' (6 values): max_abs=0.9") == 0);
  a[4] = 0.0011f;
  r = msc_vk::CompareFloat32("y", a.data(), e.data(), a.size());
  CHECK(!r.pass());
  CHECK(r.mismatches == 1);
  CHECK(r.worst_index == 4);
  CHECK(r.Summary().find("FAIL; 1 of 6 values outside tolerance, worst at index 4") !=
        std::string::npos);
  a[4] = 0;
  a[0] = nan;
  CHECK(!msc_vk::CompareFloat32("y", a.data(), e.data(), a.size()).pass());
  e[0] = nan;  // NaN where NaN is expected (sqrt of a negative): a match, as assert_allclose
  CHECK(msc_vk::CompareFloat32("y", a.data(), e.data(), a.size()).pass());
  a[0] = 1;  // a number where NaN is expected: a mismatch
  CHECK(!msc_vk::CompareFloat32("y", a.data(), e.data(), a.size()).pass());
  e[0] = 1;
  a[5] = -inf;
  CHECK(!msc_vk::CompareFloat32("y", a.data(), e.data(), a.size()).pass());
  a[4] = 0.0009f;
  CHECK(msc_vk::CompareFloat32("y", a.data(), e.data(), 5).pass());
  CHECK(!msc_vk::CompareFloat32("y", a.data(), e.data(), 5, {1e-6, 1e-3}).pass());
  const uint8_t x[] = {1, 2, 3}, y[] = {1, 2, 4};
  CHECK(msc_vk::CompareExact("i", x, y, 3, 1).mismatches == 1);
}

TEST_CASE("bench statistics: nearest-rank p50 / p90") {
  msc_vk::BenchStats s = msc_vk::LatencyStats({5, 1, 4, 2, 3, 6, 7, 8, 9, 10});
  CHECK(s.p50_ms == 5);
  CHECK(s.p90_ms == 9);
  CHECK(s.min_ms == 1);
  CHECK(s.max_ms == 10);
  CHECK(s.mean_ms == doctest::Approx(5.5));
  int calls = 0;
  s = msc_vk::Benchmark([&] { ++calls; }, 2, 5);
  CHECK(calls == 7);
  CHECK(s.iterations == 5);
}

TEST_CASE("main options parsing") {
  msc_vk::MainOptions d;
  d.weights = "w";
  msc_vk::MainOptions o = msc_vk::ParseMainOptions(
      {"m", "--device", "1", "--bench", "20", "--atol", "1e-4", "--golden", "g"}, d);
  CHECK(o.device == 1);
  CHECK(o.bench == 20);
  CHECK(o.tol.atol == doctest::Approx(1e-4));
  CHECK(o.tol.rtol == doctest::Approx(1e-3));
  CHECK(o.weights == "w");
  CHECK(o.golden == "g");
  vkt::ExpectError(
      [&] {
        msc_vk::ParseMainOptions({"m", "--bench", "x"}, d);
      },
      "option --bench expects an integer >= 1, got 'x'");
  vkt::ExpectError(
      [&] {
        msc_vk::ParseMainOptions({"m", "--device"}, d);
      },
      "option --device needs a value");
  vkt::ExpectError(
      [&] {
        msc_vk::ParseMainOptions({"m", "--frobnicate"}, d);
      },
      "unknown option '--frobnicate'");
}

TEST_CASE("RunMain: golden check passes, fails on wrong data, benchmarks") {
  ExampleFiles files;
  Captured c = files.Main({"--validation"});
  INFO("stdout: " << c.out << "\nstderr: " << c.err);
  CHECK(c.status == 0);
  CHECK(c.out.find("output 'probs' (10 values): max_abs=") != std::string::npos);
  CHECK(c.out.find("golden check: PASS") != std::string::npos);

  std::vector<float> wrong = files.probs;
  wrong[3] += 0.01f;
  const std::string bad_golden = vkt::TempPath("bad_golden.safetensors");
  files.WriteGolden(bad_golden, wrong);
  c = files.Main({"--validation", "--golden", bad_golden});
  CHECK(c.status == 1);
  CHECK(c.out.find("FAIL; 1 of 10 values outside tolerance, worst at index 3") !=
        std::string::npos);
  CHECK(files.Main({"--golden", bad_golden, "--atol", "0.02"}).status == 0);
  std::remove(bad_golden.c_str());
  CHECK(c.out.find("program: ") != std::string::npos);  // dispatch count

  // A degenerate golden output (max |x| <= 1e-3) is an invalid case even when within tolerance.
  std::vector<float> tiny = files.probs;
  for (float& v : tiny) v *= 1e-5f;
  const std::string tiny_golden = vkt::TempPath("tiny_golden.safetensors");
  files.WriteGolden(tiny_golden, tiny);
  c = files.Main({"--golden", tiny_golden, "--atol", "1"});
  CHECK(c.status == 1);
  CHECK(c.out.find("output 'probs': invalid golden case: max |expected| = ") != std::string::npos);
  std::remove(tiny_golden.c_str());

  // A golden directory as python/msc_export writes it: inputs.safetensors + outputs.safetensors.
  const std::string dir = vkt::TempPath("golden_dir");
  mkdir(dir.c_str(), 0755);
  msc_vk::WriteSafetensors(dir + "/inputs.safetensors",
                           {{"input", DType::kFloat32, {1, 3, 16, 16}, Bytes(files.input)}});
  c = files.Main({"--validation", "--golden", dir});
  CHECK(c.status == 2);
  CHECK(c.err.find("error: golden outputs file '" + dir +
                   "/outputs.safetensors' not found or not readable") != std::string::npos);
  msc_vk::WriteSafetensors(dir + "/outputs.safetensors",
                           {{"probs", DType::kFloat32, {1, 10}, Bytes(files.probs)}});
  c = files.Main({"--validation", "--golden", dir});
  CHECK(c.status == 0);
  std::remove((dir + "/inputs.safetensors").c_str());
  std::remove((dir + "/outputs.safetensors").c_str());
  rmdir(dir.c_str());

  c = files.Main({"--validation", "--bench", "3", "--warmup", "1"});
  INFO("stdout: " << c.out);
  CHECK(c.status == 0);
  CHECK(c.out.find("bench: 3 runs: p50 ") != std::string::npos);
  CHECK(c.out.find("p90 ") != std::string::npos);
}

TEST_CASE("RunMain: bad inputs are a clear error and exit status 2, never a crash") {
  ExampleFiles files;
  const std::string missing = vkt::TempPath("missing.safetensors");
  Captured c = files.Main({"--golden", missing});
  CHECK(c.status == 2);
  CHECK(c.err.find("error: golden file '" + missing + "' not found or not readable") !=
        std::string::npos);

  c = files.Main({"--weights", missing});
  CHECK(c.status == 2);
  CHECK(c.err.find("error: weights file '" + missing + "' not found or not readable") !=
        std::string::npos);

  const std::string f16 = vkt::TempPath("f16.safetensors");
  msc_vk::WriteSafetensors(
      f16, {{"conv1.weight", DType::kFloat16, {8, 3, 3, 3}, std::vector<uint8_t>(432, 0)}});
  c = files.Main({"--weights", f16});
  CHECK(c.status == 2);
  CHECK(c.err.find("tensor 'conv1.weight' has dtype F16 (float16), expected F32 (float32)") !=
        std::string::npos);

  const std::string full = ReadFile(files.weights);
  WriteFile(f16, full.substr(0, full.size() - 8));
  c = files.Main({"--weights", f16});
  CHECK(c.status == 2);
  CHECK(c.err.find("(truncated file?)") != std::string::npos);

  msc_vk::WriteSafetensors(f16, {{"input", DType::kFloat32, {1, 3, 16, 16}, Bytes(files.input)}});
  c = files.Main({"--golden", f16});
  CHECK(c.status == 2);
  CHECK(c.err.find("golden file '" + f16 + "' has no tensor 'probs'") != std::string::npos);
  std::remove(f16.c_str());

  c = files.Main({"--frobnicate"});
  CHECK(c.status == 2);
  CHECK(c.err.find("error: unknown option '--frobnicate'") != std::string::npos);

  c = files.Main({"--device", "42"});
  CHECK(c.status == 2);
  CHECK(c.err.find("Vulkan device index 42 (--device) is out of range") != std::string::npos);

  {
    vkt::ScopedEnv a("VK_ICD_FILENAMES", "/nonexistent/icd.json"),
        b("VK_DRIVER_FILES", "/nonexistent/icd.json");
    c = files.Main({});
  }
  CHECK(c.status == 2);
  CHECK(c.err.find("error: no Vulkan device found") != std::string::npos);
}
