// Regression tests for the findings of the libFuzzer harnesses (tests/fuzz, README.md there):
// one TEST_CASE per finding, written before its fix, named "fuzz <harness>: ...". Each reproduces
// the input the fuzzer found (shrunk to what matters) through the public API and checks that it
// is now rejected with an msc::Error naming the file and the place, instead of another exception
// escaping (which the CLI prints as "error: internal: ...") or a crash.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include <boost/filesystem.hpp>

#include "generator/common/error.h"
#include "generator/emit/backend_spec.h"
#include "generator/frontend/onnx/onnx_import.h"
#include "generator/ir/graph.h"
#include "generator/ir/validate.h"
#include "generator/opdef/opdef.h"
#include "generator/tmpl/environment.h"
#include "generator/weights/weights.h"
#include "onnx_test_model.h"

namespace fs = boost::filesystem;

namespace {

/// The msc::Error message `f` throws; fails the test when it throws something else or nothing.
/// E: the error type expected (the template engine's own is msc::tmpl::TemplateError).
template <typename E = msc::Error, typename F>
std::string MscError(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("expected msc::Error, got another exception: " << e.what());
    return "";
  }
  FAIL("expected msc::Error, nothing was thrown");
  return "";
}

}  // namespace

// fuzz_graph: '{"name": 31e308}' made nlohmann throw out_of_range.406 ("number overflow"), which
// ParseGraph did not catch (it caught parse_error only).
TEST_CASE("fuzz graph: a number beyond double's range is an error naming file:line:col") {
  const std::string text =
      "{\n  \"name\": \"g\", \"inputs\": [], \"outputs\": [],\n  \"nodes\": [],"
      " \"x\": \"9e999\", \"y\": 31e308}";
  const std::string what = MscError([&] { msc::ir::ParseGraph(text, "big.json"); });
  CHECK(what ==
        "big.json:3:35: invalid JSON: number overflow parsing '31e308' (beyond the range "
        "of a 64-bit float)");
  // A huge integer is the same overflow; -1e999 too.
  CHECK(MscError([] { msc::ir::ParseGraph("[-1e999]", "n.json"); }).rfind("n.json:1:2: ", 0) == 0);
  CHECK(MscError([] {
          msc::ir::ParseGraph("[1" + std::string(400, '0') + "]", "i.json");
        }).rfind("i.json:1:2: invalid JSON: number overflow", 0) == 0);
}

// fuzz_opdef: an opdef whose `choices` held a non-UTF-8 string loaded fine; CheckAttr (run by
// Validate on every attr) then threw nlohmann's type_error.316 while listing the choices.
TEST_CASE("fuzz opdef: YAML that is not UTF-8 is an error naming file:line:col") {
  const std::string yaml =
      "image.resize2d:\n"
      "  summary: resize\n"
      "  inputs: [data]\n"
      "  attrs:\n"
      "    rounding_method: {type: str, default: round, choices: [round, flo\xEFr]}\n";
  msc::opdef::OpDefRegistry reg;
  const std::string what = MscError([&] { reg.LoadString(yaml, "ops.yaml"); });
  CHECK(what == "ops.yaml:5:70: invalid UTF-8 (byte 0xEF); YAML files must be UTF-8 text");
  // A truncated sequence at the end, and a UTF-8-encoded surrogate (not a character).
  CHECK(MscError([&] {
          reg.LoadString("a: \xC3", "t.yaml");
        }).rfind("t.yaml:1:4: invalid UTF-8", 0) == 0);
  CHECK(MscError([&] {
          reg.LoadString("a:\n b: \xED\xA0\x80", "s.yaml");
        }).rfind("s.yaml:2:5: invalid UTF-8 (byte 0xED)", 0) == 0);
  // Valid multi-byte text still loads.
  reg.LoadString("caf\xC3\xA9.op:\n  summary: \xE2\x82\xAC \xF0\x9F\x98\x80\n", "ok.yaml");
  CHECK(reg.Find("caf\xC3\xA9.op") != nullptr);
}

// fuzz_opdef, second finding: valid UTF-8 text, but `choices: [\x1C\0NCW]` -- yaml-cpp 0.7 reads
// the raw NUL as a backslash, and its \N and \_ escapes (U+0085, U+00A0) come out as the single
// bytes 0x85 / 0xA0 instead of UTF-8, so the scalar was not UTF-8 and CheckAttr threw
// type_error.316 again. Control characters are not YAML (1.2 section 5.1, c-printable), and a
// scalar that yaml-cpp decodes to invalid UTF-8 is an error at the scalar.
TEST_CASE("fuzz opdef: control characters and scalars yaml-cpp decodes to non-UTF-8 are errors") {
  auto load_error = [](const std::string& yaml, const std::string& file) {
    msc::opdef::OpDefRegistry reg;
    return MscError([&] { reg.LoadString(yaml, file); });
  };
  const std::string nul =
      std::string("a.op:\n  summary: x\n  attrs:\n    l: {type: str, default: N, ") +
      "choices: [\x1C" + std::string(1, '\0') + "NCW]}\n";
  CHECK(load_error(nul, "nul.yaml") ==
        "nul.yaml:4:42: control character 0x1C; YAML files may hold only printable characters, "
        "tab and line breaks");
  CHECK(load_error("a.op:\n  summary: \"x\\N\"\n", "nel.yaml") ==
        "nel.yaml:2:12: this string decodes to invalid UTF-8 (byte 0x85 at offset 1): yaml-cpp "
        "writes the escapes \\N and \\_ as single bytes; write the character itself");
  CHECK(load_error("\"k\\_\":\n  summary: x\n", "key.yaml")
            .rfind("key.yaml:1:1: this string decodes to invalid UTF-8 (byte 0xA0 at offset 1)",
                   0) == 0);
  // A flow collection as the first key of a block map starts where the map starts: it is still
  // walked (the walk once knew collections by position alone and skipped it).
  CHECK(load_error("[a, \"\\N\"]: 1\n", "flow.yaml")
            .rfind("flow.yaml:1:5: this string decodes to invalid UTF-8 (byte 0x85 at offset 0)",
                   0) == 0);
  // Tabs, CR LF line ends and the escapes yaml-cpp gets right still load.
  msc::opdef::OpDefRegistry reg;
  reg.LoadString("b.op:\r\n  summary: \"\\t\\u00e9\\L\"\t\r\n", "ok.yaml");
  CHECK(reg.Find("b.op")->summary == "\t\xC3\xA9\xE2\x80\xA8");
}

// The same check covers backend.yaml (common/strict_yaml.cc).
TEST_CASE("fuzz backend_spec: a backend.yaml that is not UTF-8 is an error naming file:line:col") {
  namespace fs = boost::filesystem;
  const fs::path root = fs::temp_directory_path() / fs::unique_path("msc-fuzz-reg-%%%%-%%%%");
  fs::create_directories(root / "b");
  {
    std::ofstream out((root / "b" / "backend.yaml").string(), std::ios::binary);
    out << "summary: x\xFF\nop_template: \"ops/{path}.j2\"\n";
  }
  const std::string what = MscError([&] { msc::emit::LoadBackendSpec(root.string(), "b"); });
  CHECK(what == (root / "b" / "backend.yaml").string() +
                    ":1:11: invalid UTF-8 (byte 0xFF); YAML files must be UTF-8 text");
  fs::remove_all(root);
}

// fuzz_onnx: an ONNX graph named "test_tan_ex\x8Bmple" was imported; `msc-codegen import` then
// failed in SaveGraphString with nlohmann's type_error.316. ONNX names and string attributes are
// UTF-8 (onnx.proto), so the importer rejects others, naming the file and the field.
TEST_CASE("fuzz onnx: names and string attributes that are not UTF-8 are an error naming them") {
  namespace ox = msc::frontend::onnx_import;
  {
    msc_test::OnnxModel m;
    m.g->set_name("test_tan_ex\x8Bmple");
    m.Input("x", {3});
    m.Node("Tan", {"x"}, {"y"});
    m.Output("y", {3});
    const std::string path = m.Save();
    CHECK(MscError([&] { ox::ImportOnnx(path); }) ==
          path + ": the graph name is not valid UTF-8 (byte 0x8B at offset 11)");
  }
  {
    msc_test::OnnxModel m;
    m.Input("x\xC0\xAF", {3});  // an overlong encoding of '/'
    m.Node("Tan", {"x\xC0\xAF"}, {"y"});
    m.Output("y", {3});
    const std::string path = m.Save();
    CHECK(MscError([&] { ox::ImportOnnx(path); }) ==
          path + ": graph input 0 name is not valid UTF-8 (byte 0xC0 at offset 1)");
  }
  {
    msc_test::OnnxModel m;
    m.Input("x", {2, 3});
    m.Node("Einsum", {"x"}, {"y"});
    auto* a = m.g->mutable_node(0)->add_attribute();
    a->set_name("equation");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("ij->j\xFF");
    m.Output("y", {3});
    const std::string path = m.Save();
    CHECK(MscError([&] { ox::ImportOnnx(path); }) ==
          path +
              ": node 0 (Einsum) attribute 'equation' is not valid UTF-8 (byte 0xFF at offset 5)");
  }
  {  // a symbolic dimension becomes a graph prim's name (found in review, not by the fuzzer)
    msc_test::OnnxModel m;
    m.Input("x", {1, 3});
    m.g->mutable_input(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(0)
        ->set_dim_param("\xFF\xFE");
    m.Node("Relu", {"x"}, {"y"});
    m.Output("y", {1, 3});
    const std::string path = m.Save();
    CHECK(MscError([&] { ox::ImportOnnx(path); }) ==
          path +
              ": graph input 0 dimension 0 dim_param is not valid UTF-8 (byte 0xFF at offset 0)");
  }
}

// fuzz_onnx (long run of 2026-11-29, 7.6M execs): tabs, '[', then bytes protobuf reads as a
// ModelProto with a graph (the rest as unknown fields). ImportOnnx imported it; IsOnnxFile, which
// sniffs JSON by its first non-blank byte, called it JSON, so `generate --graph` would have read
// an ONNX model as a broken MSCGraph. Both now ask the same question first.
TEST_CASE("fuzz onnx: a file that starts like JSON is not imported as ONNX") {
  namespace ox = msc::frontend::onnx_import;
  const std::string path =
      std::string(MSC_TEST_DATA_DIR) + "/fuzz/regressions/onnx/json_like_bytes_parse_as_model";
  CHECK_FALSE(ox::IsOnnxFile(path));
  CHECK(MscError([&] { ox::ImportOnnx(path); }) ==
        path +
            ": not an ONNX model: it starts like JSON (an MSCGraph is read by generate, "
            "validate and inspect, not by import)");
  // a real model still is one
  msc_test::OnnxModel m(13);
  m.Input("x", {1, 3});
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y", {1, 3});
  CHECK(ox::IsOnnxFile(m.Save()));
}

// fuzz_onnx (long run of 2026-11-29, 9.4M execs): an int64 Constant with a 0 dim among dims whose
// product overflows int64, through HardSigmoid / Transpose folding that moved the 0 behind the
// overflow: the imported graph failed Validate ("more elements or bytes than a 64-bit size can
// count") while the model's own constant passed. Numel is 0 wherever the 0 stands.
TEST_CASE("fuzz onnx: an empty constant imports whatever the order of its dims") {
  namespace ox = msc::frontend::onnx_import;
  const std::string dir = std::string(MSC_TEST_DATA_DIR) + "/fuzz/regressions/onnx/";
  // folded by Transpose: imports, validates, and its weights write and read back
  const auto result = ox::ImportOnnx(dir + "empty_constant_transposed_dims_overflow");
  msc::ir::Validate(result.graph, nullptr);
  const auto file = fs::temp_directory_path() / fs::unique_path("msc-empty-%%%%%%.safetensors");
  msc::weights::WriteSafetensors(file.string(), result.weights);
  const auto back = msc::weights::ReadSafetensors(file.string());
  fs::remove(file);
  REQUIRE(back.size() == result.weights.size());
  for (const auto& [name, t] : result.weights) CHECK(back.at(name).shape == t.shape);
  // folded by Reshape to []: a clear import error, not an invalid graph
  CHECK(MscError([&] {
          ox::ImportOnnx(dir + "empty_constant_reshape_dims_overflow");
        }).find("cannot reshape") != std::string::npos);
}

// fuzz_onnx: a MaxPool model whose graph outputs were gone (ONNX's checker accepts a graph without
// outputs) imported into an MSCGraph without outputs, which `msc-codegen import` then reported as
// "invalid MSCGraph (1 problem): outputs: a graph needs at least one output" -- about a graph the
// user never wrote. The importer says what is wrong with the model instead.
TEST_CASE("fuzz onnx: a model whose graph has no outputs is an error naming the file") {
  namespace ox = msc::frontend::onnx_import;
  msc_test::OnnxModel m(12);
  m.Input("x", {1, 3, 4, 4});
  m.Node("Relu", {"x"}, {"y"});
  const std::string path = m.Save();
  CHECK(MscError([&] { ox::ImportOnnx(path); }) ==
        path + ": the ONNX graph has no outputs (graph.output is empty): nothing to compute");
}

// fuzz_onnx: a Reshape whose constant target shape held dims like 7008163970141913089 multiplied
// them in int64 (UBSan: signed integer overflow in ops_tensor.cc Reshape). Shapes whose element
// count does not fit in int64 are now an error, in the converter and wherever a shape enters the
// importer after ONNX's shape inference.
TEST_CASE("fuzz onnx: shapes whose element count overflows int64 are errors, not overflows") {
  namespace ox = msc::frontend::onnx_import;
  const int64_t big = 7008163970141913089;
  for (const auto& target : {msc_test::Dims{1, big, big}, msc_test::Dims{-1, big, big}}) {
    msc_test::OnnxModel m;
    m.Input("x", {2, 3});
    m.Ints("s", target);
    m.Node("Reshape", {"x", "s"}, {"y"});
    m.Output("y", {-1, -1, -1});  // declared as target, it is rejected before conversion (below)
    const std::string path = m.Save();
    const std::string what = MscError([&] { ox::ImportOnnx(path); });
    CAPTURE(what);
    CHECK(what.rfind(path + ": ", 0) == 0);
    CHECK(what.find("node 'y' (Reshape): target shape [" + std::to_string(target[0]) +
                    ", 7008163970141913089, 7008163970141913089] has more elements than int64 "
                    "can count") != std::string::npos);
  }
  // A graph input of 2^32 x 2^32 x 4 elements: named where the importer reads the declaration.
  msc_test::OnnxModel m;
  m.Input("x", {int64_t{1} << 32, int64_t{1} << 32, 4});
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y", {int64_t{1} << 32, int64_t{1} << 32, 4});
  const std::string path = m.Save();
  const std::string what = MscError([&] { ox::ImportOnnx(path); });
  CAPTURE(what);
  CHECK(what.rfind(path + ": ", 0) == 0);
  CHECK(what == path +
                    ": graph input 'x': FLOAT [4294967296, 4294967296, 4] has more elements than "
                    "int64 can count");
}

// fuzz_onnx: the same multiplication in the import-time constant folding of Reshape
// (const_eval.cc, UBSan: -9223372036854775807 * 12), for a Reshape of a constant by itself.
TEST_CASE("fuzz onnx: folding a Reshape to an overflowing or negative shape is an error") {
  namespace ox = msc::frontend::onnx_import;
  for (const auto& s : {msc_test::Dims{1, -9223372036854775807, 12, 12}, msc_test::Dims{-5, 4},
                        msc_test::Dims{-1, -1}}) {
    msc_test::OnnxModel m;
    m.Input("x", {1});
    m.Ints("s", s);
    m.Node("Reshape", {"s", "s"}, {"r"});
    m.Node("Identity", {"x"}, {"y"});
    m.Output("y", {1});
    m.Output("r", {static_cast<int64_t>(s.size())});
    const std::string path = m.Save();
    const std::string what = MscError([&] { ox::ImportOnnx(path); });
    CAPTURE(what);
    CHECK(what.rfind(path + ": ", 0) == 0);
    CHECK(what.find("node 'r' (Reshape): cannot reshape [" + std::to_string(s.size()) + "] to " +
                    msc::weights::FormatShape(s)) != std::string::npos);
  }
}

// fuzz_onnx: Gemm at opset 6 with a 1-D B. ONNX 1.12's Gemm-6 shape inference reads dim 1 of B
// without checking its rank (Gemm-7 checks), out of bounds: SIGSEGV in `msc-codegen import`.
// The importer runs ONNX's shape inference with a rank check in front of such functions; the
// output type stays unknown and the converter names the problem.
TEST_CASE("fuzz onnx: Gemm-6 with a 1-D input is an error, not a crash in ONNX's shape inference") {
  namespace ox = msc::frontend::onnx_import;
  for (int opset : {6, 1}) {
    msc_test::OnnxModel m(opset);
    m.Input("a", {2, 3});
    m.Input("b", {3});
    m.Input("c", {3});
    m.Node("Gemm", {"a", "b", "c"}, {"y"});
    m.Output("y", {2, 3});
    const std::string path = m.Save();
    const std::string what = MscError([&] { ox::ImportOnnx(path); });
    CAPTURE(what);
    CHECK(what.rfind(path + ": ", 0) == 0);
    CHECK(what.find("node 'y' (Gemm): A and B must be 2-D") != std::string::npos);
  }
}

// fuzz_onnx (long run): GRU at opset 6 with a 1-D X. ONNX 1.12's RNNShapeInference1 (GRU-3,
// RNN-1, LSTM-1) reads dims 0 and 1 of X without checking its rank: SIGSEGV. The importer now
// rejects op types it has no converter for (and cannot fold) before it runs ONNX's shape
// inference, so only audited inference functions see a model; the error lists them all.
TEST_CASE("fuzz onnx: an unsupported op type is reported before ONNX's shape inference runs") {
  namespace ox = msc::frontend::onnx_import;
  msc_test::OnnxModel m(6);
  m.Input("x", {1});
  m.Input("w", {1});
  m.Input("r", {1});
  m.Node("GRU", {"x", "w", "r"}, {"y"});
  m.Node("Neg", {"y"}, {"z"});
  m.Node("RNN", {"z", "w", "r"}, {"u"});
  m.Output("u", {1});
  const std::string path = m.Save();
  const std::string what = MscError([&] { ox::ImportOnnx(path); });
  CAPTURE(what);
  CHECK(what.rfind(path + ": 2 unsupported ONNX op types (opset 6):", 0) == 0);
  CHECK(what.find("\n  GRU: node 'y'") != std::string::npos);
  CHECK(what.find("\n  RNN: node 'u'") != std::string::npos);
}

// fuzz_onnx (long run): a Constant with no elements whose other dims multiply past int64
// ([0, 2^31, 2^31, 2^31]), transposed: the import-time folding computed its row-major strides
// with a signed overflow (UBSan, const_eval.cc Strides). Such a tensor is never indexed; the
// fold now gives the transposed empty tensor.
TEST_CASE("fuzz onnx: folding an empty tensor whose other dims overflow int64 is defined") {
  namespace ox = msc::frontend::onnx_import;
  msc_test::OnnxModel m;
  const int64_t big = int64_t{1} << 31;
  msc_test::TensorAttr(m.Node("Constant", {}, {"c"}), "value",
                       ox::MakeTensor("float32", {0, big, big, big}, {}));
  m.Node("Transpose", {"c"}, {"t"});
  m.Input("x", {2});
  m.Node("Shape", {"t"}, {"s"});
  m.Node("Add", {"x", "x"}, {"y"});
  m.Output("s", {4}, onnx::TensorProto::INT64);
  m.Output("y", {2});
  const std::string path = m.Save();
  const std::string what = msc_test::ImportError(path);
  CAPTURE(what);
  CHECK((what.empty() || what.rfind(path + ": ", 0) == 0));
}

// fuzz_onnx (long run on the guarded importer): BatchNormalization with epsilon -3.3e-29 was
// imported into an nn.batch_norm whose opdef requires epsilon >= 0: `import` wrote a graph that
// Validate rejects. The converters of nn.batch_norm / nn.layer_norm now name the attribute.
TEST_CASE("fuzz onnx: a negative epsilon of a normalization is an import error") {
  namespace ox = msc::frontend::onnx_import;
  for (const char* op : {"BatchNormalization", "LayerNormalization"}) {
    msc_test::OnnxModel m(17);
    m.Input("x", {1, 2, 3});
    onnx::NodeProto* n = nullptr;
    if (std::string(op) == "BatchNormalization") {
      for (const char* p : {"g", "b", "mean", "var"}) m.Floats(p, {2}, {1, 1});
      n = m.Node(op, {"x", "g", "b", "mean", "var"}, {"y"});
    } else {
      m.Floats("g", {3}, {1, 1, 1});
      n = m.Node(op, {"x", "g"}, {"y"});
    }
    msc_test::FloatAttr(n, "epsilon", -3.3087224e-29f);
    m.Output("y", {1, 2, 3});
    const std::string path = m.Save();
    const std::string what = msc_test::ImportError(path);
    CAPTURE(what);
    CHECK(what.rfind(path + ": ", 0) == 0);
    CHECK(what.find("node 'y' (" + std::string(op) + "): epsilon must be a finite number >= 0") !=
          std::string::npos);
  }
}

// fuzz_graph: a graph output "sum_2:00" (index written with a leading zero). Validate resolved it
// through SplitTensorName to output 0 of node "sum_2" and accepted it, but the tensor is named
// "sum_2:0", so BuildContext's lookup by name threw std::out_of_range (map::at) in `generate`.
// Validate now requires the exact tensor name, for node inputs and graph inputs/outputs.
TEST_CASE("fuzz graph: tensor references must be the exact tensor name, not another spelling") {
  const std::string text = R"({"name": "g", "inputs": ["x:0"], "outputs": ["relu:00"], "nodes": [
    {"index": 0, "name": "x", "optype": "input", "parents": [], "inputs": [],
     "outputs": [{"name": "x:0", "dtype": "float32", "shape": [2]}], "attrs": {}},
    {"index": 1, "name": "relu", "optype": "nn.relu", "parents": ["x"], "inputs": ["x:00"],
     "outputs": [{"name": "relu:0", "dtype": "float32", "shape": [2]}], "attrs": {}}]})";
  const msc::ir::MSCGraph g = msc::ir::ParseGraph(text, "g.json");
  const std::string what = MscError([&] { msc::ir::Validate(g, nullptr); });
  CHECK(what ==
        "g.json: invalid MSCGraph (2 problems):\n"
        "  nodes[1].inputs[0] (node \"relu\"): \"x:00\" names no node output (output 0 of node "
        "\"x\" is \"x:0\")\n"
        "  outputs[0]: \"relu:00\" names no node output (output 0 of node \"relu\" is \"relu:0\")");
}

// fuzz_tmpl: str.format with a float and a presentation type outside "eEfFgGn%" built a printf
// format from it: "{:.3n}".format(3.14159) passed "%.3n" to snprintf, whose %n wrote through the
// double argument (ASan: stack-use-after-scope); "{:d}" / "{:x}" / "{:q}" read the double as
// another type. Like Python, 'n' is 'g' (C locale) and the others are "Unknown format code".
// Long precisions were cut at 511 characters; now the whole number is printed, as Python does.
TEST_CASE("fuzz tmpl: str.format of a float with a non-float presentation type") {
  msc::tmpl::Environment env("");
  auto render = [&](const std::string& src) { return env.RenderString(src, {}, "t.j2"); };
  CHECK(render("{{ '{:.3n}'.format(3.14159) }}") == "3.14");
  CHECK(render("{{ '{:>10.3n}|{:n}'.format(3.14159, 1234567.891) }}") == "      3.14|1.23457e+06");
  for (const std::string type : {"d", "x", "q", "a", "c", "b"}) {
    const std::string what =
        MscError<msc::tmpl::TemplateError>([&] { render("{{ '{:" + type + "}'.format(2.5) }}"); });
    CHECK(what == "t.j2:1:11: Unknown format code '" + type + "' for object of type 'float'");
  }
  CHECK(render("{{ '{:.600f}'.format(0.5) | length }}") == "602");
}

// fuzz_onnx: float values used as integers were converted with static_cast<int64_t>, undefined
// behavior outside int64's range (UBSan: "1.0973e+248 is outside the range of representable
// values of type 'long'"): a float64 constant as Reshape's shape in the import-time folding,
// Cast folding, and the scalar inputs depth / K / k / axis / tiles of the converters.
TEST_CASE("fuzz onnx: float values beyond int64 where integers are expected are errors") {
  namespace ox = msc::frontend::onnx_import;
  using msc::frontend::onnx_import::MakeTensor;
  {  // folding Reshape(s, s) with a float64 s
    msc_test::OnnxModel m;
    m.Input("x", {1});
    m.Init("s", MakeTensor("float64", {2}, {1.0973e248, 2}));
    m.Node("Reshape", {"s", "s"}, {"r"});
    m.Node("Identity", {"x"}, {"y"});
    m.Output("y", {1});
    m.Output("r", {2}, onnx::TensorProto::DOUBLE);
    const std::string path = m.Save();
    const std::string what = MscError([&] { ox::ImportOnnx(path); });
    CHECK(what == path + ": node 'r' (Reshape): value 1.0973e+248 where an int64 is expected");
  }
  {  // Cast of a float beyond int64 is not folded (ONNX leaves the result undefined)
    msc_test::OnnxModel m;
    m.Init("c", MakeTensor("float64", {1}, {1e300}));
    m.Node("Cast", {"c"}, {"y"});
    msc_test::IntAttr(m.g->mutable_node(0), "to", onnx::TensorProto::INT64);
    m.Output("y", {1}, onnx::TensorProto::INT64);
    const auto r = ox::ImportOnnx(m.Save());
    CHECK(r.graph.nodes.back().optype == "astype");
  }
  {  // OneHot depth 1e300
    msc_test::OnnxModel m(11);
    m.Input("i", {3}, onnx::TensorProto::INT64);
    m.Init("depth", MakeTensor("float32", {}, {1e30}));
    m.Init("values", MakeTensor("float32", {2}, {0, 1}));
    m.Node("OneHot", {"i", "depth", "values"}, {"y"});
    m.Output("y", {3, 4});
    const std::string path = m.Save();
    const std::string what = MscError([&] { ox::ImportOnnx(path); });
    CAPTURE(what);
    CHECK(
        what.find("node 'y' (OneHot): depth (input 1 ('depth')) is 1000000015047466219876688855040"
                  ".000000, not an int64") != std::string::npos);
  }
}

// fuzz_onnx: an unsupported op node with neither a name nor outputs (ONNX's checker accepts it):
// the list of unsupported ops named it by output(0), which protobuf refused with a FatalException
// ("CHECK failed: (index) < (current_size_)") that escaped ImportOnnx. It is named by position.
TEST_CASE("fuzz onnx: an unsupported node without name and outputs is listed by position") {
  namespace ox = msc::frontend::onnx_import;
  msc_test::OnnxModel m(6);
  m.Input("x", {2});
  m.Node("Relu", {"x"}, {"y"});
  auto* n = m.g->add_node();
  n->set_op_type("GRUUnit");
  n->add_input("x");
  m.Output("y", {2});
  const std::string path = m.Save();
  CHECK(MscError([&] { ox::ImportOnnx(path); }) ==
        path +
            ": 1 unsupported ONNX op type (opset 6):\n  GRUUnit: node '#1' (no name, no outputs)");
}

// fuzz_onnx: a Transpose of a constant whose perm repeated an axis ([1, 1] on a [2, 3] tensor)
// was folded at import with the strides of the repeated axis: a read past the constant's values
// (ASan: heap-buffer-overflow in const_eval.cc). perm must be a permutation of 0..rank-1 (ONNX
// Transpose); anything else is an error naming the node.
TEST_CASE("fuzz onnx: folding a Transpose whose perm is no permutation is an error") {
  namespace ox = msc::frontend::onnx_import;
  for (const auto& perm : {msc_test::Dims{1, 1}, msc_test::Dims{0, -2}, msc_test::Dims{0, 0, 1}}) {
    msc_test::OnnxModel m;
    m.Input("x", {1});
    m.Floats("c", {2, 3});
    msc_test::IntsAttr(m.Node("Transpose", {"c"}, {"t"}), "perm", perm);
    m.Node("Identity", {"x"}, {"y"});
    m.Output("y", {1});
    m.Output("t", {3, 3});
    const std::string path = m.Save();
    const std::string what = MscError([&] { ox::ImportOnnx(path); });
    CAPTURE(what);
    CHECK(what.rfind(path + ": ", 0) == 0);
    CHECK(what.find("node 't' (Transpose): perm " + msc::weights::FormatShape(perm) +
                    " is not a permutation of the 2 axes") != std::string::npos);
  }
}
