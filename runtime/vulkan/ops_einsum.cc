// einsum: the subscripts are parsed here (numpy.einsum rules; TVM src/topi/einsum.cc for the
// implicit output order) into per-label extents and operand strides, which become the
// specialization constants of shaders/einsum.comp.
#include <algorithm>
#include <cctype>
#include <map>

#include "ops_internal.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::Fail;
using detail::U32;

constexpr size_t kMaxLabels = 8;  // shaders/einsum.comp LABEL(0..7)
constexpr size_t kMaxOperands = 3;

// A parsed term: labels in order; -1 marks the position of "...".
struct Term {
  std::vector<int> labels;  // letters as their char code, kEllipsis for "..."
  bool has_ellipsis = false;
};
constexpr int kEllipsis = -1;

Term ParseTerm(const std::string& text, const std::string& subscripts, const Tensor& y) {
  Term t;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      if (text.compare(i, 3, "...") != 0 || t.has_ellipsis) {
        Fail("einsum", y, "subscripts '" + subscripts + "': invalid or repeated ellipsis");
      }
      t.has_ellipsis = true;
      t.labels.push_back(kEllipsis);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      t.labels.push_back(static_cast<unsigned char>(c));
    } else {
      Fail("einsum", y,
           "subscripts '" + subscripts + "': invalid character '" + std::string(1, c) + "'");
    }
  }
  return t;
}

}  // namespace

void Einsum(Program& p, const std::string& subscripts, const std::vector<Tensor>& operands,
            const Tensor& y) {
  const char* op = "einsum";
  const std::string& eq = subscripts;
  if (operands.empty() || operands.size() > kMaxOperands) {
    Fail(op, y,
         std::to_string(operands.size()) + " operands; the Vulkan einsum takes 1 to " +
             std::to_string(kMaxOperands));
  }
  detail::CheckFloat32(op, y, {&y});
  for (const Tensor& t : operands) detail::CheckFloat32(op, y, {&t});

  // Split "in0,in1->out" (spaces ignored).
  std::string s;
  for (char c : eq) {
    if (c != ' ') s.push_back(c);
  }
  const size_t arrow = s.find("->");
  if (arrow != std::string::npos && s.find("->", arrow + 2) != std::string::npos)
    Fail(op, y, "subscripts '" + eq + "' have more than one '->'");
  const std::string lhs = s.substr(0, arrow);
  std::vector<Term> inputs;
  std::vector<std::string> texts;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    texts.push_back(lhs.substr(start, comma - start));
    inputs.push_back(ParseTerm(texts.back(), eq, y));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (inputs.size() != operands.size()) {
    Fail(op, y,
         "subscripts '" + eq + "' name " + std::to_string(inputs.size()) + " operands, got " +
             std::to_string(operands.size()));
  }

  // Ellipsis dims per operand (right-aligned), label extents with size-1 broadcasting.
  size_t ell = 0;
  std::vector<size_t> ell_of(operands.size(), 0);
  for (size_t k = 0; k < operands.size(); ++k) {
    const size_t letters = inputs[k].labels.size() - (inputs[k].has_ellipsis ? 1 : 0);
    const size_t rank = operands[k].shape.size();
    if (rank < letters || (!inputs[k].has_ellipsis && rank != letters)) {
      Fail(op, y,
           "operand " + std::to_string(k) + " " + operands[k].Describe() + " does not fit term '" +
               texts[k] + "' of '" + eq + "'");
    }
    ell_of[k] = rank - letters;
    ell = std::max(ell, ell_of[k]);
  }
  // Label ids: ellipsis dims are 0 .. ell-1, letters follow (by char code).
  std::map<int, int> count;  // letter -> occurrences over all inputs
  for (const Term& t : inputs) {
    for (int l : t.labels) {
      if (l != kEllipsis) ++count[l];
    }
  }
  std::map<int, size_t> letter_id;
  for (const auto& kv : count) {
    const size_t id = ell + letter_id.size();
    letter_id[kv.first] = id;
  }
  const size_t nlabels = ell + letter_id.size();
  std::vector<int64_t> extent(nlabels, 1);
  // Per operand: the label id of each dim.
  std::vector<std::vector<size_t>> dim_label(operands.size());
  for (size_t k = 0; k < operands.size(); ++k) {
    for (int l : inputs[k].labels) {
      if (l == kEllipsis) {
        for (size_t e = ell - ell_of[k]; e < ell; ++e) dim_label[k].push_back(e);
      } else {
        dim_label[k].push_back(letter_id[l]);
      }
    }
    for (size_t d = 0; d < dim_label[k].size(); ++d) {
      const int64_t n = operands[k].shape[d];
      int64_t& ext = extent[dim_label[k][d]];
      if (n != ext && n != 1 && ext != 1) {
        Fail(op, y,
             "operand " + std::to_string(k) + " " + operands[k].Describe() + ": dim " +
                 std::to_string(d) + " has extent " + std::to_string(n) + ", elsewhere " +
                 std::to_string(ext) + " for the same label of '" + eq + "'");
      }
      if (ext == 1) ext = n;
    }
  }

  // Output labels.
  std::vector<size_t> out;
  if (arrow == std::string::npos) {
    for (size_t e = 0; e < ell; ++e) out.push_back(e);
    for (const auto& kv : count) {
      if (kv.second == 1) out.push_back(letter_id[kv.first]);
    }
  } else {
    const Term t = ParseTerm(s.substr(arrow + 2), eq, y);
    for (int l : t.labels) {
      if (l == kEllipsis) {
        for (size_t e = 0; e < ell; ++e) out.push_back(e);
        continue;
      }
      if (!count.count(l))
        Fail(op, y,
             "output label '" + std::string(1, static_cast<char>(l)) + "' of '" + eq +
                 "' is not in any input");
      const size_t id = letter_id[l];
      if (std::find(out.begin(), out.end(), id) != out.end())
        Fail(op, y,
             "output label '" + std::string(1, static_cast<char>(l)) + "' of '" + eq +
                 "' is repeated");
      out.push_back(id);
    }
  }
  Shape expect;
  for (size_t id : out) expect.push_back(extent[id]);
  if (y.shape != expect)
    Fail(op, y,
         "output " + y.Describe() + " does not match " + ShapeToString(expect) + " from '" + eq +
             "'");
  // Kernel order: output labels, then the summed ones (in label order).
  std::vector<size_t> order = out;
  for (size_t id = 0; id < nlabels; ++id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) order.push_back(id);
  }
  if (order.size() > kMaxLabels) {
    Fail(op, y,
         "'" + eq + "' uses " + std::to_string(order.size()) +
             " distinct labels (ellipsis dims included); the Vulkan einsum handles " +
             std::to_string(kMaxLabels));
  }
  // Strides: per kernel label position, per operand (sum over repeated occurrences).
  std::vector<std::array<int64_t, kMaxOperands>> stride(kMaxLabels, {0, 0, 0});
  std::vector<size_t> pos(nlabels);
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  for (size_t k = 0; k < operands.size(); ++k) {
    const std::vector<int64_t> st = detail::ContiguousStrides(operands[k].shape);
    for (size_t d = 0; d < dim_label[k].size(); ++d) {
      const size_t id = dim_label[k][d];
      if (operands[k].shape[d] == 1 && extent[id] != 1) continue;  // broadcast
      stride[pos[id]][k] += st[d];
    }
  }
  int64_t rcount = 1;
  for (size_t i = out.size(); i < order.size(); ++i) rcount *= extent[order[i]];
  if (y.numel() == 0) return;
  for (const Tensor& t : operands) {
    if (t.numel() == 0) Fail(op, y, "operand " + t.Describe() + " is empty");
  }
  SpecConstants spec = {static_cast<uint32_t>(operands.size()), static_cast<uint32_t>(out.size()),
                        static_cast<uint32_t>(order.size())};
  for (size_t i = 0; i < kMaxLabels; ++i) {
    spec.push_back(i < order.size() ? U32(extent[order[i]], op, y, "extent") : 1u);
    for (size_t k = 0; k < kMaxOperands; ++k) spec.push_back(U32(stride[i][k], op, y, "stride"));
  }
  struct {
    uint32_t total, rcount;
  } push{U32(y.numel(), op, y, "output elements"), U32(rcount, op, y, "summed elements")};
  std::vector<Binding> bindings;
  for (size_t k = 0; k < kMaxOperands; ++k)
    bindings.push_back(InTexel(operands[k < operands.size() ? k : 0]));
  bindings.push_back(Out(y));
  detail::Launch(p, "einsum", std::move(bindings), push, spec, Grid1D(p.context(), y.numel(), 64),
                 y);
}

}  // namespace ops
}  // namespace msc_vk
