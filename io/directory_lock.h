#pragma once
// An advisory lock on a directory (flock on DIR/.lock), held for the lock object's life, so that
// two processes never write one run's files at the same time. The kernel drops it when the
// process ends, however it ends: a killed run leaves no stale lock behind.
#include <optional>
#include <string>

namespace heed::io {

class DirectoryLock {
 public:
  // Takes the lock, or returns nullopt when another process holds it; `holder` then says who
  // (the pid it wrote, when it could read it).
  static std::optional<DirectoryLock> try_lock(const std::string& dir, std::string* holder);
  DirectoryLock(DirectoryLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  ~DirectoryLock();

 private:
  explicit DirectoryLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace heed::io
