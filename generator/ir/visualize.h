// Pictures of an MSCGraph: Graphviz DOT (written here), SVG (DOT rendered by Graphviz's `dot`),
// and the prototxt that TVM MSC's MSCGraph.visualize() wrote for Netron.
//
//   msc-codegen visualize G.json -o OUT.svg|OUT.dot|OUT.prototxt [--format svg|dot|prototxt]
//
// Every output file is written atomically: into a temporary sibling, then renamed over OUT, so a
// failure (dot missing or failing, disk full) leaves OUT as it was and no temporary behind.
#pragma once

#include <optional>
#include <string>

#include "generator/ir/graph.h"

namespace msc::ir {

enum class VizFormat { kDot, kSvg, kPrototxt };

/// "dot" / "svg" / "prototxt" -> format; nullopt for anything else.
std::optional<VizFormat> ParseVizFormat(const std::string& name);

/// The format for `out_path`: `format_override` when not empty, else the extension of out_path
/// (".dot", ".svg", ".prototxt", case-insensitive). nullopt with *why set to a usage message that
/// names the valid extensions ("visualize: cannot tell the format of 'g.png' from its extension:
/// expected .svg, .dot or .prototxt (or pass --format)").
std::optional<VizFormat> ResolveVizFormat(const std::string& out_path,
                                          const std::string& format_override, std::string* why);

/// MSC's text form of a tensor (ReprPrinter of MSCTensorNode, apache/tvm
/// src/contrib/msc/core/ir/graph.cc): "name(alias)<d0,d1|dtype|layout>", prims in place of
/// dynamic dims, "(alias)" only when the alias is not empty, "|layout" only when it is not empty.
/// Example: "conv2d:0<1,6,4,4|float32|NCHW>", a 0-d tensor "c<float32>".
std::string MscTensorRepr(const MSCTensor& tensor);

/// Options of GraphToDot.
struct DotOptions {
  /// Attribute values longer than this many characters (UTF-8 code points) are cut to
  /// max_attr_chars - 3 characters + "..." in node labels; the tooltip keeps them whole.
  size_t max_attr_chars = 40;
};

/// Graphviz DOT of a graph, deterministic (a function of the graph only), in node order:
///  - one node per MSCJoint, id "n<position>", shape=plain with an HTML-like table label:
///    name (bold) + optype; every attr "key = value" (long values truncated); every weight
///    "role: shape dtype"; every output "out: shape dtype" (e.g. "out: 1x64x56x56 float32");
///    a tooltip (SVG: hover) with the name, optype and the attrs in full;
///  - graph inputs (`input` nodes) green with a thick border and a "graph input" row, nodes that
///    produce a graph output orange with a thick border and a "graph output" row;
///  - one edge producer -> consumer per distinct (tensor, consumer) pair, labelled with the
///    tensor's shape ("1x64x56x56"; "scalar" for 0-d; prims or "?" for dynamic dims; "[k] "
///    prefixed when the producer has more than one output).
/// Names, attrs and dims are escaped for HTML labels and Graphviz escString (quotes,
/// backslashes, '<' '>' '&', control characters as the text "\n" "\t" "\r" "\xHH"; UTF-8
/// is kept). Linear in the size
/// of the graph. Throws msc::Error "<source>: node '<name>': input '<t>' names no node output"
/// for an input that does not resolve (Validate() reports these first).
std::string GraphToDot(const MSCGraph& graph, const DotOptions& options = {});

/// The prototxt of MSC's MSCGraphNode::ToPrototxt() (apache/tvm v0.20
/// src/contrib/msc/core/ir/graph.cc, printed by src/contrib/msc/core/printer/prototxt_printer.cc),
/// byte for byte except the order of keys inside layer_param, which MSC took from a hash map
/// (tvm::Map) and which is stable here: idx, input_<i>, output_<i>, param_<weight role>, attrs.
///   name: "main"
///   layer {
///     name: "conv2d"
///     type: "nn_conv2d"          (optype with every '.' replaced by '_')
///     top: "conv2d"
///     bottom: "inp_0"            (one per parent)
///     layer_param {
///       idx: 1
///       input_0: "inp_0:0(inp_0)<1,3,4,4|float32|NCHW>"
///       output_0: "conv2d:0<1,6,4,4|float32|NCHW>"
///       param_weight: "const(conv2d.weight)<6,3,1,1|float32|OIHW>"
///       strides: "1,1"
///     }
///   }
/// Two-space indent, no newline at the end (as MSC). Strings are escaped as tvm::support::StrEscape
/// does (\" \\ \t \r \n, other bytes outside ' '..'~' as \xHH, so UTF-8 becomes \xC3\xBC); keys
/// are printed raw. A key set twice (an attr named "idx") keeps its first position and the last
/// value, as tvm::Map::Set. Throws msc::Error for an input that does not resolve.
std::string GraphToPrototxt(const MSCGraph& graph);

/// Graphviz's `dot` executable: the first regular, executable "dot" in the directories of $PATH
/// (empty entries skipped); when PATH is unset or empty, /usr/bin/dot (where Debian's graphviz
/// puts it). Throws msc::Error "visualize: SVG needs Graphviz's `dot` (apt-get install graphviz);
/// write .dot instead (no executable `dot` on PATH=...)" when there is none.
std::string FindGraphvizDot();

/// Writes `content` to `path` atomically (temporary sibling ".<name>.msc-tmp-<pid>", renamed
/// over `path`); creates missing parent folders. Throws msc::Error naming `path` on failure,
/// leaving `path` untouched and no temporary file.
void WriteFileAtomic(const std::string& path, const std::string& content);

/// Renders `dot_text` with `dot_exe -Tsvg` and writes the SVG to `svg_path` atomically. dot is
/// started with posix_spawn (no shell: file names are never interpreted), DOT is fed on its
/// stdin, its stdout goes to the temporary file, its stderr is collected. Throws msc::Error
/// "visualize: `<dot_exe> -Tsvg` failed (exit status N): <dot's stderr>" (or "killed by signal
/// N", or "produced no SVG") and then leaves svg_path untouched.
void RenderSvg(const std::string& dot_text, const std::string& dot_exe,
               const std::string& svg_path);

/// GraphToDot / GraphToPrototxt / RenderSvg(GraphToDot) into `out_path`, atomically. For SVG,
/// finds dot (FindGraphvizDot) before anything is written.
void WriteVisualization(const MSCGraph& graph, const std::string& out_path, VizFormat format);

}  // namespace msc::ir
