// Scaffolding (generator/tools): opdef entries re-emitted as YAML load back identical, the
// context field documentation matches what BuildContext builds, stub snippets and test case stubs.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "generator/emit/backend_spec.h"
#include "generator/emit/context.h"
#include "generator/ir/graph.h"
#include "generator/ir/validate.h"
#include "generator/opdef/opdef.h"
#include "generator/tools/context_doc.h"
#include "generator/tools/scaffold.h"

namespace {

const std::string kRoot = std::string(MSC_TEST_DATA_DIR) + "/..";
const std::string kOpdefs = kRoot + "/opdefs";
const std::string kTemplates = kRoot + "/templates";
const std::string kReal = std::string(MSC_SHARED_REFERENCE_DIR) + "/msc-real";

using msc::emit::Json;

void CheckSameDef(const msc::opdef::OpDef& a, const msc::opdef::OpDef& b) {
  INFO("optype " << a.optype);
  CHECK(a.summary == b.summary);
  CHECK(a.traits == b.traits);
  CHECK(a.reference == b.reference);
  CHECK(a.domain == b.domain);
  CHECK(a.inputs == b.inputs);
  CHECK(a.variadic == b.variadic);
  CHECK(a.min_inputs == b.min_inputs);
  CHECK(a.allow_extra_attrs == b.allow_extra_attrs);
  CHECK(a.not_for_inference == b.not_for_inference);
  REQUIRE(a.weights.size() == b.weights.size());
  for (size_t i = 0; i < a.weights.size(); ++i) {
    CHECK(a.weights[i].role == b.weights[i].role);
    CHECK(a.weights[i].optional == b.weights[i].optional);
    CHECK(a.weights[i].layout == b.weights[i].layout);
    CHECK(a.weights[i].doc == b.weights[i].doc);
  }
  REQUIRE(a.attrs.size() == b.attrs.size());
  for (size_t i = 0; i < a.attrs.size(); ++i) {
    const auto &x = a.attrs[i], &y = b.attrs[i];
    INFO("attr " << x.name);
    CHECK(x.name == y.name);
    CHECK(x.type == y.type);
    CHECK(x.required == y.required);
    CHECK(x.nullable == y.nullable);
    CHECK(x.default_value.dump() == y.default_value.dump());  // dump: inf == inf as text
    CHECK(Json(x.choices).dump() == Json(y.choices).dump());
    CHECK(x.lengths == y.lengths);
    CHECK(x.min == y.min);
    CHECK(x.doc == y.doc);
  }
}

/// Every key of every object in `ctx` reachable as a node, tensor or graph field.
struct Keys {
  std::set<std::string> node, tensor, graph;
};

void CollectTensor(const Json& t, Keys& k) {
  for (auto it = t.begin(); it != t.end(); ++it) k.tensor.insert(it.key());
}

void Collect(const Json& graph, Keys& k) {
  for (auto it = graph.begin(); it != graph.end(); ++it) k.graph.insert(it.key());
  for (const char* key : {"inputs", "outputs", "weights"})
    for (const auto& t : graph[key]) CollectTensor(t, k);
  for (const auto& n : graph["nodes"]) {
    for (auto it = n.begin(); it != n.end(); ++it) k.node.insert(it.key());
    for (const auto& t : n["inputs"]) CollectTensor(t, k);
    for (const auto& t : n["outputs"]) CollectTensor(t, k);
    for (auto it = n["weights"].begin(); it != n["weights"].end(); ++it) CollectTensor(*it, k);
  }
}

std::set<std::string> DocKeys(const std::vector<msc::tools::FieldDoc>& docs) {
  std::set<std::string> out;
  for (const auto& d : docs) out.insert(d.path.substr(d.path.rfind('.') + 1));
  return out;
}

}  // namespace

TEST_CASE("every opdef re-emitted by OpDefYaml loads back as the same definition") {
  const auto reg = msc::opdef::OpDefRegistry::LoadDir(kOpdefs);
  REQUIRE(reg.all().size() > 100);
  for (const auto& [optype, def] : reg.all()) {
    msc::opdef::OpDefRegistry back;
    back.LoadString(msc::tools::OpDefYaml(def, optype), "emitted.yaml");
    REQUIRE(back.Find(optype));
    CheckSameDef(def, *back.Find(optype));
  }
  // under another name, and values YAML would misread if written plainly
  msc::opdef::OpDef odd = *reg.Find("clip");
  odd.summary = "a: b # not a comment";
  odd.attrs[0].choices = {Json(-HUGE_VAL), Json(0.5)};
  odd.attrs[0].doc = "yes";
  msc::opdef::OpDefRegistry back;
  back.LoadString(msc::tools::OpDefYaml(odd, "my.clip"), "emitted.yaml");
  REQUIRE(back.Find("my.clip"));
  CheckSameDef(odd, *back.Find("my.clip"));
}

TEST_CASE("the context field docs cover exactly what BuildContext builds") {
  const auto opdefs = msc::opdef::OpDefRegistry::LoadDir(kOpdefs);
  Keys keys;
  for (const auto& backend : msc::emit::ListBackends(kTemplates)) {
    const auto spec = msc::emit::LoadBackendSpec(kTemplates, backend);
    for (const char* model : {"conv_relu", "mlp"}) {
      auto graph = msc::ir::LoadGraph(kReal + "/" + model + "/graph.json");
      msc::ir::Validate(graph, &opdefs);
      Collect(msc::emit::BuildContext(graph, opdefs, spec)["graph"], keys);
    }
  }
  // `code` is filled by generate (RenderSnippets) after BuildContext: present, as {}. `folded`
  // exists only when generate hands Context the passes' record (tests/unit/test_generate_speed.cc).
  keys.node.insert("folded");
  CHECK(keys.node == DocKeys(msc::tools::NodeFieldDocs()));
  CHECK(keys.tensor == DocKeys(msc::tools::TensorFieldDocs()));
  CHECK(keys.graph == DocKeys(msc::tools::GraphFieldDocs()));
}

TEST_CASE("a stub snippet points to the context reference and raises with the marker") {
  const auto opdefs = msc::opdef::OpDefRegistry::LoadDir(kOpdefs);
  const auto spec = msc::emit::LoadBackendSpec(kTemplates, "vulkan");
  const std::string stub = msc::tools::SnippetStub(spec, *opdefs.Find("nn.conv2d"), "`a test`");
  CHECK(stub.find("docs/template-context.md") != stub.npos);
  CHECK(stub.find("--node NAME --backend vulkan") != stub.npos);
  CHECK(stub.find("op_sections (run)") != stub.npos);
  // nothing copied from the context reference or the opdef beyond the summary
  for (const auto& d : msc::tools::NodeFieldDocs()) CHECK(stub.find(d.doc) == stub.npos);
  CHECK(stub.find("strides") == stub.npos);
  CHECK(stub.find(msc::tools::kStubMarker) != stub.npos);
  CHECK(stub.find("raise_error(\"nn.conv2d is not implemented yet on the vulkan backend") !=
        stub.npos);
  CHECK(stub.find("#}") == stub.find("-#}") + 1);  // the header is one comment, closed once
}

TEST_CASE("the context reference documents every field, one table row each") {
  const std::string md = msc::tools::ContextReferenceMarkdown();
  for (const auto* docs : {&msc::tools::SnippetFieldDocs(), &msc::tools::ProjectFieldDocs(),
                           &msc::tools::GraphFieldDocs(), &msc::tools::NodeFieldDocs(),
                           &msc::tools::TensorFieldDocs()})
    for (const auto& d : *docs) CHECK(md.find("| `" + d.path + "` | ") != md.npos);
  // a '|' inside a cell is escaped so the row keeps three columns
  CHECK(md.find("null\\|T") != md.npos);
}

TEST_CASE("case stubs write attrs as MSC strings and a reference that raises") {
  const auto opdefs = msc::opdef::OpDefRegistry::LoadDir(kOpdefs);
  const std::string conv = msc::tools::CaseStub(*opdefs.Find("nn.conv2d"), "nn_x", "`t`");
  CHECK(conv.find("@case\ndef case_nn_x():") != conv.npos);
  CHECK(conv.find("\"strides\": \"1,1\"") != conv.npos);
  CHECK(conv.find("\"padding\": \"0,0,0,0\"") != conv.npos);
  CHECK(conv.find("\"groups\": \"1\"") != conv.npos);
  CHECK(conv.find("\"weight\": b.weight(") != conv.npos);
  CHECK(conv.find("raise NotImplementedError(") != conv.npos);
  CHECK(conv.find("b.node(\"nn_x\", \"nn.conv2d\", inputs, reference") != conv.npos);
  const std::string bn = msc::tools::CaseStub(*opdefs.Find("nn.batch_norm"), "bn", "`t`");
  CHECK(bn.find("\"epsilon\": \"0.000010\"") != bn.npos);
  CHECK(bn.find("\"center\": \"1\"") != bn.npos);
  const std::string sum = msc::tools::CaseStub(*opdefs.Find("sum"), "s", "`t`");
  CHECK(sum.find("\"axis\": \"\"") != sum.npos);  // null -> ""
  const std::string cat = msc::tools::CaseStub(*opdefs.Find("concat"), "c", "`t`");
  CHECK(cat.find("b.input(\"x0\", [2, 3, 4]), b.input(\"x1\", [2, 3, 4])") != cat.npos);
}

TEST_CASE("DumpContextJson shows infinities as Python's json does") {
  Json v = {{"min", -HUGE_VAL}, {"max", HUGE_VAL}, {"shape", {1, 2}}, {"x", {{"a", 1}}}};
  CHECK(msc::tools::DumpContextJson(v) ==
        "{\n  \"min\": -Infinity,\n  \"max\": Infinity,\n  \"shape\": [1, 2],\n  \"x\": {\n"
        "    \"a\": 1\n  }\n}\n");
  CHECK(msc::tools::DumpContextJson(Json::array()) == "[]\n");
}
