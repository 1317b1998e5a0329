// doctest main of the Vulkan runtime tests (msc_vk_tests). Besides the per-test checks, fails
// the run when any validation message is still recorded at the end.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "test_util.h"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int status = context.run();
  if (context.shouldExit()) return status;
  const size_t left = vkt::RecordedValidationMessages();
  if (left != 0) {
    std::fprintf(stderr, "FAIL: %zu Vulkan validation message(s) recorded and not checked\n", left);
    return 1;
  }
  return status;
}
