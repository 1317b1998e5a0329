#include "generator/ir/visualize.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/filesystem.hpp>

#include "generator/common/error.h"

extern char** environ;

namespace msc::ir {

namespace fs = boost::filesystem;

namespace {

const char kHex[] = "0123456789ABCDEF";

// ---------------------------------------------------------------------------------------------
// Escaping
// ---------------------------------------------------------------------------------------------

/// A control character as the text after the backslash of its escape: "n", "t", "r", "x01".
std::string ControlText(unsigned char c) {
  if (c == '\n') return "n";
  if (c == '\t') return "t";
  if (c == '\r') return "r";
  return std::string("x") + kHex[c >> 4] + kHex[c & 0xf];
}

/// Text inside a Graphviz HTML-like label. XML specials become entities. Graphviz applies its
/// escString substitutions (\N = node name, \G, \E, \T, \H, \L, and \\ -> \) to HTML labels too,
/// after decoding entities, so every backslash is doubled. Control characters, which XML 1.0 does
/// not allow, are shown as the text "\n", "\t", "\r" or "\xHH".
std::string HtmlText(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (unsigned char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\\\" + ControlText(c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

/// Text inside a quoted Graphviz escString attribute (tooltip). Graphviz removes two levels of
/// backslash escaping there (the "\\" of the lexer and the one of its \N/\G substitution), so a
/// literal backslash is written as four; '"' as \"; '&' as &amp; (Graphviz's SVG writer keeps
/// what looks like an entity); '\n' is a line break (written by the caller as "\n").
std::string TooltipText(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (unsigned char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '&':
        out += "&amp;";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\\\\\\\" + ControlText(c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

/// A quoted string as tvm::support::StrEscape (apache/tvm src/support/str_escape.h, defaults:
/// hex escapes, whitespace escaped) writes it, inside double quotes.
std::string TvmQuoted(const std::string& s) {
  std::string out = "\"";
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    if (c >= ' ' && c <= '~' && c != '\\' && c != '"') {
      out += static_cast<char>(c);
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    }
  }
  return out + "\"";
}

/// At most `max` UTF-8 code points of s; longer strings become max - 3 code points + "...".
std::string Truncate(const std::string& s, size_t max) {
  size_t points = 0;
  for (unsigned char c : s) points += (c & 0xC0) != 0x80;
  if (points <= max) return s;
  const size_t keep = max > 3 ? max - 3 : 0;
  size_t seen = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == keep) break;
      ++seen;
    }
  }
  return s.substr(0, i) + "...";
}

// ---------------------------------------------------------------------------------------------
// Tensors
// ---------------------------------------------------------------------------------------------

/// "1x64x56x56"; "scalar" for 0-d; a dynamic dim shows its prim (MSC's PrimAt) or "?".
std::string ShapeText(const MSCTensor& t) {
  if (t.shape.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) out += "x";
    const std::string prim = i < t.prims.size() ? t.prims[i] : "";
    if (!prim.empty())
      out += prim;
    else if (t.shape[i] < 0)
      out += "?";
    else
      out += std::to_string(t.shape[i]);
  }
  return out;
}

/// The output tensor an input name ("<node>:<idx>") refers to, and its producer's position.
struct Resolved {
  size_t producer;
  size_t index;
  const MSCTensor* tensor;
};

Resolved ResolveInput(const MSCGraph& g, const std::map<std::string, size_t>& position,
                      const MSCJoint& consumer, const std::string& input) {
  auto split = SplitTensorName(input);
  if (split) {
    auto it = position.find(split->first);
    if (it != position.end()) {
      const MSCJoint& p = g.nodes[it->second];
      if (split->second < static_cast<int64_t>(p.outputs.size()))
        return {it->second, static_cast<size_t>(split->second),
                &p.outputs[static_cast<size_t>(split->second)]};
    }
  }
  throw Error(g.source + ": node '" + consumer.name + "': input '" + input +
              "' names no node output");
}

std::map<std::string, size_t> Positions(const MSCGraph& g) {
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < g.nodes.size(); ++i) position.emplace(g.nodes[i].name, i);
  return position;
}

// ---------------------------------------------------------------------------------------------
// DOT
// ---------------------------------------------------------------------------------------------

struct Style {
  const char* header;  // header fill
  const char* border;  // table border colour
};

/// Header colours by optype family (graph inputs and outputs override them).
Style StyleFor(const std::string& optype) {
  auto has = [&](const char* part) { return optype.find(part) != std::string::npos; };
  if (optype == "input") return {"#c8e6c9", "#2e7d32"};
  if (has("conv") || has("matmul") || has("linear") || has("dense") || has("attention") ||
      has("einsum"))
    return {"#bbdefb", "#455a64"};
  if (has("norm")) return {"#e1bee7", "#455a64"};
  if (has("relu") || has("gelu") || has("sigmoid") || has("tanh") || has("silu") ||
      has("softmax") || has("swish") || has("elu") || has("clip") || has("hardswish"))
    return {"#fff9c4", "#455a64"};
  if (has("pool")) return {"#b2dfdb", "#455a64"};
  return {"#eceff1", "#455a64"};
}

void AppendNode(std::string& out, size_t pos, const MSCJoint& n, const DotOptions& opt,
                const std::set<std::string>& graph_inputs,
                const std::set<std::string>& graph_outputs) {
  Style style = StyleFor(n.optype);
  std::vector<std::string> ins, outs;
  for (const auto& t : n.outputs) {
    if (graph_inputs.count(t.name)) ins.push_back(t.name);
    if (graph_outputs.count(t.name)) outs.push_back(t.name);
  }
  const bool is_io = !ins.empty() || !outs.empty();
  if (!outs.empty()) style = {"#ffe0b2", "#e65100"};
  if (!ins.empty()) style = {"#c8e6c9", "#2e7d32"};

  out += "  n" + std::to_string(pos) + " [label=<<TABLE BORDER=\"" + (is_io ? "3" : "1") +
         "\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"3\" COLOR=\"" + style.border + "\">";
  out += "<TR><TD BGCOLOR=\"";
  out += style.header;
  out += "\"><B>" + HtmlText(n.name) + "</B>";
  if (!n.shared_ref.empty()) out += " (shares " + HtmlText(n.shared_ref) + ")";
  out += "<BR/><FONT POINT-SIZE=\"9\">" + HtmlText(n.optype) + "</FONT></TD></TR>";
  auto section = [&](const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    out += "<HR/><TR><TD ALIGN=\"LEFT\" BALIGN=\"LEFT\">";
    for (size_t i = 0; i < lines.size(); ++i) out += (i ? "<BR/>" : "") + lines[i];
    out += "</TD></TR>";
  };
  std::vector<std::string> lines;
  for (const auto& [key, value] : n.attrs)
    lines.push_back(HtmlText(key) + " = " + HtmlText(Truncate(value, opt.max_attr_chars)));
  section(lines);
  lines.clear();
  for (const auto& [role, t] : n.weights)
    lines.push_back(HtmlText(role) + ": " + HtmlText(ShapeText(t)) + " " + HtmlText(t.dtype));
  section(lines);
  lines.clear();
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const MSCTensor& t = n.outputs[k];
    lines.push_back(std::string(n.outputs.size() > 1 ? "out" + std::to_string(k) : "out") + ": " +
                    HtmlText(ShapeText(t)) + " " + HtmlText(t.dtype));
  }
  section(lines);
  lines.clear();
  for (const auto& t : ins) lines.push_back("<B>graph input</B> " + HtmlText(t));
  for (const auto& t : outs) lines.push_back("<B>graph output</B> " + HtmlText(t));
  section(lines);
  out += "</TABLE>>, tooltip=\"" + TooltipText(n.name) + "\\n" + TooltipText(n.optype);
  for (const auto& [key, value] : n.attrs)
    out += "\\n" + TooltipText(key) + " = " + TooltipText(value);
  out += "\"];\n";
}

}  // namespace

// -----------------------------------------------------------------------------------------------

std::optional<VizFormat> ParseVizFormat(const std::string& name) {
  if (name == "dot") return VizFormat::kDot;
  if (name == "svg") return VizFormat::kSvg;
  if (name == "prototxt") return VizFormat::kPrototxt;
  return std::nullopt;
}

std::optional<VizFormat> ResolveVizFormat(const std::string& out_path,
                                          const std::string& format_override, std::string* why) {
  if (!format_override.empty()) {
    auto f = ParseVizFormat(format_override);
    if (!f && why)
      *why = "visualize: unknown --format '" + format_override + "': expected svg, dot or prototxt";
    return f;
  }
  std::string ext = fs::path(out_path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto f = ext.size() > 1 ? ParseVizFormat(ext.substr(1)) : std::nullopt;
  if (!f && why)
    *why = "visualize: cannot tell the format of '" + out_path +
           "' from its extension: expected .svg, .dot or .prototxt (or pass --format)";
  return f;
}

std::string MscTensorRepr(const MSCTensor& t) {
  std::string out = t.name;
  if (!t.alias.empty()) out += "(" + t.alias + ")";
  out += "<";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    const std::string prim = i < t.prims.size() ? t.prims[i] : "";
    out += prim.empty() ? std::to_string(t.shape[i]) : prim;
    out += i + 1 == t.shape.size() ? "|" : ",";
  }
  out += t.dtype;
  if (!t.layout.empty()) out += "|" + t.layout;
  return out + ">";
}

std::string GraphToDot(const MSCGraph& g, const DotOptions& options) {
  const auto position = Positions(g);
  const std::set<std::string> graph_inputs(g.inputs.begin(), g.inputs.end());
  const std::set<std::string> graph_outputs(g.outputs.begin(), g.outputs.end());
  std::string out;
  out.reserve(1024 + g.nodes.size() * 640);
  out += "// MSCGraph (" + std::to_string(g.nodes.size()) +
         " nodes) drawn by msc-codegen visualize. Render: dot -Tsvg G.dot -o G.svg\n";
  out += "digraph msc_graph {\n";
  out +=
      "  graph [rankdir=TB, nodesep=0.3, ranksep=0.35, fontname=\"Helvetica\", fontsize=14, "
      "labelloc=t, label=<<B>" +
      HtmlText(g.name) + "</B> (" + std::to_string(g.nodes.size()) + " nodes)>];\n";
  out += "  node [shape=plain, fontname=\"Helvetica\", fontsize=10];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#546e7a\", arrowsize=0.7];\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const MSCJoint& n = g.nodes[i];
    AppendNode(out, i, n, options, graph_inputs, graph_outputs);
    std::set<std::pair<size_t, size_t>> drawn;  // (producer, output index) already drawn
    for (const auto& input : n.inputs) {
      Resolved r = ResolveInput(g, position, n, input);
      if (!drawn.emplace(r.producer, r.index).second) continue;
      std::string label = HtmlText(ShapeText(*r.tensor));
      if (g.nodes[r.producer].outputs.size() > 1)
        label = "[" + std::to_string(r.index) + "] " + label;
      out += "  n" + std::to_string(r.producer) + " -> n" + std::to_string(i) + " [label=<" +
             label + ">];\n";
    }
  }
  out += "}\n";
  return out;
}

std::string GraphToPrototxt(const MSCGraph& g) {
  const auto position = Positions(g);
  std::string out;
  out.reserve(256 + g.nodes.size() * 512);
  // MSC's printer: every key starts a new line (none before the first), two-space indent.
  out += "name: " + TvmQuoted(g.name);
  for (const auto& n : g.nodes) {
    out += "\nlayer {";
    out += "\n  name: " + TvmQuoted(n.name);
    std::string type = n.optype;
    for (char& c : type)
      if (c == '.') c = '_';
    out += "\n  type: " + TvmQuoted(type);
    out += "\n  top: " + TvmQuoted(n.name);
    for (const auto& p : n.parents) out += "\n  bottom: " + TvmQuoted(p);
    // layer_param: MSC's Map<String, ObjectRef> built by Set() in this order.
    std::vector<std::pair<std::string, std::string>> param;  // key -> printed value
    auto set = [&param](const std::string& key, std::string value) {
      for (auto& kv : param)
        if (kv.first == key) {
          kv.second = std::move(value);
          return;
        }
      param.emplace_back(key, std::move(value));
    };
    set("idx", std::to_string(n.index));
    for (size_t i = 0; i < n.inputs.size(); ++i)
      set("input_" + std::to_string(i),
          TvmQuoted(MscTensorRepr(*ResolveInput(g, position, n, n.inputs[i]).tensor)));
    for (size_t i = 0; i < n.outputs.size(); ++i)
      set("output_" + std::to_string(i), TvmQuoted(MscTensorRepr(n.outputs[i])));
    for (const auto& [role, t] : n.weights) set("param_" + role, TvmQuoted(MscTensorRepr(t)));
    for (const auto& [key, value] : n.attrs) set(key, TvmQuoted(value));
    out += "\n  layer_param {";
    for (const auto& [key, value] : param) out += "\n    " + key + ": " + value;
    out += "\n  }";
    out += "\n}";
  }
  return out;
}

// -----------------------------------------------------------------------------------------------
// Files and the dot process
// -----------------------------------------------------------------------------------------------

namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

/// A temporary sibling of `path`, created exclusively; removed by the destructor unless
/// committed (renamed over `path`).
class TempSibling {
 public:
  explicit TempSibling(const std::string& path) : target_(path) {
    fs::path p = fs::absolute(fs::path(path));
    if (fs::is_directory(p)) throw Error(path + ": is a directory, expected an output file");
    boost::system::error_code ec;
    if (!p.parent_path().empty()) fs::create_directories(p.parent_path(), ec);
    if (ec) throw Error(p.parent_path().string() + ": cannot create directory: " + ec.message());
    for (int attempt = 0;; ++attempt) {
      tmp_ = (p.parent_path() /
              ("." + p.filename().string() + ".msc-tmp-" + std::to_string(::getpid()) +
               (attempt ? "-" + std::to_string(attempt) : "")))
                 .string();
      fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0) break;
      if (errno != EEXIST || attempt > 100)
        throw Error(path + ": cannot write: " + std::strerror(errno));
    }
  }
  TempSibling(const TempSibling&) = delete;
  TempSibling& operator=(const TempSibling&) = delete;
  ~TempSibling() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
  }

  int fd() const { return fd_; }

  void WriteAll(const std::string& content) {
    const char* p = content.data();
    size_t left = content.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error(target_ + ": cannot write: " + std::strerror(errno));
      p += n;
      left -= static_cast<size_t>(n);
    }
  }

  /// Size written so far (for the "produced no output" check).
  off_t Size() const {
    struct stat st;
    return ::fstat(fd_, &st) == 0 ? st.st_size : 0;
  }

  void Commit() {
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw Error(target_ + ": cannot write: " + std::strerror(errno));
    if (::rename(tmp_.c_str(), target_.c_str()) != 0)
      throw Error(target_ + ": cannot move the output into place: " + std::strerror(errno));
    committed_ = true;
  }

 private:
  std::string target_;
  std::string tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Closes the fds it holds on scope exit.
struct FdCloser {
  std::vector<int*> fds;
  ~FdCloser() {
    for (int* fd : fds)
      if (*fd >= 0) ::close(*fd);
  }
};

/// First lines of dot's stderr, for the error message.
std::string Excerpt(const std::string& err) {
  std::string e = err.size() > 2000 ? err.substr(0, 2000) + "..." : err;
  while (!e.empty() && (e.back() == '\n' || e.back() == ' ')) e.pop_back();
  return e.empty() ? "(no message)" : e;
}

}  // namespace

std::string FindGraphvizDot() {
  const char* env = std::getenv("PATH");
  const std::string path = env ? env : "";
  if (path.empty()) {
    if (IsExecutableFile("/usr/bin/dot")) return "/usr/bin/dot";
  } else {
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find(':', start);
      if (end == std::string::npos) end = path.size();
      const std::string dir = path.substr(start, end - start);
      if (!dir.empty()) {
        const std::string candidate = dir + (dir.back() == '/' ? "" : "/") + "dot";
        if (IsExecutableFile(candidate)) return candidate;
      }
      start = end + 1;
    }
  }
  throw Error(
      "visualize: SVG needs Graphviz's `dot` (apt-get install graphviz); write .dot instead "
      "(no executable `dot` on PATH=" +
      (path.empty() ? std::string("<unset>, nor /usr/bin/dot") : path) + ")");
}

void WriteFileAtomic(const std::string& path, const std::string& content) {
  TempSibling tmp(path);
  tmp.WriteAll(content);
  tmp.Commit();
}

void RenderSvg(const std::string& dot_text, const std::string& dot_exe,
               const std::string& svg_path) {
  TempSibling tmp(svg_path);
  int in_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  FdCloser closer{{&in_pipe[0], &in_pipe[1], &err_pipe[0], &err_pipe[1]}};
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)
    throw Error(std::string("visualize: cannot create a pipe: ") + std::strerror(errno));

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, tmp.fd(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  // dot gets default SIGPIPE handling even though we ignore SIGPIPE while feeding it.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  std::string arg0 = dot_exe, arg1 = "-Tsvg";
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, dot_exe.c_str(), &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw Error("visualize: cannot run " + dot_exe + ": " + std::strerror(rc));
  ::close(in_pipe[0]);
  in_pipe[0] = -1;
  ::close(err_pipe[1]);
  err_pipe[1] = -1;

  // Feed DOT on stdin while draining stderr (poll, so neither pipe can deadlock). SIGPIPE is
  // ignored meanwhile: if dot exits early, write() fails with EPIPE and the exit status tells.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, &old);
  std::string err;
  size_t written = 0;
  bool write_failed = false;
  while (in_pipe[1] >= 0 || err_pipe[0] >= 0) {
    pollfd fds[2];
    int n = 0;
    if (in_pipe[1] >= 0) fds[n++] = {in_pipe[1], POLLOUT, 0};
    if (err_pipe[0] >= 0) fds[n++] = {err_pipe[0], POLLIN, 0};
    if (::poll(fds, static_cast<nfds_t>(n), -1) < 0) {
      if (errno == EINTR) continue;
      write_failed = true;
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (fds[i].fd == in_pipe[1] && fds[i].revents) {
        ssize_t w = ::write(in_pipe[1], dot_text.data() + written,
                            std::min<size_t>(dot_text.size() - written, 65536));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) write_failed = true;
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 || written == dot_text.size()) {
          ::close(in_pipe[1]);
          in_pipe[1] = -1;
        }
      } else if (fds[i].fd == err_pipe[0] && fds[i].revents) {
        char buf[4096];
        ssize_t r = ::read(err_pipe[0], buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
          ::close(err_pipe[0]);
          err_pipe[0] = -1;
        } else if (err.size() < 65536) {
          err.append(buf, static_cast<size_t>(r));
        }
      }
    }
  }
  ::sigaction(SIGPIPE, &old, nullptr);
  for (int* fd : {&in_pipe[1], &err_pipe[0]})  // after a poll error: let dot see EOF
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string what = "visualize: `" + dot_exe + " -Tsvg` ";
  if (WIFSIGNALED(status))
    throw Error(what + "was killed by signal " + std::to_string(WTERMSIG(status)) + ": " +
                Excerpt(err));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(what + "failed (exit status " + std::to_string(WEXITSTATUS(status)) +
                "): " + Excerpt(err));
  if (write_failed) throw Error(what + "did not read all of its input: " + Excerpt(err));
  if (tmp.Size() == 0) throw Error(what + "produced no SVG: " + Excerpt(err));
  tmp.Commit();
}

void WriteVisualization(const MSCGraph& graph, const std::string& out_path, VizFormat format) {
  switch (format) {
    case VizFormat::kDot:
      WriteFileAtomic(out_path, GraphToDot(graph));
      return;
    case VizFormat::kPrototxt:
      WriteFileAtomic(out_path, GraphToPrototxt(graph));
      return;
    case VizFormat::kSvg: {
      const std::string dot = FindGraphvizDot();
      RenderSvg(GraphToDot(graph), dot, out_path);
      return;
    }
  }
}

}  // namespace msc::ir
