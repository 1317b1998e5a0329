// libFuzzer harness: the template engine (generator/tmpl: lexer, parser, validator, interpreter,
// filters, tests, methods) with msc-codegen's filters (py_literal, c_literal, py_str, c_str,
// raise_error), as `generate` and `msc-codegen render` use it.
//
//   input bytes = template source -> Environment(<scratch>/root).RenderString(src, data, "fuzz.j2")
//
// The data context is small and picked by a hash of the input (so it is deterministic per input):
// one of the real node contexts BuildContext makes for a few test graphs with the torch backend
// (node + section, exactly what a per-op snippet sees, plus that graph's `graph`) merged with the
// scalar/list/dict values tests/tmpl/gen_exprs.py renders its differential cases with, and
// `r` = a few numbers and strings derived from the hash. The search root holds small templates a
// fuzzed template can include / import / extend ("t.j2", "base.j2", "m.j2", "self.j2" which
// includes itself) and the torch backend's real "macros.j2". A fresh Environment per input
// keeps runs independent of each other (no parse cache carried over).
// Errors must be msc::tmpl::TemplateError naming the template ("fuzz.j2" or an included file, both
// under the scratch root or named "fuzz.j2").
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "generator/emit/backend_spec.h"
#include "generator/emit/context.h"
#include "generator/emit/generate.h"
#include "generator/ir/graph.h"
#include "generator/ir/validate.h"
#include "generator/opdef/opdef.h"
#include "generator/tmpl/environment.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr const char* kHarness = "tmpl";
using Json = msc::tmpl::Json;

std::vector<Json>* g_contexts = nullptr;
std::string* g_root = nullptr;

// tests/tmpl/gen_exprs.py DATA (keys a fuzzed expression can reach without a node).
const char* const kBaseData = R"({
  "n": 7, "m": -3, "z": 0, "f": 2.5, "g": -0.1, "big": 123456789, "tiny": 1e-07,
  "s": "Hello World", "t": "a,b,,c", "e": "", "u": "  padded\tText \n", "q": "it's \"q\"",
  "uni": "caf\u00e9 \u20ac", "lst": [3, 1, 2], "words": ["pear", "Apple", "fig", "apple"],
  "fl": [1.5, -2.25, 0.1], "mixed": [1, "a", null, true, 2.0], "empty": [],
  "d": {"b": 2, "a": 1, "c": [1, 2]}, "nested": {"x": {"y": [10, 20, {"z": "deep"}]}},
  "people": [{"name": "bob", "age": 31, "tags": ["x"]}, {"name": "Al", "age": 25, "tags": []},
             {"name": "cy", "age": 31, "tags": ["y", "z"]}],
  "flag": true, "off": false, "nil": null, "inf": 1e308, "huge": 9223372036854775807,
  "neg": -9223372036854775807
})";

// Templates of the search root: include / import / extends targets.
const char* const kRootFiles[][2] = {
    {"t.j2", "{{ s }}{% block b %}[t:{{ n }}]{% endblock %}"},
    {"base.j2", "<{% block b %}base{% endblock %}|{% block c %}{{ lst }}{% endblock %}>"},
    {"m.j2",
     "{% macro f(x, y=1) -%}{{ x }}-{{ y }}{{ caller() if caller is defined }}{%- endmacro %}"
     "{% macro g() %}{{ varargs }}{{ kwargs }}{% endmacro %}{% set v = 3 %}"},
    {"self.j2", "{% include 'self.j2' %}"},
};

// Small test graphs whose nodes give the snippet contexts (tests/msc_real/cases/<name>).
const char* const kGraphs[] = {"attention", "conv1d",      "layer_norm",  "masked_fill",
                               "topk",      "split_sizes", "pad_constant"};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) msc::fuzz::Finding(kHarness, "cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

uint64_t Fnv1a(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ULL;
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  msc::fuzz::AddDefaultFlags(argc, argv, {"-max_len=4096", msc::fuzz::DictFlag(kHarness)});
  const std::string src = MSC_SOURCE_DIR;
  auto& scratch = msc::fuzz::Scratch::Get();
  g_root = new std::string(scratch.dir());
  for (const auto& f : kRootFiles) scratch.Write(f[0], f[1]);
  scratch.Write("macros.j2", Slurp(src + "/templates/torch/macros.j2"));

  const Json base = Json::parse(kBaseData);
  const auto opdefs = msc::opdef::OpDefRegistry::LoadDir(src + "/opdefs");
  const auto spec = msc::emit::LoadBackendSpec(src + "/templates", "torch");
  g_contexts = new std::vector<Json>;
  for (const char* name : kGraphs) {
    const auto graph = msc::ir::LoadGraph(src + "/tests/msc_real/cases/" + name + "/graph.json");
    msc::ir::Validate(graph, &opdefs);
    const Json ctx = msc::emit::BuildContext(graph, opdefs, spec);
    for (const Json& node : ctx["graph"]["nodes"]) {
      for (const std::string& section : spec.op_sections) {
        Json data = base;
        data["graph"] = ctx["graph"];
        data["node"] = node;
        data["section"] = section;
        g_contexts->push_back(std::move(data));
      }
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  const uint64_t h = Fnv1a(data, size);
  Json& ctx = (*g_contexts)[h % g_contexts->size()];  // "r" is overwritten each time: no copy
  ctx["r"] = {{"i", static_cast<int64_t>(h % 2001) - 1000},
              {"f", static_cast<double>(h % 1000) / 8.0 - 60.0},
              {"s", std::string(1 + h % 5, static_cast<char>('a' + (h >> 8) % 26))},
              {"l", Json::array({h % 3, (h >> 4) % 7, "x"})}};
  msc::tmpl::Environment env(*g_root);
  msc::emit::RegisterCodegenFilters(env);
  msc::fuzz::Accepts<msc::tmpl::TemplateError>(kHarness, "fuzz.j2",
                                               [&] { env.RenderString(source, ctx, "fuzz.j2"); });
  return 0;
}
