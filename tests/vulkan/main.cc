// doctest main of the Vulkan runtime tests (msc_vk_tests).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
