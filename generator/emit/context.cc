#include "generator/emit/context.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "generator/common/error.h"
#include "generator/emit/naming.h"

namespace msc::emit {

namespace {

using tmpl::Value;
using tmpl::ValueDict;
using tmpl::ValueList;

// ---- epilogue fusion and memory plan on plain records (shared by Context and the JSON API) ----

/// What FuseEpilogues reads of one node output.
struct FuseTensor {
  const std::string* name = nullptr;
  const std::string* dtype = nullptr;
  const std::vector<int64_t>* shape = nullptr;
  bool graph_input = false;
};

/// What FuseEpilogues reads of one node.
struct FuseNode {
  const std::string* name = nullptr;
  const std::string* optype = nullptr;
  std::vector<FuseTensor> outputs;
  bool out_graph_output = false;              // outputs[0]
  std::vector<const std::string*> consumers;  // of outputs[0]: node names
  std::vector<const std::string*> inputs;     // tensor names
};

/// FuseCore's result for one node.
struct Fusion {
  long long epilogue = -1;      // the relu/clip consumer run as this node's epilogue
  long long residual_add = -1;  // the add consumer run as this node's residual
  size_t residual_input = 0;    // which input of residual_add is the residual
  long long into = -1;          // the producer (or chain root) this node was fused into
  size_t alias_input = 0;       // fused nodes: the input whose bytes the output shares
  long long chain = -1;         // ChainCore: the chain this node is a member of (root included)
};

/// Epilogue and residual fusion, per node (see FuseEpilogues in context.h).
std::vector<Fusion> FuseCore(const std::vector<FuseNode>& nodes,
                             const std::vector<std::string>& producers,
                             const std::vector<std::string>& epilogues,
                             const std::vector<std::string>& residual,
                             const std::vector<std::string>& residual_producers) {
  auto in = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  std::vector<Fusion> f(nodes.size());
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
  for (size_t i = 0; i < nodes.size(); ++i) {
    const FuseNode& node = nodes[i];
    const bool producer = in(producers, *node.optype);
    const bool residual_producer = in(residual_producers, *node.optype);
    if ((!producer && !residual_producer) || node.outputs.size() != 1) continue;
    if (node.out_graph_output || node.consumers.size() != 1) continue;
    const FuseTensor& y = node.outputs[0];
    const size_t c = node_at(node.consumers[0]);
    const FuseNode& consumer = nodes[c];
    if (f[c].into >= 0) continue;
    if (producer && is_epilogue(c, *y.name)) {
      f[i].epilogue = static_cast<long long>(c);
      f[c].into = static_cast<long long>(i);
      continue;
    }
    // y = producer(...) + r, exactly two inputs, y's shape and dtype (no broadcasting), r not y.
    if (!residual_producer || !in(residual, *consumer.optype) || consumer.inputs.size() != 2 ||
        consumer.outputs.size() != 1)
      continue;
    const bool first = *consumer.inputs[0] == *y.name, second = *consumer.inputs[1] == *y.name;
    if (first == second) continue;  // y + y (or, impossibly, y not read)
    const size_t r = first ? 1 : 0;
    auto rt = tensor_at.find(*consumer.inputs[r]);
    if (rt == tensor_at.end()) continue;
    const size_t rn = rt->second.first;
    const FuseTensor& rten = nodes[rn].outputs[rt->second.second];
    const FuseTensor& sum = consumer.outputs[0];
    auto same = [&](const FuseTensor& a) { return *a.dtype == *y.dtype && *a.shape == *y.shape; };
    if (!same(rten) || !same(sum)) continue;
    // The producer runs at its own position: r must be there already. Graph inputs (the host
    // writes them before the run) and constants (uploaded weights) always are.
    if (!(rn < i || rten.graph_input || *nodes[rn].optype == "constant")) continue;
    f[i].residual_add = static_cast<long long>(c);
    f[i].residual_input = r;
    f[c].into = static_cast<long long>(i);
    f[c].alias_input = first ? 0 : 1;
    // Then the relu/clip after the add, unless the sum must stay materialized (graph output).
    if (consumer.out_graph_output || consumer.consumers.size() != 1) continue;
    const size_t e = node_at(consumer.consumers[0]);
    if (!in(producers, *node.optype) || !is_epilogue(e, *sum.name)) continue;
    f[i].epilogue = static_cast<long long>(e);
    f[e].into = static_cast<long long>(i);
  }
  return f;
}

/// One fused elementwise chain (see FuseElementwise in context.h).
struct Chain {
  struct Operand {
    bool step = false;  // false: inputs[index]; true: the value of step (member) `index`
    size_t index = 0;
  };
  std::vector<size_t> members;                 // node indices in node order; back() is the root
  std::vector<const std::string*> inputs;      // outside input tensors, in first-use order
  std::vector<std::vector<Operand>> operands;  // per member, per node input
};

/// Elementwise chain fusion on top of FuseCore's result `f` (whose fused nodes take no part);
/// sets `chain` (and `into` = the root, for the other members) in `f`.
std::vector<Chain> ChainCore(const std::vector<FuseNode>& nodes, std::vector<Fusion>& f,
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
    for (size_t s = 0; s < members.size(); ++s) {
      const FuseNode& m = nodes[members[s]];
      std::vector<Chain::Operand> operands;
      for (const std::string* t : m.inputs) {
        auto st = step_of.find(*t);
        if (st != step_of.end()) {
          operands.push_back({true, st->second});
          continue;
        }
        auto k = find(c.inputs, *t);
        operands.push_back({false, static_cast<size_t>(k - c.inputs.begin())});
        if (k == c.inputs.end()) c.inputs.push_back(t);
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

/// One node output as the memory plan sees it.
struct PlanOut {
  const std::string* name = nullptr;
  long long nbytes = 0;  // >= 0: callers report dynamic shapes before planning
  bool graph_input = false, graph_output = false;
};

/// What PlanMemory reads of one node.
struct PlanNode {
  bool constant = false;  // optype "constant": a weight, not planned
  std::vector<PlanOut> outputs;
  std::vector<const std::string*> inputs;  // tensor names
  bool alias = false;                      // alias optype or fused node
  bool get_item = false;                   // alias source is inputs[get_item_index]
  size_t get_item_index = 0;
  bool fused = false;      // a fused node: its output shares the bytes of inputs[alias_input]
  size_t alias_input = 0;  // (a residual add's may be its input 1)
  bool unplanned = false;  // a fused chain member: its outputs get no bytes...
  long long read_at = -1;  // ...and it reads its inputs here (the chain root's position)
  // A concat whose output dims before its axis are all 1 (memory_plan.concat_in_place): input k's
  // bytes are the output's bytes from the sum of inputs 0..k-1's sizes on.
  bool concat = false;
};

struct PlanResult {
  std::unordered_map<std::string_view, long long> offset;  // planned tensor name -> offset
  struct Tensor {
    const std::string* name;
    long long offset, nbytes;
  };
  std::vector<Tensor> tensors;  // in planning order (node order, outputs in order)
  long long peak = 0, naive = 0, lower_bound = 0;
  std::vector<bool> in_place;  // per node: a concat whose inputs are written into its output
};

/// The memory plan (see PlanMemory in context.h).
PlanResult PlanCore(const std::vector<PlanNode>& nodes, long long alignment) {
  const long long n_nodes = static_cast<long long>(nodes.size());
  struct Item {
    const std::string* name;
    long long nbytes, begin, end;
    size_t parent;  // union-find
  };
  std::vector<Item> items;
  std::unordered_map<std::string_view, size_t> by_name;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].constant) continue;  // a weight, uploaded once
    for (const PlanOut& t : nodes[i].outputs) {
      if (nodes[i].unplanned) break;  // computed in a fused chain's kernel, never stored
      // Graph inputs are written by the host before the first dispatch and graph outputs read after
      // the last, whatever the position of their nodes: they live from -1 / until n_nodes.
      const long long begin = t.graph_input ? -1 : static_cast<long long>(i);
      const long long end = t.graph_output ? n_nodes : static_cast<long long>(i);
      by_name[*t.name] = items.size();
      items.push_back({t.name, t.nbytes, begin, end, items.size()});
    }
    const long long read_at = nodes[i].read_at >= 0 ? nodes[i].read_at : static_cast<long long>(i);
    for (const std::string* t : nodes[i].inputs) {
      auto it = by_name.find(*t);
      if (it != by_name.end()) items[it->second].end = std::max(items[it->second].end, read_at);
    }
  }
  auto root = [&](size_t x) {
    while (items[x].parent != x) x = items[x].parent = items[items[x].parent].parent;
    return x;
  };
  // Alias ops: output k shares the bytes of input k (get_item: input[index]); fused nodes: output
  // 0 those of input alias_input.
  for (const PlanNode& node : nodes) {
    if (!node.alias) continue;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const size_t src_idx = node.get_item ? node.get_item_index
                             : node.fused  ? (k == 0 ? node.alias_input : SIZE_MAX)
                                           : k;
      if (src_idx >= node.inputs.size()) continue;
      auto out = by_name.find(*node.outputs[k].name);
      auto src = by_name.find(*node.inputs[src_idx]);
      if (out == by_name.end() || src == by_name.end() ||
          items[out->second].nbytes != items[src->second].nbytes)
        continue;
      items[root(out->second)].parent = root(src->second);
    }
  }
  // In-place concats, in node order: the alias group of each input becomes a slice of the
  // output's group (slice_parent, at byte slice_offset of it), so producers write straight into
  // the concat's output and the concat itself does nothing. All inputs or none: each input's group
  // must be distinct, not yet a slice and not the output's, and start at an `alignment` multiple
  // (the device's buffer offset alignment). Nested concats nest slices. Graph inputs and outputs
  // may take part: the merged group lives from the first member's start to the last one's end.
  std::vector<size_t> slice_parent(items.size(), SIZE_MAX);
  std::vector<long long> slice_offset(items.size(), 0);
  PlanResult result;
  result.in_place.assign(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const PlanNode& node = nodes[i];
    if (!node.concat || node.outputs.size() != 1 || node.inputs.empty()) continue;
    auto out = by_name.find(*node.outputs[0].name);
    if (out == by_name.end()) continue;
    const size_t out_root = root(out->second);
    std::vector<std::pair<size_t, long long>> parts;  // input group root, offset in the output
    long long at = 0;
    bool ok = true;
    for (const std::string* in : node.inputs) {
      auto it = by_name.find(*in);
      if (it == by_name.end()) {  // a weight: not in the arena
        ok = false;
        break;
      }
      const size_t r = root(it->second);
      ok = ok && r != out_root && slice_parent[r] == SIZE_MAX && at % alignment == 0;
      for (const auto& part : parts) ok = ok && part.first != r;
      parts.emplace_back(r, at);
      at += items[it->second].nbytes;
    }
    if (!ok || at != items[out->second].nbytes) continue;
    for (const auto& [r, off] : parts) {
      slice_parent[r] = out_root;
      slice_offset[r] = off;
    }
    result.in_place[i] = true;
  }
  // The outermost group holding a group, and the group's byte offset in it.
  auto outermost = [&](size_t r, long long* off) {
    for (*off = 0; slice_parent[r] != SIZE_MAX; r = slice_parent[r]) *off += slice_offset[r];
    return r;
  };
  // One block per outermost alias group (in order of the group's root): its lifetime is the
  // union of its members' and its slices'.
  struct Group {
    long long nbytes = 0, begin = 0, end = 0;
    bool used = false;
  };
  std::vector<Group> groups(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    long long off = 0;
    Group& g = groups[outermost(root(i), &off)];
    if (!g.used) {
      g = {off + items[i].nbytes, items[i].begin, items[i].end, true};
    } else {
      g.begin = std::min(g.begin, items[i].begin);
      g.end = std::max(g.end, items[i].end);
      g.nbytes = std::max(g.nbytes, off + items[i].nbytes);
    }
  }
  auto align = [&](long long v) {
    return std::max(alignment, (v + alignment - 1) / alignment * alignment);
  };
  std::vector<size_t> order;
  for (size_t r = 0; r < groups.size(); ++r)
    if (groups[r].used) order.push_back(r);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return groups[a].nbytes > groups[b].nbytes; });
  struct Placed {
    long long begin, end, offset, size;
  };
  // Placed blocks indexed by time: bucket b holds the blocks live during any step of
  // [b * kBucket - 1, (b + 1) * kBucket - 1), so the overlap query visits only blocks live near
  // the new one's lifetime instead of every block placed so far (O(blocks^2) on 100k-node graphs).
  constexpr long long kBucket = 64;
  std::vector<Placed> placed;
  std::vector<std::vector<size_t>> buckets(static_cast<size_t>((n_nodes + 1) / kBucket + 2));
  std::vector<size_t> seen_at(order.size() + 1, 0);  // query stamp per placed block
  size_t stamp = 0;
  auto bucket_of = [&](long long t) { return static_cast<size_t>((t + 1) / kBucket); };
  std::vector<long long> offset(groups.size(), 0);
  std::vector<std::pair<long long, long long>> busy;  // [offset, end) of blocks live meanwhile
  for (size_t r : order) {
    const Group& g = groups[r];
    const long long size = align(g.nbytes);
    result.naive += size;
    busy.clear();
    ++stamp;
    for (size_t b = bucket_of(g.begin); b <= bucket_of(g.end); ++b) {
      for (size_t k : buckets[b]) {
        if (seen_at[k] == stamp) continue;
        seen_at[k] = stamp;
        const Placed& o = placed[k];
        if (o.begin <= g.end && g.begin <= o.end) busy.emplace_back(o.offset, o.offset + o.size);
      }
    }
    std::sort(busy.begin(), busy.end());
    long long at = 0;
    for (const auto& [b, e] : busy) {
      if (at + size <= b) break;
      at = std::max(at, e);
    }
    offset[r] = at;
    for (size_t b = bucket_of(g.begin); b <= bucket_of(g.end); ++b)
      buckets[b].push_back(placed.size());
    placed.push_back({g.begin, g.end, at, size});
    result.peak = std::max(result.peak, at + size);
  }
  auto offset_of = [&](size_t i) {
    long long off = 0;
    const size_t r = outermost(root(i), &off);
    return offset[r] + off;
  };
  result.tensors.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i)
    result.tensors.push_back({items[i].name, offset_of(i), items[i].nbytes});
  result.offset.reserve(by_name.size());
  for (const auto& [name, i] : by_name) result.offset.emplace(name, offset_of(i));
  // Lower bound of any plan: the largest sum of (aligned) blocks live at one step.
  std::map<long long, long long> delta;  // step -> change of the live sum
  for (size_t r : order) {
    delta[groups[r].begin] += align(groups[r].nbytes);
    delta[groups[r].end + 1] -= align(groups[r].nbytes);
  }
  long long live = 0;
  for (const auto& [step, d] : delta) result.lower_bound = std::max(result.lower_bound, live += d);
  return result;
}

/// Whether a concat along `axis` (negative: from the end) with output `shape` stores each input
/// as one contiguous run of the output's bytes: every dim before the axis is 1.
bool ConcatSlicesContiguous(const std::vector<int64_t>& shape, int64_t axis) {
  const int64_t n = static_cast<int64_t>(shape.size());
  if (axis < 0) axis += n;
  if (axis < 0 || axis >= n) return false;
  for (int64_t d = 0; d < n; ++d)
    if (shape[static_cast<size_t>(d)] < 0 || (d < axis && shape[static_cast<size_t>(d)] != 1))
      return false;
  return true;
}

/// The error for a tensor with dynamic dims in a planned graph, naming the MSC prims behind them.
[[noreturn]] void ThrowDynamic(const std::string& tensor, const std::string& node,
                               const std::vector<long long>& shape,
                               const std::vector<std::string>& prims) {
  std::string dims;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] >= 0) continue;
    dims += (dims.empty() ? "" : ", ") + std::string("axis ") + std::to_string(d) + " = prim " +
            (d < prims.size() ? Json(prims[d]).dump() : std::string("(unnamed)"));
  }
  throw Error("memory plan: tensor " + Json(tensor).dump() + " (node " + Json(node).dump() +
              ") has a dynamic shape (" + dims +
              "); this backend needs static shapes: specialize the graph with "
              "--shape INPUT=D0,D1,... (msc-codegen generate --help)");
}

// ---- native values ----

/// Every key the context uses, made once (a native string carries its hash).
struct Keys {
  Value name = Value::Str("name");
  Value alias = Value::Str("alias");
  Value dtype = Value::Str("dtype");
  Value layout = Value::Str("layout");
  Value shape = Value::Str("shape");
  Value prims = Value::Str("prims");
  Value ndim = Value::Str("ndim");
  Value numel = Value::Str("numel");
  Value nbytes = Value::Str("nbytes");
  Value dims = Value::Str("dims");
  Value is_weight = Value::Str("is_weight");
  Value is_graph_input = Value::Str("is_graph_input");
  Value is_graph_output = Value::Str("is_graph_output");
  Value ident = Value::Str("ident");
  Value producer = Value::Str("producer");
  Value producer_ident = Value::Str("producer_ident");
  Value out_idx = Value::Str("out_idx");
  Value consumers = Value::Str("consumers");
  Value offset = Value::Str("offset");
  Value key = Value::Str("key");
  Value role = Value::Str("role");
  Value index = Value::Str("index");
  Value axis = Value::Str("axis");
  Value in_place = Value::Str("in_place");
  Value optype = Value::Str("optype");
  Value ns = Value::Str("ns");
  Value op = Value::Str("op");
  Value summary = Value::Str("summary");
  Value parents = Value::Str("parents");
  Value shared_ref = Value::Str("shared_ref");
  Value inputs = Value::Str("inputs");
  Value outputs = Value::Str("outputs");
  Value is_output = Value::Str("is_output");
  Value attrs = Value::Str("attrs");
  Value attrs_raw = Value::Str("attrs_raw");
  Value weights = Value::Str("weights");
  Value fused_epilogue = Value::Str("fused_epilogue");
  Value fused_residual = Value::Str("fused_residual");
  Value fused_into = Value::Str("fused_into");
  Value fused_chain = Value::Str("fused_chain");
  Value steps = Value::Str("steps");
  Value operands = Value::Str("operands");
  Value kind = Value::Str("kind");
  Value code = Value::Str("code");
  Value folded = Value::Str("folded");
  Value graph = Value::Str("graph");
  Value nodes = Value::Str("nodes");
  Value optypes = Value::Str("optypes");
  Value memory = Value::Str("memory");
  Value alignment = Value::Str("alignment");
  Value peak_bytes = Value::Str("peak_bytes");
  Value naive_bytes = Value::Str("naive_bytes");
  Value lower_bound_bytes = Value::Str("lower_bound_bytes");
  Value tensors = Value::Str("tensors");
};

bool SameKey(const Value& a, const Value& b) {
  return a.str_hash() == b.str_hash() && tmpl::SameText(a.s(), b.s());
}

/// Sets `key` in an object's entries as JSON's operator[] does: replaced in place when present,
/// appended otherwise.
void Set(ValueDict& d, const Value& key, Value v) {
  for (auto& e : d)
    if (SameKey(e.first, key)) {
      e.second = std::move(v);
      return;
    }
  d.emplace_back(key, std::move(v));
}

Value StrList(const std::vector<std::string>& v) {
  ValueList l;
  l.reserve(v.size());
  for (const auto& s : v) l.push_back(Value::Str(s));
  return Value::List(std::move(l));
}

Value IntList(const std::vector<int64_t>& v) {
  ValueList l;
  l.reserve(v.size());
  for (int64_t x : v) l.push_back(Value::Int(x));
  return Value::List(std::move(l));
}

/// One tensor while the context is built: its graph facts, then its object.
struct TensorRec {
  const ir::MSCTensor* t = nullptr;
  std::string ident;
  const std::string* producer = nullptr;
  const std::string* producer_ident = nullptr;
  size_t out_idx = 0;
  bool weight = false;
  const std::string* role = nullptr;
  bool graph_input = false, graph_output = false;
  int64_t nbytes = 0;
  std::vector<const std::string*> consumers;
  Value value;
};

/// The per-optype facts every node of that optype shares.
struct OptypeInfo {
  const opdef::OpDef* def = nullptr;
  Value optype, ns, op, summary;
  std::vector<Value> defaults;  // per def->attrs entry: its default, as a value
};

}  // namespace

Context::~Context() = default;

Context::Context(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs,
                 const BackendSpec& spec, const std::vector<passes::Folded>* folded) {
  const Keys K;
  IdentifierPool idents(
      std::set<std::string>(spec.reserved_names.begin(), spec.reserved_names.end()));
  const std::string graph_ident = idents.Make(graph.name, "graph");
  const std::unordered_set<std::string_view> graph_inputs(graph.inputs.begin(), graph.inputs.end());
  const std::unordered_set<std::string_view> graph_outputs(graph.outputs.begin(),
                                                           graph.outputs.end());
  const size_t n_nodes = graph.nodes.size();

  // 1. Records: identifiers (in the order the pool hands them out: graph, then per node its own,
  // its multi-output tensors', its new weights'; prims last), tensors, consumers.
  std::vector<TensorRec> tensors;  // node outputs, then weights appended as found
  std::vector<std::vector<size_t>> outs(n_nodes), ins(n_nodes);
  std::vector<std::vector<std::pair<const std::string*, size_t>>> node_weights(n_nodes);
  std::vector<size_t> weight_list;
  std::vector<std::string> node_idents(n_nodes);
  std::unordered_map<std::string_view, size_t> tensor_by_name, weight_by_name;
  std::unordered_map<std::string_view, std::vector<const std::string*>> consumers;
  size_t n_tensors = 0;
  for (const auto& n : graph.nodes) n_tensors += n.outputs.size() + n.weights.size();
  tensors.reserve(n_tensors);  // stable: records point into each other only by index
  for (const auto& n : graph.nodes)
    for (const auto& in : n.inputs) {
      auto& c = consumers[in];
      if (c.empty() || *c.back() != n.name) c.push_back(&n.name);
    }
  static const std::vector<const std::string*> kNone;
  for (size_t i = 0; i < n_nodes; ++i) {
    const ir::MSCJoint& n = graph.nodes[i];
    node_idents[i] = idents.Make(n.name, "node");
    for (const auto& in : n.inputs) {
      auto it = tensor_by_name.find(in);
      if (it == tensor_by_name.end())  // ir::Validate rejects such graphs first
        throw Error(graph.source + ": node " + Json(n.name).dump() + " reads tensor " +
                    Json(in).dump() + ", which no earlier node produces");
      ins[i].push_back(it->second);
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      TensorRec r;
      r.t = &n.outputs[k];
      // Multi-output tensors get their own pool identifiers, so they cannot collide with a node
      // that is literally named "<node>_<k>".
      r.ident = n.outputs.size() == 1 ? node_idents[i]
                                      : idents.Make(node_idents[i] + "_" + std::to_string(k));
      r.producer = &n.name;
      r.producer_ident = &node_idents[i];
      r.out_idx = k;
      r.graph_input = graph_inputs.count(r.t->name) > 0;
      r.graph_output = graph_outputs.count(r.t->name) > 0;
      auto c = consumers.find(r.t->name);
      r.consumers = c == consumers.end() ? kNone : c->second;
      tensor_by_name[r.t->name] = tensors.size();
      outs[i].push_back(tensors.size());
      tensors.push_back(std::move(r));
    }
    for (const auto& [role, w] : n.weights) {
      auto it = weight_by_name.find(w.name);
      if (it == weight_by_name.end()) {
        TensorRec r;
        r.t = &w;
        r.ident = idents.Make(w.alias.empty() ? w.name : w.alias, "weight");
        r.weight = true;
        r.role = &role;
        r.producer = &n.name;
        r.producer_ident = &node_idents[i];
        it = weight_by_name.emplace(w.name, tensors.size()).first;
        weight_list.push_back(tensors.size());
        tensors.push_back(std::move(r));
      }
      node_weights[i].emplace_back(&role, it->second);
    }
  }
  std::vector<std::string> prim_idents;
  for (const auto& p : graph.prims) prim_idents.push_back(idents.Make(p.name, "prim"));
  for (auto& r : tensors) {
    const int64_t numel = r.t->Numel();
    r.nbytes = numel < 0 ? -1 : numel * ir::MSCTensor::DtypeBytes(r.t->dtype);
  }

  // 2. Epilogue / residual fusion, elementwise chains and the memory plan, on the records.
  std::vector<Fusion> fusion(n_nodes);
  std::vector<Chain> chains;
  const bool chain_fusion =
      !spec.fuse_elementwise_ops.empty() || !spec.fuse_elementwise_selects.empty();
  if (!spec.fuse_producers.empty() || chain_fusion) {
    std::vector<FuseNode> fn(n_nodes);
    for (size_t i = 0; i < n_nodes; ++i) {
      const ir::MSCJoint& n = graph.nodes[i];
      fn[i].name = &n.name;
      fn[i].optype = &n.optype;
      fn[i].outputs.reserve(outs[i].size());
      for (size_t t : outs[i]) {
        const TensorRec& o = tensors[t];
        fn[i].outputs.push_back({&o.t->name, &o.t->dtype, &o.t->shape, o.graph_input});
      }
      if (!outs[i].empty()) {
        const TensorRec& o = tensors[outs[i][0]];
        fn[i].out_graph_output = o.graph_output;
        fn[i].consumers = o.consumers;
      }
      fn[i].inputs.reserve(ins[i].size());
      for (size_t t : ins[i]) fn[i].inputs.push_back(&tensors[t].t->name);
    }
    if (!spec.fuse_producers.empty())
      fusion = FuseCore(fn, spec.fuse_producers, spec.fuse_epilogues, spec.fuse_residual,
                        spec.fuse_residual_producers);
    chains = ChainCore(fn, fusion, spec.fuse_elementwise_ops, spec.fuse_elementwise_selects,
                       spec.fuse_elementwise_max_ops, spec.fuse_elementwise_max_inputs);
  }
  // Typed attrs, parsed once per distinct (opdef attr, string); per-optype facts once per optype.
  std::unordered_map<std::string_view, OptypeInfo> optype_info;
  std::map<std::pair<const opdef::AttrDef*, std::string_view>, Value> parsed;
  auto info_for = [&](const std::string& optype) -> OptypeInfo& {
    auto it = optype_info.find(optype);
    if (it != optype_info.end()) return it->second;
    OptypeInfo info;
    info.def = opdefs.Find(optype);
    const size_t dot = optype.find('.');
    info.optype = Value::Str(optype);
    info.ns = Value::Str(dot == std::string::npos ? "" : optype.substr(0, dot));
    info.op = Value::Str(dot == std::string::npos ? optype : optype.substr(dot + 1));
    info.summary = Value::Str(info.def ? info.def->summary : "");
    if (info.def)
      for (const auto& a : info.def->attrs)
        info.defaults.push_back(tmpl::FromJsonDeep(a.default_value));
    return optype_info.emplace(optype, std::move(info)).first->second;
  };
  std::vector<Value> node_attrs(n_nodes);
  for (size_t i = 0; i < n_nodes; ++i) {
    const ir::MSCJoint& n = graph.nodes[i];
    const OptypeInfo& info = info_for(n.optype);
    ValueDict attrs;
    if (info.def) {
      for (size_t a = 0; a < info.def->attrs.size(); ++a) {
        const opdef::AttrDef& def = info.def->attrs[a];
        const std::string* raw = n.FindAttr(def.name);
        if (!raw) {
          Set(attrs, Value::Str(def.name), info.defaults[a]);
          continue;
        }
        auto hit = parsed.find({&def, *raw});
        if (hit == parsed.end()) {
          Value v;
          try {
            v = tmpl::FromJsonDeep(opdef::ParseAttr(def, *raw));
          } catch (const Error& e) {
            throw Error(graph.source + ": node " + Json(n.name).dump() + " attr '" + def.name +
                        "': " + e.what());
          }
          hit = parsed.emplace(std::make_pair(&def, std::string_view(*raw)), std::move(v)).first;
        }
        Set(attrs, Value::Str(def.name), hit->second);
      }
    }
    for (const auto& [k, v] : n.attrs) {
      bool known = false;
      for (const auto& e : attrs) known = known || e.first.s() == k;
      if (!known) attrs.emplace_back(Value::Str(k), Value::Str(v));  // passed through as MSC's
    }
    node_attrs[i] = Value::Dict(std::move(attrs));
  }
  std::unique_ptr<PlanResult> plan;
  if (spec.memory_alignment > 0) {
    std::vector<PlanNode> pn(n_nodes);
    for (size_t i = 0; i < n_nodes; ++i) {
      const ir::MSCJoint& n = graph.nodes[i];
      pn[i].constant = n.optype == "constant";
      if (!pn[i].constant) {
        for (size_t t : outs[i]) {
          const TensorRec& r = tensors[t];
          if (r.nbytes < 0)
            ThrowDynamic(r.t->name, n.name,
                         std::vector<long long>(r.t->shape.begin(), r.t->shape.end()), r.t->prims);
          pn[i].outputs.push_back({&r.t->name, r.nbytes, r.graph_input, r.graph_output});
        }
      } else {
        for (size_t t : outs[i]) pn[i].outputs.push_back({&tensors[t].t->name, 0, false, false});
      }
      for (size_t t : ins[i]) pn[i].inputs.push_back(&tensors[t].t->name);
      pn[i].fused = fusion[i].into >= 0 && fusion[i].chain < 0;
      pn[i].alias_input = fusion[i].alias_input;
      if (fusion[i].into >= 0 && fusion[i].chain >= 0) {  // a chain member before the root
        pn[i].unplanned = true;
        pn[i].read_at = fusion[i].into;
      }
      pn[i].alias = std::find(spec.memory_alias.begin(), spec.memory_alias.end(), n.optype) !=
                        spec.memory_alias.end() ||
                    pn[i].fused;
      if (n.optype == "get_item" && pn[i].alias) {
        pn[i].get_item = true;
        Value index;
        if (!node_attrs[i].Get(K.index.s(), K.index.str_hash(), &index) || !index.is_int())
          throw Error(graph.source + ": node " + Json(n.name).dump() +
                      ": get_item needs an integer attr 'index'");
        // a negative index aliases nothing
        pn[i].get_item_index = index.i() < 0 ? SIZE_MAX : static_cast<size_t>(index.i());
      }
      Value axis;
      pn[i].concat =
          outs[i].size() == 1 &&
          std::find(spec.memory_concat_in_place.begin(), spec.memory_concat_in_place.end(),
                    n.optype) != spec.memory_concat_in_place.end() &&
          node_attrs[i].Get(K.axis.s(), K.axis.str_hash(), &axis) && axis.is_int() &&
          ConcatSlicesContiguous(tensors[outs[i][0]].t->shape, axis.i());
    }
    plan = std::make_unique<PlanResult>(PlanCore(pn, spec.memory_alignment));
  }

  // 3. Values: every tensor object once.
  std::vector<Value> letter(128);  // dims keys
  for (auto& r : tensors) {
    const ir::MSCTensor& t = *r.t;
    ValueDict d;
    d.reserve(24);
    d.emplace_back(K.name, Value::Str(t.name));
    d.emplace_back(K.alias, Value::Str(t.alias));
    d.emplace_back(K.dtype, Value::Str(t.dtype));
    d.emplace_back(K.layout, Value::Str(t.layout));
    d.emplace_back(K.shape, IntList(t.shape));
    d.emplace_back(K.prims, StrList(t.prims));
    const bool extra = !t.extra.empty();
    for (auto it = t.extra.begin(); it != t.extra.end(); ++it)
      d.emplace_back(Value::Str(it.key()), tmpl::FromJsonDeep(it.value()));
    // With extra keys a later key may already be there: JSON's operator[] replaced it in place.
    auto put = [&](const Value& key, Value v) {
      if (extra)
        Set(d, key, std::move(v));
      else
        d.emplace_back(key, std::move(v));
    };
    put(K.ndim, Value::Int(static_cast<int64_t>(t.shape.size())));
    const int64_t numel = t.Numel();
    put(K.numel, Value::Int(numel));
    put(K.nbytes, Value::Int(r.nbytes));
    ValueDict dims;
    bool distinct = t.layout.size() == t.shape.size();
    for (size_t a = 0; distinct && a < t.layout.size(); ++a)
      for (size_t b = 0; b < a; ++b) distinct = distinct && t.layout[a] != t.layout[b];
    if (distinct)
      for (size_t a = 0; a < t.shape.size(); ++a) {
        const unsigned char c = static_cast<unsigned char>(t.layout[a]);
        Value key = c < 128 ? letter[c] : Value();
        if (c >= 128 || key.is_none()) {
          key = Value::Str(std::string(1, t.layout[a]));
          if (c < 128) letter[c] = key;
        }
        dims.emplace_back(std::move(key), Value::Int(t.shape[a]));
      }
    put(K.dims, Value::Dict(std::move(dims)));
    put(K.is_weight, Value::Bool(r.weight));
    put(K.is_graph_input, Value::Bool(r.graph_input));
    put(K.is_graph_output, Value::Bool(r.graph_output));
    put(K.ident, Value::Str(r.ident));
    if (r.weight) {
      put(K.key, Value::Str(t.name));
      put(K.role, Value::Str(*r.role));
      put(K.producer, Value::Str(*r.producer));
      put(K.producer_ident, Value::Str(*r.producer_ident));
    } else {
      put(K.producer, Value::Str(*r.producer));
      put(K.producer_ident, Value::Str(*r.producer_ident));
      put(K.out_idx, Value::Int(static_cast<int64_t>(r.out_idx)));
      ValueList c;
      c.reserve(r.consumers.size());
      for (const std::string* s : r.consumers) c.push_back(Value::Str(*s));
      put(K.consumers, Value::List(std::move(c)));
      if (plan) {
        auto f = plan->offset.find(t.name);
        if (f != plan->offset.end()) put(K.offset, Value::Int(f->second));
      }
    }
    r.value = Value::Dict(std::move(d));
  }
  // Tensors named as graph inputs/outputs resolve to the last node output of that name.
  auto graph_tensor = [&](const std::string& name) -> const Value& {
    auto it = tensor_by_name.find(name);
    if (it == tensor_by_name.end())  // ir::Validate rejects such graphs first
      throw Error(graph.source + ": graph input/output " + Json(name).dump() +
                  " is no node's output");
    return tensors[it->second].value;
  };
  ValueList graph_in, graph_out;
  for (const auto& name : graph.inputs) graph_in.push_back(graph_tensor(name));
  for (const auto& name : graph.outputs) graph_out.push_back(graph_tensor(name));

  // 4. Node objects; a fused chain's object is shared by its members.
  // {name, ident, optype, attrs} of node m: a fused epilogue, a chain step.
  auto node_ref = [&](size_t m) {
    ValueDict r;
    r.emplace_back(K.name, Value::Str(graph.nodes[m].name));
    r.emplace_back(K.ident, Value::Str(node_idents[m]));
    r.emplace_back(K.optype, Value::Str(graph.nodes[m].optype));
    r.emplace_back(K.attrs, node_attrs[m]);
    return r;
  };
  std::vector<Value> chain_values;
  chain_values.reserve(chains.size());
  const Value kInputKind = Value::Str("input"), kStepKind = Value::Str("step");
  for (const Chain& c : chains) {
    ValueList inputs(c.inputs.size()), steps;
    for (size_t s = 0; s < c.members.size(); ++s) {
      const size_t m = c.members[s];
      ValueList operands;
      for (size_t k = 0; k < c.operands[s].size(); ++k) {
        const Chain::Operand& o = c.operands[s][k];
        if (!o.step) inputs[o.index] = tensors[ins[m][k]].value;  // as the member reads it
        ValueDict od;
        od.emplace_back(K.kind, o.step ? kStepKind : kInputKind);
        od.emplace_back(K.index, Value::Int(static_cast<int64_t>(o.index)));
        operands.push_back(Value::Dict(std::move(od)));
      }
      ValueDict st = node_ref(m);
      st.emplace_back(K.operands, Value::List(std::move(operands)));
      steps.push_back(Value::Dict(std::move(st)));
    }
    ValueDict cd;
    cd.emplace_back(K.inputs, Value::List(std::move(inputs)));
    cd.emplace_back(K.steps, Value::List(std::move(steps)));
    chain_values.push_back(Value::Dict(std::move(cd)));
  }
  std::map<std::string_view, std::vector<std::string_view>> folded_into;
  if (folded)
    for (const auto& f : *folded) folded_into[f.into].push_back(f.node);
  std::vector<std::string> optypes;
  std::unordered_set<std::string_view> optype_seen;
  nodes_.resize(n_nodes);
  for (size_t i = 0; i < n_nodes; ++i) {
    const ir::MSCJoint& n = graph.nodes[i];
    const OptypeInfo& info = optype_info.at(n.optype);
    if (optype_seen.insert(n.optype).second) optypes.push_back(n.optype);
    ValueDict& d = nodes_[i].items;
    d.reserve(20);
    d.emplace_back(K.index, Value::Int(n.index));
    d.emplace_back(K.name, Value::Str(n.name));
    d.emplace_back(K.ident, Value::Str(node_idents[i]));
    d.emplace_back(K.optype, info.optype);
    d.emplace_back(K.ns, info.ns);
    d.emplace_back(K.op, info.op);
    d.emplace_back(K.summary, info.summary);
    d.emplace_back(K.parents, StrList(n.parents));
    d.emplace_back(K.shared_ref, Value::Str(n.shared_ref));
    ValueList in_list, out_list;
    bool is_output = false;
    for (size_t t : ins[i]) in_list.push_back(tensors[t].value);
    for (size_t t : outs[i]) {
      out_list.push_back(tensors[t].value);
      is_output = is_output || tensors[t].graph_output;
    }
    d.emplace_back(K.inputs, Value::List(std::move(in_list)));
    d.emplace_back(K.outputs, Value::List(std::move(out_list)));
    d.emplace_back(K.is_output, Value::Bool(is_output));
    d.emplace_back(K.attrs, node_attrs[i]);
    ValueDict raw;
    for (const auto& [k, v] : n.attrs) Set(raw, Value::Str(k), Value::Str(v));
    d.emplace_back(K.attrs_raw, Value::Dict(std::move(raw)));
    ValueDict w;
    for (const auto& [role, t] : node_weights[i]) Set(w, Value::Str(*role), tensors[t].value);
    d.emplace_back(K.weights, Value::Dict(std::move(w)));
    if (fusion[i].epilogue >= 0) {  // {name, ident, optype, attrs} of the consumer run as epilogue
      d.emplace_back(K.fused_epilogue,
                     Value::Dict(node_ref(static_cast<size_t>(fusion[i].epilogue))));
    } else {
      d.emplace_back(K.fused_epilogue, Value());
    }
    // the residual added before the epilogue: the residual add's other input
    d.emplace_back(
        K.fused_residual,
        fusion[i].residual_add >= 0
            ? tensors[ins[static_cast<size_t>(fusion[i].residual_add)][fusion[i].residual_input]]
                  .value
            : Value());
    // the producer this node's computation was folded into
    d.emplace_back(
        K.fused_into,
        Value::Str(fusion[i].into >= 0 ? graph.nodes[static_cast<size_t>(fusion[i].into)].name
                                       : ""));
    d.emplace_back(K.fused_chain, fusion[i].chain >= 0
                                      ? chain_values[static_cast<size_t>(fusion[i].chain)]
                                      : Value());
    // a concat whose inputs' producers wrote them into its output (memory_plan.concat_in_place)
    d.emplace_back(K.in_place, Value::Bool(plan && plan->in_place[i]));
    code_at_ = d.size();
    d.emplace_back(K.code, Value());
    if (folded) {
      ValueList f;
      auto it = folded_into.find(n.name);
      if (it != folded_into.end())
        for (std::string_view s : it->second) f.push_back(Value::Str(std::string(s)));
      d.emplace_back(K.folded, Value::List(std::move(f)));
    }
  }

  // 5. The graph object.
  graph_items_.emplace_back(K.name, Value::Str(graph.name));
  graph_items_.emplace_back(K.ident, Value::Str(graph_ident));
  graph_items_.emplace_back(K.inputs, Value::List(std::move(graph_in)));
  graph_items_.emplace_back(K.outputs, Value::List(std::move(graph_out)));
  nodes_at_ = graph_items_.size();
  graph_items_.emplace_back(K.nodes, Value());
  ValueList wl;
  wl.reserve(weight_list.size());
  for (size_t t : weight_list) wl.push_back(tensors[t].value);
  graph_items_.emplace_back(K.weights, Value::List(std::move(wl)));
  graph_items_.emplace_back(K.optypes, StrList(optypes));
  ValueList prims;
  for (size_t p = 0; p < graph.prims.size(); ++p) {
    const ir::MSCPrim& prim = graph.prims[p];
    ValueDict d;
    d.emplace_back(K.index, Value::Int(prim.index));
    d.emplace_back(K.name, Value::Str(prim.name));
    d.emplace_back(K.ident, Value::Str(prim_idents[p]));
    d.emplace_back(K.optype, Value::Str(prim.optype));
    d.emplace_back(K.parents, StrList(prim.parents));
    ValueDict pa;
    for (const auto& [k, v] : prim.attrs) Set(pa, Value::Str(k), Value::Str(v));
    d.emplace_back(K.attrs, Value::Dict(std::move(pa)));
    prims.push_back(Value::Dict(std::move(d)));
  }
  graph_items_.emplace_back(K.prims, Value::List(std::move(prims)));
  if (plan) {
    ValueList list;
    list.reserve(plan->tensors.size());
    for (const auto& t : plan->tensors) {
      ValueDict d;
      d.emplace_back(K.name, Value::Str(*t.name));
      d.emplace_back(K.offset, Value::Int(t.offset));
      d.emplace_back(K.nbytes, Value::Int(t.nbytes));
      list.push_back(Value::Dict(std::move(d)));
    }
    ValueDict m;
    m.emplace_back(K.alignment, Value::Int(spec.memory_alignment));
    m.emplace_back(K.peak_bytes, Value::Int(plan->peak));
    m.emplace_back(K.naive_bytes, Value::Int(plan->naive));
    m.emplace_back(K.lower_bound_bytes, Value::Int(plan->lower_bound));
    m.emplace_back(K.tensors, Value::List(std::move(list)));
    graph_items_.emplace_back(K.memory, Value::Dict(std::move(m)));
  }
}

Value Context::Node(size_t i) const {
  ValueDict d = nodes_[i].items;
  d[code_at_].second = Value::Dict(nodes_[i].code);
  return Value::Dict(std::move(d));
}

void Context::SetCode(size_t i, const std::string& section, std::string code) {
  Set(nodes_[i].code, Value::Str(section), Value::Str(std::move(code)));
}

Value Context::Graph() const {
  ValueList nodes;
  nodes.reserve(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) nodes.push_back(Node(i));
  ValueDict d = graph_items_;
  d[nodes_at_].second = Value::List(std::move(nodes));
  return Value::Dict(std::move(d));
}

Json BuildContext(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs,
                  const BackendSpec& spec) {
  Context c(graph, opdefs, spec);
  Json ctx = Json::object();
  ctx["graph"] = c.Graph().ToJson();
  return ctx;
}

namespace {

/// obj[key] as a string, or null when absent / not a string.
const std::string* StrField(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

bool BoolField(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

const Json& ArrayField(const Json& obj, const char* key) {
  static const Json kEmpty = Json::array();
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? *it : kEmpty;
}

/// The fusion records of a JSON graph's nodes (names, dtypes and shapes point into `nodes` and
/// `shapes`).
std::vector<FuseNode> JsonFuseNodes(const Json& nodes, std::deque<std::vector<int64_t>>& shapes) {
  static const std::string kNoName;
  std::vector<FuseNode> fn(nodes.size());
  auto str_or_empty = [](const Json& obj, const char* key) {
    const std::string* s = StrField(obj, key);
    return s ? s : &kNoName;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Json& node = nodes[i];
    fn[i].name = str_or_empty(node, "name");
    fn[i].optype = str_or_empty(node, "optype");
    const Json& outputs = ArrayField(node, "outputs");
    for (const Json& t : outputs) {
      shapes.emplace_back();
      for (const Json& d : ArrayField(t, "shape"))
        shapes.back().push_back(d.is_number_integer() ? d.get<int64_t>() : -1);
      fn[i].outputs.push_back({str_or_empty(t, "name"), str_or_empty(t, "dtype"), &shapes.back(),
                               BoolField(t, "is_graph_input")});
    }
    if (!outputs.empty()) {
      fn[i].out_graph_output = BoolField(outputs[0], "is_graph_output");
      for (const Json& c : ArrayField(outputs[0], "consumers"))
        fn[i].consumers.push_back(c.is_string() ? &c.get_ref<const std::string&>() : &kNoName);
    }
    for (const Json& t : ArrayField(node, "inputs"))
      fn[i].inputs.push_back(str_or_empty(t, "name"));
  }
  return fn;
}

}  // namespace

void FuseEpilogues(Json& graph, const std::vector<std::string>& producers,
                   const std::vector<std::string>& epilogues,
                   const std::vector<std::string>& residual,
                   const std::vector<std::string>& residual_producers) {
  Json& nodes = graph["nodes"];
  std::deque<std::vector<int64_t>> shapes;  // FuseTensor::shape points here
  const std::vector<FuseNode> fn = JsonFuseNodes(nodes, shapes);
  const std::vector<Fusion> f = FuseCore(fn, producers, epilogues, residual, residual_producers);
  for (size_t i = 0; i < nodes.size(); ++i) {
    Json& node = nodes[i];
    if (f[i].epilogue >= 0) {
      const Json& consumer = nodes[static_cast<size_t>(f[i].epilogue)];
      node["fused_epilogue"] = {{"name", consumer["name"]},
                                {"ident", consumer["ident"]},
                                {"optype", consumer["optype"]},
                                {"attrs", consumer["attrs"]}};
    }
    if (f[i].residual_add >= 0)
      node["fused_residual"] =
          nodes[static_cast<size_t>(f[i].residual_add)]["inputs"][f[i].residual_input];
  }
  for (size_t i = 0; i < nodes.size(); ++i)
    if (f[i].into >= 0) nodes[i]["fused_into"] = nodes[static_cast<size_t>(f[i].into)]["name"];
}

void FuseElementwise(Json& graph, const std::vector<std::string>& ops,
                     const std::vector<std::string>& selects, long long max_ops,
                     long long max_inputs) {
  Json& nodes = graph["nodes"];
  std::deque<std::vector<int64_t>> shapes;  // FuseTensor::shape points here
  const std::vector<FuseNode> fn = JsonFuseNodes(nodes, shapes);
  // What FuseEpilogues decided, as FuseCore's record (any index >= 0 excludes a node).
  std::unordered_map<std::string_view, size_t> by_name;
  for (size_t i = 0; i < nodes.size(); ++i) by_name[*fn[i].name] = i;
  std::vector<Fusion> f(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Json& node = nodes[i];
    const std::string* into = StrField(node, "fused_into");
    if (into && !into->empty()) {
      auto p = by_name.find(*into);
      f[i].into = p == by_name.end() ? 0 : static_cast<long long>(p->second);
    }
    auto e = node.find("fused_epilogue");
    if (e != node.end() && !e->is_null()) f[i].epilogue = 0;
    auto r = node.find("fused_residual");
    if (r != node.end() && !r->is_null()) f[i].residual_add = 0;
    auto c = node.find("fused_chain");
    if (c != node.end() && !c->is_null()) f[i].chain = 0;  // fused by an earlier call
  }
  const std::vector<Chain> chains = ChainCore(fn, f, ops, selects, max_ops, max_inputs);
  for (const Chain& c : chains) {
    Json inputs = Json::array(), steps = Json::array();
    inputs.get_ref<Json::array_t&>().resize(c.inputs.size());
    for (size_t s = 0; s < c.members.size(); ++s) {
      const Json& node = nodes[c.members[s]];
      Json operands = Json::array();
      for (size_t k = 0; k < c.operands[s].size(); ++k) {
        const Chain::Operand& o = c.operands[s][k];
        if (!o.step) inputs[o.index] = node["inputs"][k];
        operands.push_back({{"kind", o.step ? "step" : "input"}, {"index", o.index}});
      }
      auto field = [&](const char* key) {
        auto it = node.find(key);
        return it == node.end() ? Json() : *it;
      };
      steps.push_back({{"name", field("name")},
                       {"ident", field("ident")},
                       {"optype", field("optype")},
                       {"attrs", field("attrs")},
                       {"operands", operands}});
    }
    const Json chain = {{"inputs", inputs}, {"steps", steps}};
    const size_t root = c.members.back();
    for (size_t m : c.members) {
      nodes[m]["fused_chain"] = chain;
      if (m != root) nodes[m]["fused_into"] = nodes[root]["name"];
    }
  }
}

void PlanMemory(Json& graph, long long alignment, const std::vector<std::string>& alias_optypes,
                const std::vector<std::string>& concat_in_place) {
  Json& nodes = graph["nodes"];
  static const std::string kNoName;
  std::vector<PlanNode> pn(nodes.size());
  std::unordered_map<std::string_view, size_t> by_name;  // node name -> index
  for (size_t i = 0; i < nodes.size(); ++i)
    if (const std::string* name = StrField(nodes[i], "name")) by_name[*name] = i;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Json& node = nodes[i];
    const std::string* optype_field = StrField(node, "optype");
    const std::string& optype = optype_field ? *optype_field : kNoName;
    pn[i].constant = optype == "constant";
    for (const Json& t : ArrayField(node, "outputs")) {
      const std::string* name = StrField(t, "name");
      long long nbytes = 0;
      if (!pn[i].constant) {
        auto nb = t.find("nbytes");
        nbytes = nb != t.end() && nb->is_number_integer() ? nb->get<long long>() : -1;
      }
      if (nbytes < 0) {
        std::vector<long long> shape;
        std::vector<std::string> prims;
        for (const Json& d : ArrayField(t, "shape"))
          shape.push_back(d.is_number_integer() ? d.get<long long>() : -1);
        for (const Json& p : ArrayField(t, "prims"))
          prims.push_back(p.is_string() ? p.get<std::string>() : p.dump());
        const std::string* node_name = StrField(node, "name");
        ThrowDynamic(name ? *name : "", node_name ? *node_name : "", shape, prims);
      }
      pn[i].outputs.push_back({name ? name : &kNoName, nbytes,
                               !pn[i].constant && BoolField(t, "is_graph_input"),
                               !pn[i].constant && BoolField(t, "is_graph_output")});
    }
    for (const Json& t : ArrayField(node, "inputs")) {
      const std::string* name = StrField(t, "name");
      pn[i].inputs.push_back(name ? name : &kNoName);
    }
    const std::string* fused = StrField(node, "fused_into");
    pn[i].fused = fused && !fused->empty();
    auto chain = node.find("fused_chain");
    if (pn[i].fused && chain != node.end() && chain->is_object()) {
      // A fused elementwise chain's member: never stored, reads its inputs at the root.
      auto root = by_name.find(*fused);
      pn[i].fused = false;
      pn[i].unplanned = true;
      pn[i].read_at = root == by_name.end() ? -1 : static_cast<long long>(root->second);
    }
    if (pn[i].fused) {
      // The output shares the bytes of the input that is not the producer's residual (a residual
      // add's producer output may be its input 1; an epilogue has one input).
      auto p = by_name.find(*fused);
      const Json* r = p == by_name.end() ? nullptr : &nodes[p->second];
      auto res = r ? r->find("fused_residual") : node.end();
      const std::string* res_name =
          r && res != r->end() && res->is_object() ? StrField(*res, "name") : nullptr;
      const Json& inputs = ArrayField(node, "inputs");
      for (size_t k = 0; res_name && k < inputs.size(); ++k) {
        const std::string* in = StrField(inputs[k], "name");
        if (!in || *in != *res_name) {
          pn[i].alias_input = k;
          break;
        }
      }
    }
    pn[i].alias =
        std::find(alias_optypes.begin(), alias_optypes.end(), optype) != alias_optypes.end() ||
        pn[i].fused;
    if (optype == "get_item" && pn[i].alias) {
      pn[i].get_item = true;
      auto attrs = node.find("attrs");
      const Json* index = nullptr;
      if (attrs != node.end() && attrs->is_object()) {
        auto it = attrs->find("index");
        if (it != attrs->end() && it->is_number_integer()) index = &*it;
      }
      pn[i].get_item_index =
          !index || index->get<long long>() < 0 ? SIZE_MAX : index->get<size_t>();
    }
    const Json& outputs = ArrayField(node, "outputs");
    auto attrs = node.find("attrs");
    if (outputs.size() == 1 && attrs != node.end() && attrs->is_object() &&
        std::find(concat_in_place.begin(), concat_in_place.end(), optype) !=
            concat_in_place.end()) {
      auto axis = attrs->find("axis");
      std::vector<int64_t> shape;
      for (const Json& d : ArrayField(outputs[0], "shape"))
        shape.push_back(d.is_number_integer() ? d.get<int64_t>() : -1);
      pn[i].concat = axis != attrs->end() && axis->is_number_integer() &&
                     ConcatSlicesContiguous(shape, axis->get<int64_t>());
    }
  }
  const PlanResult plan = PlanCore(pn, alignment);
  Json list = Json::array();
  for (const auto& t : plan.tensors)
    list.push_back({{"name", *t.name}, {"offset", t.offset}, {"nbytes", t.nbytes}});
  // Owned names: plan.offset views the tensors' name strings, which adding "offset" moves.
  const std::unordered_map<std::string, long long> offset(plan.offset.begin(), plan.offset.end());
  auto set_offset = [&](Json& t) {
    const std::string* name = StrField(t, "name");
    auto f = name ? offset.find(*name) : offset.end();
    if (f != offset.end()) t["offset"] = f->second;
  };
  for (auto& node : nodes)
    for (const char* key : {"inputs", "outputs"})
      for (auto& t : node[key]) set_offset(t);
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i]["in_place"] = plan.in_place[i];
  for (const char* key : {"inputs", "outputs"})
    for (auto& t : graph[key]) set_offset(t);
  graph["memory"] = {{"alignment", alignment},
                     {"peak_bytes", plan.peak},
                     {"naive_bytes", plan.naive},
                     {"lower_bound_bytes", plan.lower_bound},
                     {"tensors", list}};
}

}  // namespace msc::emit
