// Scaffolding for authors of ops and backends: `msc-codegen new-op` and `msc-codegen new-backend`.
//
// Both commands check everything first and then write; they never overwrite: an existing opdef,
// snippet, test case or backend folder is an msc::Error naming it, and nothing is written. The
// snippets they write are stubs: a header comment pointing to the context reference
// (docs/template-context.md) and to `msc-codegen context`, then a raise_error call carrying
// kStubMarker, so generating a graph with the op fails with a clear message until the snippet is
// written, and `msc-codegen ops` shows "stub".
#pragma once

#include <string>
#include <vector>

#include "generator/emit/backend_spec.h"
#include "generator/opdef/opdef.h"

namespace msc::tools {

/// Written right after the raise_error call of every stub snippet; IsSnippetStub looks for it.
inline constexpr const char* kStubMarker = "{# msc-codegen:stub #}";

/// What a scaffold command did, for the CLI to print.
struct ScaffoldReport {
  std::vector<std::string> created;   ///< new files (and folders, for new-backend).
  std::vector<std::string> appended;  ///< existing files that got an entry at the end.
  std::vector<std::string> notes;     ///< things the author should know (printed to stderr).
};

struct NewOpOptions {
  std::string optype;  ///< segments of [A-Za-z0-9_] (not starting with a digit) joined by '.'.
  std::string like;    ///< existing optype to copy (opdef entry and snippets); "" = stubs.
  std::string templates_root;
  std::string opdefs_dir;
  /// Python file holding the per-op test cases (an `@case`-decorated function per case, as in
  /// tests/ops/cases/cases_ops.py); "" = write no test case stub.
  std::string cases_file;
};

/// `new-op`: appends the opdef entry to opdefs/<ns>.yaml (nn.* -> nn.yaml, msc.* -> msc.yaml, a
/// new <ns>.yaml for a new namespace; without a namespace: --like's file, else tensor.yaml),
/// writes one snippet per backend at its op_template path (skipped where the backend lists the
/// optype in no_snippet), and appends a test case stub `case_<optype with . -> _>` to the cases
/// file. With `like`: the opdef entry is --like's (re-emitted from the parsed definition, so
/// YAML anchors are resolved) and each snippet a byte copy of --like's (a stub where --like has
/// none). Errors, before anything is written: a bad optype name, an optype that has an opdef, an
/// unknown --like, a snippet file or test case that exists, a cases file without `def case(`.
ScaffoldReport NewOp(const NewOpOptions& options);

struct NewBackendOptions {
  std::string name;  ///< [A-Za-z][A-Za-z0-9_-]*
  std::string from;  ///< backend to copy; "" = skeleton.
  std::string ext;   ///< skeleton only: file extension of the generated code ("py", "cc").
  std::string templates_root;
  std::string opdefs_dir;
};

/// `new-backend`: templates/<name>/. With `from`: a copy of that backend's folder (every file,
/// byte for byte) whose backend.yaml gets a header comment and the summary "<name>: a copy of
/// the <from> backend (...)". Copies, not {% extends "../<from>/..." %}: template names are
/// resolved inside the backend folder and may not contain "..". Without `from`: a skeleton
/// backend.yaml (every key, commented), project/model.<ext>.j2 and project/README.md.j2, and a
/// stub snippet for every optype with an opdef (except no_snippet and not_for_inference ones).
/// Built in a temporary sibling folder, checked with LoadBackendSpec, then renamed into place.
/// Errors: a bad name, an existing templates/<name> (file or folder), an unknown `from`.
ScaffoldReport NewBackend(const NewBackendOptions& options);

/// Whether the backend's snippet for `optype` exists and is a stub (holds kStubMarker).
bool IsSnippetStub(const emit::BackendSpec& spec, const std::string& optype);

/// The stub snippet of `def` on `spec`'s backend: a header comment (the op's summary, its
/// op_sections, and where the context is documented and shown: docs/template-context.md,
/// `msc-codegen context`; nothing copied from them) and the raise_error line. `origin` says which
/// command wrote it.
std::string SnippetStub(const emit::BackendSpec& spec, const opdef::OpDef& def,
                        const std::string& origin);

/// `def` as one opdefs/*.yaml entry (the format of opdefs/README.md) under the name `optype`;
/// loading it gives back the same definition (every field; comments and anchors are not kept).
std::string OpDefYaml(const opdef::OpDef& def, const std::string& optype);

/// The test case stub for `def`: an @case function building a one-node graph (inputs, weights,
/// attrs at their defaults, stringified as MSC writes them) whose reference raises
/// NotImplementedError until it is written.
std::string CaseStub(const opdef::OpDef& def, const std::string& case_name,
                     const std::string& origin);

/// <opdefs_dir>/../tests/ops/cases/cases_ops.py when it exists (a source checkout), else "".
std::string DefaultCasesFile(const std::string& opdefs_dir);

}  // namespace msc::tools
