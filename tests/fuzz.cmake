# libFuzzer harnesses (tests/fuzz, see tests/fuzz/README.md), built with -DMSC_FUZZ=ON: clang only,
# together with MSC_SANITIZE=ON (ASan + UBSan). The generator library and the template engine's
# (msc_tmpl) are then compiled with -fsanitize=fuzzer-no-link (coverage instrumentation, no
# libFuzzer main), which the other test binaries link fine, so one sanitizer build dir serves the
# ASan unit tests and the fuzzers (scripts/test.sh: build-asan). Each harness is a ctest test labelled `fuzz` that fuzzes for
# MSC_FUZZ_SECONDS on its committed corpus (+ regression inputs): `ctest -L fuzz -j2`.
option(MSC_FUZZ "Build the libFuzzer harnesses of tests/fuzz (clang; needs MSC_SANITIZE=ON)" OFF)
set(MSC_FUZZ_SECONDS 20 CACHE STRING "Seconds each fuzz harness runs as a ctest test (-L fuzz)")
if(NOT MSC_FUZZ)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "MSC_FUZZ=ON needs clang (libFuzzer): configure with "
                      "-DCMAKE_CXX_COMPILER=clang++ (got ${CMAKE_CXX_COMPILER_ID})")
endif()
if(NOT MSC_SANITIZE)
  message(FATAL_ERROR "MSC_FUZZ=ON needs -DMSC_SANITIZE=ON (the harnesses run under ASan + UBSan)")
endif()
target_compile_options(msc_codegen_lib PRIVATE -fsanitize=fuzzer-no-link)
target_compile_options(msc_tmpl PRIVATE -fsanitize=fuzzer-no-link)

# name -> extra sources (the Vulkan runtime's readers are compiled into their harness)
set(MSC_FUZZ_HARNESSES graph safetensors param_dict opdef backend_spec tmpl vk_readers onnx)
set(MSC_FUZZ_EXTRA_vk_readers ${CMAKE_SOURCE_DIR}/runtime/vulkan/safetensors.cc
    ${CMAKE_SOURCE_DIR}/runtime/vulkan/golden.cc ${CMAKE_SOURCE_DIR}/runtime/vulkan/dtype.cc)

add_custom_target(msc_fuzzers)
foreach(name ${MSC_FUZZ_HARNESSES})
  add_executable(fuzz_${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_${name}.cc
                              ${MSC_FUZZ_EXTRA_${name}})
  target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_${name} PRIVATE msc_codegen_lib)
  add_dependencies(msc_fuzzers fuzz_${name})
  add_test(NAME fuzz_${name}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_ci.sh $<TARGET_FILE:fuzz_${name}>
                   ${name} ${MSC_FUZZ_SECONDS} ${CMAKE_CURRENT_BINARY_DIR}/fuzz-ci/${name})
  set_tests_properties(fuzz_${name} PROPERTIES LABELS fuzz TIMEOUT 300)
endforeach()
