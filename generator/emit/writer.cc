#include "generator/emit/writer.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/filesystem.hpp>

#include "generator/common/error.h"

namespace msc::emit {

namespace fs = boost::filesystem;

void OutputTree::Add(const std::string& rel, Entry e) {
  fs::path p(rel);
  bool bad = rel.empty() || p.is_absolute();
  for (const auto& part : p) bad = bad || part == ".." || part == ".";
  if (bad)
    throw Error("output path '" + rel + "' must be relative and stay inside the output folder");
  if (!entries_.emplace(rel, std::move(e)).second)
    throw Error("output file '" + rel + "' is produced twice (check backend.yaml files/copy)");
}

void OutputTree::AddText(const std::string& rel, std::string content) {
  Entry e;
  e.text = std::move(content);
  Add(rel, std::move(e));
}

void OutputTree::AddCopy(const std::string& rel, const std::string& src) {
  Entry e;
  e.copy_from = src;
  e.kind = 1;
  Add(rel, std::move(e));
}

void OutputTree::AddWriter(const std::string& rel, std::function<void(const std::string&)> write) {
  Entry e;
  e.writer = std::move(write);
  e.kind = 2;
  Add(rel, std::move(e));
}

namespace {

void WriteFile(const fs::path& path, const std::string& content) {
  std::ofstream out(path.string(), std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) throw Error(path.string() + ": cannot write file");
}

/// Copies `src` to a new file `dst` with the source's permission bits (as fs::copy_file does),
/// in the kernel (copy_file_range(2), a reflink where the filesystem shares extents), falling
/// back to read/write where it cannot. Unlike boost's copy_file (1.74 calls fdatasync per file,
/// ~5 ms each: the Vulkan backend copies ~200 runtime files), nothing is synced: the project is
/// made durable as a whole by the rename, like every other file Commit writes.
void CopyFile(const std::string& src, const fs::path& dst) {
  auto fail = [&](const std::string& what) {
    throw Error(dst.string() + ": cannot copy " + src + ": " + what + ": " + std::strerror(errno));
  };
  const int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) fail("open");
  struct stat st {};
  if (::fstat(in, &st) != 0) {
    ::close(in);
    fail("stat");
  }
  const int out = ::open(dst.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777);
  if (out < 0) {
    const int err = errno;
    ::close(in);
    errno = err;
    fail("create");
  }
  // Closes both files; throws for `failed` (a step that set errno) or a failed close.
  auto finish = [&](const char* failed) {
    const int err = errno;
    ::close(in);
    const bool closed = ::close(out) == 0;
    if (failed) {
      errno = err;
      fail(failed);
    }
    if (!closed) fail("close");
  };
  off_t left = st.st_size;
  bool kernel = true;
  while (left > 0 && kernel) {
    const ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, static_cast<size_t>(left), 0);
    if (n > 0) {
      left -= n;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n == 0 || errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP ||
               errno == EINVAL || errno == EPERM) {
      kernel = false;  // not here (or the file shrank): copy the rest through a buffer
    } else {
      return finish("copy_file_range");
    }
  }
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return finish("read");
    if (n == 0) break;
    for (ssize_t w = 0; w < n;) {
      const ssize_t k = ::write(out, buf + w, static_cast<size_t>(n - w));
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) return finish("write");
      w += k;
    }
  }
  finish(nullptr);
}

/// An exclusive flock(2) on a directory, held while it lives: serializes the final check-and-rename
/// of concurrent runs that write into the same parent folder. Released by the kernel if the
/// process dies, so a crashed run never blocks later ones.
class DirLock {
 public:
  explicit DirLock(const fs::path& dir) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0)
      throw Error(dir.string() + ": cannot open the folder to lock it: " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd_);
      throw Error(dir.string() + ": cannot lock the folder: " + std::strerror(err));
    }
  }
  ~DirLock() { ::close(fd_); }  // closing the descriptor releases the lock
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

/// Refuses an existing `out` that is not a directory, or a non-empty one without the marker file
/// (unless `force`).
void CheckReplaceable(const fs::path& out, const std::string& out_dir, bool force) {
  if (!fs::exists(out)) return;
  if (!fs::is_directory(out)) throw Error(out_dir + ": exists and is not a directory");
  bool empty = fs::is_empty(out);
  bool ours = fs::is_regular_file(out / kMarkerFile);
  if (!empty && !ours && !force)
    throw Error(out_dir + ": not empty and not generated by msc-codegen (no " +
                std::string(kMarkerFile) + "); use --force to replace it");
}

/// A name unique to this run among concurrent runs (pid, counter within the process, clock).
std::string UniqueSuffix() {
  static std::atomic<unsigned> counter{0};
  const auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
  return std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(static_cast<unsigned long long>(ticks) % 1000000007ULL);
}

}  // namespace

void OutputTree::Commit(const std::string& out_dir, bool force) const {
  boost::system::error_code ec;
  fs::path out = fs::absolute(fs::path(out_dir)).lexically_normal();
  if (out.filename() == "." || out.filename().empty()) out = out.parent_path();
  // --out itself must not be a symbolic link: the project replaces --out whole, which would
  // replace the link (not its target) and leave the user's target untouched and stale.
  if (fs::is_symlink(fs::symlink_status(out, ec))) {
    const fs::path target = fs::read_symlink(out, ec);
    throw Error(out_dir + ": is a symbolic link" +
                (ec ? std::string() : " (to " + target.string() + ")") +
                "; msc-codegen replaces --out as a whole, so pass the real folder instead");
  }
  fs::path parent = out.parent_path();
  fs::create_directories(parent, ec);
  if (ec) throw Error(parent.string() + ": cannot create directory: " + ec.message());
  // Links in the parent path are followed once, here: every write below goes into the real
  // folder --out names, and the temporary siblings live beside it on the same filesystem.
  parent = fs::canonical(parent, ec);
  if (ec) throw Error(out.parent_path().string() + ": cannot resolve: " + ec.message());
  out = parent / out.filename();
  {  // fail before writing anything; under the lock, as a concurrent run may be mid-replace
    // (unlocked, its rename made "exists" and "is a directory" disagree: "exists and is not a
    // directory", found by test_concurrent_runs_on_the_same_out)
    DirLock early(parent);
    CheckReplaceable(out, out_dir, force);
  }
  const std::string suffix = UniqueSuffix();
  fs::path tmp = parent / ("." + out.filename().string() + ".msc-tmp-" + suffix);
  fs::remove_all(tmp, ec);
  try {
    fs::create_directories(tmp);
    std::string listing;
    for (const auto& [rel, e] : entries_) {
      fs::path dst = tmp / rel;
      fs::create_directories(dst.parent_path());
      if (e.kind == 0)
        WriteFile(dst, e.text);
      else if (e.kind == 1)
        CopyFile(e.copy_from, dst);
      else
        e.writer(dst.string());
      listing += rel + "\n";
    }
    WriteFile(tmp / kMarkerFile,
              "# generated by msc-codegen; regenerating replaces this folder. Files:\n" + listing);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw Error(std::string("writing the project failed: ") + e.what());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  // Concurrent runs on the same --out take turns here; each replaces the folder whole, so the
  // result is exactly one run's project (the last one's), never a mix.
  DirLock lock(parent);
  try {
    if (fs::is_symlink(fs::symlink_status(out, ec)))
      throw Error(out_dir + ": became a symbolic link while the project was being written");
    CheckReplaceable(out, out_dir, force);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  fs::path old = parent / ("." + out.filename().string() + ".msc-old-" + suffix);
  if (fs::exists(out)) {
    fs::rename(out, old, ec);
    if (ec) {
      const std::string msg = ec.message();
      fs::remove_all(tmp, ec);
      throw Error(out_dir + ": cannot replace the existing folder: " + msg);
    }
  }
  fs::rename(tmp, out, ec);
  if (ec) {
    std::string msg = ec.message();
    if (fs::exists(old)) fs::rename(old, out, ec);
    fs::remove_all(tmp, ec);
    throw Error(out_dir + ": cannot move the generated project into place: " + msg);
  }
  fs::remove_all(old, ec);
}

}  // namespace msc::emit
