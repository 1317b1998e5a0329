#include "generator/cli/cli_app.h"

#include <cctype>
#include <iostream>
#include <sstream>
#include <vector>

// Set by CMakeLists.txt on this file: the project VERSION and `git describe` at configure time.
#ifndef MSC_VERSION
#error "MSC_VERSION must be defined (CMake project VERSION)"
#endif
#ifndef MSC_GIT_DESCRIBE
#define MSC_GIT_DESCRIBE ""
#endif

namespace msc::cli {

namespace {

/// True for a name that can go into the generated script unquoted (CLI11 names are such words).
bool IsShellWord(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return false;
  return true;
}

std::string Join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

/// The command-line spellings of a named option: "-h", "--help".
std::vector<std::string> OptionNames(const CLI::Option* opt) {
  std::vector<std::string> names;
  for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  std::vector<std::string> words;
  for (const auto& n : names)
    if (IsShellWord(n)) words.push_back(n);
  return words;
}

/// The allowed values of an option checked with CLI::IsMember: CLI11 appends each validator's
/// description to the type name ("TEXT:{bash,zsh}"); a set description is "{a,b,...}".
std::vector<std::string> Choices(const CLI::Option* opt) {
  const std::string type = opt->get_type_name();
  const auto open = type.find(":{");
  const auto close = type.rfind('}');
  std::vector<std::string> out;
  if (open == std::string::npos || close == std::string::npos || close < open) return out;
  std::stringstream items(type.substr(open + 2, close - open - 2));
  std::string item;
  while (std::getline(items, item, ','))
    if (IsShellWord(item)) out.push_back(item);
  return out;
}

/// Options a command line at `app` accepts: its own, and its parents' while it falls through.
std::vector<const CLI::Option*> AcceptedOptions(const CLI::App* app) {
  std::vector<const CLI::Option*> out;
  for (const CLI::App* a = app; a != nullptr; a = a->get_fallthrough() ? a->get_parent() : nullptr)
    for (const CLI::Option* opt : a->get_options())
      if (opt->nonpositional()) out.push_back(opt);
  return out;
}

std::vector<const CLI::App*> Subcommands(const CLI::App* app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App* s) {
         return !s->get_name().empty() && !s->get_disabled() && IsShellWord(s->get_name());
       }))
    out.push_back(sub);
  return out;
}

/// One `case "$path"` branch of the completion function for the command at `path`.
void EmitNode(const CLI::App* app, const std::string& path, std::ostream& os, std::ostream& walk) {
  std::vector<std::string> opts, file_values;
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> choice_values;
  for (const CLI::Option* opt : AcceptedOptions(app)) {
    const auto names = OptionNames(opt);
    opts.insert(opts.end(), names.begin(), names.end());
    // A flag takes no value (the test CLI11 itself parses by: no minimum of expected values).
    if (opt->get_expected_min() == 0 || names.empty()) continue;
    // The walk over COMP_WORDS skips an option's value so it is not taken for a subcommand.
    for (const auto& n : names) walk << "      '" << path << ":" << n << "') ((i++)) ;;\n";
    auto choices = Choices(opt);
    if (choices.empty())
      file_values.insert(file_values.end(), names.begin(), names.end());
    else
      choice_values.emplace_back(names, choices);
  }
  std::vector<std::string> subs, positional_choices;
  bool positional_files = false;
  for (const CLI::App* sub : Subcommands(app)) {
    subs.push_back(sub->get_name());
    const std::string sub_path = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    walk << "      '" << path << ":" << sub->get_name() << "') path='" << sub_path << "' ;;\n";
  }
  for (const CLI::Option* opt : app->get_options()) {
    if (!opt->get_positional() || opt->nonpositional()) continue;
    auto choices = Choices(opt);
    if (choices.empty()) positional_files = true;
    positional_choices.insert(positional_choices.end(), choices.begin(), choices.end());
  }

  os << "    '" << path << "')\n";
  if (!file_values.empty() || !choice_values.empty()) {
    os << "      case \"$prev\" in\n";
    if (!file_values.empty())
      os << "        " << Join(file_values, " | ")
         << ") mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); return 0 ;;\n";
    for (const auto& [names, choices] : choice_values)
      os << "        " << Join(names, " | ") << ") mapfile -t COMPREPLY < <(compgen -W '"
         << Join(choices, " ") << "' -- \"$cur\"); return 0 ;;\n";
    os << "      esac\n";
  }
  os << "      opts='" << Join(opts, " ") << "' subs='" << Join(subs, " ") << "' choices='"
     << Join(positional_choices, " ") << "' files=" << (positional_files ? 1 : 0) << " ;;\n";

  for (const CLI::App* sub : Subcommands(app))
    EmitNode(sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), os, walk);
}

}  // namespace

std::string VersionString() {
  std::string version = "msc-codegen " MSC_VERSION;
  const std::string git = MSC_GIT_DESCRIBE;
  if (!git.empty()) version += " (git " + git + ")";
  return version;
}

int HandleParseError(const CLI::App& app, const CLI::ParseError& e) {
  // CLI11 parses every argument before it acts on --help, so the words it could not place are
  // known here. A non-option word left at the top level with no subcommand parsed was meant as
  // a subcommand (the root has no positionals).
  if (app.get_subcommands().empty()) {
    for (const auto& word : app.remaining(false)) {
      if (word.empty() || word[0] == '-') continue;
      std::vector<std::string> names;
      for (const CLI::App* sub : Subcommands(&app)) names.push_back(sub->get_name());
      std::cerr << "error: unknown subcommand '" << word << "' (one of: " << Join(names, ", ")
                << ")\nRun with --help for more information.\n";
      return 2;
    }
  }
  const bool help = dynamic_cast<const CLI::CallForHelp*>(&e) != nullptr ||
                    dynamic_cast<const CLI::CallForAllHelp*>(&e) != nullptr;
  const auto extras = app.remaining(true);
  if (help && !extras.empty()) return app.exit(CLI::ExtrasError(extras)) == 0 ? 0 : 2;
  return app.exit(e) == 0 ? 0 : 2;
}

std::string BashCompletion(const CLI::App& app, const std::string& command) {
  std::string function = "_";
  for (char c : command) function += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  std::ostringstream cases, walk;
  EmitNode(&app, "", cases, walk);

  std::ostringstream os;
  os << "# bash completion for " << command << ", generated by `" << command
     << " completion bash` from its\n"
     << "# command-line definition (" << VersionString() << ").\n"
     << "# Source it, or install it as share/bash-completion/completions/" << command << ".\n"
     << function << "() {\n"
     << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\" path=\"\" i\n"
     << "  ((COMP_CWORD > 0)) && prev=\"${COMP_WORDS[COMP_CWORD - 1]}\"\n"
     << "  # The subcommand path before the cursor; the values of options are skipped.\n"
     << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
     << "    case \"$path:${COMP_WORDS[i]}\" in\n"
     << walk.str() << "    esac\n"
     << "  done\n"
     << "  local opts=\"\" subs=\"\" choices=\"\" files=0\n"
     << "  case \"$path\" in\n"
     << cases.str() << "  esac\n"
     << "  if [[ \"$cur\" == -* ]]; then\n"
     << "    mapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n"
     << "  elif [[ -n \"$subs\" ]]; then\n"
     << "    mapfile -t COMPREPLY < <(compgen -W \"$subs\" -- \"$cur\")\n"
     << "  elif [[ -n \"$choices\" ]]; then\n"
     << "    mapfile -t COMPREPLY < <(compgen -W \"$choices\" -- \"$cur\")\n"
     << "  elif ((files)); then\n"
     << "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
     << "  fi\n"
     << "  return 0\n"
     << "}\n"
     << "complete -o filenames -F " << function << " " << command << "\n";
  return os.str();
}

}  // namespace msc::cli
