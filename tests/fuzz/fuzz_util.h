// Shared helpers of the libFuzzer harnesses in tests/fuzz (see README.md there).
//
// Every harness follows the same contract: an input is either accepted or rejected with an
// msc::Error (msc_vk::Error for the Vulkan runtime's readers) whose message names the input's file;
// anything else (a crash, a sanitizer report, another exception type escaping, a broken
// round-trip property) is a finding. Findings abort() with a one-line reason on stderr, so that
// libFuzzer stores the input as crash-<sha1>.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <typeinfo>
#include <vector>

#include <boost/filesystem.hpp>

namespace msc::fuzz {

/// Prints "fuzz finding (<harness>): <what>" and aborts (libFuzzer saves the input).
[[noreturn]] inline void Finding(const char* harness, const std::string& what) {
  std::fprintf(stderr, "\nfuzz finding (%s): %s\n", harness, what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Runs `body`; the exception type E (msc::Error or msc_vk::Error) is how an input is rejected, and
/// its message must contain `label` (the file name the harness gave the reader) unless `label` is
/// empty. Any other exception escaping `body` is a finding: the CLI would print it as
/// "error: internal: ..." without naming the file. Returns true when `body` returned normally.
template <typename E, typename F>
bool Accepts(const char* harness, const std::string& label, F&& body) {
  try {
    body();
    return true;
  } catch (const E& e) {
    const std::string what = e.what();
    if (!label.empty() && what.find(label) == std::string::npos)
      Finding(harness, "error message does not name '" + label + "': " + what);
    return false;
  } catch (const std::exception& e) {
    Finding(harness,
            std::string("escaped exception of type ") + typeid(e).name() + ": " + e.what());
  } catch (...) {
    Finding(harness, "escaped a non-std exception");
  }
}

/// A private scratch folder (on tmpfs when /dev/shm is writable), created once per process and
/// removed at exit, for the readers whose only API takes a path. Writing a small file there costs
/// a few microseconds, far below one parse under ASan.
class Scratch {
 public:
  static Scratch& Get() {
    static Scratch* s = new Scratch;  // never destroyed: the atexit cleanup below still needs it
    return *s;
  }
  const std::string& dir() const { return dir_; }
  /// Writes data to <dir>/<name> (truncating) and returns the path. Aborts on I/O errors.
  std::string Write(const std::string& name, const uint8_t* data, size_t size) {
    const std::string path = dir_ + "/" + name;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) Finding("scratch", "cannot write " + path + ": " + std::strerror(errno));
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::write(fd, data + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Finding("scratch", "cannot write " + path + ": " + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    return path;
  }
  std::string Write(const std::string& name, const std::string& text) {
    return Write(name, reinterpret_cast<const uint8_t*>(text.data()), text.size());
  }

 private:
  Scratch() {
    std::string base = "/dev/shm";
    if (::access(base.c_str(), W_OK) != 0) {
      const char* tmp = std::getenv("TMPDIR");
      base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    }
    std::string templ = base + "/msc-fuzz-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)
      Finding("scratch", "mkdtemp " + templ + ": " + std::strerror(errno));
    dir_ = buf.data();
    std::atexit([] {
      boost::system::error_code ec;
      boost::filesystem::remove_all(Scratch::Get().dir_, ec);
    });
  }
  std::string dir_;
};

/// Adds libFuzzer flags the harness wants by default (e.g. "-max_len=65536", "-dict=...") to
/// argv unless the command line already sets that flag. Call from LLVMFuzzerInitialize, which
/// libFuzzer runs before it parses its flags. The added strings live until exit.
inline void AddDefaultFlags(int* argc, char*** argv, const std::vector<std::string>& defaults) {
  static std::vector<std::string> keep;
  static std::vector<char*> args;
  args.assign(*argv, *argv + *argc);
  for (const std::string& flag : defaults) {
    const std::string key = flag.substr(0, flag.find('=') + 1);  // "-max_len="
    bool given = false;
    for (int i = 1; i < *argc; ++i)
      given = given || std::strncmp((*argv)[i], key.c_str(), key.size()) == 0;
    if (!given) keep.push_back(flag);
  }
  // libFuzzer takes flags anywhere on the command line, so they can follow the corpus folders.
  for (std::string& s : keep) args.push_back(s.data());
  args.push_back(nullptr);
  *argc = static_cast<int>(args.size()) - 1;
  *argv = args.data();
}

/// The committed dictionary of a harness: <source>/tests/fuzz/dict/<name>.dict.
inline std::string DictFlag(const std::string& name) {
  return std::string("-dict=") + MSC_SOURCE_DIR + "/tests/fuzz/dict/" + name + ".dict";
}

}  // namespace msc::fuzz
