// BackendSpec: what templates/<backend>/backend.yaml says about a backend. A backend is data:
// this file is all the C++ knows about any of them (see templates/README.md for the format).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "generator/analyses/fusion.h"
#include "generator/analyses/memory_plan.h"
#include "generator/opdef/opdef.h"

namespace msc::emit {

/// A reduced precision a backend offers (backend.yaml `precision.<name>`, `generate --precision
/// <name>`). Today: fp16, weights stored as float16.
struct Precision {
  std::string name;  ///< "fp16"
  /// optype -> weight roles (node.weights keys) whose float32 tensors are stored as float16
  /// (passes::StoreWeightsAsFloat16: a tensor any other node or role reads stays float32).
  std::map<std::string, std::vector<std::string>> weights;
  /// Optional `activations: {mixed: [optype...], same: [optype...]}`: the optypes whose kernels
  /// take float16 activations (passes::StoreActivationsAsFloat16). `mixed`: inputs and outputs
  /// of either float dtype in any combination (the float kernels: reads widen, the output's dtype
  /// picks the store); `same`: outputs of their inputs' dtype (data movement, unary ops,
  /// reductions). Both empty: activations stay float32.
  std::vector<std::string> activations_mixed;
  std::vector<std::string> activations_same;
  /// The golden check's tolerance for float outputs at this precision: |a - b| <= atol +
  /// rtol * |b| (the projects state it; the float32 default is the backend's own).
  double atol = 0;
  double rtol = 0;
};

struct ProjectFile {
  std::string template_name;  ///< relative to the backend folder, e.g. "project/model.py.j2".
  std::string output;         ///< relative to --out, e.g. "model.py".
};

struct CopyTree {
  std::string
      from;        ///< relative to the backend folder (may leave it, e.g. "../../runtime/vulkan").
  std::string to;  ///< relative to --out.
  /// Optional filter: files whose path relative to `from` matches the glob `filter_match`
  /// (fnmatch(3) without FNM_PATHNAME: '*' also matches '/') are copied only when the project
  /// template `filter_keep` (relative to the backend folder, rendered with the project context)
  /// lists them, one path relative to `from` per line. Other files are always copied.
  std::string filter_match;
  std::string filter_keep;
};

/// How the test suite runs a generated project of the backend (backend.yaml `test`): read by the
/// tests through `msc-codegen backends --json` (tests/common/backends.py), never by generate.
struct TestSpec {
  /// The command run in the project folder, as argv; the word `python` is the interpreter
  /// `python` names.
  std::vector<std::string> run;
  /// Which interpreter `python` in `run` is: "debian" (MSC_PYTHON: Debian's torch 1.13, numpy,
  /// safetensors), "tvm" (the TVM under test: tests/common/tvm_under_test.py, else the stand-in
  /// tests/relax/fake_tvm on MSC_PYTHON), or "" when `run` does not use one.
  std::string python;
  /// Many small graphs are run as one merged project (a build per project costs minutes).
  bool merge = false;
  /// The absolute float error the backend's kernels may add to exact float32 math (e.g. a GPU's
  /// approximate transcendentals); a test comparing with golden data made elsewhere (ONNX's own
  /// tests) takes max(its atol, this). 0: none beyond float32 rounding.
  double atol = 0;
  /// Extra environment of the run (e.g. MSC_VK_VALIDATION=1), sorted by name.
  std::map<std::string, std::string> env;
};

struct BackendSpec {
  std::string name;
  std::string summary;
  std::string dir;          ///< the backend folder.
  std::string op_template;  ///< e.g. "ops/{path}.py.j2"; {path} = optype with '.' -> '/'.
  std::vector<std::string> op_sections;  ///< each per-op snippet is rendered once per section.
  std::vector<std::string>
      no_snippet;  ///< optypes rendered by project templates alone (e.g. input).
  std::vector<ProjectFile> files;
  std::vector<CopyTree> copy;
  std::string weights_output;               ///< where bound weights go ("weights.safetensors").
  std::string golden_output;                ///< folder for golden data ("golden").
  std::vector<std::string> reserved_names;  ///< never used as identifiers (keywords, modules).
  /// backend.yaml `memory_plan` {alignment, alias, concat_in_place}: one arena for all
  /// activations when memory.alignment > 0 (a power of two; 0: no `memory_plan`, no plan).
  /// See analyses/memory_plan.h.
  analyses::MemoryOptions memory{0, {}, {}};
  /// backend.yaml `fuse_epilogues` {producers, epilogues, residual, residual_producers, norms,
  /// norm_producers} and `fuse_elementwise` {ops, selects, max_ops, max_inputs}; see
  /// analyses/fusion.h. Residual and norm producers are subsets of the producers; chains need
  /// both limits.
  analyses::FusionOptions fusion;
  /// Graph passes run before the context is built, in order (passes::PassNames()).
  std::vector<std::string> passes;
  /// Reduced precisions the backend offers besides float32, by name (PrecisionNames()).
  std::map<std::string, Precision> precisions;
  /// How tests run its projects; absent (has_test false): the suite cannot run them.
  bool has_test = false;
  TestSpec test;

  /// backend.yaml `trait_snippets: {TRAIT: TEMPLATE}` in file order: the snippet of an op that
  /// has that opdef trait and no snippet of its own (vulkan: every `unary_math` op is one
  /// ops::Unary call), so such an op needs no per-op file. Paths relative to dir.
  std::vector<std::pair<std::string, std::string>> trait_snippets;
  /// optype -> its trait snippet (filled by ResolveTraits; the first matching trait wins).
  std::map<std::string, std::string> trait_snippet_of;

  /// The op's own snippet path, relative to dir: "nn.conv2d" -> "ops/nn/conv2d.py.j2" (where
  /// new-op writes one; it may not exist).
  std::string OpTemplateFor(const std::string& optype) const;
  /// The snippet that renders the optype: its own when that file exists, else its trait
  /// snippet (trait_snippets, after ResolveTraits), else its own path (missing: unsupported).
  std::string SnippetFor(const std::string& optype) const;
};

/// Names `generate --precision` takes: "fp32" (the default: the graph's own dtypes) and "fp16".
const std::vector<std::string>& PrecisionNames();

/// Loads <templates_root>/<backend>/backend.yaml. Strict like the opdef loader: unknown or
/// duplicate keys and bad types are msc::Error "<file>:<line>:<col>: ...". An unknown backend
/// lists the available ones. Optype lists (memory_plan, fuse_*, precision activations) may hold
/// `trait:NAME` entries (opdef::Traits(); an unknown name is an error at its entry), kept as
/// written: a spec whose lists are used needs ResolveTraits, or the overload below.
BackendSpec LoadBackendSpec(const std::string& templates_root, const std::string& backend);
/// LoadBackendSpec, then ResolveTraits with `opdefs`: what generate uses.
BackendSpec LoadBackendSpec(const std::string& templates_root, const std::string& backend,
                            const opdef::OpDefRegistry& opdefs);
/// Replaces every `trait:NAME` entry of the spec's optype lists by the optypes with that trait
/// (sorted), keeping the first of any repeated optype.
void ResolveTraits(BackendSpec& spec, const opdef::OpDefRegistry& opdefs);

/// Backend folder names under templates_root that hold a backend.yaml, sorted.
std::vector<std::string> ListBackends(const std::string& templates_root);

}  // namespace msc::emit
