#include "model.h"

#include "error.h"

namespace msc_vk {

Model::Model(Context& ctx, uint64_t arena_bytes, const std::string& weights_path,
             const std::vector<WeightSpec>& weights)
    : ctx_(ctx),
      arena_(ctx, (arena_bytes + 255) / 256 * 256, MemoryKind::kDevice,
             "arena"),  // whole vec4 texels
      weights_(ctx, weights_path, weights),
      program_(ctx) {
  for (const WeightSpec& w : weights) program_.MarkConstant(weights_.Get(w.name));
}

Tensor Model::Input(const std::string& name, DType dtype, Shape shape, uint64_t offset) {
  Tensor t = MakeTensor(arena_, name, dtype, std::move(shape), offset);
  program_.AddInput(t);
  inputs_.push_back(t);
  return t;
}

Tensor Model::Arena(const std::string& name, DType dtype, Shape shape, uint64_t offset) {
  return MakeTensor(arena_, name, dtype, std::move(shape), offset);
}

void Model::Output(const std::string& name, const Tensor& t) {
  // Usually an arena tensor; a graph output may also be a weight (an ONNX model whose output is a
  // Constant): it is staged from the weights buffer like any other.
  if (!t.buffer) throw Error("output '" + name + "' (" + t.Describe() + ") has no buffer");
  Tensor out = t;
  out.name = name;
  program_.AddOutput(out);
  outputs_.push_back(out);
}

}  // namespace msc_vk
