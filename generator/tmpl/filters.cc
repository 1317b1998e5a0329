// Builtin filters (Jinja2 3.x semantics).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "generator/tmpl/interp.h"
#include "generator/tmpl/pystr.h"

namespace msc::tmpl {

std::string ToJsonText(const Value& v, const Value& indent);  // format.cc
std::string HtmlEscape(const std::string& s);                 // format.cc

namespace {

using Args = BoundArgs;

Args Bind(const char* fn, std::initializer_list<const char*> names, size_t required,
          ValueList& args, Kwargs& kwargs, ArgFlags* given = nullptr) {
  ArgSpec spec{fn, names, required};
  return BindArgs(spec, args, kwargs, given);
}

bool ArgBool(const Value& v) { return !v.is_none() && Truthy(v); }

// Result string of a str-method-like filter: Markup stays Markup (soft_str + str method).
Value KeepMarkup(const Value& in, std::string s) {
  return in.is_markup() ? Value::Markup(std::move(s)) : Value::Str(std::move(s));
}

// True if lower() would leave `s` unchanged: ASCII without capitals (the common case, no copy).
bool AsciiNoUpper(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80 || (c >= 'A' && c <= 'Z')) return false;
  return true;
}
bool AsciiNoLower(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80 || (c >= 'a' && c <= 'z')) return false;
  return true;
}

// Case-folded sort/compare key (the value itself when folding changes nothing).
Value IgnoreCase(const Value& v) {
  if (!v.is_string() || AsciiNoUpper(v.s())) return v;
  return Value::Str(pystr::Lower(v.s()));
}

// Jinja's make_attrgetter: "a.b.0" -> item["a"]["b"][0] (getitem semantics), parsed once and
// applied to many items.
class AttrPath {
 public:
  explicit AttrPath(const std::string& attribute) {
    size_t pos = 0;
    while (true) {
      size_t dot = attribute.find('.', pos);
      std::string part =
          attribute.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
      int64_t idx;
      bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
      keys_.push_back(digits && pystr::ParseInt(part, 10, &idx) ? Value::Int(idx)
                                                                : Value::Str(part));
      if (dot == std::string::npos) break;
      pos = dot + 1;
    }
    hints_.assign(keys_.size(), 0);
  }
  Value Get(Interp& in, const Value& item, const Value* dflt = nullptr) const {
    Value cur = Step(in, item, 0);
    for (size_t k = 1; k < keys_.size(); ++k) cur = Step(in, cur, k);
    if (dflt && cur.is_undefined()) return *dflt;
    return cur;
  }

 private:
  // obj[keys_[k]]; native dicts are looked up directly (the entry found for the previous item
  // is tried first: items usually share their key order).
  Value Step(Interp& in, const Value& obj, size_t k) const {
    const Value& key = keys_[k];
    if (const DictBox* d = key.is_string() ? obj.native_dict() : nullptr) {
      const uint64_t h = key.str_hash();
      size_t& hint = hints_[k];
      if (hint < d->size() && d->KeyAt(hint, key.s(), h)) return d->begin()[hint].value;
      const ptrdiff_t at = d->Find(key.s(), h);
      if (at >= 0) {
        hint = static_cast<size_t>(at);
        return d->begin()[at].value;
      }
    }
    return in.GetItem(obj, key);
  }

  ValueList keys_;
  mutable std::vector<size_t> hints_;  // one per key
};

// Item getter of filters with an `attribute` argument (None: the item itself; a string: an
// attribute path; anything else: a subscript).
class ItemGetter {
 public:
  explicit ItemGetter(const Value& attribute) : attribute_(attribute) {
    if (attribute.is_string()) path_.emplace_back(attribute.s());
  }
  Value Get(Interp& in, const Value& item, const Value* dflt = nullptr) const {
    if (!path_.empty()) return path_[0].Get(in, item, dflt);
    if (attribute_.is_none()) return item;
    return in.GetItem(item, attribute_);
  }

 private:
  Value attribute_;
  std::vector<AttrPath> path_;  // empty or one
};

// Key function for sort/unique/min/max: optional attribute path(s) and case folding. With
// `multi`, "a,b" yields the list of both keys (Jinja's make_multi_attrgetter).
class SortKeyFn {
 public:
  SortKeyFn(const Value& attribute, bool case_sensitive, bool multi)
      : attribute_(attribute), cs_(case_sensitive), multi_(multi) {
    if (!attribute.is_string()) return;
    if (!multi) {
      paths_.emplace_back(attribute.s());
      return;
    }
    const std::string& s = attribute.s();
    size_t pos = 0;
    while (true) {
      size_t comma = s.find(',', pos);
      paths_.emplace_back(
          s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  Value operator()(Interp& in, const Value& item) const {
    auto post = [&](const Value& v) { return cs_ ? v : IgnoreCase(v); };
    if (attribute_.is_none()) return multi_ ? Value::List({post(item)}) : post(item);
    if (!attribute_.is_string()) {
      Value v = post(in.GetItem(item, attribute_));
      return multi_ ? Value::List({v}) : v;
    }
    if (!multi_) return post(paths_[0].Get(in, item));
    ValueList parts;
    parts.reserve(paths_.size());
    for (const AttrPath& p : paths_) parts.push_back(post(p.Get(in, item)));
    return Value::List(std::move(parts));
  }

 private:
  Value attribute_;
  bool cs_, multi_;
  std::vector<AttrPath> paths_;
};

// Stable sort of (key, index) pairs by key (reverse: descending, still stable). Small inputs use
// an insertion sort (no buffer allocation).
void StableSortKeys(std::pair<Value, size_t>* first, std::pair<Value, size_t>* last, bool reverse) {
  auto less = [&](const std::pair<Value, size_t>& x, const std::pair<Value, size_t>& y) {
    return reverse ? Compare(y.first, x.first) < 0 : Compare(x.first, y.first) < 0;
  };
  const size_t n = static_cast<size_t>(last - first);
  if (n <= 16) {
    for (size_t i = 1; i < n; ++i) {
      size_t j = i;
      while (j > 0 && less(first[i], first[j - 1])) --j;
      if (j != i) std::rotate(first + j, first + i, first + i + 1);
    }
    return;
  }
  std::stable_sort(first, last, less);
}

void StableSortKeys(std::vector<std::pair<Value, size_t>>& keys, bool reverse) {
  StableSortKeys(keys.data(), keys.data() + keys.size(), reverse);
}

// Calls fn(item) for each item of an iterable without materializing lists/tuples.
template <class Fn>
void ForEachItem(const Value& v, Fn&& fn) {
  if (const ListBox* l = v.native_list()) {
    for (const Value& item : *l) fn(item);
  } else if (v.is_seq()) {
    for (size_t k = 0, n = v.size(); k < n; ++k) fn(v.at(k));
  } else {
    for (const Value& item : Iterate(v)) fn(item);
  }
}

Value F_abs(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("abs", {}, 0, args, kw);
  if (v.is_float()) return Value::Float(std::fabs(v.f()));
  if (v.is_int() || v.is_bool()) {
    if (v.i() == INT64_MIN) throw OpError("integer overflow");
    return Value::Int(v.i() < 0 ? -v.i() : v.i());
  }
  throw OpError("bad operand type for abs(): '" + TypeName(v) + "'");
}

Value F_attr(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("attr", {"name"}, 1, args, kw);
  if (!a[0].is_string()) throw OpError("attribute name must be a string");
  if (v.is_dict() && !HasMethod(v, a[0].s()))
    return Value::Undef("'dict object' has no attribute " + pystr::Repr(a[0].s()), in.here());
  return in.GetAttr(v, a[0].s());
}

Value F_batch(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("batch", {"linecount", "fill_with"}, 1, args, kw);
  int64_t n = ToInt(a[0], "linecount");
  ValueList out, tmp;
  for (Value& item : Iterate(v)) {
    if (static_cast<int64_t>(tmp.size()) == n) {
      out.push_back(Value::List(std::move(tmp)));
      tmp.clear();
    }
    tmp.push_back(std::move(item));
  }
  if (!tmp.empty()) {
    if (!a[1].is_none())
      while (static_cast<int64_t>(tmp.size()) < n) tmp.push_back(a[1]);
    out.push_back(Value::List(std::move(tmp)));
  }
  return Value::List(std::move(out));
}

Value F_capitalize(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("capitalize", {}, 0, args, kw);
  return KeepMarkup(v, pystr::Capitalize(ToStr(v)));
}

Value F_center(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  ArgFlags given;
  Args a = Bind("center", {"width"}, 0, args, kw, &given);
  ValueList margs{given[0] ? a[0] : Value::Int(80)};
  Kwargs none;
  return CallMethod(in, Value::Str(ToStr(v)), "center", margs, none);
}

Value F_length(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("length", {}, 0, args, kw);
  return Value::Int(Len(v));
}

Value F_default(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  ArgFlags given;
  Args a = Bind("default", {"default_value", "boolean"}, 0, args, kw, &given);
  Value dflt = given[0] ? a[0] : Value::Str("");
  if (v.is_undefined() || (ArgBool(a[1]) && !Truthy(v))) return dflt;
  return v;
}

// ASCII lower-case of a byte.
inline unsigned char FoldAscii(unsigned char c) {
  return static_cast<unsigned char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

// a.lower() < b.lower() for ASCII strings (Python compares code points: bytes here).
bool LessFolded(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t k = 0; k < n; ++k) {
    const unsigned char x = FoldAscii(static_cast<unsigned char>(a[k]));
    const unsigned char y = FoldAscii(static_cast<unsigned char>(b[k]));
    if (x != y) return x < y;
  }
  return a.size() < b.size();
}

bool IsAscii(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

}  // namespace

bool SortedKeyOrder(const DictBox& d, uint32_t* order) {
  const size_t n = d.size();
  for (size_t i = 0; i < n; ++i) {
    const Value& k = d.begin()[i].key;
    if (!k.is_string() || !IsAscii(k.s())) return false;
    order[i] = static_cast<uint32_t>(i);
  }
  auto less = [&d](uint32_t x, uint32_t y) {
    return LessFolded(d.begin()[x].key.s(), d.begin()[y].key.s());
  };
  if (n <= 16) {  // insertion sort: stable, no allocation
    for (size_t i = 1; i < n; ++i) {
      const uint32_t cur = order[i];
      size_t j = i;
      for (; j > 0 && less(cur, order[j - 1]); --j) order[j] = order[j - 1];
      order[j] = cur;
    }
  } else {
    std::stable_sort(order, order + n, less);
  }
  return true;
}

namespace {

Value F_dictsort(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  ArgFlags given;
  Args a = Bind("dictsort", {"case_sensitive", "by", "reverse"}, 0, args, kw, &given);
  if (!v.is_dict()) throw OpError("dictsort requires a mapping, got " + TypeName(v));
  bool by_key = true;
  if (given[1]) {
    const std::string by = ToStr(a[1]);
    if (by != "key" && by != "value") throw OpError("You can only sort by either 'key' or 'value'");
    by_key = by == "key";
  }
  bool cs = ArgBool(a[0]), rev = ArgBool(a[2]);
  // Native dicts are read in place; small ones sort on the stack.
  const DictBox* nd = v.native_dict();
  if (nd && by_key && !cs && !rev && nd->size() <= 16) {  // the default: case-folded keys
    uint32_t order[16];
    if (SortedKeyOrder(*nd, order)) {
      const size_t n = nd->size();
      ListBox* out = ListBox::Make(n);
      for (size_t i = 0; i < n; ++i) {
        const DictBox::Entry& e = nd->begin()[order[i]];
        out->items()[i] = Value::Pair(e.key, e.value);
      }
      return Value::Boxed(Value::Kind::kList, out);
    }
  }
  ValueDict json_items;
  if (!nd) json_items = v.Items();
  const size_t n = nd ? nd->size() : json_items.size();
  auto key_at = [&](size_t i) -> const Value& {
    return nd ? nd->begin()[i].key : json_items[i].first;
  };
  auto value_at = [&](size_t i) -> const Value& {
    return nd ? nd->begin()[i].value : json_items[i].second;
  };
  std::pair<Value, size_t> small[16];
  std::vector<std::pair<Value, size_t>> large;
  std::pair<Value, size_t>* keys = small;
  if (n > 16) {
    large.resize(n);
    keys = large.data();
  }
  for (size_t i = 0; i < n; ++i) {
    const Value& k = by_key ? key_at(i) : value_at(i);
    keys[i] = {cs ? k : IgnoreCase(k), i};
  }
  StableSortKeys(keys, keys + n, rev);
  ListBox* out = ListBox::Make(n);
  for (size_t i = 0; i < n; ++i)
    out->items()[i] = Value::Pair(key_at(keys[i].second), value_at(keys[i].second));
  return Value::Boxed(Value::Kind::kList, out);
}

Value F_escape(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("escape", {}, 0, args, kw);
  if (v.is_markup()) return v;  // already escaped
  return Value::Markup(HtmlEscape(ToStr(v)));
}

Value F_forceescape(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("forceescape", {}, 0, args, kw);
  return Value::Markup(HtmlEscape(ToStr(v)));
}

Value F_first(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("first", {}, 0, args, kw);
  ValueList items = Iterate(v);
  if (items.empty()) return Value::Undef("No first item, sequence was empty.", in.here());
  return items.front();
}

Value F_last(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("last", {}, 0, args, kw);
  ValueList items = Iterate(v);
  if (items.empty()) return Value::Undef("No last item, sequence was empty.", in.here());
  return items.back();
}

Value F_float(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  ArgFlags given;
  Args a = Bind("float", {"default"}, 0, args, kw, &given);
  if (v.is_number()) return Value::Float(v.f());
  double d;
  if (v.is_string() && pystr::ParseFloat(v.s(), &d)) return Value::Float(d);
  return given[0] ? a[0] : Value::Float(0.0);
}

void FA_format(Interp&, const Value& v, ValueList& args, Kwargs& kw, std::string& out) {
  if (!args.empty() && !kw.empty())
    throw OpError("can't handle positional and keyword arguments at the same time");
  if (!kw.empty()) {
    ValueDict d;
    for (auto& kv : kw) d.emplace_back(Value::Str(kv.first), kv.second);
    Value mapping = Value::Dict(std::move(d));
    PercentFormatTo(out, ToStr(v), &mapping, 1, true);
    return;
  }
  std::string text;  // (a str format is used in place)
  PercentFormatTo(out, v.is_string() ? v.s() : (text = ToStr(v)), args.data(), args.size(), false);
}

Value F_format(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  std::string out;
  FA_format(in, v, args, kw, out);
  return Value::Str(std::move(out));
}

// Jinja's _GroupTuple(grouper, list): a 2-tuple with named fields.
class GroupTuple : public Object {
 public:
  GroupTuple(Value grouper, Value list) : grouper_(std::move(grouper)), list_(std::move(list)) {}
  std::string TypeName() const override { return "_GroupTuple"; }
  std::string Repr() const override { return msc::tmpl::Repr(Value::Tuple({grouper_, list_})); }
  bool GetAttr(const std::string& name, Value* out) const override {
    if (name == "grouper")
      *out = grouper_;
    else if (name == "list")
      *out = list_;
    else
      return false;
    return true;
  }
  bool Iter(ValueList* out) const override {
    *out = {grouper_, list_};
    return true;
  }

 private:
  Value grouper_, list_;
};

Value F_groupby(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("groupby", {"attribute", "default", "case_sensitive"}, 1, args, kw);
  bool cs = ArgBool(a[2]);
  ItemGetter getter(a[0]);
  auto key_of = [&](const Value& item, bool fold) {
    Value k = a[0].is_string() ? getter.Get(in, item, a[1].is_none() ? nullptr : &a[1])
                               : in.GetItem(item, a[0]);
    return fold ? IgnoreCase(k) : k;
  };
  ValueList items = Iterate(v);
  std::vector<std::pair<Value, size_t>> keys;
  for (size_t i = 0; i < items.size(); ++i) keys.emplace_back(key_of(items[i], !cs), i);
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& x, const auto& y) { return Compare(x.first, y.first) < 0; });
  ValueList out;
  for (size_t i = 0; i < keys.size();) {
    size_t j = i;
    ValueList group;
    while (j < keys.size() && Equals(keys[j].first, keys[i].first))
      group.push_back(items[keys[j++].second]);
    Value grouper = cs ? keys[i].first : key_of(group[0], false);
    out.push_back(Value::Obj(MakeRc<GroupTuple>(grouper, Value::List(std::move(group)))));
    i = j;
  }
  return Value::List(std::move(out));
}

Value F_indent(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  ArgFlags given;
  Args a = Bind("indent", {"width", "first", "blank"}, 0, args, kw, &given);
  std::string ind;
  if (!given[0])
    ind = "    ";
  else if (a[0].is_string())
    ind = a[0].s();
  else
    ind = std::string(static_cast<size_t>(std::max<int64_t>(0, ToInt(a[0], "width"))), ' ');
  std::string s = ToStr(v) + "\n";
  std::vector<std::string> lines = pystr::SplitLines(s);
  std::string rv;
  if (ArgBool(a[2])) {
    for (size_t i = 0; i < lines.size(); ++i) rv += (i ? "\n" + ind : "") + lines[i];
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) rv += "\n" + (lines[i].empty() ? "" : ind + lines[i]);
  }
  if (ArgBool(a[1])) rv = ind + rv;
  return Value::Str(rv);
}

Value F_int(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  ArgFlags given;
  Args a = Bind("int", {"default", "base"}, 0, args, kw, &given);
  Value dflt = given[0] ? a[0] : Value::Int(0);
  int base = given[1] ? static_cast<int>(ToInt(a[1], "base")) : 10;
  auto from_float = [&](double d) -> Value {
    if (std::isnan(d)) return dflt;
    if (std::isinf(d)) throw OpError("cannot convert float infinity to integer");
    if (std::fabs(d) >= 9.2e18)
      throw OpError("integer overflow: results beyond 64 bits are not supported");
    return Value::Int(static_cast<int64_t>(d));
  };
  if (v.is_int() || v.is_bool()) return Value::Int(v.i());
  if (v.is_float()) return from_float(v.f());
  if (v.is_string()) {
    int64_t i;
    if (pystr::ParseInt(v.s(), base, &i)) return Value::Int(i);
    double d;
    if (pystr::ParseFloat(v.s(), &d)) return from_float(d);
  }
  return dflt;
}

Value F_items(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("items", {}, 0, args, kw);
  if (v.is_undefined()) return Value::List({});
  if (!v.is_dict()) throw OpError("Can only get item pairs from a mapping.");
  ValueList out;
  for (auto& kv : v.Items()) out.push_back(Value::Pair(kv.first, kv.second));
  return Value::List(std::move(out));
}

void FA_join(Interp& in, const Value& v, ValueList& args, Kwargs& kw, std::string& out) {
  ArgFlags given;
  Args a = Bind("join", {"d", "attribute"}, 0, args, kw, &given);
  std::string sep_text;
  const std::string* sep = &sep_text;
  if (given[0]) {
    if (a[0].is_string())
      sep = &a[0].s();
    else
      sep_text = ToStr(a[0]);
  }
  bool first = true;
  const ListBox* list = a[1].is_none() ? v.native_list() : nullptr;
  if (list) {  // strings and ints go through a buffer: one append per 256 bytes
    char buf[256];
    size_t n = 0;
    auto put = [&](const char* p, size_t k) {
      if (n + k > sizeof(buf)) {
        out.append(buf, n);
        n = 0;
        if (k > sizeof(buf)) {
          out.append(p, k);
          return;
        }
      }
      std::memcpy(buf + n, p, k);
      n += k;
    };
    for (const Value& item : *list) {
      if (!first) put(sep->data(), sep->size());
      first = false;
      if (item.is_string()) {
        put(item.s().data(), item.s().size());
      } else if (item.is_int()) {
        char digits[24];
        put(digits, static_cast<size_t>(
                        std::to_chars(digits, digits + sizeof(digits), item.i()).ptr - digits));
      } else {
        out.append(buf, n);
        n = 0;
        AppendStr(out, item);
      }
    }
    out.append(buf, n);
    return;
  }
  if (a[1].is_none()) {
    ForEachItem(v, [&](const Value& item) {
      if (!first) out += *sep;
      first = false;
      AppendStr(out, item);
    });
    return;
  }
  ItemGetter getter(a[1]);
  ForEachItem(v, [&](const Value& item) {
    if (!first) out += *sep;
    first = false;
    AppendStr(out, getter.Get(in, item));
  });
}

Value F_join(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  std::string out;
  FA_join(in, v, args, kw, out);
  return Value::Str(std::move(out));
}

Value F_list(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("list", {}, 0, args, kw);
  return Value::List(Iterate(v));
}

Value F_lower(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("lower", {}, 0, args, kw);
  if (v.is_string() && AsciiNoUpper(v.s())) return v;  // unchanged (Markup stays Markup)
  return KeepMarkup(v, pystr::Lower(ToStr(v)));
}

Value F_upper(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("upper", {}, 0, args, kw);
  if (v.is_string() && AsciiNoLower(v.s())) return v;  // unchanged (Markup stays Markup)
  return KeepMarkup(v, pystr::Upper(ToStr(v)));
}

void FA_lower(Interp&, const Value& v, ValueList& args, Kwargs& kw, std::string& out) {
  Bind("lower", {}, 0, args, kw);
  if (v.is_string() && AsciiNoUpper(v.s()))
    out += v.s();
  else
    out += pystr::Lower(ToStr(v));
}

void FA_upper(Interp&, const Value& v, ValueList& args, Kwargs& kw, std::string& out) {
  Bind("upper", {}, 0, args, kw);
  if (v.is_string() && AsciiNoLower(v.s()))
    out += v.s();
  else
    out += pystr::Upper(ToStr(v));
}

// [fn(item) for item in v] as a list, where `items` is Iterate(v) unless v is a native list or
// tuple: that is read in place and the result is built in its final box (no intermediate
// vectors: a large list costs no extra copies or pages).
template <class Fn>
Value MapList(const Value& v, const ValueList& items, Fn&& fn) {
  if (const ListBox* l = v.native_list()) {
    ListBox* box = ListBox::Make(l->size());
    Value result = Value::Boxed(Value::Kind::kList, box);  // owns the box if fn throws
    for (size_t k = 0; k < l->size(); ++k) box->items()[k] = fn((*l)[k]);
    return result;
  }
  ValueList out;
  out.reserve(items.size());
  for (const Value& item : items) out.push_back(fn(item));
  return Value::List(std::move(out));
}

Value F_map(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  ValueList items;
  if (!v.native_list()) items = Iterate(v);
  bool by_attr = args.empty() &&
                 std::any_of(kw.begin(), kw.end(), [](auto& p) { return p.first == "attribute"; });
  if (by_attr) {
    Value attribute, dflt;
    for (auto& kv : kw) {
      if (kv.first == "attribute")
        attribute = kv.second;
      else if (kv.first == "default")
        dflt = kv.second;
      else
        throw OpError("Unexpected keyword argument " + pystr::Repr(kv.first));
    }
    ItemGetter getter(attribute);
    return MapList(v, items, [&](const Value& item) {
      Value r = attribute.is_none() ? in.GetItem(item, attribute) : getter.Get(in, item);
      if (r.is_undefined() && !dflt.is_none()) r = dflt;
      return r;
    });
  }
  if (args.empty()) throw OpError("map requires a filter argument");
  std::string name = ToStr(args[0]);
  ValueList rest(args.begin() + 1, args.end());
  return MapList(v, items, [&](const Value& item) {
    ValueList a = rest;
    Kwargs k = kw;
    return in.ApplyFilter(name, item, a, k);
  });
}

Value MinMax(Interp& in, const Value& v, ValueList& args, Kwargs& kw, bool want_max,
             const char* fn) {
  Args a = Bind(fn, {"case_sensitive", "attribute"}, 0, args, kw);
  ValueList items = Iterate(v);
  if (items.empty()) return Value::Undef("No aggregated item, sequence was empty.", in.here());
  bool cs = ArgBool(a[0]);
  size_t best = 0;
  SortKeyFn key(a[1], cs, false);
  Value best_key = key(in, items[0]);
  for (size_t i = 1; i < items.size(); ++i) {
    Value k = key(in, items[i]);
    int c = Compare(k, best_key, want_max ? ">" : "<");
    if (want_max ? c > 0 : c < 0) {
      best = i;
      best_key = k;
    }
  }
  return items[best];
}

Value F_max(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  return MinMax(in, v, args, kw, true, "max");
}
Value F_min(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  return MinMax(in, v, args, kw, false, "min");
}

Value SelectReject(Interp& in, const Value& v, ValueList& args, Kwargs& kw, bool lookup_attr,
                   bool want) {
  ValueList items = Iterate(v);
  size_t off = 0;
  Value attr;
  if (lookup_attr) {
    if (args.empty()) throw OpError("Missing parameter for attribute name");
    attr = args[0];
    off = 1;
  }
  ValueList out;
  ItemGetter getter(attr);
  for (const Value& item : items) {
    Value x = !lookup_attr       ? item
              : attr.is_string() ? getter.Get(in, item)
                                 : in.GetItem(item, attr);
    bool r;
    if (args.size() > off) {
      ValueList targs(args.begin() + off + 1, args.end());
      Kwargs k = kw;
      r = in.ApplyTest(ToStr(args[off]), x, targs, k);
    } else {
      r = Truthy(x);
    }
    if (r == want) out.push_back(item);
  }
  return Value::List(std::move(out));
}

Value F_select(Interp& in, const Value& v, ValueList& a, Kwargs& k) {
  return SelectReject(in, v, a, k, false, true);
}
Value F_reject(Interp& in, const Value& v, ValueList& a, Kwargs& k) {
  return SelectReject(in, v, a, k, false, false);
}
Value F_selectattr(Interp& in, const Value& v, ValueList& a, Kwargs& k) {
  return SelectReject(in, v, a, k, true, true);
}
Value F_rejectattr(Interp& in, const Value& v, ValueList& a, Kwargs& k) {
  return SelectReject(in, v, a, k, true, false);
}

Value F_replace(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("replace", {"old", "new", "count"}, 2, args, kw);
  int64_t count = a[2].is_none() ? -1 : ToInt(a[2], "count");
  return Value::Str(pystr::Replace(ToStr(v), ToStr(a[0]), ToStr(a[1]), count));
}

Value F_reverse(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("reverse", {}, 0, args, kw);
  if (v.is_string()) {
    std::u32string u = pystr::Decode(v.s());
    std::reverse(u.begin(), u.end());
    return Value::Str(pystr::Encode(u));
  }
  ValueList items = Iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::List(std::move(items));
}

// `out` is the double nearest to the decimal `fixed` ("-12.340"). When that decimal has at most
// 15 significant digits, it (without trailing zeros) is repr(out): any other decimal of at most
// 15 digits maps to another double (DBL_DIG), so none is shorter. Python prints such values
// positionally when 1e-4 <= |out| < 1e16.
void NoteRoundedRepr(double out, std::string_view fixed) {
  const double a = std::fabs(out);
  if (!(a == 0.0 || (a >= 1e-4 && a < 1e16))) return;
  size_t sig = 0;
  bool leading = true;
  for (char c : fixed) {
    if (c < '0' || c > '9') continue;
    if (leading && c == '0') continue;
    leading = false;
    ++sig;
  }
  if (sig > 15) return;
  std::string repr(fixed);
  const size_t dot = repr.find('.');
  if (dot == std::string::npos) {
    repr += ".0";
  } else {
    while (repr.size() > dot + 2 && repr.back() == '0') repr.pop_back();
  }
  if (a == 0.0) repr = std::signbit(out) ? "-0.0" : "0.0";
  pystr::NoteFloatRepr(out, repr);
}

// round(x, n) for 0 <= n <= 22 in integers: N = x * 10^n rounded half to even, computed exactly
// (x = m * 2^e, so x * 10^n = m * 5^n * 2^(e+n) with m * 5^n < 2^128); when |N| < 2^53 the
// result N / 10^n is one correctly rounded division of two exact doubles, which is what reading
// the decimal text back gives. Returns false when the case is out of that range.
bool RoundExact(double x, int n, double* out) {
  if (n < 0 || n > 22 || x == 0.0) return false;
  // |x| = m * 2^(e2 - 53) with m of 53 bits (frexp's fraction scaled by 2^53), read from the
  // IEEE-754 fields (x is finite and not 0).
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  const int biased = static_cast<int>((bits >> 52) & 0x7FF);
  uint64_t m = bits & ((uint64_t{1} << 52) - 1);
  int e2;
  if (biased == 0) {  // subnormal: normalize
    const int shift = __builtin_clzll(m) - 11;
    m <<= shift;
    e2 = -1021 - shift;
  } else {
    m |= uint64_t{1} << 52;
    e2 = biased - 1022;
  }
  const int s = e2 - 53 + n;  // x * 10^n = m * 5^n * 2^s
  unsigned __int128 v = m;
  for (int k = 0; k < n; ++k) v *= 5;
  uint64_t q;
  if (s >= 0) {
    if (s > 11 || v >= (static_cast<unsigned __int128>(1) << (53 - s))) return false;
    q = static_cast<uint64_t>(v << s);
  } else {
    const int k = -s;
    if (k >= 127) {
      q = 0;  // below half of one unit
    } else {
      const unsigned __int128 qq = v >> k;
      const unsigned __int128 r = v - (qq << k);
      const unsigned __int128 half = static_cast<unsigned __int128>(1) << (k - 1);
      if (qq >= (uint64_t{1} << 53)) return false;
      q = static_cast<uint64_t>(qq);
      if (r > half || (r == half && (q & 1))) ++q;
    }
  }
  if (q >= (uint64_t{1} << 53)) return false;
  static const double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  *out = std::copysign(static_cast<double>(q) / kPow10[n], x);
  // repr(*out) is the decimal q * 10^-n without trailing zeros when it has at most 15 digits
  // (see NoteRoundedRepr).
  char digits[24];
  const size_t nd =
      static_cast<size_t>(std::to_chars(digits, digits + sizeof(digits), q).ptr - digits);
  if (q == 0) {
    pystr::NoteFloatRepr(*out, std::signbit(*out) ? "-0.0" : "0.0");
  } else if (nd <= 15 && std::fabs(*out) >= 1e-4 && std::fabs(*out) < 1e16) {
    char text[48];
    size_t len = 0;
    if (std::signbit(*out)) text[len++] = '-';
    const size_t ints = nd > static_cast<size_t>(n) ? nd - static_cast<size_t>(n) : 0;
    if (ints == 0) {
      text[len++] = '0';
    } else {
      std::memcpy(text + len, digits, ints);
      len += ints;
    }
    text[len++] = '.';
    for (size_t z = nd; z < static_cast<size_t>(n); ++z) text[len++] = '0';  // leading zeros
    size_t last = nd;
    while (last > ints && digits[last - 1] == '0') --last;  // trailing zeros
    if (last == ints) {
      text[len++] = '0';
    } else {
      std::memcpy(text + len, digits + ints, last - ints);
      len += last - ints;
    }
    pystr::NoteFloatRepr(*out, std::string_view(text, len));
  }
  return true;
}

double RoundHalfEven(double x, int64_t ndigits) {
  if (!std::isfinite(x)) return x;
  if (ndigits >= 0) {
    if (ndigits > 300) return x;
    double fast;
    if (RoundExact(x, static_cast<int>(ndigits), &fast)) return fast;
    // The correctly rounded decimal text (as Python's round does), read back.
    char buf[1024];
    auto r = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::fixed,
                           static_cast<int>(ndigits));
    double out = x;
    if (r.ec != std::errc()) return out;
    std::from_chars(buf, r.ptr, out);
    NoteRoundedRepr(out, std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
    return out;
  }
  if (ndigits < -308) return 0.0 * x;
  double p = std::pow(10.0, static_cast<double>(-ndigits));
  return std::nearbyint(x / p) * p;
}

Value F_round(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  ArgFlags given;
  Args a = Bind("round", {"precision", "method"}, 0, args, kw, &given);
  int64_t prec = given[0] ? ToInt(a[0], "precision") : 0;
  enum { kCommon, kCeil, kFloor } method = kCommon;
  if (given[1]) {
    const std::string m = ToStr(a[1]);
    if (m == "ceil")
      method = kCeil;
    else if (m == "floor")
      method = kFloor;
    else if (m != "common")
      throw OpError("method must be common, ceil or floor");
  }
  if (!v.is_number()) throw OpError("type " + TypeName(v) + " doesn't define __round__ method");
  if (method == kCommon) {
    if (!v.is_float()) {
      if (prec >= 0) return Value::Int(v.i());
      double r = RoundHalfEven(static_cast<double>(v.i()), prec);
      return Value::Int(static_cast<int64_t>(r));
    }
    return Value::Float(RoundHalfEven(v.f(), prec));
  }
  if (prec < 0) throw OpError("negative precision is not supported with ceil/floor");
  // Jinja2: math.ceil/floor(value * 10**precision) / 10**precision, where math.ceil/floor give an
  // int (so no -0.0, and no inf or nan).
  double p = std::pow(10.0, static_cast<double>(prec));
  double scaled = v.f() * p;
  if (std::isnan(scaled)) throw OpError("cannot convert float NaN to integer");
  if (std::isinf(scaled)) throw OpError("cannot convert float infinity to integer");
  double r = method == kCeil ? std::ceil(scaled) : std::floor(scaled);
  if (r == 0.0) r = 0.0;  // int 0
  return Value::Float(r / p);
}

Value F_safe(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("safe", {}, 0, args, kw);
  return v.is_markup() ? v : Value::Markup(ToStr(v));
}

Value F_slice(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("slice", {"slices", "fill_with"}, 1, args, kw);
  ValueList seq = Iterate(v);
  int64_t slices = ToInt(a[0], "slices");
  if (slices <= 0) throw OpError("integer division or modulo by zero");
  int64_t length = static_cast<int64_t>(seq.size());
  int64_t per = length / slices, extra = length % slices, offset = 0;
  ValueList out;
  for (int64_t n = 0; n < slices; ++n) {
    int64_t start = offset + n * per;
    if (n < extra) ++offset;
    int64_t end = offset + (n + 1) * per;
    ValueList tmp(seq.begin() + start, seq.begin() + end);
    if (!a[1].is_none() && n >= extra) tmp.push_back(a[1]);
    out.push_back(Value::List(std::move(tmp)));
  }
  return Value::List(std::move(out));
}

Value F_sort(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("sort", {"reverse", "case_sensitive", "attribute"}, 0, args, kw);
  ValueList items = Iterate(v);
  bool rev = ArgBool(a[0]), cs = ArgBool(a[1]);
  std::vector<std::pair<Value, size_t>> keys;
  keys.reserve(items.size());
  SortKeyFn key(a[2], cs, true);
  for (size_t i = 0; i < items.size(); ++i) keys.emplace_back(key(in, items[i]), i);
  StableSortKeys(keys, rev);
  ValueList out;
  out.reserve(items.size());
  for (const auto& k : keys) out.push_back(items[k.second]);
  return Value::List(std::move(out));
}

Value F_string(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("string", {}, 0, args, kw);
  return KeepMarkup(v, ToStr(v));
}

Value F_sum(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  ArgFlags given;
  Args a = Bind("sum", {"attribute", "start"}, 0, args, kw, &given);
  Value total = given[1] ? a[1] : Value::Int(0);
  ItemGetter getter(a[0]);
  ForEachItem(
      v, [&](const Value& item) { total = BinaryOp(BinOp::kAdd, total, getter.Get(in, item)); });
  return total;
}

Value F_title(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("title", {}, 0, args, kw);
  return Value::Str(pystr::JinjaTitle(ToStr(v)));
}

Value F_tojson(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("tojson", {"indent"}, 0, args, kw);
  return Value::Markup(ToJsonText(v, a[0]));
}

void FA_tojson(Interp&, const Value& v, ValueList& args, Kwargs& kw, std::string& out) {
  Args a = Bind("tojson", {"indent"}, 0, args, kw);
  out += ToJsonText(v, a[0]);
}

Value F_trim(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("trim", {"chars"}, 0, args, kw);
  std::string chars = a[0].is_none() ? "" : ToStr(a[0]);
  return KeepMarkup(v, pystr::Strip(ToStr(v), a[0].is_none() ? nullptr : &chars, true, true));
}

Value F_truncate(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  ArgFlags given;
  Args a = Bind("truncate", {"length", "killwords", "end", "leeway"}, 0, args, kw, &given);
  std::u32string s = pystr::Decode(ToStr(v));
  int64_t length = given[0] ? ToInt(a[0], "length") : 255;
  std::u32string end = pystr::Decode(given[2] ? ToStr(a[2]) : "...");
  int64_t leeway = given[3] && !a[3].is_none() ? ToInt(a[3], "leeway") : 5;
  if (length < static_cast<int64_t>(end.size()))
    throw OpError("expected length >= " + std::to_string(end.size()) + ", got " +
                  std::to_string(length));
  if (leeway < 0) throw OpError("expected leeway >= 0, got " + std::to_string(leeway));
  if (static_cast<int64_t>(s.size()) <= length + leeway) return Value::Str(pystr::Encode(s));
  std::u32string head = s.substr(0, static_cast<size_t>(length) - end.size());
  if (!ArgBool(a[1])) {
    size_t sp = head.rfind(U' ');
    if (sp != std::u32string::npos) head = head.substr(0, sp);
  }
  return Value::Str(pystr::Encode(head + end));
}

Value F_unique(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("unique", {"case_sensitive", "attribute"}, 0, args, kw);
  bool cs = ArgBool(a[0]);
  ValueList out;
  SortKeyFn key(a[1], cs, false);
  // Keys that are all strings (the usual case) are compared as strings; any other key switches
  // to HashKey (equal values, e.g. 1 and 1.0, give equal keys).
  std::unordered_set<std::string> seen_str;
  std::unordered_set<std::string> seen;
  bool general = false;
  ForEachItem(v, [&](const Value& item) {
    Value k = key(in, item);
    if (!general && !k.is_string()) {
      general = true;
      for (const std::string& s : seen_str) seen.insert(HashKey(Value::Str(s)));
    }
    const bool fresh =
        general ? seen.insert(HashKey(k)).second
                : seen_str.find(k.s()) == seen_str.end() && seen_str.insert(k.s()).second;
    if (fresh) out.push_back(item);
  });
  return Value::List(std::move(out));
}

Value F_wordcount(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("wordcount", {}, 0, args, kw);
  std::u32string s = pystr::Decode(ToStr(v));
  int64_t n = 0;
  bool in_word = false;
  for (char32_t c : s) {
    bool w = pystr::IsWordChar(c);
    if (w && !in_word) ++n;
    in_word = w;
  }
  return Value::Int(n);
}

const std::unordered_map<std::string, FilterImpl>& Table() {
  static const std::unordered_map<std::string, FilterImpl> table = {
      {"abs", F_abs},
      {"attr", F_attr},
      {"batch", F_batch},
      {"capitalize", F_capitalize},
      {"center", F_center},
      {"count", F_length},
      {"d", F_default},
      {"default", F_default},
      {"dictsort", F_dictsort},
      {"e", F_escape},
      {"escape", F_escape},
      {"forceescape", F_forceescape},
      {"first", F_first},
      {"float", F_float},
      {"format", F_format},
      {"groupby", F_groupby},
      {"indent", F_indent},
      {"int", F_int},
      {"items", F_items},
      {"join", F_join},
      {"last", F_last},
      {"length", F_length},
      {"list", F_list},
      {"lower", F_lower},
      {"map", F_map},
      {"max", F_max},
      {"min", F_min},
      {"reject", F_reject},
      {"rejectattr", F_rejectattr},
      {"replace", F_replace},
      {"reverse", F_reverse},
      {"round", F_round},
      {"safe", F_safe},
      {"select", F_select},
      {"selectattr", F_selectattr},
      {"slice", F_slice},
      {"sort", F_sort},
      {"string", F_string},
      {"sum", F_sum},
      {"title", F_title},
      {"tojson", F_tojson},
      {"trim", F_trim},
      {"truncate", F_truncate},
      {"unique", F_unique},
      {"upper", F_upper},
      {"wordcount", F_wordcount},
  };
  return table;
}

}  // namespace

FilterImpl FindBuiltinFilter(const std::string& name) {
  auto it = Table().find(name);
  return it == Table().end() ? nullptr : it->second;
}

FilterAppendImpl FindBuiltinFilterAppend(const std::string& name) {
  if (name == "join") return FA_join;
  if (name == "format") return FA_format;
  if (name == "tojson") return FA_tojson;
  if (name == "lower") return FA_lower;
  if (name == "upper") return FA_upper;
  return nullptr;
}

}  // namespace msc::tmpl
