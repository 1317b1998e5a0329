#include "generator/analyses/fusion.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace msc::analyses {

namespace {

/// What the fusion reads of one node output.
struct FuseTensor {
  const std::string* name = nullptr;
  const std::string* dtype = nullptr;
  const std::vector<int64_t>* shape = nullptr;
  bool graph_input = false;
};

/// What the fusion reads of one node.
struct FuseNode {
  const std::string* name = nullptr;
  const std::string* optype = nullptr;
  std::vector<FuseTensor> outputs;
  bool out_graph_output = false;              // outputs[0]
  std::vector<const std::string*> consumers;  // of outputs[0]: node names
  std::vector<const std::string*> inputs;     // tensor names
};

/// Epilogue and residual fusion, per node (see fusion.h).
std::vector<NodeFusion> FuseCore(const std::vector<FuseNode>& nodes,
                                 const std::vector<std::string>& producers,
                                 const std::vector<std::string>& epilogues,
                                 const std::vector<std::string>& residual,
                                 const std::vector<std::string>& residual_producers,
                                 const std::vector<std::string>& norms,
                                 const std::vector<std::string>& norm_producers) {
  auto in = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  std::vector<NodeFusion> f(nodes.size());
  std::unordered_map<std::string_view, size_t> position;  // the last node of a name, as a map
  for (size_t i = 0; i < nodes.size(); ++i) position[*nodes[i].name] = i;
  // Node output name -> (node, output index); only needed for residual fusion.
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> tensor_at;
  if (!residual.empty())
    for (size_t i = 0; i < nodes.size(); ++i)
      for (size_t k = 0; k < nodes[i].outputs.size(); ++k)
        tensor_at[*nodes[i].outputs[k].name] = {i, k};
  auto node_at = [&](const std::string* name) {
    auto pos = position.find(*name);
    if (pos == position.end()) throw std::out_of_range("fusion: unknown consumer node");
    return pos->second;
  };
  // `e` is a relu/clip taking the tensor `t` as its only input, not fused yet.
  auto is_epilogue = [&](size_t e, const std::string& t) {
    const FuseNode& n = nodes[e];
    return in(epilogues, *n.optype) && n.inputs.size() == 1 && *n.inputs[0] == t && f[e].into < 0;
  };
  auto fuse_producer = [&](size_t i) {
    const FuseNode& node = nodes[i];
    const bool producer = in(producers, *node.optype);
    const bool residual_producer = in(residual_producers, *node.optype);
    if ((!producer && !residual_producer) || node.outputs.size() != 1) return;
    if (node.out_graph_output || node.consumers.size() != 1) return;
    const FuseTensor& y = node.outputs[0];
    const size_t c = node_at(node.consumers[0]);
    const FuseNode& consumer = nodes[c];
    if (f[c].into >= 0) return;
    if (producer && is_epilogue(c, *y.name)) {
      f[i].epilogue = static_cast<long long>(c);
      f[c].into = static_cast<long long>(i);
      return;
    }
    // y = producer(...) + r, exactly two inputs, y's shape and dtype (no broadcasting), r not y.
    if (!residual_producer || !in(residual, *consumer.optype) || consumer.inputs.size() != 2 ||
        consumer.outputs.size() != 1)
      return;
    const bool first = *consumer.inputs[0] == *y.name, second = *consumer.inputs[1] == *y.name;
    if (first == second) return;  // y + y (or, impossibly, y not read)
    const size_t r = first ? 1 : 0;
    auto rt = tensor_at.find(*consumer.inputs[r]);
    if (rt == tensor_at.end()) return;
    const size_t rn = rt->second.first;
    const FuseTensor& rten = nodes[rn].outputs[rt->second.second];
    const FuseTensor& sum = consumer.outputs[0];
    auto same = [&](const FuseTensor& a) { return *a.dtype == *y.dtype && *a.shape == *y.shape; };
    if (!same(rten) || !same(sum)) return;
    // The producer runs at its own position: r must be there already. Graph inputs (the host
    // writes them before the run) and constants (uploaded weights) always are.
    if (!(rn < i || rten.graph_input || *nodes[rn].optype == "constant")) return;
    f[i].residual_add = static_cast<long long>(c);
    f[i].residual_input = r;
    f[c].into = static_cast<long long>(i);
    f[c].alias_input = first ? 0 : 1;
    // Then the relu/clip after the add, unless the sum must stay materialized (graph output).
    if (consumer.out_graph_output || consumer.consumers.size() != 1) return;
    const size_t e = node_at(consumer.consumers[0]);
    if (!in(producers, *node.optype) || !is_epilogue(e, *sum.name)) return;
    f[i].epilogue = static_cast<long long>(e);
    f[e].into = static_cast<long long>(i);
  };
  // After P's epilogue / residual decisions: a norm reading P's last fused value, alone (above).
  auto fuse_norm = [&](size_t i) {
    const FuseNode& node = nodes[i];
    if (!in(norm_producers, *node.optype) || node.outputs.size() != 1) return;
    size_t last = i;  // the node whose output is the last fused value
    if (f[i].residual_add >= 0) last = static_cast<size_t>(f[i].residual_add);
    if (f[i].epilogue >= 0) last = static_cast<size_t>(f[i].epilogue);
    const FuseNode& ln = nodes[last];
    if (ln.outputs.empty()) return;
    const FuseTensor& t = ln.outputs[0];
    for (const std::string* cname : ln.consumers) {
      const size_t c = node_at(cname);
      const FuseNode& cn = nodes[c];
      if (!in(norms, *cn.optype) || f[c].into >= 0 || cn.inputs.size() != 1 ||
          *cn.inputs[0] != *t.name || cn.outputs.size() != 1 || *cn.outputs[0].dtype != *t.dtype ||
          *cn.outputs[0].shape != *t.shape)
        continue;
      f[i].norm = static_cast<long long>(c);
      f[i].norm_keeps_input = ln.out_graph_output || ln.consumers.size() > 1;
      f[c].into = static_cast<long long>(i);
      f[c].own_bytes = true;
      return;
    }
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    fuse_producer(i);
    fuse_norm(i);
  }
  return f;
}

/// Elementwise chain fusion on top of FuseCore's result `f` (whose fused nodes take no part);
/// sets `chain` (and `into` = the root, for the other members) in `f`.
std::vector<Chain> ChainCore(const std::vector<FuseNode>& nodes, std::vector<NodeFusion>& f,
                             const std::vector<std::string>& ops,
                             const std::vector<std::string>& selects, long long max_ops,
                             long long max_inputs) {
  std::vector<Chain> chains;
  if (ops.empty() && selects.empty()) return chains;
  const std::unordered_set<std::string_view> op_set(ops.begin(), ops.end()),
      select_set(selects.begin(), selects.end());
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> tensor_at;  // node, output
  for (size_t i = 0; i < nodes.size(); ++i)
    for (size_t k = 0; k < nodes[i].outputs.size(); ++k)
      tensor_at[*nodes[i].outputs[k].name] = {i, k};
  auto tensor = [&](const std::string* name) -> const FuseTensor* {
    auto at = tensor_at.find(*name);
    return at == tensor_at.end() ? nullptr : &nodes[at->second.first].outputs[at->second.second];
  };
  // float32 or float16 values (float16: activations at --precision fp16); the chain computes in
  // float32 either way and rounds once, on its store.
  auto is_float = [](const std::string* dtype) {
    return *dtype == "float32" || *dtype == "float16";
  };
  auto eligible = [&](size_t i) {
    const FuseNode& n = nodes[i];
    if (f[i].into >= 0 || f[i].epilogue >= 0 || f[i].residual_add >= 0 || f[i].chain >= 0)
      return false;
    if (n.outputs.size() != 1 || !is_float(n.outputs[0].dtype)) return false;
    for (int64_t d : *n.outputs[0].shape)
      if (d < 0) return false;
    const bool select = select_set.count(*n.optype) > 0;
    if (select ? n.inputs.size() != 3
               : !op_set.count(*n.optype) || n.inputs.empty() || n.inputs.size() > 2)
      return false;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const FuseTensor* t = tensor(n.inputs[k]);
      if (!t || (!is_float(t->dtype) && !(select && k == 0))) return false;  // condition: any
    }
    return true;
  };
  auto find = [](const std::vector<const std::string*>& v, const std::string& t) {
    return std::find_if(v.begin(), v.end(), [&](const std::string* x) { return *x == t; });
  };
  auto add = [&](std::vector<const std::string*>& v, const std::string* t) {
    if (find(v, *t) == v.end()) v.push_back(t);
  };
  for (size_t r = nodes.size(); r-- > 0;) {
    if (!eligible(r)) continue;
    const std::vector<int64_t>& shape = *nodes[r].outputs[0].shape;
    std::vector<size_t> members = {r};
    std::vector<const std::string*> outside;  // distinct outside inputs so far
    for (const std::string* t : nodes[r].inputs) add(outside, t);
    // Grow over the operands' producers, breadth first from the root.
    for (size_t w = 0; w < members.size(); ++w) {
      for (const std::string* t : nodes[members[w]].inputs) {
        if (find(outside, *t) == outside.end()) continue;  // absorbed already (read twice)
        auto at = tensor_at.find(*t);
        if (at == tensor_at.end() || at->second.second != 0) continue;
        const size_t p = at->second.first;
        const FuseNode& pn = nodes[p];
        // Its value must be needed by this member alone, at the chain's shape.
        if (!eligible(p) || pn.out_graph_output || pn.consumers.size() != 1 ||
            *pn.outputs[0].shape != shape)
          continue;
        if (static_cast<long long>(members.size()) + 1 > max_ops) continue;
        std::vector<const std::string*> next;
        for (const std::string* x : outside)
          if (*x != *t) next.push_back(x);
        for (const std::string* x : pn.inputs) add(next, x);
        if (static_cast<long long>(next.size()) > max_inputs) continue;
        outside = std::move(next);
        members.push_back(p);
        f[p].chain = static_cast<long long>(chains.size());  // taken (eligible() is false now)
      }
    }
    if (members.size() < 2 || static_cast<long long>(outside.size()) > max_inputs) {
      for (size_t m : members) f[m].chain = -1;
      continue;
    }
    std::sort(members.begin(), members.end());
    Chain c;
    c.members = members;
    std::unordered_map<std::string_view, size_t> step_of;  // member output -> its step
    std::vector<const std::string*> input_names;           // c.inputs' tensor names
    for (size_t s = 0; s < members.size(); ++s) {
      const FuseNode& m = nodes[members[s]];
      std::vector<Chain::Operand> operands;
      for (size_t k = 0; k < m.inputs.size(); ++k) {
        const std::string* t = m.inputs[k];
        auto st = step_of.find(*t);
        if (st != step_of.end()) {
          operands.push_back({true, st->second});
          continue;
        }
        auto at = find(input_names, *t);
        operands.push_back({false, static_cast<size_t>(at - input_names.begin())});
        if (at == input_names.end()) {
          input_names.push_back(t);
          c.inputs.emplace_back(s, k);
        }
      }
      c.operands.push_back(std::move(operands));
      step_of[*m.outputs[0].name] = s;
      f[members[s]].chain = static_cast<long long>(chains.size());
      if (members[s] != r) f[members[s]].into = static_cast<long long>(r);
    }
    chains.push_back(std::move(c));
  }
  return chains;
}

}  // namespace

FusionPlan PlanFusion(const Dataflow& dataflow, const FusionOptions& options) {
  const ir::MSCGraph& graph = dataflow.graph();
  const size_t n = graph.nodes.size();
  FusionPlan plan;
  plan.nodes.assign(n, NodeFusion{});
  if (options.producers.empty() && options.elementwise_ops.empty() &&
      options.elementwise_selects.empty())
    return plan;
  std::vector<FuseNode> fn(n);
  for (size_t i = 0; i < n; ++i) {
    const ir::MSCJoint& node = graph.nodes[i];
    fn[i].name = &node.name;
    fn[i].optype = &node.optype;
    fn[i].outputs.reserve(node.outputs.size());
    for (const ir::MSCTensor& t : node.outputs)
      fn[i].outputs.push_back({&t.name, &t.dtype, &t.shape, dataflow.is_graph_input(t.name)});
    if (!node.outputs.empty()) {
      fn[i].out_graph_output = dataflow.is_graph_output(node.outputs[0].name);
      fn[i].consumers = dataflow.consumers(i, 0);
    }
    fn[i].inputs.reserve(node.inputs.size());
    for (size_t k = 0; k < node.inputs.size(); ++k)
      fn[i].inputs.push_back(&dataflow.input(i, k).name);
  }
  if (!options.producers.empty())
    plan.nodes = FuseCore(fn, options.producers, options.epilogues, options.residual,
                          options.residual_producers, options.norms, options.norm_producers);
  plan.chains = ChainCore(fn, plan.nodes, options.elementwise_ops, options.elementwise_selects,
                          options.max_ops, options.max_inputs);
  return plan;
}

}  // namespace msc::analyses
