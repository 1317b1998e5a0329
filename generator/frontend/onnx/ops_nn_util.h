// Helpers shared by the neural-network converters (ops_nn.cc, ops_nn_norm.cc, ops_nn_resize.cc):
// emitting single-output MSC nodes whose shapes the converter computes itself, reshaping
// tensors and import-time constants, and reading ONNX's convolution / pooling geometry
// (kernel_shape, strides, dilations, pads, auto_pad) into explicit per-side padding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generator/frontend/onnx/convert.h"

namespace msc::frontend::onnx_import {

void RegisterNnNormOps(ConverterMap& m);
void RegisterNnResizeOps(ConverterMap& m);

namespace nn {

using C = ConvertContext;

int64_t Numel(const std::vector<int64_t>& shape);
/// Product of shape[begin, end).
int64_t Prod(const std::vector<int64_t>& shape, size_t begin, size_t end);

/// Static shape of input k; Fail()s naming `what` when a dim is symbolic (-1).
std::vector<int64_t> StaticShape(const C& c, int k, const std::string& what);

/// The OutSpec of input k (dtype, shape, prims).
OutSpec InSpec(const C& c, int k);
/// `like` with dims `axes` (non-negative) set to 1 (keepdims) or removed.
OutSpec Reduced(const OutSpec& like, const std::vector<int64_t>& axes, bool keepdims);

/// One MSC node with one output `out`; returns the output tensor.
std::string Node(C& c, const std::string& optype, const std::vector<std::string>& inputs,
                 const ir::OrderedMap<std::string>& attrs, const OutSpec& out,
                 const std::vector<WeightSpec>& weights = {});
/// `reshape` of `tensor` to `shape` (nothing when it already has that shape and prims). A
/// symbolic dim is -1 in `shape` (MSC's reshape attr infers it; at most one) and named in
/// `prims` (one entry per dim, or none when static).
std::string Reshape(C& c, const std::string& tensor, const std::vector<int64_t>& shape,
                    const std::vector<std::string>& prims = {});
/// Prims for `dims` whose symbolic dims (-1) all stand for the symbol `sym`; {} when static.
std::vector<std::string> PrimsOf(const std::vector<int64_t>& dims, const std::string& sym);
/// Static shape of input k except possibly dim 0 (a symbolic batch, -1); Fail()s naming `what`
/// for other symbolic dims. *batch_prim gets the batch's symbol ("" when static).
std::vector<int64_t> BatchSymbolicShape(const C& c, int k, const std::string& what,
                                        std::string* batch_prim);
/// `spec` with dims [0, axis) and [axis, rank) each merged into one (ONNX's 2-D coercion of
/// Flatten / Softmax-1 / Hardmax-1): the product of static dims; a symbolic dim may only be
/// merged with dims of size 1 (the merged dim is that symbol). Fail()s otherwise.
OutSpec Coerce2D(const C& c, const OutSpec& spec, size_t axis);
/// `permute_dims` of `tensor` by `axes`.
std::string Permute(C& c, const std::string& tensor, const std::vector<int64_t>& axes);

/// `t` with a new shape of the same element count (the bytes are C-contiguous already).
weights::Tensor Reshaped(weights::Tensor t, const std::vector<int64_t>& shape);
/// The transpose of a 2-D tensor, byte-wise (any dtype).
weights::Tensor Transposed2D(const weights::Tensor& t);

/// Input k as a tensor of shape `shape`: a constant is reshaped at import and becomes a
/// `constant` node aliased by its ONNX name; anything else gets a `reshape` node.
std::string InputAs(C& c, int k, const std::vector<int64_t>& shape);

/// The ONNX auto_pad attribute ("NOTSET" when absent); Fail()s for other values.
std::string AutoPad(const C& c);

/// Convolution / pooling geometry of `nd` spatial dims, as ONNX gives it.
struct Window {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> pads;  ///< [begin_0, begin_1, ..., end_0, end_1, ...] (ONNX order).
};

/// Reads strides / dilations / pads (length-checked, defaults 1 / 1 / 0) for `kernel`, and
/// replaces pads by the SAME_UPPER / SAME_LOWER / VALID padding when auto_pad says so
/// (ONNX Conv / pool spec: out = ceil(in / stride), total = max(0, (out - 1) * stride +
/// (k - 1) * dilation + 1 - in), the odd element at the end for SAME_UPPER, at the start for
/// SAME_LOWER). `in` is the static spatial shape (needed only for SAME_*).
Window ReadWindow(const C& c, const std::vector<int64_t>& kernel,
                  const std::vector<int64_t>& in_spatial, bool has_dilations);

/// MSC's padding attr string of relax conv / pool ops: 2-D "top,left,bottom,right"; 1-D
/// "left,right" (ONNX's pads order is the same).
std::string PaddingAttr(const std::vector<int64_t>& pads);

/// Output size of a strided window over `in` with padding, as relax infers it for conv / pool
/// (src/relax/op/nn/pooling.cc, convolution.cc): floor or (ceil_mode) ceil of
/// (in + pb + pe - ((k - 1) * d + 1)) / s, plus 1.
int64_t WindowOut(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, bool ceil);

/// Conv on 5-D NCDHW data with a constant weight, as 2-D convolutions summed over the kernel's
/// depth taps (ops_nn_conv3d.cc). Fail()s for a run-time weight or bias, or a symbolic shape.
void Conv3dAsConv2d(C& c);
/// 3-D MaxPool / AveragePool on static NCDHW data as two 2-D pools (ops_nn_conv3d.cc).
void Pool3dAs2d(C& c, bool is_max);

}  // namespace nn
}  // namespace msc::frontend::onnx_import
