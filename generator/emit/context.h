// The template context: an MSCGraph + its OpDefs + the analyses' results turned into one document
// that every backend's templates read. All derived facts (typed attrs with defaults, identifiers,
// byte sizes, layout dims) are computed here, once, in C++ — never in templates; the decisions
// (fusion, memory plan) are the analyses' (generator/analyses), run on the MSCGraph before it.
//
// Every field is documented in generator/tools/context_doc.cc (docs/template-context.md, written
// by `msc-codegen context --reference`; tests/unit/test_scaffold.cc checks that the docs cover
// exactly the fields built here).
//
// How it is built (issue 9: generation cost linear in the graph, no per-node JSON): Context makes
// the document directly as the template engine's native values (generator/tmpl/value.h), never as
// nlohmann JSON. Each tensor's object is built once and shared by its producer's outputs, every
// consumer's inputs and graph.inputs/outputs (values are immutable and reference counted, so
// sharing is indistinguishable from the copies JSON would hold, except to `is sameas`, which no
// template uses); dict keys are made once and carry their hash; attrs are parsed once per
// distinct (opdef attr, string) and defaults once per opdef attr.
#pragma once

#include <string>
#include <vector>

#include "generator/analyses/analyses.h"
#include "generator/emit/backend_spec.h"
#include "generator/ir/graph.h"
#include "generator/opdef/opdef.h"
#include "generator/passes/passes.h"
#include "generator/tmpl/value.h"

namespace msc::emit {

using Json = nlohmann::ordered_json;

/// The template context of one graph as native template values. Node objects are kept as their
/// entries so that generate can fill node.code section by section and hand each render the node
/// as it is at that point.
class Context {
 public:
  /// Assumes ir::Validate(graph, &opdefs) passed and `analyses` are of this graph (with the
  /// spec's options). Throws msc::Error naming the node for attrs that do not parse. With
  /// `folded` (the graph passes' record), every node gets `folded` = [names of the nodes folded
  /// into it] after `code`.
  Context(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs, const BackendSpec& spec,
          const analyses::GraphAnalyses& analyses,
          const std::vector<passes::Folded>* folded = nullptr);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  size_t num_nodes() const { return nodes_.size(); }
  /// Node i's object, its `code` holding the sections set so far.
  tmpl::Value Node(size_t i) const;
  /// Sets node i's code.<section> (appended, or replaced in place when already set).
  void SetCode(size_t i, const std::string& section, std::string code);
  /// The graph object (see above), its nodes as Node(i) returns them now.
  tmpl::Value Graph() const;

 private:
  struct NodeEntries {
    tmpl::ValueDict items;  // the node object's entries; items[code_at_] is `code`
    tmpl::ValueDict code;   // section -> rendered text
  };
  std::vector<NodeEntries> nodes_;
  size_t code_at_ = 0;
  tmpl::ValueDict graph_items_;  // graph_items_[nodes_at_] is `nodes`
  size_t nodes_at_ = 0;
};

/// {"graph": Context(graph, opdefs, spec, its GraphAnalyses).Graph()} as JSON (for tools and
/// tests; generate renders the native values), the spec's `trait:` entries resolved with
/// `opdefs`. Throws what the analyses and Context throw.
Json BuildContext(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs,
                  const BackendSpec& spec);

}  // namespace msc::emit
