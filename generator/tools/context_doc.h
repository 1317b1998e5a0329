// The template context, documented field by field: what generator/emit/context.cc BuildContext
// (and generate.cc around it) puts in front of snippets and project templates: the one source of
// docs/template-context.md (`msc-codegen context --reference`). The unit test
// (tests/unit/test_scaffold.cc) builds real contexts and fails when a field exists without a
// description here or a description names a field that no context has.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace msc::tools {

/// One documented field. `path` is how a template reaches it ("node.attrs", "T.dims"); `type` is
/// short ("int", "str", "[T]", "{role: T}"); `doc` one sentence or two.
struct FieldDoc {
  std::string path;
  std::string type;
  std::string doc;
};

/// The object a snippet is rendered with: `node` and `section`.
const std::vector<FieldDoc>& SnippetFieldDocs();
/// Keys of a node N (node.<key> in a snippet, graph.nodes[i].<key> in a project template).
const std::vector<FieldDoc>& NodeFieldDocs();
/// Keys of a tensor T (node.inputs[i], node.outputs[k], graph.inputs[i], ...); the ones marked
/// "weights only" / "activations only" in their doc appear on those tensors alone.
const std::vector<FieldDoc>& TensorFieldDocs();
/// Keys of `graph` (project templates; snippets see only their node).
const std::vector<FieldDoc>& GraphFieldDocs();
/// Top-level keys of the object project templates are rendered with, and their sub-keys
/// (graph, backend.*, options.*).
const std::vector<FieldDoc>& ProjectFieldDocs();

/// The doc of `key` in `docs` (matching the last path component), or nullptr.
const FieldDoc* FindFieldDoc(const std::vector<FieldDoc>& docs, const std::string& key);

/// The Markdown reference of every field above (docs/template-context.md is this text, written
/// by `msc-codegen context --reference`).
std::string ContextReferenceMarkdown();

/// Pretty JSON (2-space indent, keys in context order, lists of scalars on one line) that shows
/// what plain JSON cannot: infinite and NaN floats (typed attrs such as clip's min = -inf) print
/// as Infinity, -Infinity and NaN, the tokens Python's json module writes and reads. Invalid
/// UTF-8 in strings is replaced by U+FFFD.
std::string DumpContextJson(const nlohmann::ordered_json& value);

}  // namespace msc::tools
