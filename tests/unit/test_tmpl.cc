#include <doctest/doctest.h>

#include "generator/common/error.h"
#include "generator/tmpl/environment.h"

using msc::tmpl::Environment;
using msc::tmpl::Json;

TEST_CASE("tmpl: smoke") {
  Environment env("");
  CHECK(env.RenderString("Hello {{ name }}!", Json{{"name", "World"}}) == "Hello World!");
}
