// msc_tmpl_render TEMPLATE_PATH DATA_JSON: renders a template (Environment rooted at the
// template's folder) with the JSON data file (parsed straight into the engine's values,
// tmpl::Data) and streams the result to stdout (Environment::Render with a Sink).
// On error prints "error: <message>" to stderr and exits 1.
// With MSC_TMPL_BENCH_REPEAT=N in the environment it renders N more times with the same
// Environment (parsed templates cached) and prints "render_ms=<best wall> cpu_ms=<best CPU>" to
// stderr (bench.py; those renders stream to a sink that drops the output); with MSC_TMPL_PHASES
// set it prints the CPU time and page faults of each phase.
#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "generator/tmpl/environment.h"

namespace {

// A file's contents mapped read-only (no copy; pages come straight from the page cache).
class MappedFile {
 public:
  explicit MappedFile(const char* path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) throw msc::tmpl::TemplateError(std::string(path) + ": cannot open data file");
    struct stat st;
    if (fstat(fd, &st) != 0) {
      close(fd);
      throw msc::tmpl::TemplateError(std::string(path) + ": cannot read data file");
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        close(fd);
        throw msc::tmpl::TemplateError(std::string(path) + ": cannot read data file");
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

// Writes a piece of the output to stdout (all of it, or throws).
void WriteStdout(std::string_view piece) {
  while (!piece.empty()) {
    const ssize_t n = write(STDOUT_FILENO, piece.data(), piece.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw msc::tmpl::TemplateError("cannot write the output to stdout");
    piece.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fputs("usage: msc_tmpl_render TEMPLATE_PATH DATA_JSON\n", stderr);
    return 2;
  }
  // Large blocks from the heap, and freed memory kept there: what the render allocates after the
  // parse reuses pages the parse already touched instead of faulting in fresh mmap()ed ones.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  try {
    // CPU milliseconds of this process so far and its minor page faults (MSC_TMPL_PHASES).
    auto cpu_ms = [] {
      timespec ts;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
    };
    auto faults = [] {
      rusage ru;
      getrusage(RUSAGE_SELF, &ru);
      return static_cast<long>(ru.ru_minflt);
    };
    const bool phases = std::getenv("MSC_TMPL_PHASES") != nullptr;
    const double t_start = phases ? cpu_ms() : 0;
    const long f_start = phases ? faults() : 0;
    double t_parsed = 0, t_rendered = 0, t_done = 0;
    long f_parsed = 0, f_rendered = 0;
    {
      std::filesystem::path tmpl(argv[1]);
      const msc::tmpl::Data data = msc::tmpl::Data::ParseJson(MappedFile(argv[2]).text(), argv[2]);
      if (phases) t_parsed = cpu_ms(), f_parsed = faults();
      std::string root = tmpl.parent_path().string();  // "" = current directory
      msc::tmpl::Environment env(root);
      // The output is streamed to stdout as it is rendered (no buffer the size of the output).
      env.Render(tmpl.filename().string(), data, WriteStdout);
      if (phases) t_rendered = cpu_ms(), f_rendered = faults();
      if (const char* repeat = std::getenv("MSC_TMPL_BENCH_REPEAT")) {
        double best = 1e30, best_cpu = 1e30;
        for (int i = 0; i < std::atoi(repeat); ++i) {
          auto t0 = std::chrono::steady_clock::now();
          double c0 = cpu_ms();
          env.Render(tmpl.filename().string(), data, [](std::string_view) {});
          best_cpu = std::min(best_cpu, cpu_ms() - c0);
          best = std::min(
              best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count());
        }
        std::fprintf(stderr, "render_ms=%g cpu_ms=%g\n", best, best_cpu);
      }
      if (phases) t_done = cpu_ms();
    }
    if (phases)  // CPU time (and minor page faults) by phase: start-up to main, data parse,
                 // first render (template parse and writing the output included), freeing
      std::fprintf(stderr,
                   "phases_ms: before_main=%g parse=%g render=%g free=%g | faults: before_main=%ld "
                   "parse=%ld render=%ld\n",
                   t_start, t_parsed - t_start, t_rendered - t_parsed, cpu_ms() - t_done, f_start,
                   f_parsed - f_start, f_rendered - f_parsed);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
