# End to end (tests/e2e/run_e2e.py): each example exported from PyTorch once (e2e_export_<example>,
# checked against the reference interpreter), generated for every backend the suite finds
# (tests/common/backends.py: templates/<name>/backend.yaml with a `test` section) and each
# generated project's own golden test run: e2e_<example> runs the backends that build nothing
# (test.merge false, one project per example); e2e_merged runs every example on the others
# (vulkan) as ONE merged project, one build, under the validation layer (test.env). Outputs go
# under build/e2e. squeezenet1_0 (examples/models): its fire modules' concats run in place on
# Vulkan (memory_plan concat_in_place). e2e_resnet18_fp16: `--precision fp16` on every backend
# that offers it. The larger torchvision models (vit_b_16, swin_t, ...) are run by hand, not here.
set(MSC_E2E_EXAMPLES conv_relu fashion_mnist_mlp resnet18 hostile mobilenet_v2 text_transformer gpt2_block
    squeezenet1_0)
set(MSC_E2E_ENV "MSC_PYTHON=${MSC_PYTHON};MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference")
set(MSC_E2E ${MSC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/run_e2e.py)
foreach(example ${MSC_E2E_EXAMPLES})
  add_test(NAME e2e_export_${example} COMMAND ${MSC_E2E} export ${example} --out ${CMAKE_BINARY_DIR}/e2e)
  set_tests_properties(e2e_export_${example} PROPERTIES ENVIRONMENT "${MSC_E2E_ENV}" TIMEOUT 900
                       FIXTURES_SETUP msc_e2e_export_${example})
  add_test(NAME e2e_${example} COMMAND ${MSC_E2E} run ${example} --out ${CMAKE_BINARY_DIR}/e2e)
  set_tests_properties(e2e_${example} PROPERTIES ENVIRONMENT "${MSC_E2E_ENV}" TIMEOUT 1500
                       FIXTURES_REQUIRED msc_e2e_export_${example})
  list(APPEND MSC_E2E_FIXTURES msc_e2e_export_${example})
endforeach()
add_test(NAME e2e_merged COMMAND ${MSC_E2E} merged ${MSC_E2E_EXAMPLES} --out ${CMAKE_BINARY_DIR}/e2e)
set_tests_properties(e2e_merged PROPERTIES ENVIRONMENT "${MSC_E2E_ENV}" TIMEOUT 1500
                     FIXTURES_REQUIRED "${MSC_E2E_FIXTURES}")
# fp16: resnet18's conv / linear weights as float16 (Winograd transforming float16 weights, im2col
# with the zero-padded 7x7 stem and the strided convs, the classifier GEMM), golden check at the
# fp16 tolerance.
add_test(NAME e2e_resnet18_fp16 COMMAND ${MSC_E2E} merged resnet18 --precision fp16 --out ${CMAKE_BINARY_DIR}/e2e)
set_tests_properties(e2e_resnet18_fp16 PROPERTIES ENVIRONMENT "${MSC_E2E_ENV}" TIMEOUT 1500
                     FIXTURES_REQUIRED msc_e2e_export_resnet18)
