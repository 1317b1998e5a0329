#include "generator/analyses/fusion.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "generator/common/contains.h"
#include "generator/weights/values.h"

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
    return Contains(epilogues, *n.optype) && n.inputs.size() == 1 && *n.inputs[0] == t &&
           f[e].into < 0;
  };
  auto fuse_producer = [&](size_t i) {
    const FuseNode& node = nodes[i];
    const bool producer = Contains(producers, *node.optype);
    const bool residual_producer = Contains(residual_producers, *node.optype);
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
    if (!residual_producer || !Contains(residual, *consumer.optype) ||
        consumer.inputs.size() != 2 || consumer.outputs.size() != 1)
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
    if (!Contains(producers, *node.optype) || !is_epilogue(e, *sum.name)) return;
    f[i].epilogue = static_cast<long long>(e);
    f[e].into = static_cast<long long>(i);
  };
  // After P's epilogue / residual decisions: a norm reading P's last fused value, alone (above).
  auto fuse_norm = [&](size_t i) {
    const FuseNode& node = nodes[i];
    if (!Contains(norm_producers, *node.optype) || node.outputs.size() != 1) return;
    size_t last = i;  // the node whose output is the last fused value
    if (f[i].residual_add >= 0) last = static_cast<size_t>(f[i].residual_add);
    if (f[i].epilogue >= 0) last = static_cast<size_t>(f[i].epilogue);
    const FuseNode& ln = nodes[last];
    if (ln.outputs.empty()) return;
    const FuseTensor& t = ln.outputs[0];
    for (const std::string* cname : ln.consumers) {
      const size_t c = node_at(cname);
      const FuseNode& cn = nodes[c];
      if (!Contains(norms, *cn.optype) || f[c].into >= 0 || cn.inputs.size() != 1 ||
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

/// The strides of `to` viewing the elements of a strided tensor (`shape`, `strides`) in row-major
/// order, or nullopt when no strides do (a reshape that needs a copy). torch's rule for view()
/// (aten/src/ATen/TensorUtils.cpp computeStride): the dims split into chunks that are each
/// contiguous in memory; every new dim must lie within one chunk. Nonzero element counts only.
std::optional<std::vector<int64_t>> ViewStrides(const std::vector<int64_t>& shape,
                                                const std::vector<int64_t>& strides,
                                                const std::vector<int64_t>& to) {
  if (shape.empty()) return std::nullopt;
  std::vector<int64_t> out(to.size(), 0);
  int64_t view_d = static_cast<int64_t>(to.size()) - 1;
  int64_t chunk_stride = strides.back(), chunk_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    chunk_numel *= shape[static_cast<size_t>(d)];
    // A chunk ends at dim 0 or where the dim before is not laid out right after this chunk.
    const bool chunk_end =
        d == 0 || (shape[static_cast<size_t>(d - 1)] != 1 &&
                   strides[static_cast<size_t>(d - 1)] != chunk_numel * chunk_stride);
    if (!chunk_end) continue;
    while (view_d >= 0 && (view_numel < chunk_numel || to[static_cast<size_t>(view_d)] == 1)) {
      out[static_cast<size_t>(view_d)] = view_numel * chunk_stride;
      view_numel *= to[static_cast<size_t>(view_d)];
      --view_d;
    }
    if (view_numel != chunk_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = strides[static_cast<size_t>(d - 1)];
      chunk_numel = view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

/// Split views (see fusion.h) on top of the other decisions in `f`.
void ViewCore(const Dataflow& dataflow, std::vector<NodeFusion>& f, const FusionOptions& o) {
  if (o.view_splits.empty() || o.view_consumers.empty()) return;
  const ir::MSCGraph& graph = dataflow.graph();
  auto view_inputs = [&](const std::string& optype) -> const std::vector<size_t>* {
    for (const auto& [op, ks] : o.view_consumers)
      if (op == optype) return &ks;
    return nullptr;
  };
  auto untouched = [&](size_t i) {
    return f[i].into < 0 && f[i].chain < 0 && f[i].epilogue < 0 && f[i].residual_add < 0 &&
           f[i].norm < 0 && !f[i].view;
  };
  auto is_static = [](const std::vector<int64_t>& shape) {
    return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; });
  };
  for (size_t s = 0; s < graph.nodes.size(); ++s) {
    const ir::MSCJoint& split = graph.nodes[s];
    if (!Contains(o.view_splits, split.optype) || split.inputs.size() != 1 || !untouched(s))
      continue;
    const ir::MSCTensor& x = dataflow.input(s, 0);
    if (!is_static(x.shape) || x.Numel() <= 0 || split.outputs.empty()) continue;
    // The split axis: the one dim where pieces differ from x; their sizes there sum to x's.
    int64_t axis = -1, sum = 0;
    bool ok = true;
    for (const ir::MSCTensor& t : split.outputs) {
      ok = ok && t.shape.size() == x.shape.size() && t.dtype == x.dtype && t.Numel() > 0;
      for (size_t d = 0; ok && d < x.shape.size(); ++d) {
        if (t.shape[d] == x.shape[d]) continue;
        ok = axis < 0 || axis == static_cast<int64_t>(d);
        axis = static_cast<int64_t>(d);
      }
    }
    if (!ok || axis < 0) continue;
    for (const ir::MSCTensor& t : split.outputs) sum += t.shape[static_cast<size_t>(axis)];
    if (sum != x.shape[static_cast<size_t>(axis)]) continue;
    // Walk the pieces' readers: views map each reached tensor to its strides into x.
    std::unordered_map<std::string_view, InputView> views;
    std::vector<std::pair<const ir::MSCTensor*, size_t>> work;  // tensor, its node
    const std::vector<int64_t> xs = weights::Strides(x.shape);  // x has elements
    int64_t start = 0;
    for (const ir::MSCTensor& t : split.outputs) {
      views[t.name] = {x.name, start * xs[static_cast<size_t>(axis)], xs};
      start += t.shape[static_cast<size_t>(axis)];
      work.emplace_back(&t, s);
    }
    std::vector<size_t> members = {s};
    std::vector<std::pair<size_t, size_t>> reads;  // (consumer, input k) read as a view
    for (size_t w = 0; ok && w < work.size(); ++w) {
      const ir::MSCTensor& t = *work[w].first;
      const size_t node = work[w].second;
      if (dataflow.is_graph_output(t.name)) ok = false;
      size_t out = 0;
      while (&graph.nodes[node].outputs[out] != &t) ++out;
      for (const std::string* cname : dataflow.consumers(node, out)) {
        if (!ok) break;
        const size_t c = *dataflow.FindNode(*cname);
        const ir::MSCJoint& cn = graph.nodes[c];
        if (std::find(members.begin(), members.end(), c) != members.end()) continue;
        if (!untouched(c)) {
          ok = false;
        } else if (Contains(o.view_through, cn.optype)) {
          // get_item: its output is inputs[index]; the others one input, re-shaped.
          const std::string* source = cn.inputs.empty() ? nullptr : &cn.inputs[0];
          if (cn.optype == "get_item") {
            const std::string* index = cn.FindAttr("index");
            long long k = -1;
            try {
              k = index ? std::stoll(*index) : -1;
            } catch (const std::exception&) {
            }
            source = k >= 0 && static_cast<size_t>(k) < cn.inputs.size()
                         ? &cn.inputs[static_cast<size_t>(k)]
                         : nullptr;
          } else if (cn.inputs.size() != 1) {
            source = nullptr;
          }
          auto v = source ? views.find(*source) : views.end();
          if (cn.outputs.size() != 1 || v == views.end() || !is_static(cn.outputs[0].shape)) {
            ok = false;
            break;
          }
          const std::vector<int64_t>& src_shape = dataflow.tensor(*dataflow.Find(*source)).shape;
          std::optional<std::vector<int64_t>> st =
              ViewStrides(src_shape, v->second.strides, cn.outputs[0].shape);
          if (!st) {
            ok = false;
            break;
          }
          views[cn.outputs[0].name] = {x.name, v->second.offset, *st};
          members.push_back(c);
          work.emplace_back(&cn.outputs[0], c);
        } else if (const std::vector<size_t>* ks = view_inputs(cn.optype)) {
          for (size_t k = 0; k < cn.inputs.size(); ++k) {
            if (cn.inputs[k] != t.name) continue;
            if (std::find(ks->begin(), ks->end(), k) == ks->end()) ok = false;
            reads.emplace_back(c, k);
          }
        } else {
          ok = false;
        }
      }
    }
    if (!ok || reads.empty()) continue;
    size_t last = 0;
    for (const auto& [c, k] : reads) {
      last = std::max(last, c);
      std::vector<InputView>& iv = f[c].input_views;
      iv.resize(graph.nodes[c].inputs.size());
      iv[k] = views.at(graph.nodes[c].inputs[k]);
    }
    for (size_t m : members) {
      f[m].view = true;
      f[m].into = static_cast<long long>(last);
    }
  }
}

}  // namespace

FusionPlan PlanFusion(const Dataflow& dataflow, const FusionOptions& options) {
  const ir::MSCGraph& graph = dataflow.graph();
  const size_t n = graph.nodes.size();
  FusionPlan plan;
  plan.nodes.assign(n, NodeFusion{});
  if (options.producers.empty() && options.elementwise_ops.empty() &&
      options.elementwise_selects.empty() && options.view_splits.empty())
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
  ViewCore(dataflow, plan.nodes, options);
  return plan;
}

}  // namespace msc::analyses
