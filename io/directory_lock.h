#pragma once
// An advisory lock on a directory (an open-file-description lock on DIR/.lock), held for the
// lock object's life, so that two processes never write one run's files at the same time. The
// kernel drops it when the process ends, however it ends: a killed run leaves no stale lock.
//
// Why fcntl's OFD locks and not flock: a reader (`report`, a run's status) can ask whether the
// directory is locked with F_OFD_GETLK without taking the lock, and so without ever making a
// writer that starts at that moment fail, and without needing write access to the run.
#include <optional>
#include <string>

namespace heed::io {

class DirectoryLock {
 public:
  // Takes the lock, or returns nullopt when another process holds it; `holder` then says who
  // (the pid it wrote, when it could read it). DIR/.lock must be a regular file of its own (not
  // a symbolic link, not a hard link to another file) holding nothing but a pid: anything else
  // is an error naming it, and such a file is never truncated or written.
  static std::optional<DirectoryLock> try_lock(const std::string& dir, std::string* holder);
  // Who holds `dir`'s lock ("process PID"), or nullopt when nobody does. Only tests the lock:
  // creates, locks and writes nothing, so it works on a run the caller cannot write.
  static std::optional<std::string> holder(const std::string& dir);

  DirectoryLock(DirectoryLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  ~DirectoryLock();

 private:
  explicit DirectoryLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace heed::io
