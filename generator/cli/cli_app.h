// CLI11 application helpers for msc-codegen's command line (main.cc): the version string, the
// exit status of a parse error, and a bash completion script derived from the CLI11 definition.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace msc::cli {

/// "msc-codegen <CMake project VERSION>", plus " (git <describe>)" when the build was configured
/// from a git checkout (`git describe --always --dirty` at configure time; absent without git).
std::string VersionString();

/// Exit status for a CLI11 parse exception; prints what CLI11 prints (help, version, or the
/// usage error). --help / --version: 0; usage errors: 2. Unlike CLI11 alone, a word in the
/// subcommand position that names no subcommand is an error even beside --help
/// ("error: unknown subcommand 'frob'", status 2), and so are leftover arguments beside --help.
int HandleParseError(const CLI::App& app, const CLI::ParseError& e);

/// A bash completion script for `command`, derived by walking `app` (subcommands at any depth,
/// their options and flags, positionals): subcommand names in the subcommand position, option
/// names after "-", files for option values and positionals, and the listed choices for options
/// checked with CLI::IsMember. Defines _msc_codegen and registers it with `complete`.
std::string BashCompletion(const CLI::App& app, const std::string& command);

}  // namespace msc::cli
