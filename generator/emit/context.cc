#include "generator/emit/context.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "generator/common/error.h"
#include "generator/emit/naming.h"

namespace msc::emit {

namespace {

/// MSC's tensor fields plus the derived facts templates use.
Json TensorContext(const ir::MSCTensor& t) {
  Json j = ir::TensorToJson(t);
  j["ndim"] = t.shape.size();
  int64_t numel = t.Numel();
  j["numel"] = numel;
  j["nbytes"] = numel < 0 ? -1 : numel * ir::MSCTensor::DtypeBytes(t.dtype);
  Json dims = Json::object();
  std::set<char> letters(t.layout.begin(), t.layout.end());
  if (t.layout.size() == t.shape.size() && letters.size() == t.layout.size())
    for (size_t i = 0; i < t.shape.size(); ++i) dims[std::string(1, t.layout[i])] = t.shape[i];
  j["dims"] = dims;
  j["is_weight"] = false;
  j["is_graph_input"] = false;
  j["is_graph_output"] = false;
  return j;
}

}  // namespace

Json BuildContext(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs,
                  const BackendSpec& spec) {
  IdentifierPool idents(
      std::set<std::string>(spec.reserved_names.begin(), spec.reserved_names.end()));
  Json g = Json::object();
  g["name"] = graph.name;
  g["ident"] = idents.Make(graph.name, "graph");

  std::set<std::string> graph_inputs(graph.inputs.begin(), graph.inputs.end());
  std::set<std::string> graph_outputs(graph.outputs.begin(), graph.outputs.end());
  std::map<std::string, std::vector<std::string>> consumers;
  for (const auto& n : graph.nodes)
    for (const auto& in : n.inputs) {
      auto& c = consumers[in];
      if (c.empty() || c.back() != n.name) c.push_back(n.name);
    }

  std::map<std::string, Json> tensors;  // tensor name -> context, for resolving inputs
  std::map<std::string, Json> weights;  // weight name -> context
  Json weight_list = Json::array();
  Json nodes = Json::array();
  std::vector<std::string> optypes;

  for (const auto& n : graph.nodes) {
    Json node = Json::object();
    const std::string node_ident = idents.Make(n.name, "node");
    node["index"] = n.index;
    node["name"] = n.name;
    node["ident"] = node_ident;
    node["optype"] = n.optype;
    size_t dot = n.optype.find('.');
    node["ns"] = dot == std::string::npos ? "" : n.optype.substr(0, dot);
    node["op"] = dot == std::string::npos ? n.optype : n.optype.substr(dot + 1);
    const opdef::OpDef* def = opdefs.Find(n.optype);
    node["summary"] = def ? def->summary : "";
    node["parents"] = n.parents;
    node["shared_ref"] = n.shared_ref;
    if (std::find(optypes.begin(), optypes.end(), n.optype) == optypes.end())
      optypes.push_back(n.optype);

    Json inputs = Json::array();
    for (const auto& in : n.inputs) inputs.push_back(tensors.at(in));
    node["inputs"] = inputs;

    Json outputs = Json::array();
    bool is_output = false;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      Json t = TensorContext(n.outputs[k]);
      // Multi-output tensors get their own pool identifiers, so they cannot collide with a node
      // that is literally named "<node>_<k>".
      t["ident"] =
          n.outputs.size() == 1 ? node_ident : idents.Make(node_ident + "_" + std::to_string(k));
      t["producer"] = n.name;
      t["producer_ident"] = node_ident;
      t["out_idx"] = k;
      t["consumers"] =
          consumers.count(n.outputs[k].name) ? Json(consumers[n.outputs[k].name]) : Json::array();
      t["is_graph_input"] = graph_inputs.count(n.outputs[k].name) > 0;
      t["is_graph_output"] = graph_outputs.count(n.outputs[k].name) > 0;
      is_output = is_output || t["is_graph_output"].get<bool>();
      tensors[n.outputs[k].name] = t;
      outputs.push_back(t);
    }
    node["outputs"] = outputs;
    node["is_output"] = is_output;

    Json attrs = Json::object();
    Json attrs_raw = Json::object();
    for (const auto& [k, v] : n.attrs) attrs_raw[k] = v;
    if (def) {
      for (const auto& a : def->attrs) {
        const std::string* raw = n.FindAttr(a.name);
        if (!raw) {
          attrs[a.name] = a.default_value;
          continue;
        }
        try {
          attrs[a.name] = opdef::ParseAttr(a, *raw);
        } catch (const Error& e) {
          throw Error(graph.source + ": node " + Json(n.name).dump() + " attr '" + a.name +
                      "': " + e.what());
        }
      }
    }
    for (const auto& [k, v] : n.attrs)
      if (!attrs.contains(k)) attrs[k] = v;  // not in the opdef: passed through as MSC's string
    node["attrs"] = attrs;
    node["attrs_raw"] = attrs_raw;

    Json node_weights = Json::object();
    for (const auto& [role, w] : n.weights) {
      auto it = weights.find(w.name);
      if (it == weights.end()) {
        Json t = TensorContext(w);
        t["ident"] = idents.Make(w.alias.empty() ? w.name : w.alias, "weight");
        t["key"] = w.name;
        t["is_weight"] = true;
        t["role"] = role;
        t["producer"] = n.name;
        t["producer_ident"] = node_ident;
        it = weights.emplace(w.name, t).first;
        weight_list.push_back(t);
      }
      node_weights[role] = it->second;
    }
    node["weights"] = node_weights;
    node["fused_epilogue"] = nullptr;  // set by FuseEpilogues: {name, ident, optype, attrs}
    node["fused_into"] = "";           // the producer this node's computation was folded into
    node["code"] = Json::object();
    nodes.push_back(std::move(node));
  }

  Json ins = Json::array(), outs = Json::array();
  for (const auto& name : graph.inputs) ins.push_back(tensors.at(name));
  for (const auto& name : graph.outputs) outs.push_back(tensors.at(name));
  g["inputs"] = ins;
  g["outputs"] = outs;
  g["nodes"] = std::move(nodes);
  g["weights"] = weight_list;
  g["optypes"] = optypes;
  Json prims = Json::array();
  for (const auto& p : graph.prims) {
    Json jp = Json::object();
    jp["index"] = p.index;
    jp["name"] = p.name;
    jp["ident"] = idents.Make(p.name, "prim");
    jp["optype"] = p.optype;
    jp["parents"] = p.parents;
    Json pa = Json::object();
    for (const auto& [k, v] : p.attrs) pa[k] = v;
    jp["attrs"] = pa;
    prims.push_back(jp);
  }
  g["prims"] = prims;
  if (!spec.fuse_producers.empty()) FuseEpilogues(g, spec.fuse_producers, spec.fuse_epilogues);
  if (spec.memory_alignment > 0) PlanMemory(g, spec.memory_alignment, spec.memory_alias);
  Json ctx = Json::object();
  ctx["graph"] = std::move(g);
  return ctx;
}

void FuseEpilogues(Json& graph, const std::vector<std::string>& producers,
                   const std::vector<std::string>& epilogues) {
  auto in = [](const std::vector<std::string>& v, const Json& s) {
    return std::find(v.begin(), v.end(), s.get<std::string>()) != v.end();
  };
  Json& nodes = graph["nodes"];
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i]["name"].get<std::string>()] = i;
  for (auto& node : nodes) {
    if (!in(producers, node["optype"]) || node["outputs"].size() != 1) continue;
    const Json& out = node["outputs"][0];
    if (out["is_graph_output"].get<bool>() || out["consumers"].size() != 1) continue;
    Json& consumer = nodes[position.at(out["consumers"][0].get<std::string>())];
    if (!in(epilogues, consumer["optype"]) || consumer["inputs"].size() != 1 ||
        consumer["inputs"][0]["name"] != out["name"] ||
        !consumer["fused_into"].get<std::string>().empty())
      continue;
    node["fused_epilogue"] = {{"name", consumer["name"]},
                              {"ident", consumer["ident"]},
                              {"optype", consumer["optype"]},
                              {"attrs", consumer["attrs"]}};
    consumer["fused_into"] = node["name"];
  }
}

void PlanMemory(Json& graph, long long alignment, const std::vector<std::string>& alias_optypes) {
  Json& nodes = graph["nodes"];
  const long long n_nodes = static_cast<long long>(nodes.size());
  struct Item {
    std::string name;
    long long nbytes, begin, end;
    size_t parent;  // union-find
  };
  std::vector<Item> items;
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i]["optype"] == "constant") continue;  // a weight, uploaded once
    for (const auto& t : nodes[i]["outputs"]) {
      long long nbytes = t["nbytes"].get<long long>();
      if (nbytes < 0) {
        // Name the MSC prims behind the dynamic dims so the user knows what to fix.
        std::string dims;
        const Json& shape = t["shape"];
        const Json& prims = t["prims"];
        for (size_t d = 0; d < shape.size(); ++d) {
          if (shape[d].get<long long>() >= 0) continue;
          dims += (dims.empty() ? "" : ", ") + std::string("axis ") + std::to_string(d) +
                  " = prim " + (d < prims.size() ? prims[d].dump() : std::string("(unnamed)"));
        }
        throw Error("memory plan: tensor " + t["name"].dump() + " (node " +
                    nodes[i]["name"].dump() + ") has a dynamic shape (" + dims +
                    "); this backend needs static shapes: specialize the graph with "
                    "--shape INPUT=D0,D1,... (msc-codegen generate --help)");
      }
      // Graph inputs are written by the host before the first dispatch and graph outputs read after
      // the last, whatever the position of their nodes: they live from -1 / until n_nodes.
      long long begin = t["is_graph_input"].get<bool>() ? -1 : static_cast<long long>(i);
      long long end = t["is_graph_output"].get<bool>() ? n_nodes : static_cast<long long>(i);
      by_name[t["name"].get<std::string>()] = items.size();
      items.push_back({t["name"].get<std::string>(), nbytes, begin, end, items.size()});
    }
    for (const auto& t : nodes[i]["inputs"]) {
      auto it = by_name.find(t["name"].get<std::string>());
      if (it != by_name.end())
        items[it->second].end = std::max(items[it->second].end, static_cast<long long>(i));
    }
  }
  std::function<size_t(size_t)> root = [&](size_t x) {
    while (items[x].parent != x) x = items[x].parent = items[items[x].parent].parent;
    return x;
  };
  // Alias ops and fused epilogues: output k shares the bytes of input k (get_item: input[index]).
  for (const auto& node : nodes) {
    const std::string optype = node["optype"].get<std::string>();
    bool alias =
        std::find(alias_optypes.begin(), alias_optypes.end(), optype) != alias_optypes.end() ||
        !node["fused_into"].get<std::string>().empty();
    if (!alias) continue;
    for (size_t k = 0; k < node["outputs"].size(); ++k) {
      size_t src_idx = optype == "get_item" ? node["attrs"]["index"].get<size_t>() : k;
      if (src_idx >= node["inputs"].size()) continue;
      auto out = by_name.find(node["outputs"][k]["name"].get<std::string>());
      auto src = by_name.find(node["inputs"][src_idx]["name"].get<std::string>());
      if (out == by_name.end() || src == by_name.end() ||
          items[out->second].nbytes != items[src->second].nbytes)
        continue;
      items[root(out->second)].parent = root(src->second);
    }
  }
  // One block per alias group: its lifetime is the union of its members'.
  std::map<size_t, Item> groups;
  for (size_t i = 0; i < items.size(); ++i) {
    size_t r = root(i);
    auto [it, fresh] = groups.emplace(r, items[i]);
    if (!fresh) {
      it->second.begin = std::min(it->second.begin, items[i].begin);
      it->second.end = std::max(it->second.end, items[i].end);
      it->second.nbytes = std::max(it->second.nbytes, items[i].nbytes);
    }
  }
  auto align = [&](long long v) {
    return std::max(alignment, (v + alignment - 1) / alignment * alignment);
  };
  std::vector<size_t> order;
  for (const auto& [r, g] : groups) order.push_back(r);
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
  std::vector<size_t> seen_at(groups.size() + 1, 0);  // query stamp per placed block
  size_t stamp = 0;
  auto bucket_of = [&](long long t) { return static_cast<size_t>((t + 1) / kBucket); };
  std::map<size_t, long long> offset;
  long long peak = 0, naive = 0;
  std::vector<std::pair<long long, long long>>
      busy;  // [offset, end) of blocks live at the same time
  for (size_t r : order) {
    const Item& g = groups[r];
    const long long size = align(g.nbytes);
    naive += size;
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
    peak = std::max(peak, at + size);
  }
  Json list = Json::array();
  for (size_t i = 0; i < items.size(); ++i)
    list.push_back(
        {{"name", items[i].name}, {"offset", offset[root(i)]}, {"nbytes", items[i].nbytes}});
  auto set_offset = [&](Json& t) {
    auto f = by_name.find(t["name"].get<std::string>());
    if (f != by_name.end()) t["offset"] = offset[root(f->second)];
  };
  for (auto& node : nodes)
    for (const char* key : {"inputs", "outputs"})
      for (auto& t : node[key]) set_offset(t);
  for (const char* key : {"inputs", "outputs"})
    for (auto& t : graph[key]) set_offset(t);
  // Lower bound of any plan: the largest sum of (aligned) blocks live at one step.
  std::map<long long, long long> delta;  // step -> change of the live sum
  for (const auto& [r, g] : groups) {
    delta[g.begin] += align(g.nbytes);
    delta[g.end + 1] -= align(g.nbytes);
  }
  long long live = 0, lower_bound = 0;
  for (const auto& [step, d] : delta) lower_bound = std::max(lower_bound, live += d);
  graph["memory"] = {{"alignment", alignment},
                     {"peak_bytes", peak},
                     {"naive_bytes", naive},
                     {"lower_bound_bytes", lower_bound},
                     {"tensors", list}};
}

}  // namespace msc::emit
