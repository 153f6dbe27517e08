#include "io/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "autograd/error.h"

namespace heed::io {

std::optional<DirectoryLock> DirectoryLock::try_lock(const std::string& dir, std::string* holder) {
  const std::string path = dir + "/.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  HEED_CHECK(fd >= 0, "{}: cannot open the lock file: {}", path, std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (holder) {
      char buf[32] = {};
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      *holder = n > 0 ? "process " + std::string(buf, static_cast<size_t>(n)) : "another process";
    }
    ::close(fd);
    HEED_CHECK(error == EWOULDBLOCK, "{}: cannot lock: {}", path, std::strerror(error));
    return std::nullopt;
  }
  // Who holds it, for a second run's message; failing to write it weakens only that message.
  const std::string pid = std::to_string(::getpid());
  [[maybe_unused]] const bool noted =
      ::ftruncate(fd, 0) == 0 && ::pwrite(fd, pid.data(), pid.size(), 0) > 0;
  return DirectoryLock(fd);
}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace heed::io
