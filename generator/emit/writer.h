// OutputTree: collects a generated project in memory, then commits it atomically.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace msc::emit {

/// Name of the marker file that says "msc-codegen generated this folder".
inline constexpr const char* kMarkerFile = ".msc-codegen";

class OutputTree {
 public:
  /// A text file at `rel` (a relative path without ".."). A second Add for the same path is an
  /// msc::Error (two templates writing one file).
  void AddText(const std::string& rel, std::string content);
  /// A file copied byte for byte from `src`.
  void AddCopy(const std::string& rel, const std::string& src);
  /// A file produced by `write(absolute_path)` at commit time (e.g. safetensors weights).
  void AddWriter(const std::string& rel, std::function<void(const std::string&)> write);

  /// Writes everything into a temporary sibling of `out_dir`, adds the marker file, then renames
  /// it into place, so a failure leaves no partial output and an existing project is replaced
  /// whole. Refuses (msc::Error) a non-empty `out_dir` without the marker unless `force`, an
  /// `out_dir` that is a file, and an `out_dir` that is itself a symbolic link (replacing it
  /// whole would replace the link); links in its parent path are resolved, so the project lands
  /// in the real folder. Concurrent commits into one parent folder are serialized by an
  /// flock(2) on that folder: concurrent runs on the same `out_dir` each succeed, and the folder
  /// ends up as one run's complete project.
  void Commit(const std::string& out_dir, bool force) const;

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string text;
    std::string copy_from;
    std::function<void(const std::string&)> writer;
    int kind = 0;  // 0 text, 1 copy, 2 writer
  };
  void Add(const std::string& rel, Entry e);
  std::map<std::string, Entry> entries_;
};

}  // namespace msc::emit
