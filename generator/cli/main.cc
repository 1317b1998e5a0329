// msc-codegen: MSCGraph (+ weights) -> standalone projects for the backends in templates/.
//
//   msc-codegen generate --graph G.json|M.onnx [--weights W] --backend torch --out DIR
//                        [--golden DIR] [--shape NAME=DIMS] [--force]
//   msc-codegen import M.onnx --out DIR [--input-shape NAME=DIMS] [--golden-from DIR]
//                                     ONNX -> graph.json + weights.safetensors (+ golden/)
//   msc-codegen inspect G.json        MSC's text form of a graph
//   msc-codegen validate G.json       schema + semantic checks against opdefs
//   msc-codegen visualize G.json -o OUT.svg|OUT.dot|OUT.prototxt   a picture of the graph
//   msc-codegen render T.j2 --data D.json
//   msc-codegen ops [--traits [--json]]  optype x backend coverage matrix; the op traits
//   msc-codegen completion bash       bash completion script (from the CLI definition)
//   msc-codegen new-op OPTYPE [--like OP]        opdef entry + snippet stubs + test case stub
//   msc-codegen new-backend NAME [--from B]      templates/NAME/ (skeleton, or a copy of B)
//   msc-codegen context G.json --node N [--backend B]   the context a node's snippet sees
//   msc-codegen --version             version (+ git describe of the build's checkout)
//
// Exit status 0 on success; on error one "error: ..." line block on stderr and status 1
// (2 for command-line usage errors).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <boost/filesystem.hpp>

#include "generator/cli/cli_app.h"
#include "generator/common/error.h"
#include "generator/emit/backend_spec.h"
#include "generator/emit/generate.h"
#include "generator/emit/writer.h"
#include "generator/frontend/onnx/onnx_import.h"
#include "generator/ir/inspect.h"
#include "generator/ir/specialize.h"
#include "generator/ir/validate.h"
#include "generator/ir/visualize.h"
#include "generator/opdef/opdef.h"
#include "generator/tmpl/environment.h"
#include "generator/tools/context_doc.h"
#include "generator/tools/scaffold.h"

namespace fs = boost::filesystem;

namespace {

/// Where templates/ and opdefs/ live: $MSC_CODEGEN_HOME, else <exe>/../share/msc-codegen (an
/// install), else the source tree this binary was built from.
std::string FindHome(const char* argv0) {
  if (const char* env = std::getenv("MSC_CODEGEN_HOME")) return env;
  boost::system::error_code ec;
  fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (ec) exe = fs::absolute(argv0);
  fs::path share = exe.parent_path().parent_path() / "share" / "msc-codegen";
  if (fs::is_directory(share / "templates")) return share.string();
  return MSC_SOURCE_DIR;
}

std::string ReadFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw msc::Error(path + ": cannot open " + what);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// `ops --traits`: the trait vocabulary (opdef::Traits()) with the optypes of each.
int PrintTraits(const std::string& opdefs_dir, bool json) {
  const auto opdefs = msc::opdef::OpDefRegistry::LoadDir(opdefs_dir);
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& t : msc::opdef::Traits())
    out.push_back({{"name", t.name},
                   {"doc", t.doc},
                   {"inputs", t.inputs},
                   {"optypes", opdefs.WithTrait(t.name)}});
  if (json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  for (const auto& t : out) {
    std::cout << t["name"].get<std::string>() << ": " << t["doc"].get<std::string>() << "\n ";
    for (const auto& o : t["optypes"]) std::cout << " " << o.get<std::string>();
    std::cout << "\n";
  }
  return 0;
}

int PrintOps(const std::string& templates, const std::string& opdefs_dir) {
  auto opdefs = msc::opdef::OpDefRegistry::LoadDir(opdefs_dir);
  std::vector<msc::emit::BackendSpec> specs;
  for (const auto& b : msc::emit::ListBackends(templates))
    specs.push_back(msc::emit::LoadBackendSpec(templates, b, opdefs));
  size_t width = 6;
  for (const auto& [optype, def] : opdefs.all()) width = std::max(width, optype.size());
  std::cout << std::string("optype") << std::string(width - 6 + 2, ' ');
  // A column fits the backend name and the widest cell ("stub").
  auto column = [](const msc::emit::BackendSpec& s) {
    return std::max<size_t>(s.name.size(), 4) + 2;
  };
  for (const auto& s : specs) std::cout << s.name << std::string(column(s) - s.name.size(), ' ');
  std::cout << "\n";
  std::vector<size_t> counts(specs.size(), 0);
  for (const auto& [optype, def] : opdefs.all()) {
    std::cout << optype << std::string(width - optype.size() + 2, ' ');
    for (size_t i = 0; i < specs.size(); ++i) {
      const auto& s = specs[i];
      bool ok = msc::emit::HasSnippet(s, optype) ||
                std::find(s.no_snippet.begin(), s.no_snippet.end(), optype) != s.no_snippet.end();
      const bool na = !def.not_for_inference.empty();
      const bool stub = ok && msc::tools::IsSnippetStub(s, optype);  // new-op / new-backend
      counts[i] += ok && !na && !stub;
      std::string cell = na ? "n/a" : stub ? "stub" : ok ? "yes" : "-";
      std::cout << cell << std::string(column(s) - cell.size(), ' ');
    }
    std::cout << "\n";
  }
  std::cout << std::string(width + 2, '-') << "\n"
            << "total " << opdefs.all().size()
            << std::string(width + 2 - 6 - std::to_string(opdefs.all().size()).size(), ' ');
  for (size_t i = 0; i < specs.size(); ++i) {
    std::string cell = std::to_string(counts[i]);
    std::cout << cell
              << std::string(specs[i].name.size() + 2 > cell.size()
                                 ? specs[i].name.size() + 2 - cell.size()
                                 : 1,
                             ' ');
  }
  std::cout << "\n";
  for (const auto& [optype, def] : opdefs.all())
    if (!def.not_for_inference.empty())
      std::cout << "n/a " << optype << ": " << def.not_for_inference << "\n";
  return 0;
}

/// `import`: ONNX model -> DIR/graph.json, DIR/weights.safetensors and, from an ONNX test-data
/// folder, DIR/golden/{inputs,outputs}.safetensors; committed atomically.
/// `msc-codegen backends`: every backend under `templates` with its summary and backend.yaml
/// `test` section; --json for the test suite (tests/common/backends.py).
int PrintBackends(const std::string& templates, bool json) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& b : msc::emit::ListBackends(templates)) {
    const auto spec = msc::emit::LoadBackendSpec(templates, b);
    nlohmann::ordered_json test = nullptr;
    if (spec.has_test)
      test = {{"run", spec.test.run},
              {"python", spec.test.python},
              {"merge", spec.test.merge},
              {"atol", spec.test.atol},
              {"env", spec.test.env}};
    std::vector<std::string> precisions;
    for (const auto& [name, p] : spec.precisions) precisions.push_back(name);
    out.push_back({{"name", spec.name},
                   {"summary", spec.summary},
                   {"precisions", precisions},
                   // a memory plan needs static shapes (analyses::PlanMemory)
                   {"dynamic_shapes", spec.memory.alignment == 0},
                   {"test", test}});
  }
  if (json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  size_t width = 7;
  for (const auto& b : out) width = std::max(width, b["name"].get<std::string>().size());
  for (const auto& b : out) {
    std::string run = "(no test section)";
    if (!b["test"].is_null()) {
      run.clear();
      for (const auto& w : b["test"]["run"]) run += (run.empty() ? "" : " ") + w.get<std::string>();
    }
    const std::string name = b["name"];
    std::cout << name << std::string(width - name.size() + 2, ' ')
              << b["summary"].get<std::string>() << "\n"
              << std::string(width + 2, ' ') << "test: " << run << "\n";
  }
  return 0;
}

int ImportCommand(const std::string& model, const std::string& out_dir,
                  const std::map<std::string, std::vector<int64_t>>& shapes,
                  const std::string& golden_from, bool force, const std::string& opdefs_dir) {
  namespace onnx_import = msc::frontend::onnx_import;
  onnx_import::ImportOptions options;
  options.input_shapes = shapes;
  auto result =
      std::make_shared<onnx_import::ImportResult>(onnx_import::ImportOnnx(model, options));
  auto opdefs = msc::opdef::OpDefRegistry::LoadDir(opdefs_dir);
  msc::ir::Validate(result->graph, &opdefs);  // what import writes, generate accepts
  msc::emit::OutputTree tree;
  tree.AddText("graph.json", msc::ir::SaveGraphString(result->graph) + "\n");
  tree.AddWriter("weights.safetensors", [result](const std::string& p) {
    msc::weights::WriteSafetensors(p, result->weights);
  });
  if (!golden_from.empty()) {
    auto golden = std::make_shared<std::pair<msc::weights::TensorMap, msc::weights::TensorMap>>();
    onnx_import::ReadOnnxGolden(golden_from, result->graph, &golden->first, &golden->second);
    tree.AddWriter("golden/inputs.safetensors", [golden](const std::string& p) {
      msc::weights::WriteSafetensors(p, golden->first);
    });
    tree.AddWriter("golden/outputs.safetensors", [golden](const std::string& p) {
      msc::weights::WriteSafetensors(p, golden->second);
    });
  }
  tree.Commit(out_dir, force);
  std::cerr << "msc-codegen: imported " << model << ": " << result->graph.nodes.size() << " nodes, "
            << result->weights.size() << " weights -> " << out_dir << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "msc-codegen: MSCGraph (TVM MSC's DAG IR, JSON) + weights -> standalone backend projects"};
  app.require_subcommand(1);
  app.set_version_flag("--version", msc::cli::VersionString());
  const std::string home = FindHome(argv[0]);
  std::string templates = (fs::path(home) / "templates").string();
  std::string opdefs_dir = (fs::path(home) / "opdefs").string();
  app.add_option("--templates", templates, "folder of backends (templates/<backend>/backend.yaml)")
      ->capture_default_str();
  app.add_option("--opdefs", opdefs_dir, "folder of opdef YAML files")->capture_default_str();
  size_t max_nodes = msc::ir::kDefaultMaxNodes;
  app.add_option("--max-nodes", max_nodes,
                 "refuse graphs with more nodes (generation needs ~7 KB of memory per node)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);

  msc::emit::GenerateOptions gen;
  auto* generate = app.add_subcommand("generate", "generate a standalone project for a backend");
  generate->add_option("--graph", gen.graph_path, "MSCGraph JSON file, or an ONNX model")
      ->required();
  generate->add_option("--weights", gen.weights_path,
                       "weights: safetensors or TVM param dict (.bin)");
  generate->add_option("--backend", gen.backend, "backend: a folder name under --templates")
      ->required();
  generate->add_option("--out", gen.out_dir, "output folder (replaced atomically)")->required();
  generate->add_option("--golden", gen.golden_dir,
                       "folder with inputs.safetensors and outputs.safetensors");
  std::vector<std::string> shape_args;
  generate->add_option("--shape", shape_args,
                       "NAME=D0,D1,...: a static shape for graph input NAME (tensor name, alias or "
                       "node name); specializes the graph's dynamic dims (MSC prims); repeatable");
  generate->add_flag("--force", gen.force,
                     "replace a non-empty --out that msc-codegen did not generate");
  generate
      ->add_option("--precision", gen.precision,
                   "fp32 (default: the graph's dtypes) or fp16: float32 weights of the backend's "
                   "heavy ops (backend.yaml precision.fp16, e.g. conv and linear weights) stored "
                   "as float16, computed in float32; the golden tolerance is the backend's")
      ->check(CLI::IsMember(msc::emit::PrecisionNames()));
  generate->add_flag("--no-passes", gen.no_passes,
                     "skip the backend's graph passes (backend.yaml passes: constant and BatchNorm "
                     "folding, ...): every node is emitted by its own snippet");

  std::string import_model, import_out, golden_from;
  std::vector<std::string> input_shape_args;
  bool import_force = false;
  auto* import_cmd = app.add_subcommand(
      "import", "import an ONNX model: writes graph.json, weights.safetensors (and golden/)");
  import_cmd->add_option("model", import_model, "ONNX model file")->required();
  import_cmd->add_option("--out", import_out, "output folder (replaced atomically)")->required();
  import_cmd->add_option("--input-shape", input_shape_args,
                         "NAME=D0,D1,...: static shape for ONNX graph input NAME; repeatable");
  import_cmd->add_option("--golden-from", golden_from,
                         "ONNX test-data folder (input_N.pb, output_N.pb) -> golden/*.safetensors");
  import_cmd->add_flag("--force", import_force,
                       "replace a non-empty --out that msc-codegen did not write");

  std::string graph_path;
  auto* inspect = app.add_subcommand("inspect", "print a graph in MSC's text form");
  inspect->add_option("graph", graph_path, "MSCGraph JSON file")->required();
  auto* validate =
      app.add_subcommand("validate", "check a graph against MSC's rules and the opdefs");
  validate->add_option("graph", graph_path, "MSCGraph JSON file")->required();
  std::string viz_out, viz_format;
  auto* visualize = app.add_subcommand(
      "visualize", "draw a graph: .svg (needs Graphviz's dot), .dot, or MSC's .prototxt (Netron)");
  visualize->add_option("graph", graph_path, "MSCGraph JSON file")->required();
  visualize->add_option("-o,--out", viz_out, "output file: OUT.svg, OUT.dot or OUT.prototxt")
      ->required();
  visualize->add_option("--format", viz_format, "format, instead of the extension of --out")
      ->check(CLI::IsMember({"svg", "dot", "prototxt"}));

  std::string template_path, data_path;
  auto* render = app.add_subcommand("render", "render a Jinja-style template to stdout");
  render
      ->add_option("template", template_path, "template file; include/import resolve in its folder")
      ->required();
  render->add_option("--data", data_path, "JSON file with the template variables")->required();

  auto* ops = app.add_subcommand("ops", "print the optype x backend coverage matrix");
  bool ops_traits = false, ops_json = false;
  auto* traits_flag =
      ops->add_flag("--traits", ops_traits,
                    "instead: every op trait (opdefs' `traits`), what it means and its optypes");
  ops->add_flag("--json", ops_json, "with --traits: as JSON ([{name, doc, inputs, optypes}])")
      ->needs(traits_flag);
  bool backends_json = false;
  auto* backends_cmd = app.add_subcommand(
      "backends", "list the backends under --templates with how the tests run their projects");
  backends_cmd->add_flag("--json", backends_json,
                         "as JSON (name, summary, precisions besides fp32, dynamic_shapes, test)");

  msc::tools::NewOpOptions new_op;
  auto* new_op_cmd = app.add_subcommand(
      "new-op", "scaffold an optype: opdef entry, a snippet per backend, a test case stub");
  new_op_cmd->add_option("optype", new_op.optype, "the new optype, e.g. nn.my_op")->required();
  new_op_cmd->add_option("--like", new_op.like,
                         "copy this optype's opdef entry and snippets instead of stubs");
  new_op_cmd->add_option("--cases", new_op.cases_file,
                         "test cases file for the case stub (default: "
                         "<opdefs>/../tests/ops/cases/cases_ops.py when it exists)");
  msc::tools::NewBackendOptions new_backend;
  auto* new_backend_cmd = app.add_subcommand(
      "new-backend", "scaffold a backend folder under --templates (skeleton or a copy)");
  new_backend_cmd->add_option("name", new_backend.name, "the new backend's folder name")
      ->required();
  new_backend_cmd->add_option("--from", new_backend.from, "copy this backend's folder");
  new_backend_cmd->add_option("--ext", new_backend.ext,
                              "skeleton: extension of the generated code files (default txt)");
  msc::emit::GenerateOptions ctx_opts;
  msc::emit::ContextQuery ctx_query;
  std::vector<std::string> ctx_shape_args;
  auto* context_cmd = app.add_subcommand(
      "context", "print the template context generate renders a node's snippet with (JSON)");
  context_cmd->add_option("graph", ctx_opts.graph_path, "MSCGraph JSON file, or an ONNX model");
  auto* ctx_node = context_cmd->add_option("--node", ctx_query.node, "node name");
  context_cmd->add_option("--backend", ctx_opts.backend, "backend (default torch)")
      ->default_str("torch");
  context_cmd->add_option("--weights", ctx_opts.weights_path,
                          "weights, bound and checked as generate does (optional)");
  context_cmd->add_option("--section", ctx_query.section, "op_sections entry (default: the first)");
  context_cmd->add_option("--shape", ctx_shape_args, "NAME=D0,D1,...: as generate --shape");
  context_cmd->add_option("--golden", ctx_opts.golden_dir, "as generate --golden (--project)");
  context_cmd
      ->add_option("--precision", ctx_opts.precision,
                   "as generate --precision (--project: options.precision; needs --weights)")
      ->check(CLI::IsMember(msc::emit::PrecisionNames()));
  auto* ctx_project = context_cmd->add_flag("--project", ctx_query.project,
                                            "the context of the project files instead of a node's");
  ctx_node->excludes(ctx_project);
  bool ctx_reference = false;
  context_cmd
      ->add_flag("--reference", ctx_reference,
                 "print the Markdown reference of every context field (docs/template-context.md)")
      ->excludes(ctx_node)
      ->excludes(ctx_project);

  std::string shell;
  auto* completion = app.add_subcommand(
      "completion", "print a shell completion script derived from these subcommands and options");
  completion->add_option("shell", shell, "shell")->required()->check(CLI::IsMember({"bash"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return msc::cli::HandleParseError(app, e);  // --help, --version: 0; usage errors: 2
  }
  try {
    if (*generate) {
      for (const auto& arg : shape_args) {
        auto [name, dims] = msc::ir::ParseShapeArg(arg);
        if (!gen.input_shapes.emplace(name, dims).second)
          throw msc::Error("--shape " + name + " is given twice");
      }
      gen.templates_root = templates;
      gen.opdefs_dir = opdefs_dir;
      gen.max_nodes = max_nodes;
      auto summary = msc::emit::Generate(gen);
      std::cerr << "msc-codegen: wrote " << summary.files << " files (" << summary.nodes
                << " nodes, " << summary.weights << " weights) to " << gen.out_dir << "\n";
    } else if (*import_cmd) {
      std::map<std::string, std::vector<int64_t>> shapes;
      for (const auto& arg : input_shape_args) {
        auto [name, dims] = msc::ir::ParseShapeArg(arg);
        if (!shapes.emplace(name, dims).second)
          throw msc::Error("--input-shape " + name + " is given twice");
      }
      return ImportCommand(import_model, import_out, shapes, golden_from, import_force, opdefs_dir);
    } else if (*inspect) {
      std::cout << msc::ir::InspectGraph(msc::ir::LoadGraph(graph_path, max_nodes));
    } else if (*validate) {
      auto opdefs = msc::opdef::OpDefRegistry::LoadDir(opdefs_dir);
      auto graph = msc::ir::LoadGraph(graph_path, max_nodes);
      msc::ir::Validate(graph, &opdefs);
      std::cout << graph_path << ": valid (" << graph.nodes.size() << " nodes)\n";
    } else if (*visualize) {
      std::string why;
      auto format = msc::ir::ResolveVizFormat(viz_out, viz_format, &why);
      if (!format) {
        std::cerr << "error: " << why << "\n";
        return 2;
      }
      auto graph = msc::ir::LoadGraph(graph_path, max_nodes);
      msc::ir::Validate(graph, nullptr);  // structure only: any optype can be drawn
      msc::ir::WriteVisualization(graph, viz_out, *format);
    } else if (*render) {
      msc::tmpl::Json data;
      const std::string text = ReadFile(data_path, "data file");
      try {
        data = msc::tmpl::Json::parse(text);
      } catch (const nlohmann::json::parse_error& e) {
        throw msc::Error(data_path + ": invalid JSON: " + e.what());
      }
      fs::path t(template_path);
      if (!fs::is_regular_file(t)) throw msc::Error(template_path + ": template not found");
      fs::path dir = t.parent_path().empty() ? fs::path(".") : t.parent_path();
      try {
        msc::tmpl::Environment env(dir.string());
        msc::emit::RegisterCodegenFilters(env);
        std::cout << env.Render(t.filename().string(), data);
      } catch (const msc::tmpl::TemplateError& e) {
        throw msc::Error(e.what());  // the engine's own error type (generator/tmpl/error.h)
      }
    } else if (*ops) {
      return ops_traits ? PrintTraits(opdefs_dir, ops_json) : PrintOps(templates, opdefs_dir);
    } else if (*backends_cmd) {
      return PrintBackends(templates, backends_json);
    } else if (*new_op_cmd || *new_backend_cmd) {
      msc::tools::ScaffoldReport report;
      if (*new_op_cmd) {
        new_op.templates_root = templates;
        new_op.opdefs_dir = opdefs_dir;
        if (new_op.cases_file.empty()) new_op.cases_file = msc::tools::DefaultCasesFile(opdefs_dir);
        report = msc::tools::NewOp(new_op);
      } else {
        new_backend.templates_root = templates;
        new_backend.opdefs_dir = opdefs_dir;
        report = msc::tools::NewBackend(new_backend);
      }
      for (const auto& f : report.created) std::cout << "created  " << f << "\n";
      for (const auto& f : report.appended) std::cout << "appended " << f << "\n";
      for (const auto& n : report.notes) std::cerr << "msc-codegen: " << n << "\n";
    } else if (*context_cmd) {
      if (ctx_reference) {
        if (!ctx_opts.graph_path.empty()) throw msc::Error("context --reference takes no graph");
        std::cout << msc::tools::ContextReferenceMarkdown();
        return 0;
      }
      if (ctx_opts.graph_path.empty()) throw msc::Error("context: give a graph (or --reference)");
      if (ctx_query.node.empty() && !ctx_query.project)
        throw msc::Error("context: give --node NAME (or --project)");
      if (ctx_opts.backend.empty()) ctx_opts.backend = "torch";
      ctx_opts.max_nodes = max_nodes;
      for (const auto& arg : ctx_shape_args) {
        auto [name, dims] = msc::ir::ParseShapeArg(arg);
        if (!ctx_opts.input_shapes.emplace(name, dims).second)
          throw msc::Error("--shape " + name + " is given twice");
      }
      ctx_opts.templates_root = templates;
      ctx_opts.opdefs_dir = opdefs_dir;
      std::cout << msc::tools::DumpContextJson(msc::emit::TemplateContext(ctx_opts, ctx_query));
    } else if (*completion) {
      std::cout << msc::cli::BashCompletion(app, "msc-codegen");
    }
  } catch (const msc::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: internal: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
