#include "io/directory_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "base/error.h"

namespace heed::io {
namespace {

// A pid as the lock file holds it is a few digits; more than this is not a lock file's.
constexpr size_t kMaxLockFileBytes = 32;

std::string lock_path(const std::string& dir) {
  return dir + "/.lock";
}

// The lock file's text, which is a pid or empty in a heed lock; nullopt when it holds
// anything else.
std::optional<std::string> lock_file_pid(int fd) {
  char buf[kMaxLockFileBytes + 1] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  if (n < 0 || static_cast<size_t>(n) > kMaxLockFileBytes) return std::nullopt;
  const std::string text(buf, static_cast<size_t>(n));
  if (!std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(c) != 0; })) {
    return std::nullopt;
  }
  return text;
}

// Refuses a lock file that someone could have planted to make us write elsewhere: a hard link
// to another file (a symbolic link is refused by O_NOFOLLOW when opening), a device, a FIFO.
void check_lock_file(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    ::close(fd);
    fail(
        "{}: not a lock file of its own (a regular file with one name); remove it if no run "
        "uses this directory",
        path);
  }
}

struct flock whole_file(short type) {
  struct flock range {};
  range.l_type = type;
  range.l_whence = SEEK_SET;
  return range;  // l_start 0 and l_len 0: the whole file, however long
}

std::string holder_of(int fd) {
  const std::optional<std::string> pid = lock_file_pid(fd);
  return pid && !pid->empty() ? "process " + *pid : "another process";
}

}  // namespace

std::optional<DirectoryLock> DirectoryLock::try_lock(const std::string& dir, std::string* holder) {
  const std::string path = lock_path(dir);
  // O_NOFOLLOW: a .lock that is a symbolic link is never followed (ELOOP).
  bool created = true;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {
    created = false;
    fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0 && errno == ELOOP) {
    fail(
        "{}: is a symbolic link; a lock file is never one (remove it if no run uses this "
        "directory)",
        path);
  }
  HEED_CHECK(fd >= 0, "{}: cannot open the lock file: {}", path, std::strerror(errno));
  check_lock_file(fd, path);
  struct flock range = whole_file(F_WRLCK);
  if (::fcntl(fd, F_OFD_SETLK, &range) != 0) {
    const int error = errno;
    if (holder) *holder = holder_of(fd);
    ::close(fd);
    HEED_CHECK(error == EAGAIN || error == EACCES, "{}: cannot lock: {}", path,
               std::strerror(error));
    return std::nullopt;
  }
  // A file this process did not create is rewritten only when it is a heed lock file.
  if (!created && !lock_file_pid(fd)) {
    ::close(fd);
    fail(
        "{}: holds something other than a process id, so it is not heed's lock file; remove it "
        "if no run uses this directory",
        path);
  }
  // Who holds it, for a second run's message; failing to write it weakens only that message.
  const std::string pid = std::to_string(::getpid());
  [[maybe_unused]] const bool noted =
      ::ftruncate(fd, 0) == 0 && ::pwrite(fd, pid.data(), pid.size(), 0) > 0;
  return DirectoryLock(fd);
}

std::optional<std::string> DirectoryLock::holder(const std::string& dir) {
  const std::string path = lock_path(dir);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ENOENT) return std::nullopt;  // no run ever locked it
  HEED_CHECK(fd >= 0, "{}: cannot open the lock file to test it: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("{}: not a lock file (a regular file)", path);
  }
  struct flock range = whole_file(F_WRLCK);
  const int status = ::fcntl(fd, F_OFD_GETLK, &range);
  const int error = errno;
  std::optional<std::string> who;
  if (status == 0 && range.l_type != F_UNLCK) who = holder_of(fd);
  ::close(fd);
  HEED_CHECK(status == 0, "{}: cannot test the lock: {}", path, std::strerror(error));
  return who;
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
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor of the description releases it
}

}  // namespace heed::io
