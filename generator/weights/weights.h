// Weights: named dense tensors read from / written to safetensors and TVM param-dict files, and
// bound to the weight tensors an MSCGraph names.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "generator/ir/graph.h"
#include "generator/weights/bytes.h"

namespace msc::weights {

/// One dense, C-contiguous, little-endian tensor. dtype uses MSC's names ("float32", "float16",
/// "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"); 0-d tensors have an
/// empty shape and one element. data.size() == numel * DtypeItemSize(dtype); data is owned, or a
/// view into a memory-mapped file (see bytes.h: ReadSafetensors maps its file). data holds the
/// file's little-endian bytes as is on any host (the readers decode their own size fields
/// byte by byte); whoever interprets the values on a big-endian host must swap them.
struct Tensor {
  std::string dtype;
  std::vector<int64_t> shape;
  Bytes data;
};

/// Same dtype, shape and bytes.
bool operator==(const Tensor& a, const Tensor& b);
inline bool operator!=(const Tensor& a, const Tensor& b) { return !(a == b); }

/// Tensors keyed by name; std::map keeps output deterministic (sorted keys).
using TensorMap = std::map<std::string, Tensor>;

/// Bytes per element of a supported dtype (the ten above; "bool" = 1), 0 for anything else.
int64_t DtypeItemSize(const std::string& dtype);
/// "[6,3,1,1]"; "[]" for 0-d.
std::string FormatShape(const std::vector<int64_t>& shape);

/// Reads a safetensors file (https://github.com/huggingface/safetensors, README "Format" and
/// safetensors/src/tensor.rs: u64 LE header size N, N bytes of UTF-8 JSON header
/// {"__metadata__": {str: str} (optional), name: {"dtype", "shape", "data_offsets": [begin, end]}},
/// then the byte buffer; offsets are relative to the buffer). Validated as strictly as the
/// reference reader (tensor.rs Metadata::validate): header starts with '{' and is at most
/// 100,000,000 bytes; dtype one of BOOL U8 I8 I16 I32 I64 F16 BF16 F32 F64; shape entries
/// non-negative integers whose product and byte size do not overflow; end - begin ==
/// numel * itemsize; the tensors sorted by offset cover the buffer contiguously and exactly (no
/// gap, no overlap, no trailing bytes). Every size is checked against the file size before anything
/// is allocated. Throws msc::Error "<path>: safetensors: ..." naming the tensor where there is one.
TensorMap ReadSafetensors(const std::string& path);
/// As above, and stores the "__metadata__" entries in *metadata (cleared first) if not null.
TensorMap ReadSafetensors(const std::string& path, std::map<std::string, std::string>* metadata);
/// Writes safetensors byte for byte as the reference writer does (safetensors tensor.rs `prepare`
/// / `serialize_to_file`, i.e. Python's safetensors save_file): compact JSON header,
/// "__metadata__" first when metadata is non-empty (its keys sorted), then the tensors in buffer
/// order, which is by dtype alignment descending (I64 F64 F32 I32 BF16 F16 I16 I8 U8 BOOL) then by
/// name, so every tensor starts at an offset that is a multiple of its item size; offsets
/// contiguous; header padded with spaces to a multiple of 8. With a single dtype the keys are
/// simply sorted by name. The file is written to a temporary file beside `path`, closed and
/// renamed into place. Throws msc::Error "<path>: ..." for an unsupported dtype, data.size() !=
/// numel * itemsize, a negative dim, a tensor named "__metadata__", non-UTF-8 names, or I/O errors.
void WriteSafetensors(const std::string& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata = {});

/// Reads TVM's param dict binary, as written by tvm.runtime.save_param_dict (MSC saved weights as
/// "<graph>_params.bin"). Format (tvm src/runtime/file_utils.cc SaveParams / ndarray.h
/// SaveDLTensor): u64 magic 0xF7E58D4F05049CB7, u64 reserved, u64 count + names (u64 len + bytes),
/// u64 count + arrays (u64 magic 0xDD5E40F096B4A13F, u64 reserved, DLDevice (i32,i32), i32 ndim,
/// DLDataType (u8 code, u8 bits, u16 lanes), i64 shape[ndim], i64 nbytes, data).
/// Checked like TVM's LoadParams / LoadDLTensor: both magics, device kDLCPU, names count ==
/// arrays count, nbytes == numel * ((bits + 7) / 8); additionally lanes must be 1, dims
/// non-negative, names unique and no bytes may follow the last array. DLDataType (code, bits):
/// int (0, 8|16|32|64), uint (1, 8) = uint8, bool = (1, 1) (TVM's Bool, 1 byte per element) or
/// DLPack's kDLBool (6, 8), float (2, 16|32|64), bfloat (4, 16). Throws msc::Error
/// "<path>: TVM param dict: ..." naming the byte offset (and array) on truncation, bad magic,
/// unsupported dtype or inconsistent sizes; sizes are checked against the file before allocating.
TensorMap ReadParamDict(const std::string& path);

/// Reads weights by content: a TVM param dict if the file starts with its u64 magic, safetensors if
/// byte 8 is '{' (never by file extension). Throws msc::Error naming the file otherwise.
TensorMap ReadWeights(const std::string& path);

/// For every weight tensor the graph uses (node.weights of every node in node order, each node's
/// weights in stored order), finds it in `available` by tensor name, else by alias, and checks
/// dtype and shape (exactly: a 0-d weight does not match shape [1]). A weight tensor name seen
/// before is bound once (its later declarations must agree in dtype and shape). A node with a
/// non-empty shared_ref whose weight has a new name reuses the tensor bound for the same role of
/// the node it names (MSC's shared weights; WeightGraph skips such nodes); if that node or role
/// does not exist the weight is looked up like any other. Graph weights with dynamic (-1) dims or
/// unsupported dtypes are problems too: weights are static. Tensors in `available` that the graph
/// does not use are ignored. Returns the tensors keyed by the graph's weight tensor name.
/// Reports ALL problems in one msc::Error, one line each:
///   "<weights_source>: 3 weight problems:\n"
///   "  node 'conv2d' role 'weight' tensor 'const' (alias 'conv2d.weight'): shape [6,3,1,1]
///      expected, file has [6,3,3,3]\n"
///   "  node 'conv2d' role 'bias' tensor 'const_1' (alias 'conv2d.bias'): not found in the
///      weights file (by name or alias)\n" ...
/// ("1 weight problem:" for one; "(alias ...)" is left out when the alias is empty; a tensor
/// found by its alias adds "(file tensor '<alias>')" to a mismatch).
TensorMap BindGraphWeights(const ir::MSCGraph& graph, const TensorMap& available,
                           const std::string& weights_source);

}  // namespace msc::weights
