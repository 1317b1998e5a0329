// msc_vk::Model: what one generated model.cc builds — arena, weights, named inputs/outputs and
// the Program with one kernel per node.
//
//   auto m = std::make_unique<msc_vk::Model>(ctx, /*arena_bytes=*/1605632, weights_path,
//       std::vector<msc_vk::WeightSpec>{{"conv1.weight", msc_vk::DType::kFloat32, {64, 3, 7, 7}}});
//   msc_vk::Tensor x = m->Input("input", msc_vk::DType::kFloat32, {1, 3, 224, 224}, /*offset=*/0);
//   msc_vk::Tensor y = m->Arena("conv1", msc_vk::DType::kFloat32, {1, 64, 112, 112}, 602112);
//   msc_vk::ops::Conv2d(m->program(), x, m->Weight("conv1.weight"), y, {...});
//   m->Output("output", y);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "buffer.h"
#include "context.h"
#include "program.h"
#include "weights.h"

namespace msc_vk {

class Model {
 public:
  // `arena_bytes`: size of the buffer holding all inputs/outputs/intermediates (offsets are
  // planned by the generator, 256-byte aligned). `weights`: every weight the graph uses.
  Model(Context& ctx, uint64_t arena_bytes, const std::string& weights_path,
        const std::vector<WeightSpec>& weights);

  Context& context() const { return ctx_; }
  Program& program() { return program_; }

  // A graph input stored at byte `offset` of the arena.
  Tensor Input(const std::string& name, DType dtype, Shape shape, uint64_t offset);
  // An intermediate (or output) tensor stored at byte `offset` of the arena.
  Tensor Arena(const std::string& name, DType dtype, Shape shape, uint64_t offset);
  // A weight declared in the constructor.
  const Tensor& Weight(const std::string& name) const { return weights_.Get(name); }
  // Declares `t` (an arena tensor) as graph output `name`.
  void Output(const std::string& name, const Tensor& t);

  const std::vector<Tensor>& inputs() const { return inputs_; }    // named as the graph inputs
  const std::vector<Tensor>& outputs() const { return outputs_; }  // named as the graph outputs

  // Host I/O by position in inputs()/outputs(); bytes must equal the tensor's byte size.
  void SetInput(size_t index, const void* data, size_t bytes) {
    program_.Write(inputs_.at(index), data, bytes);
  }
  void GetOutput(size_t index, void* data, size_t bytes) {
    program_.Read(outputs_.at(index), data, bytes);
  }
  // One inference: one vkQueueSubmit + fence wait.
  void Run() { program_.Run(); }

 private:
  Context& ctx_;
  Buffer arena_;
  Weights weights_;
  Program program_;
  std::vector<Tensor> inputs_, outputs_;
};

}  // namespace msc_vk
