// A preloaded library (LD_PRELOAD) that makes the file system fail under a program, the way a
// full disk or a kill does, without root and without changing the program:
//   HEED_FAULT_PATH=SUBSTRING   the paths it acts on
//   HEED_FAULT_OP=write|unlink  write: write(), writev() and pwrite() to a file whose path holds
//                               SUBSTRING (once HEED_FAULT_AFTER_BYTES bytes have gone through);
//                               unlink: removing such a path (unlink, unlinkat, rmdir, remove)
//   HEED_FAULT_ACTION=ENOSPC|KILL  fail that call with ENOSPC, as a full disk does, or SIGKILL
//                               the process in the middle of it
//   HEED_FAULT_AFTER_BYTES=N    write: the bytes that matching files take, in all, before the
//                               fault (0: the first write fails); a write that crosses the
//                               mark is cut short there, as on a disk that fills mid-call
// Paths are resolved through /proc/self/fd, so relative names and files opened by any means
// (std::ofstream, open) are seen alike.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct Settings {
  std::string path, op = "write", action = "ENOSPC";
  long long after_bytes = 0;
  bool active = false;
};

const Settings& settings() {
  static const Settings s = [] {
    Settings r;
    if (const char* p = std::getenv("HEED_FAULT_PATH")) {
      r.path = p;
      r.active = !r.path.empty();
    }
    if (const char* op = std::getenv("HEED_FAULT_OP")) r.op = op;
    if (const char* action = std::getenv("HEED_FAULT_ACTION")) r.action = action;
    if (const char* bytes = std::getenv("HEED_FAULT_AFTER_BYTES"))
      r.after_bytes = std::atoll(bytes);
    return r;
  }();
  return s;
}

std::string fd_path(int fd) {
  char link[64], target[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
}

bool matches(const std::string& path) {
  return settings().active && path.find(settings().path) != std::string::npos;
}

// Bytes written so far to matching files.
long long g_written = 0;

// How many of `size` bytes to `fd` may go through; -1 when the call is to fail at once.
ssize_t allowed(int fd, size_t size) {
  if (!settings().active || settings().op != "write" || !matches(fd_path(fd))) {
    return static_cast<ssize_t>(size);
  }
  const long long room = settings().after_bytes - g_written;
  if (room > 0) {
    const auto n = static_cast<ssize_t>(std::min<long long>(room, static_cast<long long>(size)));
    g_written += n;
    return n;
  }
  if (settings().action == "KILL") ::raise(SIGKILL);
  errno = ENOSPC;
  return -1;
}

template <typename F>
F next(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

// 0 to go ahead; -1 (errno set) when a removal of `path` is to fail.
int before_removal(const std::string& path) {
  if (settings().op != "unlink" || !matches(path)) return 0;
  if (settings().action == "KILL") ::raise(SIGKILL);
  errno = ENOSPC;
  return -1;
}

std::string at_path(int dirfd, const char* name) {
  if (name[0] == '/' || dirfd == AT_FDCWD) return name;
  return fd_path(dirfd) + "/" + name;
}

}  // namespace

extern "C" {

ssize_t write(int fd, const void* buf, size_t size) {
  static auto real = next<ssize_t (*)(int, const void*, size_t)>("write");
  const ssize_t n = allowed(fd, size);
  if (n < 0) return -1;
  return real(fd, buf, static_cast<size_t>(n));
}

ssize_t pwrite(int fd, const void* buf, size_t size, off_t offset) {
  static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  const ssize_t n = allowed(fd, size);
  if (n < 0) return -1;
  return real(fd, buf, static_cast<size_t>(n), offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t size, off_t offset) {
  return pwrite(fd, buf, size, offset);
}

ssize_t writev(int fd, const struct iovec* iov, int count) {
  static auto real = next<ssize_t (*)(int, const struct iovec*, int)>("writev");
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  const ssize_t n = allowed(fd, total);
  if (n < 0) return -1;
  if (static_cast<size_t>(n) == total) return real(fd, iov, count);
  // A partial write: the first n bytes, as a disk that fills in the middle of the call.
  static auto real_write = next<ssize_t (*)(int, const void*, size_t)>("write");
  ssize_t done = 0;
  for (int i = 0; i < count && done < n; ++i) {
    const size_t part = std::min(iov[i].iov_len, static_cast<size_t>(n - done));
    const ssize_t w = real_write(fd, iov[i].iov_base, part);
    if (w < 0) return done > 0 ? done : -1;
    done += w;
  }
  return done;
}

int unlink(const char* path) {
  static auto real = next<int (*)(const char*)>("unlink");
  return before_removal(path) != 0 ? -1 : real(path);
}

int rmdir(const char* path) {
  static auto real = next<int (*)(const char*)>("rmdir");
  return before_removal(path) != 0 ? -1 : real(path);
}

int remove(const char* path) {
  static auto real = next<int (*)(const char*)>("remove");
  return before_removal(path) != 0 ? -1 : real(path);
}

int unlinkat(int dirfd, const char* path, int flags) {
  static auto real = next<int (*)(int, const char*, int)>("unlinkat");
  return before_removal(at_path(dirfd, path)) != 0 ? -1 : real(dirfd, path, flags);
}

}  // extern "C"
