# Vulkan fault paths (issue: reliability): the binary of the merged e2e project (e2e_merged: every
# example, float32 kernels and the int64 ones that need shaderInt64) is run with faults injected
# through MSC_VK_FAULT (runtime/vulkan/fault.h) and without any Vulkan driver; each must fail with
# one line and exit 2, under the validation layer. e2e_merged is this test's fixture.
set_tests_properties(e2e_merged PROPERTIES FIXTURES_SETUP msc_vk_fault_projects)
add_test(NAME vulkan_faults COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider
         ${CMAKE_CURRENT_SOURCE_DIR}/vulkan_faults)
set_tests_properties(vulkan_faults PROPERTIES FIXTURES_REQUIRED msc_vk_fault_projects TIMEOUT 600
                     ENVIRONMENT "MSC_VK_PROJECTS=${CMAKE_BINARY_DIR}/e2e/merged/vulkan")
