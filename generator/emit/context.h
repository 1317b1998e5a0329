// The template context: an MSCGraph + its OpDefs turned into one JSON document that every backend's
// templates read. All derived facts (typed attrs with defaults, identifiers, byte sizes, layout
// dims, memory plan) are computed here, once, in C++ — never in templates.
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
// distinct (opdef attr, string) and defaults once per opdef attr. Epilogue fusion and the memory
// plan run on plain C++ records before any value exists (the JSON functions FuseEpilogues /
// PlanMemory below share that code).
#pragma once

#include <string>
#include <vector>

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
  /// Assumes ir::Validate(graph, &opdefs) passed. Throws msc::Error naming the node for attrs that
  /// do not parse. With `folded` (the graph passes' record), every node gets
  /// `folded` = [names of the nodes folded into it] after `code`.
  Context(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs, const BackendSpec& spec,
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

/// {"graph": Context(graph, opdefs, spec).Graph()} as JSON (for tools and tests; generate renders
/// the native values). Throws what Context throws.
Json BuildContext(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs,
                  const BackendSpec& spec);

/// Epilogue fusion: a node whose optype is in `producers`, with one output that is not a graph
/// output and has exactly one consumer whose optype is in `epilogues` (taking it as its only
/// input), gets `fused_epilogue` = {name, ident, optype, attrs} of that consumer, and the consumer
/// gets `fused_into` = the producer's name. Templates then emit the producer with the epilogue and
/// nothing for the consumer; PlanMemory makes the consumer's output share the producer's bytes.
///
/// Residual fusion (issue 9): a node P whose optype is in `residual_producers`, with one output y
/// that is not a graph output and whose only consumer is a node A of an optype in `residual`
/// (e.g. add) with exactly two inputs and one output, y and R, where R is not y, R and A's output
/// have y's dtype and shape exactly (no broadcasting), and R is ready when P runs (R's producer
/// comes before P in node order, or R is a graph input or a constant's output): P gets
/// `fused_residual` = R's tensor object (as in A's inputs) and A gets `fused_into` = P; templates
/// emit P as act(P(...) + R) and nothing for A, whose output shares y's bytes (y is A's input 0 or
/// 1). Then, when A's output is not a graph output (a graph output must keep the plain sum) and
/// its only consumer E is an epilogue as above, E is fused into P too (`fused_epilogue` on P,
/// `fused_into` = P on E). A matched by no rule stays as it is. The producer's position is where
/// the fused nodes now compute, so nothing reads their outputs earlier (their consumers follow
/// them). Nodes and tensors without a dtype/shape read as "" / [].
void FuseEpilogues(Json& graph, const std::vector<std::string>& producers,
                   const std::vector<std::string>& epilogues,
                   const std::vector<std::string>& residual = {},
                   const std::vector<std::string>& residual_producers = {});

/// Elementwise chain fusion (issue 9): after FuseEpilogues (nodes with `fused_into`, a
/// `fused_epilogue` or a `fused_residual` take no part), trees of elementwise nodes run as ONE
/// kernel at the position of their last node, the root. A node can join when its optype is in
/// `ops` (its inputs and output float32 or float16: computed in float32, rounded once on the
/// root's store) or in `selects` (three inputs: a condition of any dtype, then two float values;
/// e.g. where), it has one output of a static shape, and, except for the
/// root, that output is no graph output, is read by exactly one node, a member of the chain, and
/// has the root output's shape (so the chain's outside inputs broadcast numpy-style to it). Chains
/// grow from each root (nodes visited last to first) over its operands' producers, as long as
/// they keep at most `max_ops` nodes and `max_inputs` distinct outside input tensors; a chain of
/// one node is none. Every member node (root included) gets `fused_chain` = {inputs: [T] (the
/// outside inputs, in first-use order), steps: [{name, ident, optype, attrs, operands: [{kind:
/// "input" | "step", index}]}] (the members in node order, root last; operands as in the node's
/// inputs: the chain's input `index` or the value of step `index`)}; the other members get
/// `fused_into` = the root's name (emit nothing for them: they compute in the root's kernel).
/// Their outputs are never stored: PlanMemory gives them no bytes and keeps the chain's inputs
/// live until the root's position. Nodes without a dtype or shape read as "" / [].
void FuseElementwise(Json& graph, const std::vector<std::string>& ops,
                     const std::vector<std::string>& selects, long long max_ops,
                     long long max_inputs);

/// One arena for all activations (graph inputs, intermediates, graph outputs; not constants, which
/// are weights). Each tensor lives from its producer to its last consumer; graph inputs from before
/// the first node (the host writes them before the run), graph outputs to after the last. Outputs
/// of `alias_optypes` nodes share their input's bytes (output k <- input k; get_item:
/// input[index]); those of fused nodes (`fused_into`) the bytes of their input that is not the
/// producer's `fused_residual` (so a fused residual add's output is the producer's output, never
/// the residual's: the producer reads R while it writes y, and R, live until the add's position,
/// never shares y's bytes). Members of a fused elementwise chain (`fused_into` and `fused_chain`)
/// are not planned (no offset: their values never leave the root's kernel) and read their inputs
/// at the root's position. A node of a `concat_in_place` optype (attr `axis`) whose output dims
/// before the axis are all 1 gets `in_place` = true when every input's alias group can be a slice
/// of its output's (input k at the output's offset + the bytes of inputs 0..k-1; each group in one
/// such concat at most, distinct, not the output's own, every slice offset a multiple of
/// `alignment`): the producers then write into the output and the concat has nothing to do.
/// Slices nest; a group lives as long as its members and slices together. Other nodes get
/// `in_place` = false. An alias group lives as long as its longest member. Greedy by size,
/// largest first, each block at the lowest `alignment`-aligned offset free for its whole lifetime.
/// Adds `offset` to every planned tensor in the context and graph.memory = {alignment, peak_bytes,
/// naive_bytes (each block at its own offset), lower_bound_bytes (the largest sum of aligned
/// blocks live at one step: no plan can use less), tensors}. Dynamic (-1) shapes are an msc::Error
/// (sizes must be static).
void PlanMemory(Json& graph, long long alignment, const std::vector<std::string>& alias_optypes,
                const std::vector<std::string>& concat_in_place = {});

}  // namespace msc::emit
