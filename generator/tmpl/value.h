// Runtime values of the template engine (internal header).
//
// A Value is one of Python's types as Jinja2 sees them: Undefined, None, bool, int (int64),
// float, str (UTF-8), list, tuple, dict, or an engine object (macro, namespace, loop, ...).
// Lists, dicts and strings may be views into a JSON document (no copy); values computed in a
// template own their storage. Copying a Value is cheap (shared payloads).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace msc::tmpl {

using Json = nlohmann::ordered_json;
class Value;
class Interp;

// Raised by operations that do not know the template position; the renderer catches it and
// throws msc::Error prefixed with the file:line:col of the expression being evaluated.
class OpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SourcePos {
  const std::string* file = nullptr;
  int line = 0;
  int col = 0;
};
std::string FormatPos(const SourcePos& pos);  // "file:line:col: "

using ValueList = std::vector<Value>;
using ValueDict = std::vector<std::pair<Value, Value>>;
using Kwargs = std::vector<std::pair<std::string, Value>>;

// Engine objects: macros, namespaces, loop contexts, bound methods, modules, functions.
class Object {
 public:
  virtual ~Object() = default;
  virtual std::string TypeName() const = 0;  // Python-ish type name used in messages
  virtual std::string Repr() const;          // repr(); default "<TypeName object>"
  virtual std::string Str() const { return Repr(); }
  virtual bool GetAttr(const std::string& name, Value* out) const;  // false: no attribute
  virtual bool IsCallable() const { return false; }
  virtual Value Call(Interp& in, ValueList& args, Kwargs& kwargs);
  virtual bool Iter(ValueList* out) const {
    (void)out;
    return false;
  }  // false: not iterable
};

struct UndefinedInfo {
  std::string message;   // e.g. "undefined variable 'foo'"
  SourcePos pos;         // where the undefined value was produced
  bool lenient = false;  // jinja2.Undefined (from `a if c` without else): prints as ''
};

class Value {
 public:
  enum class Kind : uint8_t {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kTuple,
    kDict,
    kObject
  };

  Value() : i_(0) {}
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value Float(double d);
  static Value Str(std::string s);
  static Value Markup(std::string s);  // a str already HTML-escaped/safe (markupsafe.Markup)
  static Value List(ValueList items);
  static Value Tuple(ValueList items);
  static Value Dict(ValueDict items);  // keys must be unique
  static Value Obj(std::shared_ptr<Object> obj);
  static Value Undef(std::string message, SourcePos pos, bool lenient = false);
  static Value ViewJson(const Json& j);  // borrowed: j must outlive every derived value
  static Value OwnJson(Json j);
  static Value ViewJson(const std::shared_ptr<void>& owner, const Json* j);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_lenient_undefined() const { return kind_ == Kind::kUndefined && undef().lenient; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const {
    return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool;
  }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_markup() const { return kind_ == Kind::kString && markup_; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  bool is_seq() const { return kind_ == Kind::kList || kind_ == Kind::kTuple; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_object() const { return kind_ == Kind::kObject; }

  bool b() const { return b_; }
  int64_t i() const { return kind_ == Kind::kBool ? (b_ ? 1 : 0) : i_; }  // bool or int
  double f() const;                                                       // any number as double
  const std::string& s() const;                                           // string
  size_t size() const;                                 // list/tuple/dict element count
  Value at(size_t index) const;                        // list/tuple element
  bool Get(const std::string& key, Value* out) const;  // dict lookup
  bool Get(const Value& key, Value* out) const;        // dict lookup by any key
  ValueDict Items() const;                             // dict items in order
  ValueList Keys() const;
  Object* obj() const { return static_cast<Object*>(ref_.get()); }
  const std::shared_ptr<void>& ref() const { return ref_; }
  const UndefinedInfo& undef() const { return *static_cast<const UndefinedInfo*>(ref_.get()); }
  const void* identity() const { return ref_.get(); }  // for `is sameas` on containers

  Json ToJson() const;  // OpError for values JSON cannot hold (undefined, macros...)

 private:
  const Json& json() const { return *static_cast<const Json*>(ref_.get()); }
  Kind kind_ = Kind::kNone;
  bool json_ = false;    // payload (string/list/dict) is a Json node in ref_
  bool markup_ = false;  // string is Markup: |e leaves it alone, + escapes the other operand
  union {
    bool b_;
    int64_t i_;
    double f_;
  };
  std::string s_;
  std::shared_ptr<void> ref_;
};

// Guards recursion over nested values (printing, comparing, converting): more than
// kMaxValueDepth levels is an OpError, like Python's RecursionError, instead of a stack overflow.
constexpr int kMaxValueDepth = 1000;
class ValueDepthGuard {
 public:
  ValueDepthGuard();
  ~ValueDepthGuard() { --depth_; }
  ValueDepthGuard(const ValueDepthGuard&) = delete;
  ValueDepthGuard& operator=(const ValueDepthGuard&) = delete;

 private:
  static thread_local int depth_;
};

// Python's Py_ReprEnter: marks a container as being printed so that printing it again from
// inside itself yields "[...]" / "{...}" instead of recursing forever.
class ReprGuard {
 public:
  explicit ReprGuard(const void* id);
  ~ReprGuard();
  ReprGuard(const ReprGuard&) = delete;
  ReprGuard& operator=(const ReprGuard&) = delete;
  bool recursive() const { return recursive_; }

 private:
  const void* id_;
  bool recursive_ = false;
};

// Python semantics helpers. All throw msc::Error for undefined operands (StrictUndefined) and
// OpError for type errors.
[[noreturn]] void ThrowUndefined(const Value& v);
std::string TypeName(const Value& v);  // "int", "str", "dict", ...
bool Truthy(const Value& v);
void AppendStr(std::string& out, const Value& v);  // str(v)
std::string ToStr(const Value& v);
std::string Repr(const Value& v);
bool Equals(const Value& a, const Value& b);
// Three-way comparison for <, <=, >, >= (op names the operator for the TypeError message).
int Compare(const Value& a, const Value& b, const char* op = "<");
bool Contains(const Value& container, const Value& item);  // `item in container`
ValueList Iterate(const Value& v);                         // iter(v) materialized
int64_t Len(const Value& v);                               // len(v)
std::string HashKey(const Value& v);  // equal values (1 == 1.0 == True) give equal keys

}  // namespace msc::tmpl
