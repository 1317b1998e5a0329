#include "generator/tmpl/environment.h"

#include <cstdio>
#include <filesystem>

#include "generator/tmpl/error.h"
#include "generator/tmpl/interp.h"
#include "generator/tmpl/parser.h"

namespace msc::tmpl {

struct DataImpl {
  Arena arena;  // payloads of parsed text (declared first: destroyed after `root`)
  Value root;
  size_t text_size = 0;  // of the JSON text parsed (0: not parsed from text)
};

namespace {

// Jinja2 reports unknown filters/tests at compile time, except inside "soft" frames (the test
// and branches of an if statement, inline if-expressions), where they fail only when run.
// Loop bodies, macros, call/filter/set/with blocks open new, non-soft frames.
class Validator {
 public:
  Validator(const Template& t, const EnvData& env) : t_(t), env_(env) {}

  void CheckExpr(const Expr* e, bool soft) {
    if (!e) return;
    if (e->kind == Expr::K::kCond) soft = true;
    if (!soft && e->kind == Expr::K::kFilter && !FindBuiltinFilter(e->name) &&
        !env_.filters.count(e->name))
      Fail(e, "unknown filter '" + e->name + "'");
    if (!soft && e->kind == Expr::K::kTest && !FindBuiltinTest(e->name))
      Fail(e, "unknown test '" + e->name + "'");
    for (const auto& c : e->items) CheckExpr(c.get(), soft);
    for (const auto& c : e->args) CheckExpr(c.get(), soft);
    for (const auto& kv : e->kwargs) CheckExpr(kv.second.get(), soft);
    CheckExpr(e->dyn_args.get(), soft);
    CheckExpr(e->dyn_kwargs.get(), soft);
  }

  void CheckBody(const Body& body, bool soft) {
    for (const auto& n : body) {
      switch (n->kind) {
        case Node::K::kIf:
          for (const auto& c : n->conds) CheckExpr(c.get(), true);
          for (const auto& b : n->bodies) CheckBody(b, true);
          CheckBody(n->else_body, true);
          break;
        case Node::K::kFor:
          CheckExpr(n->expr.get(), soft);
          CheckExpr(n->cond.get(), false);
          CheckBody(n->body, false);
          CheckBody(n->else_body, false);
          break;
        case Node::K::kMacro:
        case Node::K::kCallBlock:
          if (n->kind == Node::K::kCallBlock) CheckExpr(n->expr.get(), soft);
          for (const auto& p : n->params) CheckExpr(p.default_value.get(), false);
          CheckBody(n->body, false);
          break;
        case Node::K::kFilterBlock:
        case Node::K::kSetBlock:
          CheckExpr(n->expr.get(), false);
          CheckBody(n->body, false);
          break;
        case Node::K::kWith:
          for (const auto& v : n->values) CheckExpr(v.get(), soft);
          CheckBody(n->body, false);
          break;
        case Node::K::kBlock:  // compiled into its own function: a new, non-soft frame
          CheckBody(n->body, false);
          break;
        default:
          CheckExpr(n->expr.get(), soft);
          CheckExpr(n->target.get(), soft);
      }
    }
  }

 private:
  [[noreturn]] void Fail(const Expr* e, const std::string& msg) {
    throw TemplateError(FormatPos(SourcePos{&t_.name, e->line, e->col}) + msg);
  }
  const Template& t_;
  const EnvData& env_;
};

}  // namespace

void EnvData::Validate(const Template& t) const { Validator(t, *this).CheckBody(t.body, false); }

const Template* EnvData::Load(const std::string& name) {
  auto hit = file_cache.find(name);  // fast path: names that are already normalized
  if (hit != file_cache.end()) return hit->second.get();
  // jinja2.loaders.split_template_path
  std::string key;
  size_t pos = 0;
  while (pos <= name.size()) {
    size_t slash = name.find('/', pos);
    std::string piece =
        name.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    if (piece == "..") throw OpError("template name '" + name + "' escapes the search root");
    if (!piece.empty() && piece != ".") key += (key.empty() ? "" : "/") + piece;
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  auto it = file_cache.find(key);
  if (it != file_cache.end()) return it->second.get();
  if (key.empty()) return nullptr;
  namespace fs = std::filesystem;
  fs::path path;
  std::error_code ec;
  for (const std::string& root : search_path) {
    fs::path candidate = root.empty() ? fs::path(key) : fs::path(root) / key;
    if (fs::is_regular_file(candidate, ec)) {
      path = std::move(candidate);
      break;
    }
  }
  if (path.empty()) return nullptr;
  // (stdio, not iostreams: a program that never touches a stream skips their locale set-up)
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return nullptr;
  std::string source;
  char buf[16384];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) source.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw OpError("template '" + key + "' cannot be read");
  std::unique_ptr<Template> parsed = Parse(source, path.string());
  parsed->load_name = key;
  Validate(*parsed);
  const Template* t = parsed.get();
  file_cache[key] = std::move(parsed);
  return t;
}

std::shared_ptr<const Template> EnvData::FromString(const std::string& source,
                                                    const std::string& name) {
  std::string key = name;
  key.push_back('\0');
  key += source;
  auto it = string_cache.find(key);
  if (it != string_cache.end()) return it->second;
  std::shared_ptr<const Template> t = Parse(source, name);
  Validate(*t);
  if (string_cache.size() >= 4096) string_cache.clear();
  string_cache[key] = t;
  return t;
}

Environment::Environment(std::string search_root)
    : Environment(std::vector<std::string>{std::move(search_root)}) {}

Environment::Environment(std::vector<std::string> search_path) : d_(std::make_unique<EnvData>()) {
  if (search_path.empty()) search_path.emplace_back();
  d_->search_path = std::move(search_path);
  AddBuiltinGlobals(d_->globals);
}

Environment::~Environment() = default;
Environment::Environment(Environment&&) noexcept = default;
Environment& Environment::operator=(Environment&&) noexcept = default;

void Environment::AddFilter(const std::string& name, Function f) {
  d_->filters[name] = std::move(f);
}

void Environment::AddGlobal(const std::string& name, Json value) {
  d_->globals[name] = FromJsonDeep(value);
}

void Environment::AddFunction(const std::string& name, Function f) {
  d_->globals[name] = Value::Obj(MakeRc<NativeFunction>(
      name, [name, f = std::move(f)](Interp&, ValueList& args, Kwargs& kwargs) {
        std::vector<Json> jargs;
        for (const Value& a : args) jargs.push_back(a.ToJson());
        Json jkw = Json::object();
        for (const auto& kv : kwargs) jkw[kv.first] = kv.second.ToJson();
        Json result;
        try {
          result = f(jargs, jkw);
        } catch (const std::exception& e) {
          throw OpError("function '" + name + "' failed: " + e.what());
        }
        return FromJsonDeep(result);
      }));
}

std::string Environment::RenderParsed(const Template& t, const Value& data, size_t reserve,
                                      const Sink* sink) {
  if (!data.is_dict() && !data.is_none())
    throw TemplateError(t.name + ": render data must be a JSON object, got " +
                        (data.is_seq()      ? "array"
                         : data.is_string() ? "string"
                         : data.is_bool()   ? "boolean"
                                            : "number"));
  std::string out;
  out.reserve(sink ? kStreamChunk * 2 : reserve);
  try {
    Interp in(*d_);
    if (sink) in.StreamTo(&out, sink);
    auto scope = MakeRc<Scope>();
    scope->data = data;
    in.RenderTemplate(t, scope, out);
    if (sink) in.FlushStream(out);
  } catch (const TemplateError&) {
    throw;
  } catch (const OpError& e) {
    throw TemplateError(t.name + ": " + e.what());
  } catch (const std::exception& e) {
    throw TemplateError(t.name + ": internal error: " + e.what());
  }
  return out;
}

std::string Environment::JoinSearchPath() const {
  std::string out;
  for (const std::string& root : d_->search_path) out += (out.empty() ? "" : "', '") + root;
  return out;
}

const Template& Environment::Find(const std::string& template_name) {
  const Template* t = nullptr;
  try {
    t = d_->Load(template_name);
  } catch (const OpError& e) {
    throw TemplateError(template_name + ": " + e.what());
  }
  if (!t)
    throw TemplateError(template_name + ": template not found (search path '" + JoinSearchPath() +
                        "')");
  return *t;
}

std::string Environment::Render(const std::string& template_name, const Json& data) {
  const Template& t = Find(template_name);
  if (!data.is_object() && !data.is_null())
    throw TemplateError(t.name + ": render data must be a JSON object, got " +
                        std::string(data.type_name()));
  return RenderParsed(t, data.is_object() ? Value::ViewJson(data) : Value());
}

std::string Environment::Render(const std::string& template_name, const Data& data) {
  // Outputs are usually of the order of their data: for large data, reserve that much up front
  // (no copies while the output grows; untouched capacity costs nothing).
  const size_t reserve = data.d_->text_size >= (size_t{64} << 10) ? data.d_->text_size : 0;
  return RenderParsed(Find(template_name), data.d_->root, reserve);
}

void Environment::Render(const std::string& template_name, const Data& data, const Sink& sink) {
  RenderParsed(Find(template_name), data.d_->root, 0, &sink);
}

std::string Environment::RenderString(const std::string& source, const Json& data,
                                      const std::string& name) {
  std::shared_ptr<const Template> t = d_->FromString(source, name);
  if (!data.is_object() && !data.is_null())
    throw TemplateError(t->name + ": render data must be a JSON object, got " +
                        std::string(data.type_name()));
  return RenderParsed(*t, data.is_object() ? Value::ViewJson(data) : Value());
}

// ---- Data ----
Data::Data() : d_(std::make_shared<DataImpl>()) {}
Data::~Data() = default;
Data::Data(const Data&) = default;
Data& Data::operator=(const Data&) = default;

Data Data::ParseJson(std::string_view text, const std::string& what) {
  Data d;
  try {
    d.d_->root = ParseJsonValue(text, &d.d_->arena);
    d.d_->text_size = text.size();
  } catch (const OpError& e) {
    throw TemplateError(what + ": invalid JSON: " + e.what());
  }
  return d;
}

Data Data::FromValue(const Value& v) {
  Data d;
  d.d_->root = v;
  return d;
}

Data Data::FromJson(const Json& j) {
  Data d;
  try {
    d.d_->root = FromJsonDeep(j);
  } catch (const OpError& e) {
    throw TemplateError(std::string("render data: ") + e.what());
  }
  return d;
}

}  // namespace msc::tmpl
