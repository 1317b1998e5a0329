#include "generator/tmpl/value.h"

#include <cmath>

#include "generator/common/error.h"
#include "generator/tmpl/pystr.h"

namespace msc::tmpl {

std::string FormatPos(const SourcePos& pos) {
  std::string out = pos.file ? *pos.file : std::string("<template>");
  if (pos.line > 0) {
    out += ":" + std::to_string(pos.line);
    if (pos.col > 0) out += ":" + std::to_string(pos.col);
  }
  return out + ": ";
}

thread_local int ValueDepthGuard::depth_ = 0;

ValueDepthGuard::ValueDepthGuard() {
  if (++depth_ > kMaxValueDepth) {
    --depth_;
    throw OpError("maximum recursion depth exceeded (value nested more than " +
                  std::to_string(kMaxValueDepth) + " levels deep)");
  }
}

namespace {
thread_local std::vector<const void*> g_repr_active;
}  // namespace

ReprGuard::ReprGuard(const void* id) : id_(id) {
  if (!id_) return;
  for (const void* p : g_repr_active)
    if (p == id_) recursive_ = true;
  if (!recursive_) g_repr_active.push_back(id_);
}

ReprGuard::~ReprGuard() {
  if (id_ && !recursive_) g_repr_active.pop_back();
}

std::string Object::Repr() const { return "<" + TypeName() + " object>"; }
bool Object::GetAttr(const std::string&, Value*) const { return false; }
Value Object::Call(Interp&, ValueList&, Kwargs&) {
  throw OpError("'" + TypeName() + "' object is not callable");
}

Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.b_ = b;
  return v;
}

Value Value::Int(int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.i_ = i;
  return v;
}

Value Value::Float(double d) {
  Value v;
  v.kind_ = Kind::kFloat;
  v.f_ = d;
  return v;
}

Value Value::Str(std::string s) {
  Value v;
  v.kind_ = Kind::kString;
  v.s_ = std::move(s);
  return v;
}

Value Value::Markup(std::string s) {
  Value v = Str(std::move(s));
  v.markup_ = true;
  return v;
}

Value Value::List(ValueList items) {
  Value v;
  v.kind_ = Kind::kList;
  v.ref_ = std::make_shared<ValueList>(std::move(items));
  return v;
}

Value Value::Tuple(ValueList items) {
  Value v = List(std::move(items));
  v.kind_ = Kind::kTuple;
  return v;
}

Value Value::Dict(ValueDict items) {
  Value v;
  v.kind_ = Kind::kDict;
  v.ref_ = std::make_shared<ValueDict>(std::move(items));
  return v;
}

Value Value::Obj(std::shared_ptr<Object> obj) {
  Value v;
  v.kind_ = Kind::kObject;
  v.ref_ = std::move(obj);
  return v;
}

Value Value::Undef(std::string message, SourcePos pos, bool lenient) {
  Value v;
  v.kind_ = Kind::kUndefined;
  v.ref_ = std::make_shared<UndefinedInfo>(UndefinedInfo{std::move(message), pos, lenient});
  return v;
}

Value Value::ViewJson(const Json& j) { return ViewJson(std::shared_ptr<void>(), &j); }

Value Value::OwnJson(Json j) {
  auto holder = std::make_shared<Json>(std::move(j));
  return ViewJson(holder, holder.get());
}

Value Value::ViewJson(const std::shared_ptr<void>& owner, const Json* j) {
  Value v;
  switch (j->type()) {
    case Json::value_t::boolean:
      return Bool(j->get<bool>());
    case Json::value_t::number_integer:
      return Int(j->get<int64_t>());
    case Json::value_t::number_unsigned: {
      uint64_t u = j->get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX))
        throw OpError("integer " + std::to_string(u) + " is out of the supported 64-bit range");
      return Int(static_cast<int64_t>(u));
    }
    case Json::value_t::number_float:
      return Float(j->get<double>());
    case Json::value_t::string:
      v.kind_ = Kind::kString;
      break;
    case Json::value_t::array:
      v.kind_ = Kind::kList;
      break;
    case Json::value_t::object:
      v.kind_ = Kind::kDict;
      break;
    default:
      return v;  // null, binary, discarded -> None
  }
  v.json_ = true;
  v.ref_ = std::shared_ptr<void>(owner, const_cast<Json*>(j));
  return v;
}

double Value::f() const {
  if (kind_ == Kind::kFloat) return f_;
  return static_cast<double>(i());
}

const std::string& Value::s() const {
  if (json_) return *json().get_ptr<const std::string*>();
  return s_;
}

size_t Value::size() const {
  if (json_) return json().size();
  if (kind_ == Kind::kDict) return static_cast<const ValueDict*>(ref_.get())->size();
  return static_cast<const ValueList*>(ref_.get())->size();
}

Value Value::at(size_t index) const {
  if (json_) return ViewJson(ref_, &json()[index]);
  return (*static_cast<const ValueList*>(ref_.get()))[index];
}

bool Value::Get(const std::string& key, Value* out) const {
  if (json_) {
    const Json& j = json();
    auto it = j.find(key);
    if (it == j.end()) return false;
    *out = ViewJson(ref_, &*it);
    return true;
  }
  for (const auto& kv : *static_cast<const ValueDict*>(ref_.get())) {
    if (kv.first.is_string() && kv.first.s() == key) {
      *out = kv.second;
      return true;
    }
  }
  return false;
}

bool Value::Get(const Value& key, Value* out) const {
  if (key.is_undefined()) ThrowUndefined(key);
  if (json_ || key.is_string()) return key.is_string() && Get(key.s(), out);
  for (const auto& kv : *static_cast<const ValueDict*>(ref_.get())) {
    if (Equals(kv.first, key)) {
      *out = kv.second;
      return true;
    }
  }
  return false;
}

ValueDict Value::Items() const {
  if (!json_) return *static_cast<const ValueDict*>(ref_.get());
  ValueDict out;
  out.reserve(json().size());
  for (auto it = json().begin(); it != json().end(); ++it)
    out.emplace_back(Str(it.key()), ViewJson(ref_, &it.value()));
  return out;
}

ValueList Value::Keys() const {
  ValueList out;
  if (json_) {
    for (auto it = json().begin(); it != json().end(); ++it) out.push_back(Str(it.key()));
  } else {
    for (const auto& kv : *static_cast<const ValueDict*>(ref_.get())) out.push_back(kv.first);
  }
  return out;
}

Json Value::ToJson() const {
  if (json_) return json();
  ValueDepthGuard guard;
  switch (kind_) {
    case Kind::kNone:
      return nullptr;
    case Kind::kBool:
      return b_;
    case Kind::kInt:
      return i_;
    case Kind::kFloat:
      return f_;
    case Kind::kString:
      return s_;
    case Kind::kList:
    case Kind::kTuple: {
      Json arr = Json::array();
      for (const Value& v : *static_cast<const ValueList*>(ref_.get())) arr.push_back(v.ToJson());
      return arr;
    }
    case Kind::kDict: {
      Json obj = Json::object();
      for (const auto& kv : *static_cast<const ValueDict*>(ref_.get())) {
        std::string key = kv.first.is_string() ? kv.first.s() : ToStr(kv.first);
        obj[key] = kv.second.ToJson();
      }
      return obj;
    }
    case Kind::kUndefined:
      ThrowUndefined(*this);
    case Kind::kObject:
      break;
  }
  throw OpError("Object of type " + TypeName(*this) + " is not JSON serializable");
}

void ThrowUndefined(const Value& v) {
  const UndefinedInfo& u = v.undef();
  throw msc::Error(FormatPos(u.pos) + u.message);
}

std::string TypeName(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return "StrictUndefined";
    case Value::Kind::kNone:
      return "NoneType";
    case Value::Kind::kBool:
      return "bool";
    case Value::Kind::kInt:
      return "int";
    case Value::Kind::kFloat:
      return "float";
    case Value::Kind::kString:
      return "str";
    case Value::Kind::kList:
      return "list";
    case Value::Kind::kTuple:
      return "tuple";
    case Value::Kind::kDict:
      return "dict";
    case Value::Kind::kObject:
      return v.obj()->TypeName();
  }
  return "object";
}

bool Truthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      if (v.is_lenient_undefined()) return false;
      ThrowUndefined(v);
    case Value::Kind::kNone:
      return false;
    case Value::Kind::kBool:
      return v.b();
    case Value::Kind::kInt:
      return v.i() != 0;
    case Value::Kind::kFloat:
      return v.f() != 0.0;
    case Value::Kind::kString:
      return !v.s().empty();
    case Value::Kind::kList:
    case Value::Kind::kTuple:
    case Value::Kind::kDict:
      return v.size() != 0;
    case Value::Kind::kObject:
      return true;
  }
  return true;
}

namespace {
void AppendRepr(std::string& out, const Value& v);

void AppendSeq(std::string& out, const Value& v) {
  ValueDepthGuard guard;
  bool tuple = v.is_tuple();
  ReprGuard active(v.identity());
  if (active.recursive()) {
    out += tuple ? "(...)" : "[...]";
    return;
  }
  out += tuple ? '(' : '[';
  size_t n = v.size();
  for (size_t k = 0; k < n; ++k) {
    if (k) out += ", ";
    AppendRepr(out, v.at(k));
  }
  if (tuple && n == 1) out += ',';
  out += tuple ? ')' : ']';
}

void AppendDict(std::string& out, const Value& v) {
  ValueDepthGuard guard;
  ReprGuard active(v.identity());
  if (active.recursive()) {
    out += "{...}";
    return;
  }
  out += '{';
  bool first = true;
  for (const auto& kv : v.Items()) {
    if (!first) out += ", ";
    first = false;
    AppendRepr(out, kv.first);
    out += ": ";
    AppendRepr(out, kv.second);
  }
  out += '}';
}

void AppendRepr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      out += "Undefined";
      return;
    case Value::Kind::kString:
      out += v.is_markup() ? "Markup(" + pystr::Repr(v.s()) + ")" : pystr::Repr(v.s());
      return;
    case Value::Kind::kObject:
      out += v.obj()->Repr();
      return;
    default:
      AppendStr(out, v);
  }
}
}  // namespace

void AppendStr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      if (v.is_lenient_undefined()) return;
      ThrowUndefined(v);
    case Value::Kind::kNone:
      out += "None";
      return;
    case Value::Kind::kBool:
      out += v.b() ? "True" : "False";
      return;
    case Value::Kind::kInt:
      out += std::to_string(v.i());
      return;
    case Value::Kind::kFloat:
      out += pystr::FloatRepr(v.f());
      return;
    case Value::Kind::kString:
      out += v.s();
      return;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      AppendSeq(out, v);
      return;
    case Value::Kind::kDict:
      AppendDict(out, v);
      return;
    case Value::Kind::kObject:
      out += v.obj()->Str();
      return;
  }
}

std::string ToStr(const Value& v) {
  if (v.is_string()) return v.s();
  std::string out;
  AppendStr(out, v);
  return out;
}

std::string Repr(const Value& v) {
  std::string out;
  AppendRepr(out, v);
  return out;
}

bool Equals(const Value& a, const Value& b) {
  if (a.is_lenient_undefined() || b.is_lenient_undefined())
    return a.is_undefined() && b.is_undefined() &&
           a.is_lenient_undefined() == b.is_lenient_undefined();
  if (a.is_undefined()) ThrowUndefined(a);
  if (b.is_undefined()) ThrowUndefined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.f() == b.f();
    return a.i() == b.i();
  }
  if (a.kind() != b.kind()) return false;
  if (a.identity() && a.identity() == b.identity())
    return true;  // same object (Python's `is` shortcut)
  ValueDepthGuard guard;
  switch (a.kind()) {
    case Value::Kind::kNone:
      return true;
    case Value::Kind::kString:
      return a.s() == b.s();
    case Value::Kind::kList:
    case Value::Kind::kTuple: {
      if (a.size() != b.size()) return false;
      for (size_t k = 0; k < a.size(); ++k)
        if (!Equals(a.at(k), b.at(k))) return false;
      return true;
    }
    case Value::Kind::kDict: {
      if (a.size() != b.size()) return false;
      for (const auto& kv : a.Items()) {
        Value other;
        if (!b.Get(kv.first, &other) || !Equals(kv.second, other)) return false;
      }
      return true;
    }
    default:
      return a.identity() == b.identity();
  }
}

int Compare(const Value& a, const Value& b, const char* op) {
  if (a.is_undefined()) ThrowUndefined(a);
  if (b.is_undefined()) ThrowUndefined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) {
      double x = a.f(), y = b.f();
      return x < y ? -1 : x > y ? 1 : 0;  // NaN compares "equal" here; callers check NaN
    }
    return a.i() < b.i() ? -1 : a.i() > b.i() ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    int c = a.s().compare(b.s());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_seq() && a.kind() == b.kind()) {
    ValueDepthGuard guard;
    size_t n = std::min(a.size(), b.size());
    for (size_t k = 0; k < n; ++k) {
      Value x = a.at(k), y = b.at(k);
      if (!Equals(x, y)) return Compare(x, y, op);
    }
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
  }
  throw OpError(std::string("'") + op + "' not supported between instances of '" + TypeName(a) +
                "' and '" + TypeName(b) + "'");
}

bool Contains(const Value& container, const Value& item) {
  if (container.is_undefined()) ThrowUndefined(container);
  if (item.is_undefined()) ThrowUndefined(item);
  switch (container.kind()) {
    case Value::Kind::kString:
      if (!item.is_string())
        throw OpError("'in <string>' requires string as left operand, not " + TypeName(item));
      return container.s().find(item.s()) != std::string::npos;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      for (size_t k = 0; k < container.size(); ++k)
        if (Equals(container.at(k), item)) return true;
      return false;
    case Value::Kind::kDict: {
      Value unused;
      return container.Get(item, &unused);
    }
    case Value::Kind::kObject: {
      ValueList items;
      if (container.obj()->Iter(&items)) {
        for (const Value& x : items)
          if (Equals(x, item)) return true;
        return false;
      }
      break;
    }
    default:
      break;
  }
  throw OpError("argument of type '" + TypeName(container) + "' is not iterable");
}

ValueList Iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      if (v.is_lenient_undefined()) return {};
      ThrowUndefined(v);
    case Value::Kind::kString: {
      ValueList out;
      const std::string& s = v.s();
      std::vector<size_t> b = pystr::Boundaries(s);
      out.reserve(b.size());
      for (size_t k = 0; k + 1 < b.size(); ++k)
        out.push_back(Value::Str(s.substr(b[k], b[k + 1] - b[k])));
      return out;
    }
    case Value::Kind::kList:
    case Value::Kind::kTuple: {
      ValueList out;
      out.reserve(v.size());
      for (size_t k = 0; k < v.size(); ++k) out.push_back(v.at(k));
      return out;
    }
    case Value::Kind::kDict:
      return v.Keys();
    case Value::Kind::kObject: {
      ValueList out;
      if (v.obj()->Iter(&out)) return out;
      break;
    }
    default:
      break;
  }
  throw OpError("'" + TypeName(v) + "' object is not iterable");
}

int64_t Len(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      if (v.is_lenient_undefined()) return 0;
      ThrowUndefined(v);
    case Value::Kind::kString:
      return static_cast<int64_t>(pystr::Length(v.s()));
    case Value::Kind::kList:
    case Value::Kind::kTuple:
    case Value::Kind::kDict:
      return static_cast<int64_t>(v.size());
    case Value::Kind::kObject: {
      ValueList out;
      if (v.obj()->Iter(&out)) return static_cast<int64_t>(out.size());
      break;
    }
    default:
      break;
  }
  throw OpError("object of type '" + TypeName(v) + "' has no len()");
}

std::string HashKey(const Value& v) {
  if (v.is_number()) {
    double d = v.f();
    if (v.is_float() && d != std::floor(d)) return "n" + pystr::FloatRepr(d);
    if (v.is_float() && std::fabs(d) < 9.2e18) return "n" + std::to_string(static_cast<int64_t>(d));
    if (v.is_float()) return "n" + pystr::FloatRepr(d);
    return "n" + std::to_string(v.i());
  }
  if (v.is_string()) return "s" + std::to_string(v.s().size()) + ":" + v.s();
  if (v.is_undefined()) ThrowUndefined(v);
  if (v.is_list() || v.is_dict()) throw OpError("unhashable type: '" + TypeName(v) + "'");
  if (v.is_tuple()) {
    ValueDepthGuard guard;
    std::string key = "t(";
    for (size_t k = 0; k < v.size(); ++k) key += HashKey(v.at(k)) + ",";
    return key + ")";
  }
  if (v.is_object()) return "o" + std::to_string(reinterpret_cast<uintptr_t>(v.identity()));
  return "r" + Repr(v);
}

}  // namespace msc::tmpl
