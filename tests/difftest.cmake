# Random-graph differential testing (issue 10, item 4; tests/difftest/difftest.py): 250 random
# valid graphs (python/msc_export/randgraph.py, seeds 0..249), merged into ONE graph and generated
# for every backend the suite finds (tests/common/backends.py; vulkan: one build, run under the
# Khronos validation layer; relax: on the stand-in TVM, or on MSC_TVM_PYTHON / MSC_TVM_HOME when
# set); every output of every backend (their harnesses' --save-outputs) compared with the
# reference interpreter (per-element tolerances) and with the other backends. Any disagreement
# or error fails the test and is printed minimized.
# Shaders go through tests/difftest/glslc_cache.py (cache in the build folder), C++ through ccache
# when installed. Long runs: tests/difftest/difftest.py --minutes 30 --seeds 100000:
add_test(NAME difftest
         COMMAND ${MSC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/difftest/difftest.py --seeds 0:250
                 --work ${CMAKE_BINARY_DIR}/difftest)
set_tests_properties(difftest PROPERTIES TIMEOUT 1800 ENVIRONMENT
  "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_VK_VALIDATION=1;MSC_GLSLC_CACHE=${CMAKE_BINARY_DIR}/difftest/glslc_cache")
# Its parts that need no backend: interp against every per-op case, the generator's validity and
# determinism, the comparison rule, the minimizer on a simulated backend with a planted bug; and
# the Vulkan model.cc of all per-op cases compiling with -Wall -Wextra -Werror.
add_test(NAME difftest_unit
         COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/difftest/test_difftest.py)
set_tests_properties(difftest_unit PROPERTIES TIMEOUT 600 ENVIRONMENT "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>")
