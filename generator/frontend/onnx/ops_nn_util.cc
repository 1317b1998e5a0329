// Helpers shared by the neural-network converters (see ops_nn_util.h).
#include "generator/frontend/onnx/ops_nn_util.h"

#include <algorithm>

#include "generator/frontend/onnx/const_eval.h"
#include "generator/ir/attr_format.h"

namespace msc::frontend::onnx_import::nn {

int64_t Numel(const std::vector<int64_t>& shape) { return Prod(shape, 0, shape.size()); }

int64_t Prod(const std::vector<int64_t>& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t k = begin; k < end && k < shape.size(); ++k) n *= shape[k];
  return n;
}

std::vector<int64_t> StaticShape(const C& c, int k, const std::string& what) {
  const Value& v = c.In(k);
  for (int64_t d : v.shape)
    if (d < 0)
      c.Fail(what + " needs the static shape of input " + std::to_string(k) + " ('" + c.InName(k) +
             "'), which has symbolic dims; pass --input-shape");
  return v.shape;
}

OutSpec InSpec(const C& c, int k) {
  const Value& v = c.In(k);
  return {v.dtype, v.shape, v.prims};
}

OutSpec Reduced(const OutSpec& like, const std::vector<int64_t>& axes, bool keepdims) {
  OutSpec o{like.dtype, {}, {}};
  bool symbolic = false;
  for (size_t d = 0; d < like.shape.size(); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (reduced && !keepdims) continue;
    o.shape.push_back(reduced ? 1 : like.shape[d]);
    if (!like.prims.empty()) {
      o.prims.push_back(reduced ? "1" : like.prims[d]);
      symbolic = symbolic || o.shape.back() < 0;
    }
  }
  if (!symbolic) o.prims.clear();
  return o;
}

std::string Node(C& c, const std::string& optype, const std::vector<std::string>& inputs,
                 const ir::OrderedMap<std::string>& attrs, const OutSpec& out,
                 const std::vector<WeightSpec>& weights) {
  return c.Emit(optype, inputs, attrs, {out}, weights)[0];
}

std::string Reshape(C& c, const std::string& tensor, const std::vector<int64_t>& shape,
                    const std::vector<std::string>& prims) {
  const ir::MSCTensor& t = c.Info(tensor);
  if (t.shape == shape && t.prims == prims) return tensor;
  if (std::count(shape.begin(), shape.end(), -1) > 1)
    c.Fail("a reshape to " + weights::FormatShape(shape) +
           " would leave more than one symbolic dim to infer");
  const OutSpec out{t.dtype, shape, prims};
  return Node(c, "reshape", {tensor}, Attrs({{"shape", ir::AttrInts(shape)}}), out);
}

std::vector<std::string> PrimsOf(const std::vector<int64_t>& dims, const std::string& sym) {
  if (std::find(dims.begin(), dims.end(), -1) == dims.end()) return {};
  std::vector<std::string> prims;
  for (int64_t d : dims) prims.push_back(d < 0 ? sym : std::to_string(d));
  return prims;
}

std::vector<int64_t> BatchSymbolicShape(const C& c, int k, const std::string& what,
                                        std::string* batch_prim) {
  const Value& v = c.In(k);
  batch_prim->clear();
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (v.shape[d] >= 0) continue;
    if (d != 0)
      c.Fail(what + " needs static dims of input " + std::to_string(k) + " ('" + c.InName(k) +
             "') except the batch; dim " + std::to_string(d) + " is symbolic");
    *batch_prim = v.prims.at(0);
  }
  return v.shape;
}

OutSpec Coerce2D(const C& c, const OutSpec& spec, size_t axis) {
  OutSpec o{spec.dtype, {}, {}};
  bool symbolic = false;
  for (auto [b, e] : {std::pair<size_t, size_t>{0, axis}, {axis, spec.shape.size()}}) {
    int64_t n = 1;
    std::string sym;
    for (size_t d = b; d < e; ++d) {
      if (spec.shape[d] >= 0) {
        n *= spec.shape[d];
      } else if (sym.empty()) {
        sym = spec.prims.at(d);
      } else {
        c.Fail("coercing to 2-D at axis " + std::to_string(axis) +
               " would merge two symbolic dims");
      }
    }
    if (!sym.empty() && n != 1)
      c.Fail("coercing to 2-D at axis " + std::to_string(axis) +
             " would multiply the symbolic dim '" + sym + "' by " + std::to_string(n));
    o.shape.push_back(sym.empty() ? n : -1);
    o.prims.push_back(sym.empty() ? std::to_string(n) : sym);
    symbolic = symbolic || !sym.empty();
  }
  if (!symbolic) o.prims.clear();
  return o;
}

std::string Permute(C& c, const std::string& tensor, const std::vector<int64_t>& axes) {
  const ir::MSCTensor& t = c.Info(tensor);
  OutSpec o{t.dtype, {}, {}};
  for (int64_t a : axes) {
    o.shape.push_back(t.shape.at(static_cast<size_t>(a)));
    if (!t.prims.empty()) o.prims.push_back(t.prims.at(static_cast<size_t>(a)));
  }
  return Node(c, "permute_dims", {tensor}, Attrs({{"axes", ir::AttrInts(axes)}}), o);
}

weights::Tensor Reshaped(weights::Tensor t, const std::vector<int64_t>& shape) {
  t.shape = shape;
  return t;
}

weights::Tensor Transposed2D(const weights::Tensor& t) {
  const int64_t rows = t.shape.at(0), cols = t.shape.at(1);
  const int64_t item = weights::DtypeItemSize(t.dtype);
  weights::Tensor r{t.dtype, {cols, rows}, std::vector<uint8_t>(t.data.size())};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      std::copy_n(t.data.begin() + (i * cols + j) * item, item,
                  r.data.begin() + (j * rows + i) * item);
  return r;
}

std::string InputAs(C& c, int k, const std::vector<int64_t>& shape) {
  if (c.IsConst(k)) {
    if (c.In(k).shape == shape) return c.T(k);
    return c.ConstTensor(Reshaped(c.Const(k), shape), c.InName(k));
  }
  return Reshape(c, c.T(k), shape);
}

std::string AutoPad(const C& c) {
  const std::string a = c.attrs.Str("auto_pad", "NOTSET");
  if (a != "NOTSET" && a != "SAME_UPPER" && a != "SAME_LOWER" && a != "VALID")
    c.Fail("auto_pad '" + a + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  return a;
}

Window ReadWindow(const C& c, const std::vector<int64_t>& kernel,
                  const std::vector<int64_t>& in_spatial, bool has_dilations) {
  const size_t nd = kernel.size();
  Window w;
  w.kernel = kernel;
  auto read = [&](const std::string& name, size_t len, int64_t def, int64_t min) {
    std::vector<int64_t> v = c.attrs.Ints(name, std::vector<int64_t>(len, def));
    if (v.size() != len)
      c.Fail(name + " has " + std::to_string(v.size()) + " values, expected " +
             std::to_string(len) + " for " + std::to_string(nd) + " spatial dims");
    for (int64_t x : v)
      if (x < min)
        c.Fail(name + " value " + std::to_string(x) + " is below " + std::to_string(min));
    return v;
  };
  for (int64_t k : kernel)
    if (k < 1) c.Fail("kernel size " + std::to_string(k) + " is below 1");
  w.strides = read("strides", nd, 1, 1);
  w.dilations = has_dilations ? read("dilations", nd, 1, 1) : std::vector<int64_t>(nd, 1);
  if (!has_dilations && c.attrs.Has("dilations"))
    c.Fail("attribute 'dilations' is not part of this op version");
  w.pads = read("pads", 2 * nd, 0, 0);
  const std::string auto_pad = AutoPad(c);
  if (auto_pad == "VALID") {
    w.pads.assign(2 * nd, 0);
  } else if (auto_pad != "NOTSET") {
    for (size_t i = 0; i < nd; ++i) {
      const int64_t in = in_spatial.at(i);
      if (in < 0) c.Fail("auto_pad " + auto_pad + " needs static spatial dims");
      const int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>(
          0, (out - 1) * w.strides[i] + (kernel[i] - 1) * w.dilations[i] + 1 - in);
      const int64_t small = total / 2, large = total - small;
      w.pads[i] = auto_pad == "SAME_UPPER" ? small : large;
      w.pads[nd + i] = auto_pad == "SAME_UPPER" ? large : small;
    }
  }
  return w;
}

std::string PaddingAttr(const std::vector<int64_t>& pads) { return ir::AttrInts(pads); }

int64_t WindowOut(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, bool ceil) {
  int64_t num = in + pb + pe - (k - 1) * d - 1;
  if (ceil) num += s - 1;
  // floor division (num may be negative for a window larger than the padded input)
  int64_t q = num / s;
  if (num % s != 0 && num < 0) --q;
  return q + 1;
}

}  // namespace msc::frontend::onnx_import::nn
