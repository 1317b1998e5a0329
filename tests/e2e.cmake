# End to end: each example exported from PyTorch, generated for a backend, and the generated
# project's own golden test run (examples/run_example.sh). Vulkan projects are configured, built
# and run on the machine's Vulkan device (lavapipe in CI) under the Khronos validation layer with
# synchronization validation: any validation message fails the run. Outputs go under the build folder.
# numpy: the backend written from docs/ alone (numpy only).
# The larger torchvision models (examples/models: vit_b_16, swin_t, ...) are run by hand, not here.
set(MSC_E2E_EXAMPLES conv_relu fashion_mnist_mlp resnet18 hostile mobilenet_v2 text_transformer gpt2_block)

foreach(backend torch vulkan numpy)
  foreach(example ${MSC_E2E_EXAMPLES})
    add_test(NAME e2e_${backend}_${example}
             COMMAND bash ${CMAKE_SOURCE_DIR}/examples/run_example.sh ${example} $<TARGET_FILE:msc-codegen>
                     ${CMAKE_BINARY_DIR}/e2e/${backend})
    set_tests_properties(e2e_${backend}_${example} PROPERTIES
      ENVIRONMENT "MSC_PYTHON=${MSC_PYTHON};MSC_BACKENDS=${backend};MSC_VK_VALIDATION=1" TIMEOUT 1500)
  endforeach()
endforeach()
# squeezenet1_0 (examples/models): its fire modules' concats run in place on Vulkan (memory_plan
# concat_in_place: the expand convs write straight into their slices of the concat's output).
add_test(NAME e2e_vulkan_squeezenet1_0
         COMMAND bash ${CMAKE_SOURCE_DIR}/examples/run_example.sh squeezenet1_0 $<TARGET_FILE:msc-codegen>
                 ${CMAKE_BINARY_DIR}/e2e/vulkan)
set_tests_properties(e2e_vulkan_squeezenet1_0 PROPERTIES
  ENVIRONMENT "MSC_PYTHON=${MSC_PYTHON};MSC_BACKENDS=vulkan;MSC_VK_VALIDATION=1" TIMEOUT 1500)
# --precision fp16 on Vulkan: resnet18's conv / linear weights as float16 (Winograd transforming
# float16 weights, im2col with the zero-padded 7x7 stem and the strided convs, the classifier
# GEMM), golden check at the fp16 tolerance under the validation layer. mobilenet_v2's 1x1 GEMM
# and depthwise kernels read float16 weights in tests/vulkan (test_conv_algos).
add_test(NAME e2e_vulkan_resnet18_fp16
         COMMAND bash ${CMAKE_SOURCE_DIR}/examples/run_example.sh resnet18 $<TARGET_FILE:msc-codegen>
                 ${CMAKE_BINARY_DIR}/e2e/vulkan_fp16)
set_tests_properties(e2e_vulkan_resnet18_fp16 PROPERTIES
  ENVIRONMENT "MSC_PYTHON=${MSC_PYTHON};MSC_BACKENDS=vulkan;MSC_PRECISION=fp16;MSC_VK_VALIDATION=1" TIMEOUT 1500)
