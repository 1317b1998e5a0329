// msc_tmpl_render TEMPLATE_PATH DATA_JSON: renders a template (Environment rooted at the
// template's folder) with the JSON data file and prints the result to stdout.
// On error prints "error: <message>" to stderr and exits 1.
// With MSC_TMPL_BENCH_REPEAT=N in the environment it renders N more times with the same
// Environment (parsed templates cached) and prints "render_ms=<best>" to stderr (bench.py).
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "generator/common/error.h"
#include "generator/tmpl/environment.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: msc_tmpl_render TEMPLATE_PATH DATA_JSON\n";
    return 2;
  }
  try {
    std::filesystem::path tmpl(argv[1]);
    std::ifstream data_in(argv[2], std::ios::binary);
    if (!data_in) throw msc::Error(std::string(argv[2]) + ": cannot open data file");
    std::ostringstream text;
    text << data_in.rdbuf();
    msc::tmpl::Json data;
    try {
      data = msc::tmpl::Json::parse(text.str());
    } catch (const std::exception& e) {
      throw msc::Error(std::string(argv[2]) + ": invalid JSON: " + e.what());
    }
    std::string root = tmpl.parent_path().string();  // "" = current directory
    msc::tmpl::Environment env(root);
    std::string out = env.Render(tmpl.filename().string(), data);
    if (const char* repeat = std::getenv("MSC_TMPL_BENCH_REPEAT")) {
      double best = 1e30;
      for (int i = 0; i < std::atoi(repeat); ++i) {
        auto t0 = std::chrono::steady_clock::now();
        env.Render(tmpl.filename().string(), data);
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::cerr << "render_ms=" << best << "\n";
    }
    std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
    std::cout.flush();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
