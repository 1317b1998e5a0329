#include "generator/analyses/memory_plan.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "generator/common/contains.h"
#include "generator/common/error.h"

namespace msc::analyses {

namespace {

using Json = ir::Json;

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
  bool fused = false;       // a fused node: its output shares the bytes of inputs[alias_input]
  size_t alias_input = 0;   // (a residual add's may be its input 1)
  bool unplanned = false;   // a fused chain member: its outputs get no bytes...
  long long read_at = -1;   // ...and it reads its inputs here (the chain root's position)
  long long write_at = -1;  // a norm fused into a producer: its output is written here
  // A concat whose output dims before its axis are all 1 (memory_plan.concat_in_place): input k's
  // bytes are the output's bytes from the sum of inputs 0..k-1's sizes on.
  bool concat = false;
};

/// The memory plan on plain records (see memory_plan.h).
MemoryPlan PlanCore(const std::vector<PlanNode>& nodes, long long alignment) {
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
      const long long begin = t.graph_input            ? -1
                              : nodes[i].write_at >= 0 ? nodes[i].write_at
                                                       : static_cast<long long>(i);
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
  MemoryPlan result;
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
  // Sibling outputs side by side: the outputs of one node (a split's pieces) of one size whose
  // alias groups end at the same step are one block, output k at k * the aligned size, so one
  // kernel can write them all as an evenly spaced span (the Vulkan runtime's split). Equal ends:
  // no output keeps another's bytes alive longer than its own, so the peak does not grow.
  std::vector<long long> group_end(items.size(), -2);
  for (size_t i = 0; i < items.size(); ++i)
    group_end[root(i)] = std::max(group_end[root(i)], items[i].end);
  for (const PlanNode& node : nodes) {
    if (node.alias || node.unplanned || node.constant || node.outputs.size() < 2) continue;
    std::vector<size_t> roots;
    long long nbytes = -1;
    bool ok = true;
    for (const PlanOut& t : node.outputs) {
      auto it = by_name.find(*t.name);
      if (it == by_name.end()) {
        ok = false;
        break;
      }
      const size_t r = root(it->second);
      if (nbytes < 0) nbytes = items[it->second].nbytes;
      ok = ok && items[it->second].nbytes == nbytes && nbytes > 0 && slice_parent[r] == SIZE_MAX &&
           group_end[r] == group_end[root(by_name.at(*node.outputs[0].name))];
      for (size_t o : roots) ok = ok && o != r;
      roots.push_back(r);
    }
    if (!ok) continue;
    const long long step = std::max(alignment, (nbytes + alignment - 1) / alignment * alignment);
    for (size_t k = 1; k < roots.size(); ++k) {
      slice_parent[roots[k]] = roots[0];
      slice_offset[roots[k]] = static_cast<long long>(k) * step;
    }
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

/// Attr `key` of node n as its opdef types it (the opdef's default when absent); nullptr when the
/// optype has no opdef or the attr is not an integer.
std::optional<int64_t> IntAttr(const ir::MSCJoint& n, const opdef::OpDefRegistry& opdefs,
                               const std::string& key) {
  const opdef::OpDef* def = opdefs.Find(n.optype);
  const opdef::AttrDef* attr = def ? def->FindAttr(key) : nullptr;
  const std::string* raw = n.FindAttr(key);
  Json v;
  if (attr) {
    try {
      v = raw ? opdef::ParseAttr(*attr, *raw) : attr->default_value;
    } catch (const Error&) {
      return std::nullopt;  // not an int: emit::Context reports the parse error for a concat
    }
  } else if (raw) {
    try {
      size_t used = 0;
      const long long x = std::stoll(*raw, &used);
      if (used == raw->size()) v = x;
    } catch (const std::exception&) {
    }
  }
  if (!v.is_number_integer()) return std::nullopt;
  return v.get<int64_t>();
}

}  // namespace

long long TensorBytes(const ir::MSCTensor& tensor) {
  const int64_t numel = tensor.Numel();
  return numel < 0 ? -1 : numel * ir::MSCTensor::DtypeBytes(tensor.dtype);
}

MemoryPlan PlanMemory(const Dataflow& dataflow, const FusionPlan& fusion,
                      const opdef::OpDefRegistry& opdefs, const MemoryOptions& options) {
  const ir::MSCGraph& graph = dataflow.graph();
  if (options.alignment <= 0)
    throw Error("memory plan: alignment " + std::to_string(options.alignment) +
                " must be a positive number of bytes");
  const size_t n_nodes = graph.nodes.size();
  std::vector<PlanNode> pn(n_nodes);
  for (size_t i = 0; i < n_nodes; ++i) {
    const ir::MSCJoint& n = graph.nodes[i];
    const NodeFusion& f = fusion.nodes[i];
    pn[i].constant = n.optype == "constant";
    for (const ir::MSCTensor& t : n.outputs) {
      if (pn[i].constant) {
        pn[i].outputs.push_back({&t.name, 0, false, false});
        continue;
      }
      const long long nbytes = TensorBytes(t);
      if (nbytes < 0)
        ThrowDynamic(t.name, n.name, std::vector<long long>(t.shape.begin(), t.shape.end()),
                     t.prims);
      pn[i].outputs.push_back(
          {&t.name, nbytes, dataflow.is_graph_input(t.name), dataflow.is_graph_output(t.name)});
    }
    for (size_t k = 0; k < n.inputs.size(); ++k) pn[i].inputs.push_back(&dataflow.input(i, k).name);
    pn[i].fused = f.into >= 0 && f.chain < 0 && !f.own_bytes && !f.view;
    pn[i].alias_input = f.alias_input;
    if (f.own_bytes) {  // a norm run in its producer's epilogue: there it reads and writes
      pn[i].read_at = f.into;
      pn[i].write_at = f.into;
    }
    if (f.into >= 0 && f.chain >= 0) {  // a chain member before the root
      pn[i].unplanned = true;
      pn[i].read_at = f.into;
    }
    pn[i].alias = (Contains(options.alias_optypes, n.optype) || pn[i].fused) && !f.view;
    if (f.view) {  // a split piece or a view of one, read in place by `into`: no bytes of its own
      pn[i].unplanned = true;
      pn[i].read_at = f.into;
    }
    if (n.optype == "get_item" && pn[i].alias) {
      pn[i].get_item = true;
      const std::optional<int64_t> index = IntAttr(n, opdefs, "index");
      if (!index)
        throw Error(graph.source + ": node " + Json(n.name).dump() +
                    ": get_item needs an integer attr 'index'");
      // a negative index aliases nothing
      pn[i].get_item_index = *index < 0 ? SIZE_MAX : static_cast<size_t>(*index);
    }
    if (n.outputs.size() == 1 && Contains(options.concat_in_place, n.optype)) {
      const std::optional<int64_t> axis = IntAttr(n, opdefs, "axis");
      pn[i].concat = axis && ConcatSlicesContiguous(n.outputs[0].shape, *axis);
    }
  }
  return PlanCore(pn, options.alignment);
}

}  // namespace msc::analyses
