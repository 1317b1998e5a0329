// msc_tmpl_render TEMPLATE_PATH DATA_JSON: renders a template (Environment rooted at the
// template's folder) with the JSON data file (parsed straight into the engine's values,
// tmpl::Data) and prints the result to stdout.
// On error prints "error: <message>" to stderr and exits 1.
// With MSC_TMPL_BENCH_REPEAT=N in the environment it renders N more times with the same
// Environment (parsed templates cached) and prints "render_ms=<best wall> cpu_ms=<best CPU>" to
// stderr (bench.py); with MSC_TMPL_PHASES set it prints the CPU time of each phase.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "generator/common/error.h"
#include "generator/tmpl/environment.h"

namespace {

// A file's contents mapped read-only (no copy; pages come straight from the page cache).
class MappedFile {
 public:
  explicit MappedFile(const char* path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) throw msc::Error(std::string(path) + ": cannot open data file");
    struct stat st;
    if (fstat(fd, &st) != 0) {
      close(fd);
      throw msc::Error(std::string(path) + ": cannot read data file");
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        close(fd);
        throw msc::Error(std::string(path) + ": cannot read data file");
      }
      data_ = static_cast<const char*>(p);
    }
    close(fd);
  }
  ~MappedFile() {
    if (data_) munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view text() const { return std::string_view(data_ ? data_ : "", size_); }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: msc_tmpl_render TEMPLATE_PATH DATA_JSON\n";
    return 2;
  }
  try {
    // CPU milliseconds of this process so far (MSC_TMPL_PHASES).
    auto cpu_ms = [] {
      timespec ts;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
    };
    const bool phases = std::getenv("MSC_TMPL_PHASES") != nullptr;
    const double t_start = phases ? cpu_ms() : 0;
    std::filesystem::path tmpl(argv[1]);
    const msc::tmpl::Data data = msc::tmpl::Data::ParseJson(MappedFile(argv[2]).text(), argv[2]);
    const double t_parsed = phases ? cpu_ms() : 0;
    std::string root = tmpl.parent_path().string();  // "" = current directory
    msc::tmpl::Environment env(root);
    std::string out = env.Render(tmpl.filename().string(), data);
    const double t_rendered = phases ? cpu_ms() : 0;
    if (const char* repeat = std::getenv("MSC_TMPL_BENCH_REPEAT")) {
      double best = 1e30, best_cpu = 1e30;
      for (int i = 0; i < std::atoi(repeat); ++i) {
        auto t0 = std::chrono::steady_clock::now();
        double c0 = cpu_ms();
        env.Render(tmpl.filename().string(), data);
        best_cpu = std::min(best_cpu, cpu_ms() - c0);
        best = std::min(
            best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                      .count());
      }
      std::cerr << "render_ms=" << best << " cpu_ms=" << best_cpu << "\n";
    }
    std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
    std::cout.flush();
    if (phases)  // CPU time by phase: start-up to main, data parse, first render, output
      std::cerr << "phases_ms: before_main=" << t_start << " parse=" << t_parsed - t_start
                << " render=" << t_rendered - t_parsed << " write=" << cpu_ms() - t_rendered
                << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
