#pragma once
// Crash-safe writes: a file is filled under a temporary name next to its final path, fsynced,
// and renamed over it, and the directory is fsynced so that the rename survives a crash. A
// reader then finds the old file or the new one, never half of one.
//
// Only a regular file (or a path where nothing is yet) is replaced that way. A character device
// or a FIFO (/dev/null, a terminal, a pipe) is written through, as `cat > path` would, and
// /dev/stdout, /dev/stderr and /dev/fd/N write to the process's own descriptor: renaming over
// them would replace the device node for the whole machine. A directory or a block device is an
// error naming the path.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace heed::io {

class AtomicFile {
 public:
  // Creates the temporary file (or opens the device); nothing is at `final_path` yet.
  explicit AtomicFile(std::string final_path);
  // Without commit(), removes the temporary file: the old file (if any) stays.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // fsync, close, rename over the final path, fsync the directory (a device: close only).
  void commit();

 private:
  std::string final_path_;
  std::string temp_path_;  // empty when written through
  int fd_ = -1;
  bool committed_ = false;
};

// Writes `text` to `path` through an AtomicFile.
void write_file_atomically(const std::string& path, std::string_view text);

// fsyncs a file or a directory (so that the entries just created or renamed in it are on disk).
void fsync_path(const std::string& path);

// Removes the temporary files (NAME.tmp.PID.N) that writers killed mid-write left in `dir`: those
// whose process is gone. Returns their names. For a directory its caller has locked.
std::vector<std::string> remove_stale_temporaries(const std::string& dir);

}  // namespace heed::io
