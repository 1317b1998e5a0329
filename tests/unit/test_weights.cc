// Tests of generator/weights: safetensors read/write, TVM param dict read, format sniffing,
// robustness against truncated/corrupt files, and BindGraphWeights.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <boost/filesystem.hpp>
#include <nlohmann/json.hpp>

#include "generator/common/error.h"
#include "generator/ir/graph.h"
#include "generator/weights/weights.h"

namespace fs = boost::filesystem;
using msc::weights::Tensor;
using msc::weights::TensorMap;

namespace {

const std::string kRealDir = std::string(MSC_SHARED_REFERENCE_DIR) + "/msc-real";
const char* const kAllDtypes[] = {"float32", "float16", "bfloat16", "float64", "int8",
                                  "int16",   "int32",   "int64",    "uint8",   "bool"};

/// A fresh temporary directory, removed with its contents at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / fs::unique_path("msc-weights-test-%%%%-%%%%-%%%%");
    fs::create_directories(path);
  }
  ~TempDir() {
    boost::system::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string File(const std::string& name) const { return (path / name).string(); }
  size_t Count() const {
    return static_cast<size_t>(
        std::distance(fs::directory_iterator(path), fs::directory_iterator()));
  }
};

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// A tensor with deterministic contents (bool: 0/1 bytes).
Tensor MakeTensor(const std::string& dtype, std::vector<int64_t> shape, uint32_t seed = 1) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  std::mt19937 rng(seed);
  t.data.resize(static_cast<size_t>(Numel(t.shape) * msc::weights::DtypeItemSize(dtype)));
  for (auto& b : t.data) b = static_cast<uint8_t>(dtype == "bool" ? rng() & 1 : rng() & 0xFF);
  return t;
}

std::string U64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  return s;
}
std::string I32(int32_t v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  std::string s;
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
  return s;
}

/// safetensors bytes from a header text (padded with `pad` spaces) and a data buffer.
std::string StBytes(const std::string& header, const std::string& buffer = "", size_t pad = 0) {
  std::string h = header + std::string(pad, ' ');
  return U64(h.size()) + h + buffer;
}

/// One array of a TVM param dict, in the layout SaveDLTensor writes.
struct PdArray {
  std::string name;
  uint8_t code = 2, bits = 32;
  uint16_t lanes = 1;
  std::vector<int64_t> shape;
  std::string data;
  std::optional<int64_t> nbytes;  ///< default: data.size()
  int32_t device_type = 1;
};

/// Encodes a param dict as tvm.runtime.save_param_dict does (file_utils.cc SaveParams).
std::string EncodeParamDict(const std::vector<PdArray>& arrays) {
  std::string s = U64(0xF7E58D4F05049CB7ULL) + U64(0) + U64(arrays.size());
  for (const auto& a : arrays) s += U64(a.name.size()) + a.name;
  s += U64(arrays.size());
  for (const auto& a : arrays) {
    s += U64(0xDD5E40F096B4A13FULL) + U64(0) + I32(a.device_type) + I32(0) +
         I32(static_cast<int32_t>(a.shape.size()));
    s.push_back(static_cast<char>(a.code));
    s.push_back(static_cast<char>(a.bits));
    s.push_back(static_cast<char>(a.lanes & 0xFF));
    s.push_back(static_cast<char>(a.lanes >> 8));
    for (int64_t d : a.shape) s += U64(static_cast<uint64_t>(d));
    s += U64(static_cast<uint64_t>(a.nbytes.value_or(static_cast<int64_t>(a.data.size()))));
    s += a.data;
  }
  return s;
}

PdArray ToPd(const std::string& name, const Tensor& t) {
  static const std::map<std::string, std::pair<uint8_t, uint8_t>> codes = {
      {"int8", {0, 8}},     {"int16", {0, 16}},   {"int32", {0, 32}},   {"int64", {0, 64}},
      {"uint8", {1, 8}},    {"bool", {1, 1}},     {"float16", {2, 16}}, {"float32", {2, 32}},
      {"float64", {2, 64}}, {"bfloat16", {4, 16}}};
  PdArray a;
  a.name = name;
  a.code = codes.at(t.dtype).first;
  a.bits = codes.at(t.dtype).second;
  a.shape = t.shape;
  a.data.assign(t.data.begin(), t.data.end());
  return a;
}

/// Runs fn, which must throw msc::Error whose message contains each of `parts`.
std::string ExpectError(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
  } catch (const msc::Error& e) {
    std::string what = e.what();
    for (const auto& p : parts)
      CHECK_MESSAGE(what.find(p) != std::string::npos, "'" << p << "' not in: " << what);
    return what;
  } catch (const std::exception& e) {
    FAIL("not an msc::Error: " << e.what());
  }
  FAIL("no error thrown; expected one mentioning " << (parts.empty() ? std::string() : parts[0]));
  return "";
}

/// Every tensor a reader returns must be self-consistent.
void CheckConsistent(const TensorMap& m) {
  for (const auto& [name, t] : m) {
    int64_t item = msc::weights::DtypeItemSize(t.dtype);
    REQUIRE(item > 0);
    for (int64_t d : t.shape) REQUIRE(d >= 0);
    REQUIRE(t.data.size() == static_cast<size_t>(Numel(t.shape) * item));
  }
}

msc::ir::MSCTensor W(const std::string& name, const std::string& alias, const std::string& dtype,
                     std::vector<int64_t> shape) {
  msc::ir::MSCTensor t;
  t.name = name;
  t.alias = alias;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

msc::ir::MSCJoint Node(const std::string& name,
                       std::vector<std::pair<std::string, msc::ir::MSCTensor>> weights,
                       const std::string& shared_ref = "") {
  msc::ir::MSCJoint n;
  n.name = name;
  n.optype = "test";
  n.shared_ref = shared_ref;
  n.weights = std::move(weights);
  return n;
}

/// The weight-related part of an MSC graph.json, read here with nlohmann directly so these tests
/// do not depend on the IR module's parser.
msc::ir::MSCGraph GraphWeightsFromJson(const std::string& path) {
  auto j = nlohmann::ordered_json::parse(ReadBytes(path));
  msc::ir::MSCGraph g;
  g.name = j.at("name").get<std::string>();
  for (const auto& jn : j.at("nodes")) {
    std::vector<std::pair<std::string, msc::ir::MSCTensor>> ws;
    for (auto it = jn.at("weights").begin(); it != jn.at("weights").end(); ++it) {
      const auto& jt = it.value();
      ws.emplace_back(it.key(), W(jt.at("name").get<std::string>(), jt.value("alias", ""),
                                  jt.at("dtype").get<std::string>(),
                                  jt.at("shape").get<std::vector<int64_t>>()));
    }
    g.nodes.push_back(
        Node(jn.at("name").get<std::string>(), std::move(ws), jn.value("shared_ref", "")));
  }
  return g;
}

/// A small mixed-dtype safetensors file's bytes (incl. 0-d and empty tensors).
std::string SmallSafetensors(const TempDir& dir) {
  TensorMap m;
  m["w"] = MakeTensor("float32", {2, 3}, 1);
  m["b"] = MakeTensor("int8", {3}, 2);
  m["flag"] = MakeTensor("bool", {}, 3);
  m["empty"] = MakeTensor("float16", {0, 4}, 4);
  m["idx"] = MakeTensor("int64", {2}, 5);
  std::string p = dir.File("small.safetensors");
  msc::weights::WriteSafetensors(p, m, {{"format", "pt"}});
  return ReadBytes(p);
}

std::string SmallParamDict() {
  return EncodeParamDict(
      {ToPd("const", MakeTensor("float32", {2, 3}, 1)), ToPd("const_1", MakeTensor("int64", {}, 2)),
       ToPd("mask", MakeTensor("bool", {3}, 3)), ToPd("e", MakeTensor("float16", {0}, 4))});
}

}  // namespace

TEST_SUITE("weights") {
  TEST_CASE("LargeZeroBytes: n zero bytes, small and huge-page advised sizes") {
    for (const size_t n : {size_t{0}, size_t{7}, size_t{4} << 20, (size_t{9} << 20) + 13}) {
      CAPTURE(n);
      const std::vector<uint8_t> v = msc::weights::LargeZeroBytes(n);
      REQUIRE(v.size() == n);
      CHECK(std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; }));
    }
  }
  TEST_CASE("real MSC weights: safetensors and param dict agree with each other and graph.json") {
    for (const std::string model : {"conv_relu", "mlp"}) {
      CAPTURE(model);
      const std::string dir = kRealDir + "/" + model;
      REQUIRE_MESSAGE(fs::exists(dir), "shared reference data missing: " << dir);
      TensorMap st = msc::weights::ReadSafetensors(dir + "/weights.safetensors");
      TensorMap pd = msc::weights::ReadParamDict(dir + "/weights.bin");
      REQUIRE(st.size() == pd.size());
      for (const auto& kv : st) {
        const std::string& name = kv.first;
        const Tensor& t = kv.second;
        CAPTURE(name);
        REQUIRE(pd.count(name) == 1);
        CHECK(pd.at(name).dtype == t.dtype);
        CHECK(pd.at(name).shape == t.shape);
        CHECK(pd.at(name).data == t.data);
      }
      CHECK(msc::weights::ReadWeights(dir + "/weights.safetensors") == st);
      CHECK(msc::weights::ReadWeights(dir + "/weights.bin") == pd);

      // Names const, const_1, ... with the shapes and dtypes graph.json declares.
      msc::ir::MSCGraph g = GraphWeightsFromJson(dir + "/graph.json");
      size_t count = 0;
      for (const auto& node : g.nodes) {
        for (const auto& role_weight : node.weights) {
          const msc::ir::MSCTensor& w = role_weight.second;
          CAPTURE(w.name);
          REQUIRE(st.count(w.name) == 1);
          CHECK(st.at(w.name).shape == w.shape);
          CHECK(st.at(w.name).dtype == w.dtype);
          ++count;
        }
      }
      CHECK(count == st.size());
      for (size_t i = 0; i < st.size(); ++i)
        CHECK(st.count(i == 0 ? "const" : "const_" + std::to_string(i)) == 1);

      TensorMap bound = msc::weights::BindGraphWeights(g, pd, dir + "/weights.bin");
      CHECK(bound == st);

      // Our writer reproduces the reference writer's file byte for byte.
      TempDir tmp;
      msc::weights::WriteSafetensors(tmp.File("w.safetensors"), st);
      CHECK(ReadBytes(tmp.File("w.safetensors")) == ReadBytes(dir + "/weights.safetensors"));
    }
    // Spot-check values: conv_relu's first weight, little-endian float32 bits 0xbb8da3e8.
    TensorMap st = msc::weights::ReadSafetensors(kRealDir + "/conv_relu/weights.safetensors");
    REQUIRE(st.at("const").shape == std::vector<int64_t>{6, 3, 1, 1});
    CHECK(std::vector<uint8_t>(st.at("const").data.begin(), st.at("const").data.begin() + 4) ==
          std::vector<uint8_t>{0xe8, 0xa3, 0x8d, 0xbb});
  }

  TEST_CASE("param dict encoder in these tests matches TVM's bytes") {
    // Guards the param-dict tests below: our test-side encoder writes what save_param_dict wrote.
    TensorMap pd = msc::weights::ReadParamDict(kRealDir + "/conv_relu/weights.bin");
    CHECK(EncodeParamDict({ToPd("const", pd.at("const"))}) ==
          ReadBytes(kRealDir + "/conv_relu/weights.bin"));
  }

  TEST_CASE("safetensors writer matches the reference writer's bytes") {
    TempDir tmp;
    const std::string p = tmp.File("t.safetensors");
    // safetensors tensor.rs tests test_empty / test_serialization_forced_alignement.
    msc::weights::WriteSafetensors(p, {});
    CHECK(ReadBytes(p) == StBytes("{}", "", 6));
    msc::weights::WriteSafetensors(p, {}, {{"framework", "pt"}});
    CHECK(ReadBytes(p) == StBytes("{\"__metadata__\":{\"framework\":\"pt\"}}", "", 5));
    Tensor t;
    t.dtype = "float32";
    t.shape = {1, 1, 2, 3};
    for (float f : {0.f, 1.f, 2.f, 3.f, 4.f, 5.f}) {
      uint8_t b[4];
      std::memcpy(b, &f, 4);  // the tests run on little-endian hosts
      t.data.vec().insert(t.data.vec().end(), b, b + 4);
    }
    msc::weights::WriteSafetensors(p, {{"attn0", t}});
    CHECK(ReadBytes(p) ==
          StBytes("{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],\"data_offsets\":[0,24]}}",
                  std::string(t.data.begin(), t.data.end()), 7));

    // Mixed dtypes: buffer (and header) order is dtype alignment descending, then name, so every
    // tensor is aligned to its item size; __metadata__ first.
    TensorMap m;
    for (const char* d : kAllDtypes) m[std::string("t_") + d] = MakeTensor(d, {3});
    m["a_int64"] = MakeTensor("int64", {1});
    msc::weights::WriteSafetensors(p, m, {{"b", "2"}, {"a", "1"}});
    std::string bytes = ReadBytes(p);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(bytes[i]);
    CHECK(n % 8 == 0);
    std::string header = bytes.substr(8, n);
    CHECK(header.rfind("{\"__metadata__\":{\"a\":\"1\",\"b\":\"2\"},\"a_int64\":", 0) == 0);
    auto j = nlohmann::ordered_json::parse(header);
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    CHECK(keys == std::vector<std::string>{"__metadata__", "a_int64", "t_int64", "t_float64",
                                           "t_float32", "t_int32", "t_bfloat16", "t_float16",
                                           "t_int16", "t_int8", "t_uint8", "t_bool"});
    uint64_t expected = 0;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "__metadata__") continue;
      auto off = it.value().at("data_offsets");
      CHECK(off[0].get<uint64_t>() == expected);
      expected = off[1].get<uint64_t>();
      const Tensor& src = m.at(it.key());
      CHECK((8 + n + off[0].get<uint64_t>()) % msc::weights::DtypeItemSize(src.dtype) == 0);
    }
    CHECK(8 + n + expected == bytes.size());
    for (size_t i = header.find_last_not_of(' ') + 1; i < header.size(); ++i)
      CHECK(header[i] == ' ');
    CHECK(header[header.find_last_not_of(' ')] == '}');
  }

  TEST_CASE("safetensors are mapped: views, kernel-side copy, copy on write") {
    TempDir tmp;
    TensorMap in = {{"a", MakeTensor("float32", {3, 5}, 1)},
                    {"b", MakeTensor("int64", {7}, 2)},
                    {"e", MakeTensor("float16", {0}, 3)}};
    const std::string p = tmp.File("in.safetensors");
    msc::weights::WriteSafetensors(p, in);
    TensorMap back = msc::weights::ReadSafetensors(p);
    REQUIRE(back == in);
    const msc::weights::Bytes& view = back.at("a").data;
    REQUIRE(view.mapped_file() != nullptr);  // a view into the file, not a copy
    CHECK(view.mapped_file()->path() == p);
    // Rewriting views copies file ranges in the kernel; the bytes are the writer's own.
    const std::string q = tmp.File("out.safetensors");
    msc::weights::WriteSafetensors(q, back);
    CHECK(ReadBytes(q) == ReadBytes(p));
    // A subset under other names (as BindGraphWeights produces) is copied range by range.
    TensorMap renamed = {{"z_b", back.at("b")}, {"y_a", back.at("a")}};
    const std::string r = tmp.File("renamed.safetensors");
    msc::weights::WriteSafetensors(r, renamed);
    TensorMap rb = msc::weights::ReadSafetensors(r);
    CHECK(rb.at("z_b") == in.at("b"));
    CHECK(rb.at("y_a") == in.at("a"));
    // Writing through a view copies it first and never touches the file.
    Tensor edited = back.at("a");
    edited.data.data()[0] ^= 0xFF;
    CHECK(edited.data.mapped_file() == nullptr);
    CHECK(edited != in.at("a"));
    CHECK(back.at("a") == in.at("a"));
    CHECK(msc::weights::ReadSafetensors(p).at("a") == in.at("a"));
  }

  TEST_CASE("safetensors round trip: every dtype, 0-d and empty tensors, metadata") {
    TempDir tmp;
    const std::vector<std::vector<int64_t>> shapes = {{},     {0},       {1},         {5},
                                                      {2, 3}, {2, 0, 3}, {1, 1, 2, 3}};
    TensorMap all;
    uint32_t seed = 10;
    for (const char* d : kAllDtypes) {
      CAPTURE(d);
      TensorMap one;
      for (size_t i = 0; i < shapes.size(); ++i) {
        Tensor t = MakeTensor(d, shapes[i], seed++);
        one["s" + std::to_string(i)] = t;
        all[std::string(d) + "/" + std::to_string(i)] = t;
      }
      const std::string p = tmp.File(std::string(d) + ".safetensors");
      msc::weights::WriteSafetensors(p, one);
      TensorMap back = msc::weights::ReadSafetensors(p);
      CHECK(back == one);
      CHECK(back.at("s0").shape.empty());  // 0-d stays 0-d
      CHECK(back.at("s0").data.size() == static_cast<size_t>(msc::weights::DtypeItemSize(d)));
      CHECK(msc::weights::ReadWeights(p) == one);
    }
    const std::string p = tmp.File("all.safetensors");
    std::map<std::string, std::string> meta = {{"format", "pt"},
                                               {"source", "msc \"codegen\" \xc3\xa9\n"}};
    msc::weights::WriteSafetensors(p, all, meta);
    std::map<std::string, std::string> meta_back = {{"stale", "x"}};
    CHECK(msc::weights::ReadSafetensors(p, &meta_back) == all);
    CHECK(meta_back == meta);
    // Overwriting an existing file replaces it and leaves no temporary files behind.
    msc::weights::WriteSafetensors(p, {{"x", MakeTensor("int32", {2})}});
    CHECK(msc::weights::ReadSafetensors(p).size() == 1);
    CHECK(tmp.Count() == 1 + sizeof(kAllDtypes) / sizeof(kAllDtypes[0]));
  }

  TEST_CASE("param dict: every dtype, 0-d, empty, both bool encodings") {
    TempDir tmp;
    std::vector<PdArray> arrays;
    TensorMap expect;
    uint32_t seed = 100;
    for (const char* d : kAllDtypes) {
      for (const std::vector<int64_t>& shape : {std::vector<int64_t>{}, {0}, {4}, {2, 3}}) {
        std::string name = std::string(d) + msc::weights::FormatShape(shape);
        Tensor t = MakeTensor(d, shape, seed++);
        expect[name] = t;
        arrays.push_back(ToPd(name, t));
      }
    }
    PdArray dlbool = ToPd("dlpack_bool", MakeTensor("bool", {3}, 7));
    dlbool.code = 6;  // kDLBool
    dlbool.bits = 8;
    arrays.push_back(dlbool);
    expect["dlpack_bool"] = MakeTensor("bool", {3}, 7);
    const std::string p = tmp.File("p.bin");
    WriteBytes(p, EncodeParamDict(arrays));
    TensorMap back = msc::weights::ReadParamDict(p);
    CHECK(back == expect);
    CHECK(back.at("float32[]").shape.empty());
    CHECK(msc::weights::ReadWeights(p) == expect);
    WriteBytes(p, EncodeParamDict({}));
    CHECK(msc::weights::ReadParamDict(p).empty());
  }

  TEST_CASE("every truncation of a weights file is an msc::Error naming the file") {
    TempDir tmp;
    const std::string st = SmallSafetensors(tmp);
    const std::string pd = SmallParamDict();
    const std::string real = ReadBytes(kRealDir + "/conv_relu/weights.bin");
    const std::string p = tmp.File("cut.bin");
    using Reader = std::function<TensorMap(const std::string&)>;
    const Reader read_st = [](const std::string& f) { return msc::weights::ReadSafetensors(f); };
    const Reader read_pd = [](const std::string& f) { return msc::weights::ReadParamDict(f); };
    for (const auto& item : std::vector<std::pair<std::string, Reader>>{
             {st, read_st}, {pd, read_pd}, {real, read_pd}}) {
      const std::string& bytes = item.first;
      const Reader& reader = item.second;
      WriteBytes(p, bytes);
      CHECK_NOTHROW(reader(p));
      CHECK_NOTHROW(msc::weights::ReadWeights(p));
      for (size_t len = 0; len < bytes.size(); ++len) {
        CAPTURE(len);
        WriteBytes(p, bytes.substr(0, len));
        ExpectError([&] { reader(p); }, {p + ": "});
        ExpectError([&] { msc::weights::ReadWeights(p); }, {p + ": "});
      }
      // One byte too many is corrupt too.
      WriteBytes(p, bytes + " ");
      ExpectError([&] { reader(p); }, {p + ": ", "trailing"});
    }
  }

  TEST_CASE("seeded random byte corruptions never crash: msc::Error or a consistent result") {
    TempDir tmp;
    const std::string p = tmp.File("fuzz.bin");
    const std::string st = SmallSafetensors(tmp);
    const std::string pd = SmallParamDict();
    std::mt19937 rng(20240531);
    for (const std::string* original : {&st, &pd}) {
      int errors = 0, parsed = 0;
      const int rounds = 300;
      for (int round = 0; round < rounds; ++round) {
        std::string bytes = *original;
        const int flips = 1 + static_cast<int>(rng() % 4);
        // Half the rounds hit the first 64 bytes (sizes, magics, header start) only.
        const size_t span = round % 2 ? bytes.size() : std::min<size_t>(64, bytes.size());
        for (int k = 0; k < flips; ++k) {
          bytes[rng() % span] = static_cast<char>(rng() & 0xFF);
        }
        WriteBytes(p, bytes);
        CAPTURE(round);
        try {
          TensorMap m = msc::weights::ReadWeights(p);
          CheckConsistent(m);
          ++parsed;
        } catch (const msc::Error& e) {
          CHECK(std::string(e.what()).rfind(p + ": ", 0) == 0);
          ++errors;
        } catch (const std::exception& e) {
          FAIL("round " << round << ": not an msc::Error: " << e.what());
        }
      }
      CHECK(errors + parsed == rounds);
      CHECK(errors > rounds / 2);  // most corruptions are caught (about 90% with this seed)
    }
  }

  TEST_CASE("corrupt safetensors headers: clear errors, no huge allocations") {
    TempDir tmp;
    const std::string p = tmp.File("bad.safetensors");
    auto expect = [&](const std::string& bytes, const std::vector<std::string>& parts) {
      CAPTURE(parts[0]);
      WriteBytes(p, bytes);
      std::vector<std::string> all = {p + ": safetensors: "};
      all.insert(all.end(), parts.begin(), parts.end());
      return ExpectError([&] { msc::weights::ReadSafetensors(p); }, all);
    };
    const std::string f32x2(8, '\0');
    const std::string ok = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    WriteBytes(p, StBytes(ok, f32x2));
    CHECK(msc::weights::ReadSafetensors(p).at("a").shape == std::vector<int64_t>{2});

    expect(U64(~0ULL) + ok + f32x2, {"header size 18446744073709551615 exceeds"});
    expect(U64(1ULL << 63) + ok + f32x2, {"header size", "exceeds"});
    expect(U64(ok.size() + f32x2.size() + 1) + ok + f32x2,
           {"header size 63 exceeds the 62 bytes after it"});
    expect("abc", {"too short"});
    expect(StBytes(" " + ok, f32x2), {"does not start with '{'"});
    expect(StBytes("{\"a\":", ""), {"not valid JSON"});
    expect(StBytes("{\"\xff\":1}", ""), {"not valid JSON"});
    expect(StBytes("{\"a\":3}", ""), {"tensor 'a'", "not an object"});
    expect(StBytes("{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[0,2]}}", "xx"),
           {"tensor 'a'", "unsupported dtype \"F8_E4M3\""});
    expect(StBytes("{\"a\":{\"dtype\":\"U16\",\"shape\":[1],\"data_offsets\":[0,2]}}", "xx"),
           {"unsupported dtype"});
    expect(StBytes("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", "xxxx"),
           {"missing string field 'dtype'"});
    expect(StBytes("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", "xxxx"),
           {"missing array field 'shape'"});
    expect(StBytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", "xxxx"),
           {"tensor 'a'", "not a non-negative 64-bit integer"});
    expect(StBytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", "xxxx"),
           {"non-negative"});
    expect(StBytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[\"1\"],\"data_offsets\":[0,4]}}", "xxxx"),
           {"non-negative"});
    expect(StBytes(
               "{\"a\":{\"dtype\":\"F32\",\"shape\":[9223372036854775808],\"data_offsets\":[0,4]}}",
               "xxxx"),
           {"non-negative 64-bit"});
    expect(StBytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[1099511627776,1099511627776],\"data_"
                   "offsets\":[0,4]}}",
                   "xxxx"),
           {"overflows"});
    expect(StBytes(
               "{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904],\"data_offsets\":[0,4]}}",
               "xxxx"),
           {"overflows"});
    // A huge but representable size is rejected against the file size, before any allocation.
    expect(StBytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[576460752303423488],"
                   "\"data_offsets\":[0,2305843009213693952]}}",
                   "xxxx"),
           {"tensor 'a'", "run past the end of the 4-byte data buffer"});
    expect(StBytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", "xxxx"),
           {"end before begin"});
    expect(StBytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", "xxxx"),
           {"'data_offsets' must be"});
    expect(StBytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,-4]}}", "xxxx"),
           {"'data_offsets' must be"});
    expect(StBytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,6]}}", "xxxxxx"),
           {"tensor 'a'", "span 6 bytes but dtype F32 shape [2] needs 8"});
    expect(StBytes("{\"a\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                   "\"b\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[8,12]}}",
                   std::string(12, 'x')),
           {"tensor 'b'", "leave a gap"});
    expect(StBytes("{\"a\":{\"dtype\":\"I8\",\"shape\":[8],\"data_offsets\":[0,8]},"
                   "\"b\":{\"dtype\":\"I8\",\"shape\":[8],\"data_offsets\":[4,12]}}",
                   std::string(12, 'x')),
           {"tensor 'b'", "overlap"});
    expect(StBytes("{\"a\":{\"dtype\":\"I8\",\"shape\":[8],\"data_offsets\":[0,8]}}", "xxxx"),
           {"run past the end of the 4-byte data buffer"});
    expect(StBytes("{\"a\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[0,4]}}", "xxxxxxxx"),
           {"cover 4 bytes but the data buffer has 8", "trailing"});
    expect(StBytes("{\"__metadata__\":[1]}"), {"'__metadata__' is not an object"});
    expect(StBytes("{\"__metadata__\":{\"k\":1}}"), {"'__metadata__' entry 'k' is not a string"});
    // Header padded with spaces (any amount) is fine, as is an empty file body.
    WriteBytes(p, StBytes("{}", "", 3));
    CHECK(msc::weights::ReadSafetensors(p).empty());
    ExpectError([&] { msc::weights::ReadSafetensors(tmp.File("missing.safetensors")); },
                {tmp.File("missing.safetensors") + ": cannot open safetensors"});
    ExpectError([&] { msc::weights::ReadSafetensors(tmp.path.string()); }, {"not a regular file"});
  }

  TEST_CASE("corrupt TVM param dicts: clear errors with byte offsets, no huge allocations") {
    TempDir tmp;
    const std::string p = tmp.File("bad.bin");
    auto expect = [&](const std::string& bytes, const std::vector<std::string>& parts) {
      CAPTURE(parts[0]);
      WriteBytes(p, bytes);
      std::vector<std::string> all = {p + ": TVM param dict: "};
      all.insert(all.end(), parts.begin(), parts.end());
      return ExpectError([&] { msc::weights::ReadParamDict(p); }, all);
    };
    PdArray a = ToPd("const", MakeTensor("float32", {2, 3}));
    const std::string good = EncodeParamDict({a});
    WriteBytes(p, good);
    CHECK_NOTHROW(msc::weights::ReadParamDict(p));

    std::string bad = good;
    bad[0] = 0;
    expect(bad, {"bad magic 0xF7E58D4F05049C00 at byte 0"});
    expect(good.substr(0, 16) + U64(1ULL << 60),
           {"name count 1152921504606846976 at byte 16 cannot fit"});
    expect(good.substr(0, 24) + U64(1ULL << 62) + "const",
           {"name 0 length 4611686018427387904", "exceeds"});
    expect(good.substr(0, 24) + U64(5) + "const" + U64(2),
           {"array count 2 at byte 37 differs from the name count 1"});
    expect(EncodeParamDict({a, a}), {"duplicate name 'const'"});
    std::string bad_array_magic = good;
    bad_array_magic[45] = 0x55;
    expect(bad_array_magic, {"array 0 ('const'): bad magic", "at byte 45"});
    PdArray c = a;
    c.device_type = 2;
    expect(EncodeParamDict({c}), {"array 0 ('const'): device type 2", "kDLCPU"});
    c = a;
    c.lanes = 4;
    expect(EncodeParamDict({c}), {"unsupported DLDataType code 2 bits 32 lanes 4"});
    c = a;
    c.code = 3;  // kDLOpaqueHandle
    expect(EncodeParamDict({c}), {"unsupported DLDataType code 3"});
    c = a;
    c.bits = 8;
    expect(EncodeParamDict({c}), {"unsupported DLDataType code 2 bits 8"});
    c = a;
    c.shape = {-1, 3};
    expect(EncodeParamDict({c}), {"invalid shape [-1,3]"});
    c = a;
    c.shape = {1LL << 40, 1LL << 40};
    expect(EncodeParamDict({c}), {"invalid shape", "overflow"});
    c = a;
    c.nbytes = 100;
    expect(EncodeParamDict({c}), {"byte size 100", "needs 24"});
    c = a;
    c.nbytes = -24;
    expect(EncodeParamDict({c}), {"byte size -24"});
    // Consistent but huge sizes are checked against the file before allocating.
    c = a;
    c.shape = {1LL << 59};
    c.nbytes = 1LL << 61;
    expect(EncodeParamDict({c}),
           {"truncated", "array 0 ('const') data needs 2305843009213693952 bytes"});
    // ndim: negative, or more dims than the file can hold.
    std::string nd = good;
    const size_t ndim_at = 45 + 8 + 8 + 8;
    const std::string minus1 = I32(-1);
    nd.replace(ndim_at, 4, minus1);
    expect(nd, {"ndim -1", "is negative"});
    nd.replace(ndim_at, 4, I32(0x7fffffff));
    expect(nd, {"ndim 2147483647", "cannot fit"});
    expect(good + "x",
           {"1 trailing bytes after the last array, at byte " + std::to_string(good.size())});
    ExpectError([&] { msc::weights::ReadParamDict(tmp.File("nope.bin")); },
                {tmp.File("nope.bin") + ": cannot open"});
  }

  TEST_CASE("ReadWeights sniffs the format from the content") {
    TempDir tmp;
    const std::string p = tmp.File("weights.dat");  // no telling extension
    WriteBytes(p, SmallParamDict());
    CHECK(msc::weights::ReadWeights(p).count("mask") == 1);
    WriteBytes(p, SmallSafetensors(tmp));
    CHECK(msc::weights::ReadWeights(p).count("flag") == 1);
    WriteBytes(p, "PK\x03\x04 this is a zip file, not weights");
    ExpectError([&] { msc::weights::ReadWeights(p); }, {p + ": not a weights file"});
    WriteBytes(p, "");
    ExpectError([&] { msc::weights::ReadWeights(p); }, {p + ": weights file: file has 0 bytes"});
    WriteBytes(p, U64(100));
    ExpectError([&] { msc::weights::ReadWeights(p); },
                {p + ": safetensors: header size 100 exceeds"});
  }

  TEST_CASE("WriteSafetensors rejects bad input and reports I/O errors") {
    TempDir tmp;
    const std::string p = tmp.File("out.safetensors");
    Tensor bad = MakeTensor("float32", {2});
    bad.data.vec().pop_back();
    ExpectError(
        [&] {
          msc::weights::WriteSafetensors(p, {{"x", bad}});
        },
        {p + ": cannot write tensor 'x': has 7 data bytes, dtype float32 shape [2] needs 8"});
    Tensor f8 = MakeTensor("uint8", {2});
    f8.dtype = "float8";
    ExpectError(
        [&] {
          msc::weights::WriteSafetensors(p, {{"x", f8}});
        },
        {"unsupported dtype 'float8'"});
    Tensor neg = MakeTensor("uint8", {});
    neg.shape = {-1};
    ExpectError([&] { msc::weights::WriteSafetensors(p, {{"x", neg}}); }, {"invalid shape [-1]"});
    ExpectError(
        [&] {
          msc::weights::WriteSafetensors(p, {{"__metadata__", MakeTensor("uint8", {1})}});
        },
        {"reserved"});
    ExpectError(
        [&] {
          msc::weights::WriteSafetensors(p, {{"\xff", MakeTensor("uint8", {1})}});
        },
        {"UTF-8"});
    CHECK(tmp.Count() == 0);  // nothing written by the failures
    const std::string nodir = tmp.File("no/such/dir/w.safetensors");
    ExpectError([&] { msc::weights::WriteSafetensors(nodir, {}); }, {nodir + ": cannot write"});
    CHECK(tmp.Count() == 0);
  }

  TEST_CASE("BindGraphWeights: by name, by alias, shared weights once, unused tensors ignored") {
    msc::ir::MSCGraph g;
    g.nodes.push_back(Node("inp_0", {}));
    g.nodes.push_back(
        Node("conv2d", {{"weight", W("const", "conv2d.weight", "float32", {6, 3, 1, 1})},
                        {"bias", W("const_1", "conv2d.bias", "float32", {6})}}));
    // Same constant consumed again: same tensor name, shared_ref to the first consumer.
    g.nodes.push_back(Node(
        "conv2d_1", {{"weight", W("const", "conv2d.weight", "float32", {6, 3, 1, 1})}}, "conv2d"));
    // Shared weight under another name: reuses the referenced node's tensor for the same role.
    g.nodes.push_back(
        Node("conv2d_2", {{"weight", W("const_9", "", "float32", {6, 3, 1, 1})}}, "conv2d"));
    g.nodes.push_back(Node("scale", {{"const", W("const_2", "", "float32", {})}}));  // 0-d
    TensorMap file;
    file["const"] = MakeTensor("float32", {6, 3, 1, 1}, 1);
    file["conv2d.bias"] = MakeTensor("float32", {6}, 2);  // only reachable by alias
    file["const_2"] = MakeTensor("float32", {}, 3);
    file["unused"] = MakeTensor("int8", {1000}, 4);
    TensorMap bound = msc::weights::BindGraphWeights(g, file, "w.safetensors");
    CHECK(bound.size() == 4);
    CHECK(bound.at("const") == file.at("const"));
    CHECK(bound.at("const_1") == file.at("conv2d.bias"));
    CHECK(bound.at("const_9") == file.at("const"));
    CHECK(bound.at("const_2") == file.at("const_2"));
    CHECK(bound.count("unused") == 0);
    // Name wins over alias.
    file["conv2d.weight"] = MakeTensor("float32", {6, 3, 1, 1}, 9);
    CHECK(msc::weights::BindGraphWeights(g, file, "w").at("const") == file.at("const"));
    // An empty graph binds nothing.
    CHECK(msc::weights::BindGraphWeights(msc::ir::MSCGraph{}, file, "w").empty());
  }

  TEST_CASE("BindGraphWeights reports missing, shape and dtype problems together") {
    msc::ir::MSCGraph g;
    g.nodes.push_back(
        Node("conv2d", {{"weight", W("const", "conv2d.weight", "float32", {6, 3, 1, 1})},
                        {"bias", W("const_1", "conv2d.bias", "float32", {6})}}));
    g.nodes.push_back(
        Node("dense", {{"weight", W("const_2", "dense.weight", "float32", {10, 6})}}));
    TensorMap file;
    file["const"] = MakeTensor("float32", {6, 3, 3, 3});
    file["const_2"] = MakeTensor("float16", {10, 6});
    std::string what =
        ExpectError([&] { msc::weights::BindGraphWeights(g, file, "model/w.safetensors"); }, {});
    CHECK(what ==
          "model/w.safetensors: 3 weight problems:\n"
          "  node 'conv2d' role 'weight' tensor 'const' (alias 'conv2d.weight'): shape [6,3,1,1] "
          "expected, file "
          "has [6,3,3,3]\n"
          "  node 'conv2d' role 'bias' tensor 'const_1' (alias 'conv2d.bias'): not found in the "
          "weights file (by "
          "name or alias)\n"
          "  node 'dense' role 'weight' tensor 'const_2' (alias 'dense.weight'): dtype float32 "
          "expected, file has "
          "float16");
  }

  TEST_CASE("BindGraphWeights: more problem kinds, one line each") {
    msc::ir::MSCGraph g;
    g.nodes.push_back(Node("a", {{"weight", W("w0", "a.weight", "float32", {-1, 4})}}));  // dynamic
    g.nodes.push_back(Node("b", {{"weight", W("w1", "", "float8", {2})}}));  // bad dtype
    g.nodes.push_back(
        Node("c", {{"weight", W("w2", "c.weight", "int32", {2})}}));        // found by alias
    g.nodes.push_back(Node("d", {{"const", W("w3", "", "float32", {})}}));  // 0-d vs [1]
    g.nodes.push_back(Node("e", {{"bias", W("w4", "", "float32", {3})}}));
    g.nodes.push_back(Node("f", {{"bias", W("w4", "", "float32", {4})}}));  // redeclared
    TensorMap file;
    file["c.weight"] = MakeTensor("int64", {3});
    file["w3"] = MakeTensor("float32", {1});
    file["w4"] = MakeTensor("float32", {3});
    std::string what = ExpectError([&] { msc::weights::BindGraphWeights(g, file, "p.bin"); }, {});
    CHECK(what ==
          "p.bin: 5 weight problems:\n"
          "  node 'a' role 'weight' tensor 'w0' (alias 'a.weight'): graph shape [-1,4] has dynamic "
          "dims, but "
          "weights must be static\n"
          "  node 'b' role 'weight' tensor 'w1': unsupported dtype 'float8' in the graph\n"
          "  node 'c' role 'weight' tensor 'w2' (alias 'c.weight'): dtype int32 expected, file has "
          "int64; shape [2] "
          "expected, file has [3] (file tensor 'c.weight')\n"
          "  node 'd' role 'const' tensor 'w3': shape [] expected, file has [1]\n"
          "  node 'f' role 'bias' tensor 'w4': declared as float32 [4] but as float32 [3] by node "
          "'e' role 'bias'");
    // A single problem is singular.
    msc::ir::MSCGraph one;
    one.nodes.push_back(Node("x", {{"weight", W("nope", "", "float32", {1})}}));
    CHECK(ExpectError([&] { msc::weights::BindGraphWeights(one, {}, "f"); }, {}) ==
          "f: 1 weight problem:\n  node 'x' role 'weight' tensor 'nope': not found in the weights "
          "file (by name or "
          "alias)");
  }

}  // TEST_SUITE
