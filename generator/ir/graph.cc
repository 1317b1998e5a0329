#include "generator/ir/graph.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

#include "generator/common/error.h"

namespace msc::ir {

int64_t ShapeNumel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  bool overflow = false, empty = false;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    empty = empty || d == 0;
    overflow = overflow || __builtin_mul_overflow(n, d, &n);
  }
  return empty ? 0 : overflow ? -2 : n;
}

int64_t MSCTensor::DtypeBytes(const std::string& dtype) {
  static const std::map<std::string, int64_t> kBytes = {
      {"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"float64", 8}, {"int8", 1},
      {"int16", 2},   {"int32", 4},   {"int64", 8},    {"uint8", 1},   {"bool", 1}};
  auto it = kBytes.find(dtype);
  return it == kBytes.end() ? 0 : it->second;
}

const std::string* MSCJoint::FindAttr(const std::string& key) const {
  for (const auto& kv : attrs)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

const MSCTensor* MSCJoint::FindWeight(const std::string& role) const {
  for (const auto& kv : weights)
    if (kv.first == role) return &kv.second;
  return nullptr;
}

void MSCGraph::BuildIndex() {
  node_index_.clear();
  for (size_t i = 0; i < nodes.size(); ++i) node_index_.emplace(nodes[i].name, i);
}

const MSCJoint* MSCGraph::FindNode(const std::string& node_name) const {
  auto it = node_index_.find(node_name);
  if (it != node_index_.end() && it->second < nodes.size() && nodes[it->second].name == node_name)
    return &nodes[it->second];
  for (const auto& n : nodes)  // index stale or not built
    if (n.name == node_name) return &n;
  return nullptr;
}

const MSCTensor* MSCGraph::FindTensor(const std::string& name_or_alias) const {
  if (auto split = SplitTensorName(name_or_alias)) {
    if (const MSCJoint* node = FindNode(split->first)) {
      if (split->second < static_cast<int64_t>(node->outputs.size()) &&
          node->outputs[split->second].name == name_or_alias)
        return &node->outputs[split->second];
    }
  }
  for (const auto& n : nodes)
    for (const auto& t : n.outputs)
      if (t.name == name_or_alias || (!t.alias.empty() && t.alias == name_or_alias)) return &t;
  return nullptr;
}

std::optional<std::pair<std::string, int64_t>> SplitTensorName(const std::string& tensor_name) {
  size_t pos = tensor_name.rfind(':');
  if (pos == std::string::npos || pos + 1 >= tensor_name.size()) return std::nullopt;
  std::string idx = tensor_name.substr(pos + 1);
  if (idx.size() > 9) return std::nullopt;
  for (char c : idx)
    if (c < '0' || c > '9') return std::nullopt;
  return std::make_pair(tensor_name.substr(0, pos), std::stoll(idx));
}

std::vector<std::string> ParentsOf(const std::vector<std::string>& inputs) {
  std::vector<std::string> parents;
  for (const auto& in : inputs) {
    auto split = SplitTensorName(in);
    std::string producer = split ? std::move(split->first) : in;
    if (std::find(parents.begin(), parents.end(), producer) == parents.end())
      parents.push_back(std::move(producer));
  }
  return parents;
}

namespace {

/// Tracks where in the document we are, to name the place in errors.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void Fail(const std::string& path, const std::string& what) const {
    std::string where = source_;
    if (!path.empty()) where += ": " + path;
    if (!node_.empty()) where += " (node '" + node_ + "')";
    throw Error(where + ": " + what);
  }

  void SetNode(const std::string& node) { node_ = node; }

  const Json& Required(const Json& obj, const std::string& path, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) Fail(path, std::string("missing required field '") + key + "'");
    return *it;
  }

  std::string String(const Json& v, const std::string& path) const {
    if (!v.is_string()) Fail(path, "expected a string, got " + Describe(v));
    return v.get<std::string>();
  }

  int64_t Int(const Json& v, const std::string& path) const {
    if (!v.is_number_integer()) Fail(path, "expected an integer, got " + Describe(v));
    return v.get<int64_t>();
  }

  std::vector<std::string> Strings(const Json& v, const std::string& path) const {
    if (!v.is_array()) Fail(path, "expected an array of strings, got " + Describe(v));
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(String(v[i], path + "[" + std::to_string(i) + "]"));
    return out;
  }

  OrderedMap<std::string> StringMap(const Json& v, const std::string& path) const {
    if (!v.is_object()) Fail(path, "expected an object of strings, got " + Describe(v));
    OrderedMap<std::string> out;
    for (auto it = v.begin(); it != v.end(); ++it)
      out.emplace_back(it.key(), String(it.value(), path + "." + it.key()));
    return out;
  }

  void Object(const Json& v, const std::string& path) const {
    if (!v.is_object()) Fail(path, "expected an object, got " + Describe(v));
  }

  static std::string Describe(const Json& v) {
    std::string d = v.dump();
    if (d.size() > 40) d = d.substr(0, 37) + "...";
    return std::string(v.type_name()) + " " + d;
  }

  /// Keys of `obj` not in `known`, for round trip.
  static Json Extra(const Json& obj, std::initializer_list<const char*> known) {
    Json extra = Json::object();
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool is_known = false;
      for (const char* k : known) is_known = is_known || it.key() == k;
      if (!is_known) extra[it.key()] = it.value();
    }
    return extra;
  }

 private:
  std::string source_;
  std::string node_;
};

MSCTensor ParseTensor(const Reader& r, const Json& j, const std::string& path) {
  r.Object(j, path);
  MSCTensor t;
  t.name = r.String(r.Required(j, path, "name"), path + ".name");
  if (j.contains("alias")) t.alias = r.String(j["alias"], path + ".alias");
  t.dtype = r.String(r.Required(j, path, "dtype"), path + ".dtype");
  if (j.contains("layout")) t.layout = r.String(j["layout"], path + ".layout");
  const Json& shape = r.Required(j, path, "shape");
  if (!shape.is_array())
    r.Fail(path + ".shape", "expected an array of integers, got " + Reader::Describe(shape));
  for (size_t i = 0; i < shape.size(); ++i)
    t.shape.push_back(r.Int(shape[i], path + ".shape[" + std::to_string(i) + "]"));
  if (j.contains("prims")) t.prims = r.Strings(j["prims"], path + ".prims");
  t.extra = Reader::Extra(j, {"name", "alias", "dtype", "layout", "shape", "prims"});
  return t;
}

MSCJoint ParseJoint(Reader& r, const Json& j, const std::string& path) {
  r.Object(j, path);
  MSCJoint n;
  n.name = r.String(r.Required(j, path, "name"), path + ".name");
  r.SetNode(n.name);
  n.index = r.Int(r.Required(j, path, "index"), path + ".index");
  if (j.contains("shared_ref")) n.shared_ref = r.String(j["shared_ref"], path + ".shared_ref");
  n.optype = r.String(r.Required(j, path, "optype"), path + ".optype");
  if (j.contains("parents")) n.parents = r.Strings(j["parents"], path + ".parents");
  if (j.contains("inputs")) n.inputs = r.Strings(j["inputs"], path + ".inputs");
  const Json& outputs = r.Required(j, path, "outputs");
  if (!outputs.is_array())
    r.Fail(path + ".outputs", "expected an array of tensors, got " + Reader::Describe(outputs));
  for (size_t i = 0; i < outputs.size(); ++i)
    n.outputs.push_back(ParseTensor(r, outputs[i], path + ".outputs[" + std::to_string(i) + "]"));
  if (j.contains("attrs")) n.attrs = r.StringMap(j["attrs"], path + ".attrs");
  if (j.contains("weights")) {
    const Json& w = j["weights"];
    r.Object(w, path + ".weights");
    for (auto it = w.begin(); it != w.end(); ++it)
      n.weights.emplace_back(it.key(), ParseTensor(r, it.value(), path + ".weights." + it.key()));
  }
  n.extra = Reader::Extra(j, {"index", "name", "shared_ref", "optype", "parents", "inputs",
                              "outputs", "attrs", "weights"});
  r.SetNode("");
  return n;
}

MSCPrim ParsePrim(const Reader& r, const Json& j, const std::string& path) {
  r.Object(j, path);
  MSCPrim p;
  p.index = r.Int(r.Required(j, path, "index"), path + ".index");
  p.name = r.String(r.Required(j, path, "name"), path + ".name");
  p.optype = r.String(r.Required(j, path, "optype"), path + ".optype");
  if (j.contains("parents")) p.parents = r.Strings(j["parents"], path + ".parents");
  if (j.contains("attrs")) p.attrs = r.StringMap(j["attrs"], path + ".attrs");
  p.extra = Reader::Extra(j, {"index", "name", "optype", "parents", "attrs"});
  return p;
}

/// 1-based line and column of byte offset `pos` in `text`.
std::pair<size_t, size_t> LineCol(const std::string& text, size_t pos) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

/// Byte offset of the first JSON number token (outside strings) whose value is beyond a double's
/// range, i.e. what nlohmann::json reports as out_of_range.406 "number overflow parsing '...'"
/// without a position; 0 if there is none.
size_t OverflowingNumberOffset(const std::string& text) {
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // skips the escaped character
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      const std::string_view number_chars = "+-.eE0123456789";
      size_t end = i;
      while (end < text.size() && number_chars.find(text[end]) != std::string_view::npos) ++end;
      if (std::isinf(std::strtod(text.substr(i, end - i).c_str(), nullptr))) return i;
      i = end - 1;
    }
  }
  return 0;
}

Json StringMapToJson(const OrderedMap<std::string>& m) {
  Json j = Json::object();
  for (const auto& kv : m) j[kv.first] = kv.second;
  return j;
}

}  // namespace

Json TensorToJson(const MSCTensor& t) {
  Json j = Json::object();
  j["name"] = t.name;
  j["alias"] = t.alias;
  j["dtype"] = t.dtype;
  j["layout"] = t.layout;
  j["shape"] = t.shape;
  j["prims"] = t.prims;
  for (auto it = t.extra.begin(); it != t.extra.end(); ++it) j[it.key()] = it.value();
  return j;
}

namespace {

/// SAX handler (nlohmann::json_sax) that builds nothing and stops as soon as the top-level
/// "nodes" array has more than `limit` elements. Syntax errors just stop it: the real parse
/// reports them with their position.
struct NodeCounter : nlohmann::json_sax<Json> {
  explicit NodeCounter(size_t limit) : limit(limit) {}
  size_t limit;
  size_t count = 0;
  int depth = 0;  // containers open
  bool in_nodes_key = false, in_nodes = false, over = false;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool key(string_t& k) override {
    if (depth == 1) in_nodes_key = k == "nodes";
    return true;
  }
  bool start_object(std::size_t) override {
    if (depth == 2 && in_nodes && ++count > limit) over = true;
    ++depth;
    return !over;
  }
  bool end_object() override {
    --depth;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth == 1) in_nodes = in_nodes_key;
    ++depth;
    return true;
  }
  bool end_array() override {
    if (--depth == 1) in_nodes = false;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }
};

bool CountsMoreNodesThan(const std::string& text, size_t limit) {
  NodeCounter counter(limit);
  try {
    Json::sax_parse(text, &counter);
  } catch (const nlohmann::json::exception&) {
    // e.g. a number out of double range: the real parse reports it
  }
  return counter.over;
}

}  // namespace

std::string TooManyNodesMessage(size_t max_nodes) {
  return "the graph has more than " + std::to_string(max_nodes) +
         " nodes, the limit (generating it needs about 7 KB of memory per node; raise the limit "
         "with --max-nodes N)";
}

MSCGraph ParseGraph(const std::string& text, const std::string& source, size_t max_nodes) {
  Json doc;
  // A graph over the node limit is refused before its (~10x larger) JSON tree is built: a SAX
  // pass, which builds nothing, counts the elements of the top-level "nodes" array first.
  if (CountsMoreNodesThan(text, max_nodes))
    throw Error(source + ": nodes[" + std::to_string(max_nodes) +
                "]: " + TooManyNodesMessage(max_nodes));
  try {
    doc = Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    auto [line, col] = LineCol(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at line L, column C: ".
    size_t colon = what.find(": ", what.find("parse error"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw Error(source + ":" + std::to_string(line) + ":" + std::to_string(col) +
                ": invalid JSON: " + what);
  } catch (const nlohmann::json::out_of_range& e) {
    // 406 "number overflow parsing '1e999'" (found by tests/fuzz/fuzz_graph), without a position.
    auto [line, col] = LineCol(text, OverflowingNumberOffset(text));
    std::string what = e.what();
    what = what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2);
    throw Error(source + ":" + std::to_string(line) + ":" + std::to_string(col) +
                ": invalid JSON: " + what + " (beyond the range of a 64-bit float)");
  }
  Reader r(source);
  r.Object(doc, "(top level)");
  MSCGraph g;
  g.source = source;
  g.name = r.String(r.Required(doc, "", "name"), "name");
  g.inputs = r.Strings(r.Required(doc, "", "inputs"), "inputs");
  g.outputs = r.Strings(r.Required(doc, "", "outputs"), "outputs");
  const Json& nodes = r.Required(doc, "", "nodes");
  if (!nodes.is_array())
    r.Fail("nodes", "expected an array of nodes, got " + Reader::Describe(nodes));
  g.nodes.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    g.nodes.push_back(ParseJoint(r, nodes[i], "nodes[" + std::to_string(i) + "]"));
  if (doc.contains("prims")) {
    const Json& prims = doc["prims"];
    if (!prims.is_array())
      r.Fail("prims", "expected an array of prims, got " + Reader::Describe(prims));
    for (size_t i = 0; i < prims.size(); ++i)
      g.prims.push_back(ParsePrim(r, prims[i], "prims[" + std::to_string(i) + "]"));
  }
  g.extra = Reader::Extra(doc, {"name", "inputs", "outputs", "nodes", "prims"});
  g.BuildIndex();
  return g;
}

MSCGraph LoadGraph(const std::string& path, size_t max_nodes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open graph file");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(path + ": cannot read graph file");
  return ParseGraph(ss.str(), path, max_nodes);
}

Json GraphToJson(const MSCGraph& g) {
  Json j = Json::object();
  j["name"] = g.name;
  j["inputs"] = g.inputs;
  j["outputs"] = g.outputs;
  Json nodes = Json::array();
  for (const auto& n : g.nodes) {
    Json jn = Json::object();
    jn["index"] = n.index;
    jn["name"] = n.name;
    jn["shared_ref"] = n.shared_ref;
    jn["optype"] = n.optype;
    jn["parents"] = n.parents;
    jn["inputs"] = n.inputs;
    Json outs = Json::array();
    for (const auto& t : n.outputs) outs.push_back(TensorToJson(t));
    jn["outputs"] = outs;
    jn["attrs"] = StringMapToJson(n.attrs);
    Json ws = Json::object();
    for (const auto& kv : n.weights) ws[kv.first] = TensorToJson(kv.second);
    jn["weights"] = ws;
    for (auto it = n.extra.begin(); it != n.extra.end(); ++it) jn[it.key()] = it.value();
    nodes.push_back(std::move(jn));
  }
  j["nodes"] = nodes;
  Json prims = Json::array();
  for (const auto& p : g.prims) {
    Json jp = Json::object();
    jp["index"] = p.index;
    jp["name"] = p.name;
    jp["optype"] = p.optype;
    jp["parents"] = p.parents;
    jp["attrs"] = StringMapToJson(p.attrs);
    for (auto it = p.extra.begin(); it != p.extra.end(); ++it) jp[it.key()] = it.value();
    prims.push_back(std::move(jp));
  }
  j["prims"] = prims;
  for (auto it = g.extra.begin(); it != g.extra.end(); ++it) j[it.key()] = it.value();
  return j;
}

std::string SaveGraphString(const MSCGraph& graph, int indent) {
  return GraphToJson(graph).dump(indent) + "\n";
}

}  // namespace msc::ir
