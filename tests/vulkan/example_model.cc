#include "example_model.h"

#include <algorithm>

#include "reference.h"

std::unique_ptr<msc_vk::Model> BuildExampleModel(msc_vk::Context& ctx,
                                                 const std::string& weights_path) {
  using msc_vk::DType;
  namespace ops = msc_vk::ops;
  auto m = std::make_unique<msc_vk::Model>(ctx, /*arena_bytes=*/20224, weights_path,
                                           std::vector<msc_vk::WeightSpec>{
                                               {"conv1.weight", DType::kFloat32, {8, 3, 3, 3}},
                                               {"conv1.bias", DType::kFloat32, {8}},
                                               {"dw.weight", DType::kFloat32, {8, 1, 3, 3}},
                                               {"fc.weight", DType::kFloat32, {10, 8}},
                                               {"fc.bias", DType::kFloat32, {10}},
                                           });
  msc_vk::Program& prog = m->program();
  // Arena offsets (bytes, 256-aligned) as the generator plans them.
  const msc_vk::Tensor input = m->Input("input", DType::kFloat32, {1, 3, 16, 16}, 0);
  const msc_vk::Tensor conv1 = m->Arena("conv1", DType::kFloat32, {1, 8, 16, 16}, 3072);
  const msc_vk::Tensor pool = m->Arena("pool", DType::kFloat32, {1, 8, 8, 8}, 11264);
  const msc_vk::Tensor dw = m->Arena("dw", DType::kFloat32, {1, 8, 8, 8}, 13312);
  const msc_vk::Tensor sum = m->Arena("sum", DType::kFloat32, {1, 8, 8, 8}, 15360);
  const msc_vk::Tensor relu = m->Arena("relu", DType::kFloat32, {1, 8, 8, 8}, 17408);
  const msc_vk::Tensor gap = m->Arena("gap", DType::kFloat32, {1, 8, 1, 1}, 19456);
  const msc_vk::Tensor flat = m->Arena("flat", DType::kFloat32, {1, 8}, 19456);
  const msc_vk::Tensor fc = m->Arena("fc", DType::kFloat32, {1, 10}, 19712);
  const msc_vk::Tensor probs = m->Arena("probs", DType::kFloat32, {1, 10}, 19968);

  ops::Conv2dBias(prog, input, m->Weight("conv1.weight"), m->Weight("conv1.bias"), conv1,
                  ops::Conv2dAttrs{/*strides=*/{1, 1}, /*padding=*/{1, 1, 1, 1},
                                   /*dilation=*/{1, 1}, /*groups=*/1, ops::Activation::Relu()});
  ops::MaxPool2d(prog, conv1, pool, ops::Pool2dAttrs{/*pool_size=*/{2, 2}, /*strides=*/{2, 2}});
  ops::Conv2d(prog, pool, m->Weight("dw.weight"), dw,
              ops::Conv2dAttrs{/*strides=*/{1, 1}, /*padding=*/{1, 1, 1, 1}, /*dilation=*/{1, 1},
                               /*groups=*/8});
  ops::Add(prog, dw, pool, sum);
  ops::Relu(prog, sum, relu);
  ops::AdaptiveAvgPool2d(prog, relu, gap);
  ops::Reshape(prog, gap, flat);
  ops::LinearBias(prog, flat, m->Weight("fc.weight"), m->Weight("fc.bias"), fc);
  ops::Softmax(prog, fc, probs, /*axis=*/-1);
  m->Output("probs", probs);
  return m;
}

std::vector<float> ExampleModelReference(const std::vector<float>& input,
                                         const std::map<std::string, std::vector<float>>& w) {
  msc_vk::Shape s;
  auto conv1 = ref::Conv2d(input, {1, 3, 16, 16}, w.at("conv1.weight"), {8, 3, 3, 3},
                           w.at("conv1.bias"), {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, &s);
  for (float& v : conv1) v = std::max(v, 0.0f);
  auto pool = ref::Pool2d(conv1, s, 0, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false, true, &s);
  auto dw = ref::Conv2d(pool, s, w.at("dw.weight"), {8, 1, 3, 3}, {}, {1, 1}, {1, 1, 1, 1}, {1, 1},
                        8, &s);
  for (size_t i = 0; i < dw.size(); ++i) dw[i] = std::max(dw[i] + pool[i], 0.0f);
  auto gap = ref::AdaptiveAvgPool2d(dw, s, 1, 1);
  auto fc = ref::Gemm(gap, w.at("fc.weight"), w.at("fc.bias"), 1, 1, 10, 8, true, 0, 0);
  return ref::Softmax(fc, 1, 10, 1);
}
