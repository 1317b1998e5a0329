// OpDef: the backend-neutral definition of one MSC optype, read from opdefs/*.yaml.
//
// One YAML file holds a map optype -> definition (see opdefs/README.md for the format):
//
//   nn.conv2d:
//     summary: 2-D convolution ...
//     inputs: [data]                 # tensor inputs in order; "variadic" for any count >= 1
//     weights: {weight: {layout: OIHW}, bias: {optional: true}}
//     attrs:
//       strides: {type: int list, default: [1, 1], length: 2}
//       groups: {type: int, default: 1, min: 1}
//
// The loader is strict: an unknown key, a duplicate key or a value of the wrong type is an
// msc::Error naming "<file>:<line>:<col>" and the valid keys. MSC's attribute strings are parsed
// to typed JSON values here, once (ParseAttr), following MSC's writer (graph_builder.h AttrGetter,
// utils.cc StringUtils::ToString): ints via to_string, bools "1"/"0", floats with 6 fixed
// decimals ("0.000010"), lists comma-joined with a trailing comma for one element ("1,"), "" for
// an empty list or None.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace msc::opdef {

using Json = nlohmann::ordered_json;

/// Attribute value types. "int list" etc. in YAML.
enum class AttrType { kInt, kFloat, kBool, kStr, kDtype, kIntList, kFloatList, kStrList };

/// Parses a YAML type name ("int", "float", "bool", "str", "dtype", "int list", "float list",
/// "str list"); nullopt if unknown.
std::optional<AttrType> ParseAttrType(const std::string& name);
std::string AttrTypeName(AttrType type);

struct AttrDef {
  std::string name;
  AttrType type = AttrType::kStr;
  bool required = false;         ///< no default: the node must carry it.
  bool nullable = false;         ///< "" (MSC's None) parses to null instead of an error.
  Json default_value;            ///< typed default (null when nullable and absent).
  std::vector<Json> choices;     ///< allowed values, empty = any.
  std::vector<int64_t> lengths;  ///< allowed list lengths, empty = any.
  std::optional<double> min;     ///< minimum for numbers / list elements.
  std::string doc;
};

struct WeightDef {
  std::string role;  ///< MSC weight type: weight, bias, gamma, beta, mean, var, const, ...
  bool optional = false;
  std::string layout;  ///< expected layout ("OIHW"), "" = any.
  std::string doc;
};

/// An op trait: a fact about an op's semantics that analyses, backends (backend.yaml `trait:NAME`
/// entries in optype lists) and the test tools select ops by, instead of each keeping its own list
/// of optypes (in the manner of MLIR ODS traits and torchgen tags). The vocabulary is fixed here;
/// an opdef lists its op's traits (`traits: [elementwise, unary_math]`).
struct Trait {
  const char* name;
  const char* doc;
  int inputs;  ///< the tensor input count every op of the trait has; -1: any
};

/// Every trait, in documentation order (docs: `msc-codegen ops --traits`, opdefs/README.md).
const std::vector<Trait>& Traits();
/// The trait of that name, or nullptr.
const Trait* FindTrait(const std::string& name);
/// Every trait name, comma-separated in Traits() order (for "known: ..." in errors).
std::string TraitNames();

struct OpDef {
  std::string optype;  ///< MSC's name ("nn.conv2d", "msc.linear_bias", "add").
  std::string summary;
  std::vector<std::string> traits;  ///< names from Traits(), in the opdef's order
  /// The test tools' oracle (interp.py, the per-op cases, the relax stand-in): a PyTorch callable
  /// by dotted path ("torch.acosh", "torch.nn.functional.silu") that computes the op on float
  /// tensors, for ops whose inputs are all tensors and which take no attrs; "" = none.
  std::string reference;
  /// With `reference`: the input interval [lo, hi] inside the op's domain where it is well
  /// conditioned, from which tests draw inputs; empty = any standard-normal input.
  std::vector<double> domain;
  std::vector<std::string> inputs;  ///< tensor input names in order.
  bool variadic = false;            ///< any number (>= min_inputs) of tensor inputs.
  int64_t min_inputs = 0;  ///< fewest inputs; non-variadic: the rest of `inputs` are optional.
  std::vector<WeightDef> weights;
  std::vector<AttrDef> attrs;
  bool allow_extra_attrs = false;  ///< accept (and pass through as strings) unknown attrs.
  /// Non-empty for optypes with no inference meaning (nn.nll_loss, plugin): why. `generate`
  /// rejects a graph holding one with this reason; `ops` shows "n/a".
  std::string not_for_inference;
  std::string file;  ///< where it was defined, "opdefs/nn.yaml:12".

  const AttrDef* FindAttr(const std::string& name) const;
  const WeightDef* FindWeight(const std::string& role) const;
  bool HasTrait(const std::string& trait) const;
  /// "nn.conv2d" -> {"nn", "conv2d"}; "add" -> {"", "add"}: split on the first '.'.
  std::pair<std::string, std::string> NamespaceAndName() const;
};

/// All opdefs of a folder, keyed by optype (sorted, for deterministic listings).
class OpDefRegistry {
 public:
  /// Loads every *.yaml in `dir` (sorted by file name). Throws msc::Error "<file>:<line>:<col>:
  /// ..." on any syntax or schema problem, or when an optype is defined twice (naming both places).
  static OpDefRegistry LoadDir(const std::string& dir);
  /// Loads one YAML document; `file` names it in errors. Adds to this registry.
  void LoadString(const std::string& yaml_text, const std::string& file);

  const OpDef* Find(const std::string& optype) const;
  const std::map<std::string, OpDef>& all() const { return defs_; }
  /// The optypes with that trait, sorted.
  std::vector<std::string> WithTrait(const std::string& trait) const;

 private:
  std::map<std::string, OpDef> defs_;
};

/// Parses one MSC attribute string to the typed JSON value of `def`:
///   int "1" -> 1; float "0.000010" -> 1e-05, "inf"/"-inf" -> ±infinity (a double held in the
///   JSON value; templates print it through the py_literal / c_literal filters);
///   bool "1"/"0" (also "true"/"false") -> true/false; int list "1,1" / "1," / "" -> [1,1] / [1] /
///   []; str / dtype -> as is. Nullable attrs: "" -> null.
/// Throws msc::Error with `what` describing the expectation, e.g.
///   "expected an int list like \"1,1\", got \"a,b\"" (callers prefix file and node).
Json ParseAttr(const AttrDef& def, const std::string& value);

/// Checks a typed value against choices / lengths / min. Returns "" when fine, else the problem.
std::string CheckAttr(const AttrDef& def, const Json& value);

}  // namespace msc::opdef
