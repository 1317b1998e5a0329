#include "generator/opdef/opdef.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>
#include <boost/filesystem.hpp>

#include "generator/common/error.h"
#include "generator/common/strict_yaml.h"

namespace msc::opdef {

namespace fs = boost::filesystem;

namespace {

const std::vector<std::pair<std::string, AttrType>>& TypeNames() {
  static const std::vector<std::pair<std::string, AttrType>> kNames = {
      {"int", AttrType::kInt},
      {"float", AttrType::kFloat},
      {"bool", AttrType::kBool},
      {"str", AttrType::kStr},
      {"dtype", AttrType::kDtype},
      {"int list", AttrType::kIntList},
      {"float list", AttrType::kFloatList},
      {"str list", AttrType::kStrList}};
  return kNames;
}

std::string Quote(const std::string& s) { return Json(s).dump(); }

std::vector<std::string> SplitList(const std::string& value) {
  // MSC joins with ',' and appends a trailing ',' for one element: "1," -> ["1"]; "" -> [].
  std::vector<std::string> items;
  if (value.empty()) return items;
  std::string cur;
  for (char c : value) {
    if (c == ',') {
      items.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty() || value.back() != ',') items.push_back(cur);
  return items;
}

std::optional<int64_t> ToInt(std::string s) {
  s.erase(0, s.find_first_not_of(' '));
  s.erase(s.find_last_not_of(' ') + 1);
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> ToFloat(std::string s) {
  s.erase(0, s.find_first_not_of(' '));
  s.erase(s.find_last_not_of(' ') + 1);
  if (s.empty()) return std::nullopt;
  if (s == "inf" || s == "+inf" || s == "Infinity") return HUGE_VAL;
  if (s == "-inf" || s == "-Infinity") return -HUGE_VAL;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isnan(v)) return std::nullopt;
  return v;
}

// ---- strict YAML reading ---------------------------------------------------------------------

/// The shared strict reader plus the opdef-specific typing of YAML values.
class YamlReader : public StrictYaml {
 public:
  using StrictYaml::StrictYaml;

  /// YAML scalar/sequence -> JSON value typed for `type`.
  Json Typed(const YAML::Node& n, AttrType type, const std::string& what) const {
    auto scalar = [&](const YAML::Node& s, AttrType t) -> Json {
      if (!s.IsScalar()) Fail(s, what + " must be a " + AttrTypeName(t));
      const std::string& v = s.Scalar();
      switch (t) {
        case AttrType::kInt:
        case AttrType::kIntList:
          if (auto i = ToInt(v)) return *i;
          break;
        case AttrType::kFloat:
        case AttrType::kFloatList:
          if (v == ".inf") return HUGE_VAL;
          if (v == "-.inf") return -HUGE_VAL;
          if (auto f = ToFloat(v)) return *f;
          break;
        case AttrType::kBool:
          if (v == "true") return true;
          if (v == "false") return false;
          break;
        default:
          return v;
      }
      Fail(s, what + " must be a " + AttrTypeName(t) + ", got '" + v + "'");
    };
    bool is_list =
        type == AttrType::kIntList || type == AttrType::kFloatList || type == AttrType::kStrList;
    if (is_list) {
      if (!n.IsSequence()) Fail(n, what + " must be a list (" + AttrTypeName(type) + ")");
      Json arr = Json::array();
      for (const auto& item : n) arr.push_back(scalar(item, type));
      return arr;
    }
    return scalar(n, type);
  }

 private:
  std::string file_;
};

AttrDef ParseAttrDef(const YamlReader& r, const std::string& name, const YAML::Node& n) {
  AttrDef a;
  a.name = name;
  const std::string what = "attr '" + name + "'";
  YAML::Node default_node, choices_node;  // a default-constructed YAML::Node is a defined null
  bool has_type = false, has_default = false, has_choices = false;
  for (const auto& [key, v] :
       r.Map(n, what,
             {"type", "default", "required", "nullable", "choices", "length", "min", "doc"})) {
    if (key == "type") {
      auto t = ParseAttrType(r.Str(v, what + " type"));
      if (!t) {
        std::string valid;
        for (const auto& kv : TypeNames()) valid += (valid.empty() ? "" : ", ") + kv.first;
        r.Fail(v,
               "unknown type '" + v.Scalar() + "' for " + what + " (valid types: " + valid + ")");
      }
      a.type = *t;
      has_type = true;
    } else if (key == "default") {
      default_node = v;
      has_default = true;
    } else if (key == "required") {
      a.required = r.Bool(v, what + " required");
    } else if (key == "nullable") {
      a.nullable = r.Bool(v, what + " nullable");
    } else if (key == "choices") {
      choices_node = v;
      has_choices = true;
    } else if (key == "length") {
      if (v.IsSequence()) {
        for (const auto& item : v)
          a.lengths.push_back(r.Typed(item, AttrType::kInt, what + " length").get<int64_t>());
      } else {
        a.lengths.push_back(r.Typed(v, AttrType::kInt, what + " length").get<int64_t>());
      }
    } else if (key == "min") {
      a.min = r.Typed(v, AttrType::kFloat, what + " min").get<double>();
    } else if (key == "doc") {
      a.doc = r.Str(v, what + " doc");
    }
  }
  if (!has_type) r.Fail(n, what + " has no 'type'");
  if (has_default) {
    if (default_node.IsNull()) {
      a.nullable = true;
      a.default_value = nullptr;
    } else {
      a.default_value = r.Typed(default_node, a.type, what + " default");
    }
  } else if (!a.required && !a.nullable) {
    r.Fail(n, what + " needs a 'default' or 'required: true'");
  }
  if (has_choices) {
    if (!choices_node.IsSequence()) r.Fail(choices_node, what + " choices must be a list");
    for (const auto& c : choices_node) a.choices.push_back(r.Typed(c, a.type, what + " choice"));
  }
  return a;
}

OpDef ParseOpDef(const YamlReader& r, const std::string& optype, const YAML::Node& n) {
  OpDef d;
  YAML::Node traits_node, domain_node;
  d.optype = optype;
  d.file = r.Where(n);
  const std::string what = "op '" + optype + "'";
  for (const auto& [key, v] :
       r.Map(n, what,
             {"summary", "traits", "inputs", "min_inputs", "weights", "attrs", "extra_attrs",
              "not_for_inference", "reference", "domain"})) {
    if (key == "summary") {
      d.summary = r.Str(v, what + " summary");
    } else if (key == "reference") {
      d.reference = r.Str(v, what + " reference");
      if (d.reference.rfind("torch.", 0) != 0)
        r.Fail(v, what + " reference must be a PyTorch callable like \"torch.acosh\"");
    } else if (key == "domain") {
      if (!v.IsSequence() || v.size() != 2) r.Fail(v, what + " domain must be a list [lo, hi]");
      for (const auto& x : v)
        d.domain.push_back(r.Typed(x, AttrType::kFloat, what + " domain").get<double>());
      if (!(d.domain[0] < d.domain[1])) r.Fail(v, what + " domain must be [lo, hi] with lo < hi");
      domain_node = v;
    } else if (key == "traits") {
      d.traits = r.StrList(v, what + " traits");
      traits_node = v;
    } else if (key == "inputs") {
      if (v.IsScalar() && v.Scalar() == "variadic") {
        d.variadic = true;
        if (d.min_inputs == 0) d.min_inputs = 1;
      } else {
        d.inputs = r.StrList(v, what + " inputs");
      }
    } else if (key == "min_inputs") {
      d.min_inputs = r.Typed(v, AttrType::kInt, what + " min_inputs").get<int64_t>();
    } else if (key == "weights") {
      for (const auto& [role, wn] : r.Map(v, what + " weights", {})) {
        WeightDef w;
        w.role = role;
        if (!wn.IsNull()) {
          for (const auto& [wk, wv] :
               r.Map(wn, "weight '" + role + "'", {"optional", "layout", "doc"})) {
            if (wk == "optional") w.optional = r.Bool(wv, "weight '" + role + "' optional");
            if (wk == "layout") w.layout = r.Str(wv, "weight '" + role + "' layout");
            if (wk == "doc") w.doc = r.Str(wv, "weight '" + role + "' doc");
          }
        }
        d.weights.push_back(w);
      }
    } else if (key == "attrs") {
      if (!v.IsNull())
        for (const auto& [an, av] : r.Map(v, what + " attrs", {}))
          d.attrs.push_back(ParseAttrDef(r, an, av));
    } else if (key == "extra_attrs") {
      d.allow_extra_attrs = r.Bool(v, what + " extra_attrs");
    } else if (key == "not_for_inference") {
      d.not_for_inference = r.Str(v, what + " not_for_inference");
    }
  }
  if (d.summary.empty()) r.Fail(n, what + " has no 'summary'");
  if (!d.variadic && d.min_inputs == 0) d.min_inputs = static_cast<int64_t>(d.inputs.size());
  if (!d.variadic && d.min_inputs > static_cast<int64_t>(d.inputs.size()))
    r.Fail(n, what + " has min_inputs " + std::to_string(d.min_inputs) + " but only " +
                  std::to_string(d.inputs.size()) + " inputs");
  if (!d.domain.empty() && d.reference.empty())
    r.Fail(domain_node, what + " has a domain but no reference");
  for (size_t i = 0; i < d.traits.size(); ++i) {
    const Trait* t = FindTrait(d.traits[i]);
    if (!t)
      r.Fail(traits_node[i],
             "unknown trait '" + d.traits[i] + "' for " + what + " (known: " + TraitNames() + ")");
    for (size_t j = 0; j < i; ++j)
      if (d.traits[j] == d.traits[i])
        r.Fail(traits_node[i], what + " lists trait '" + d.traits[i] + "' twice");
    if (t->inputs >= 0 && (d.variadic || d.inputs.size() != static_cast<size_t>(t->inputs) ||
                           d.min_inputs != t->inputs))
      r.Fail(traits_node[i], what + " has trait '" + d.traits[i] + "', which needs exactly " +
                                 std::to_string(t->inputs) + " tensor input(s)");
  }
  return d;
}

}  // namespace

const std::vector<Trait>& Traits() {
  static const std::vector<Trait> kTraits = {
      {"elementwise",
       "each output element is computed from the input elements at the same position after numpy "
       "broadcasting (the output has the inputs' broadcast shape)",
       -1},
      {"unary_math",
       "elementwise, one input: a real function of it whose output has the input's dtype (float "
       "kernels compute it in float32 and round once)",
       1},
      {"binary_math",
       "elementwise, two inputs broadcast numpy-style: an arithmetic function of them whose output "
       "has the inputs' dtype",
       2},
      {"comparison", "elementwise, two inputs broadcast numpy-style: a bool output", 2},
      {"logical", "elementwise on bool or integer tensors: logical and bitwise ops", -1},
      {"select",
       "elementwise, three inputs broadcast together: a condition of any dtype, then the two "
       "values it chooses between (where)",
       3},
      {"view",
       "computes nothing: output k is the bytes of input k (get_item: input[index]) read with "
       "another shape, so a backend may let them share memory",
       -1},
      {"reduction",
       "reduces its one input over attr `axis` (null = all axes), keeping the reduced dims as 1s "
       "when attr `keepdims`",
       1},
      {"contraction",
       "a sum of products over a reduced dimension (convolutions, matrix products): what GEMM and "
       "implicit-GEMM kernels compute, and what an epilogue can be fused into",
       -1},
  };
  return kTraits;
}

const Trait* FindTrait(const std::string& name) {
  for (const Trait& t : Traits())
    if (name == t.name) return &t;
  return nullptr;
}

std::string TraitNames() {
  std::string names;
  for (const Trait& t : Traits()) names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}

bool OpDef::HasTrait(const std::string& trait) const {
  return std::find(traits.begin(), traits.end(), trait) != traits.end();
}

std::vector<std::string> OpDefRegistry::WithTrait(const std::string& trait) const {
  std::vector<std::string> out;
  for (const auto& [optype, def] : defs_)
    if (def.HasTrait(trait)) out.push_back(optype);
  return out;
}

std::optional<AttrType> ParseAttrType(const std::string& name) {
  for (const auto& kv : TypeNames())
    if (kv.first == name) return kv.second;
  return std::nullopt;
}

std::string AttrTypeName(AttrType type) {
  for (const auto& kv : TypeNames())
    if (kv.second == type) return kv.first;
  return "?";
}

const AttrDef* OpDef::FindAttr(const std::string& attr_name) const {
  for (const auto& a : attrs)
    if (a.name == attr_name) return &a;
  return nullptr;
}

const WeightDef* OpDef::FindWeight(const std::string& role) const {
  for (const auto& w : weights)
    if (w.role == role) return &w;
  return nullptr;
}

std::pair<std::string, std::string> OpDef::NamespaceAndName() const {
  size_t dot = optype.find('.');
  if (dot == std::string::npos) return {"", optype};
  return {optype.substr(0, dot), optype.substr(dot + 1)};
}

void OpDefRegistry::LoadString(const std::string& yaml_text, const std::string& file) {
  YamlReader r(file);
  const YAML::Node root = r.Load(yaml_text);
  if (!root || root.IsNull()) return;
  for (const auto& [optype, node] : r.Map(root, "the opdef file (optype -> definition)", {})) {
    OpDef def = ParseOpDef(r, optype, node);
    auto existing = defs_.find(optype);
    if (existing != defs_.end())
      throw Error(def.file + ": optype '" + optype + "' is already defined at " +
                  existing->second.file);
    defs_.emplace(optype, std::move(def));
  }
}

OpDefRegistry OpDefRegistry::LoadDir(const std::string& dir) {
  if (!fs::is_directory(dir)) throw Error(dir + ": opdefs folder not found");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  OpDefRegistry reg;
  for (const auto& f : files) {
    std::ifstream in(f.string(), std::ios::binary);
    if (!in) throw Error(f.string() + ": cannot read opdef file");
    std::stringstream ss;
    ss << in.rdbuf();
    reg.LoadString(ss.str(), f.string());
  }
  return reg;
}

const OpDef* OpDefRegistry::Find(const std::string& optype) const {
  auto it = defs_.find(optype);
  return it == defs_.end() ? nullptr : &it->second;
}

Json ParseAttr(const AttrDef& def, const std::string& value) {
  if (def.nullable && value.empty()) return nullptr;
  auto fail = [&](const std::string& example) -> Json {
    throw Error("expected " + example + ", got " + Quote(value));
  };
  switch (def.type) {
    case AttrType::kInt:
      if (auto i = ToInt(value)) return *i;
      return fail("an int like \"1\"");
    case AttrType::kFloat:
      if (auto f = ToFloat(value)) return *f;
      return fail("a float like \"0.000010\"");
    case AttrType::kBool:
      if (value == "1" || value == "true" || value == "True") return true;
      if (value == "0" || value == "false" || value == "False") return false;
      return fail("a bool \"1\" or \"0\"");
    case AttrType::kStr:
    case AttrType::kDtype:
      return value;
    case AttrType::kIntList: {
      Json arr = Json::array();
      for (const auto& item : SplitList(value)) {
        auto i = ToInt(item);
        if (!i) return fail("an int list like \"1,1\" or \"1,\"");
        arr.push_back(*i);
      }
      return arr;
    }
    case AttrType::kFloatList: {
      Json arr = Json::array();
      for (const auto& item : SplitList(value)) {
        auto f = ToFloat(item);
        if (!f) return fail("a float list like \"0.5,1.0\"");
        arr.push_back(*f);
      }
      return arr;
    }
    case AttrType::kStrList: {
      Json arr = Json::array();
      for (const auto& item : SplitList(value)) arr.push_back(item);
      return arr;
    }
  }
  return fail("a value");
}

std::string CheckAttr(const AttrDef& def, const Json& value) {
  if (value.is_null()) return "";
  if (!def.choices.empty() &&
      std::find(def.choices.begin(), def.choices.end(), value) == def.choices.end()) {
    std::string valid;
    for (const auto& c : def.choices) valid += (valid.empty() ? "" : ", ") + c.dump();
    return "value " + value.dump() + " is not one of " + valid;
  }
  if (value.is_array() && !def.lengths.empty() &&
      std::find(def.lengths.begin(), def.lengths.end(), static_cast<int64_t>(value.size())) ==
          def.lengths.end()) {
    std::string valid;
    for (auto l : def.lengths) valid += (valid.empty() ? "" : " or ") + std::to_string(l);
    return "expected " + valid + " elements, got " + std::to_string(value.size());
  }
  if (def.min) {
    auto below = [&](const Json& v) { return v.is_number() && v.get<double>() < *def.min; };
    bool bad = below(value);
    if (value.is_array())
      for (const auto& v : value) bad = bad || below(v);
    if (bad) {
      std::ostringstream os;
      os << "values must be >= " << *def.min << ", got " << value.dump();
      return os.str();
    }
  }
  return "";
}

}  // namespace msc::opdef
