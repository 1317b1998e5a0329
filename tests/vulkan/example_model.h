// A hand-written model in the style the generator emits (see runtime/vulkan/README.md):
//   input [1, 3, 16, 16] -> msc.conv2d_bias 3->8 3x3 pad 1 + relu (fused) -> nn.max_pool2d 2x2
//   -> nn.conv2d depthwise 3x3 pad 1 -> add (residual) -> nn.relu -> nn.adaptive_avg_pool2d 1x1
//   -> reshape [1, 8] (aliased, no kernel) -> msc.linear_bias 8->10 -> nn.softmax -> "probs" [1,
//   10]
// Weights: conv1.weight [8,3,3,3], conv1.bias [8], dw.weight [8,1,3,3], fc.weight [10,8], fc.bias
// [10].
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "msc_vk.h"

std::unique_ptr<msc_vk::Model> BuildExampleModel(msc_vk::Context& ctx,
                                                 const std::string& weights_path);

// CPU reference of the same graph; weights by name. Returns probs [10].
std::vector<float> ExampleModelReference(const std::vector<float>& input,
                                         const std::map<std::string, std::vector<float>>& weights);
