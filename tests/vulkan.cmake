# Vulkan runtime tests (included by tests/CMakeLists.txt).
#   msc_vk_tests  doctest binary (ctest "vulkan"): runtime, per-shader numerics vs CPU reference,
#                 error paths; runs with VK_LAYER_KHRONOS_validation + synchronization validation
#                 and asserts zero validation messages.
#   bench_gemm    SGEMM GFLOP/s benchmark (not a ctest): ./bench_gemm [SIZE] [RUNS] [--trans-b]
# Skipped (with a message) when the Vulkan loader, glslc or doctest is missing.
find_package(Vulkan QUIET)
find_program(MSC_VK_GLSLC NAMES glslc)
find_package(doctest QUIET)
if(NOT Vulkan_FOUND OR NOT MSC_VK_GLSLC OR NOT doctest_FOUND)
  message(STATUS "msc_vk: Vulkan tests skipped (need libvulkan-dev, glslc, doctest-dev)")
  return()
endif()

set(MSC_VK_RUNTIME_DIR ${CMAKE_CURRENT_LIST_DIR}/../runtime/vulkan)
if(NOT TARGET msc_vk_runtime)
  add_subdirectory(${MSC_VK_RUNTIME_DIR} ${CMAKE_BINARY_DIR}/msc_vk_runtime)
endif()

# Every tests/vulkan/test_*.cc is a doctest file of this binary (plus the shared helpers).
file(GLOB MSC_VK_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/vulkan/test_*.cc)
add_executable(msc_vk_tests
  ${CMAKE_CURRENT_LIST_DIR}/vulkan/main.cc
  ${CMAKE_CURRENT_LIST_DIR}/vulkan/reference.cc
  ${CMAKE_CURRENT_LIST_DIR}/vulkan/example_model.cc
  ${MSC_VK_TEST_SOURCES})
target_link_libraries(msc_vk_tests PRIVATE msc_vk_runtime doctest::doctest)
msc_vk_embed_shaders(msc_vk_tests SHADER_DIR ${MSC_VK_RUNTIME_DIR}/shaders F16 ACT)
add_test(NAME vulkan COMMAND msc_vk_tests)
set_tests_properties(vulkan PROPERTIES
  TIMEOUT 900
  ENVIRONMENT "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation;VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT")

add_executable(bench_gemm ${CMAKE_CURRENT_LIST_DIR}/vulkan/bench_gemm.cc)
target_link_libraries(bench_gemm PRIVATE msc_vk_runtime)
msc_vk_embed_shaders(bench_gemm SHADER_DIR ${MSC_VK_RUNTIME_DIR}/shaders STEMS matmul)
