#pragma once
// Crash-safe writes: a file is filled under a temporary name next to its final path, fsynced,
// and renamed over it, and the directory is fsynced so that the rename survives a crash. A
// reader then finds the old file or the new one, never half of one.
#include <cstddef>
#include <string>
#include <string_view>

namespace heed::io {

class AtomicFile {
 public:
  // Creates the temporary file; nothing is at `final_path` yet.
  explicit AtomicFile(std::string final_path);
  // Without commit(), removes the temporary file: the old file (if any) stays.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // fsync, close, rename over the final path, fsync the directory.
  void commit();

 private:
  std::string final_path_;
  std::string temp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

// Writes `text` to `path` through an AtomicFile.
void write_file_atomically(const std::string& path, std::string_view text);

// fsyncs a file or a directory (so that the entries just created or renamed in it are on disk).
void fsync_path(const std::string& path);

}  // namespace heed::io
