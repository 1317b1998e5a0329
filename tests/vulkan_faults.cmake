# Vulkan fault paths (issue: reliability): the binaries the e2e_vulkan_conv_relu and
# e2e_vulkan_text_transformer tests build are run with faults injected through MSC_VK_FAULT
# (runtime/vulkan/fault.h) and without any Vulkan driver; each must fail with one line and exit 2,
# under the validation layer. The e2e tests are this test's fixtures (ctest runs them first).
set(MSC_VK_FAULT_PROJECTS
    ${CMAKE_BINARY_DIR}/e2e/vulkan/conv_relu/vulkan:${CMAKE_BINARY_DIR}/e2e/vulkan/text_transformer/vulkan)
set_tests_properties(e2e_vulkan_conv_relu e2e_vulkan_text_transformer PROPERTIES
                     FIXTURES_SETUP msc_vk_fault_projects)
add_test(NAME vulkan_faults COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider
         ${CMAKE_CURRENT_SOURCE_DIR}/vulkan_faults)
set_tests_properties(vulkan_faults PROPERTIES FIXTURES_REQUIRED msc_vk_fault_projects TIMEOUT 600
                     ENVIRONMENT "MSC_VK_PROJECTS=${MSC_VK_FAULT_PROJECTS}")
