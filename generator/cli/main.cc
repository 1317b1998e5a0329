// msc-codegen: MSCGraph (+ weights) -> standalone projects for the backends in templates/.
//
//   msc-codegen generate --graph G.json|M.onnx [--weights W] --backend torch --out DIR
//                        [--golden DIR] [--shape NAME=DIMS] [--force]
//   msc-codegen import M.onnx --out DIR [--input-shape NAME=DIMS] [--golden-from DIR]
//                                     ONNX -> graph.json + weights.safetensors (+ golden/)
//   msc-codegen inspect G.json        MSC's text form of a graph
//   msc-codegen validate G.json       schema + semantic checks against opdefs
//   msc-codegen render T.j2 --data D.json
//   msc-codegen ops                   optype x backend coverage matrix
//
// Exit status 0 on success; on error one "error: ..." line block on stderr and status 1
// (2 for command-line usage errors).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <boost/filesystem.hpp>

#include "generator/common/error.h"
#include "generator/emit/backend_spec.h"
#include "generator/emit/generate.h"
#include "generator/emit/writer.h"
#include "generator/frontend/onnx/onnx_import.h"
#include "generator/ir/inspect.h"
#include "generator/ir/specialize.h"
#include "generator/ir/validate.h"
#include "generator/opdef/opdef.h"
#include "generator/tmpl/environment.h"

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

int PrintOps(const std::string& templates, const std::string& opdefs_dir) {
  auto opdefs = msc::opdef::OpDefRegistry::LoadDir(opdefs_dir);
  std::vector<msc::emit::BackendSpec> specs;
  for (const auto& b : msc::emit::ListBackends(templates))
    specs.push_back(msc::emit::LoadBackendSpec(templates, b));
  size_t width = 6;
  for (const auto& [optype, def] : opdefs.all()) width = std::max(width, optype.size());
  std::cout << std::string("optype") << std::string(width - 6 + 2, ' ');
  for (const auto& s : specs) std::cout << s.name << "  ";
  std::cout << "\n";
  std::vector<size_t> counts(specs.size(), 0);
  for (const auto& [optype, def] : opdefs.all()) {
    std::cout << optype << std::string(width - optype.size() + 2, ' ');
    for (size_t i = 0; i < specs.size(); ++i) {
      const auto& s = specs[i];
      bool ok = msc::emit::HasSnippet(s, optype) ||
                std::find(s.no_snippet.begin(), s.no_snippet.end(), optype) != s.no_snippet.end();
      const bool na = !def.not_for_inference.empty();
      counts[i] += ok && !na;
      std::string cell = na ? "n/a" : ok ? "yes" : "-";
      std::cout << cell << std::string(s.name.size() + 2 - cell.size(), ' ');
    }
    std::cout << "\n";
  }
  std::cout << std::string(width + 2, '-') << "\n"
            << "total " << opdefs.all().size()
            << std::string(width - 5 - std::to_string(opdefs.all().size()).size() + 2, ' ');
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
int ImportCommand(const std::string& model, const std::string& out_dir,
                  const std::map<std::string, std::vector<int64_t>>& shapes,
                  const std::string& golden_from, bool force, const std::string& opdefs_dir) {
  namespace onnx_import = msc::frontend::onnx_import;
  onnx_import::ImportOptions options;
  options.input_shapes = shapes;
  auto result = std::make_shared<onnx_import::ImportResult>(onnx_import::ImportOnnx(model, options));
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
  std::cerr << "msc-codegen: imported " << model << ": " << result->graph.nodes.size()
            << " nodes, " << result->weights.size() << " weights -> " << out_dir << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "msc-codegen: MSCGraph (TVM MSC's DAG IR, JSON) + weights -> standalone backend projects"};
  app.require_subcommand(1);
  const std::string home = FindHome(argv[0]);
  std::string templates = (fs::path(home) / "templates").string();
  std::string opdefs_dir = (fs::path(home) / "opdefs").string();
  app.add_option("--templates", templates, "folder of backends (templates/<backend>/backend.yaml)")
      ->capture_default_str();
  app.add_option("--opdefs", opdefs_dir, "folder of opdef YAML files")->capture_default_str();

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

  std::string template_path, data_path;
  auto* render = app.add_subcommand("render", "render a Jinja-style template to stdout");
  render
      ->add_option("template", template_path, "template file; include/import resolve in its folder")
      ->required();
  render->add_option("--data", data_path, "JSON file with the template variables")->required();

  auto* ops = app.add_subcommand("ops", "print the optype x backend coverage matrix");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help: 0; usage errors: 2
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
      std::cout << msc::ir::InspectGraph(msc::ir::LoadGraph(graph_path));
    } else if (*validate) {
      auto opdefs = msc::opdef::OpDefRegistry::LoadDir(opdefs_dir);
      auto graph = msc::ir::LoadGraph(graph_path);
      msc::ir::Validate(graph, &opdefs);
      std::cout << graph_path << ": valid (" << graph.nodes.size() << " nodes)\n";
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
      msc::tmpl::Environment env(dir.string());
      msc::emit::RegisterCodegenFilters(env);
      std::cout << env.Render(t.filename().string(), data);
    } else if (*ops) {
      return PrintOps(templates, opdefs_dir);
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
