#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>
#include <regex>

#include "base/error.h"

namespace heed::io {
namespace {

namespace fs = std::filesystem;

std::string errno_text() {
  return std::strerror(errno);
}

// The descriptor that /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N names.
std::optional<int> own_descriptor(const std::string& path) {
  const std::string p = fs::path(path).lexically_normal().string();
  if (p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (p.rfind(prefix, 0) != 0) continue;
    const std::string digits = p.substr(prefix.size());
    if (!digits.empty() && digits.size() < 6 &&
        digits.find_first_not_of("0123456789") == std::string::npos) {
      return std::stoi(digits);
    }
  }
  return std::nullopt;
}

// A descriptor to write `path` through instead of replacing it, or -1 when it is a regular file
// or absent (replaced atomically). Refuses what can be neither.
int write_through_descriptor(const std::string& path) {
  if (const std::optional<int> own = own_descriptor(path)) {
    const int fd = ::fcntl(*own, F_DUPFD_CLOEXEC, 0);
    HEED_CHECK(fd >= 0, "{}: cannot write to descriptor {}: {}", path, *own, errno_text());
    return fd;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;  // nothing there (or a dangling link): replace
  if (S_ISREG(st.st_mode)) return -1;
  HEED_CHECK(!S_ISDIR(st.st_mode), "{}: is a directory; name a file to write", path);
  HEED_CHECK(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode),
             "{}: is a block device or another special file; name a regular file to write", path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  HEED_CHECK(fd >= 0, "{}: cannot open it to write: {}", path, errno_text());
  return fd;
}

}  // namespace

AtomicFile::AtomicFile(std::string final_path) : final_path_(std::move(final_path)) {
  fd_ = write_through_descriptor(final_path_);
  if (fd_ >= 0) return;
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    temp_path_ = fmt::format("{}.tmp.{}.{}", final_path_, getpid(), counter++);
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  HEED_CHECK(fd_ >= 0, "{}: cannot create temporary file {}: {}", final_path_, temp_path_,
             errno_text());
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void AtomicFile::write(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd_, p, size);
    if (written < 0 && errno == EINTR) continue;
    HEED_CHECK(written > 0, "{}: write failed: {}", final_path_, errno_text());
    p += written;
    size -= static_cast<size_t>(written);
  }
}

void AtomicFile::commit() {
  const int fd = fd_;
  fd_ = -1;
  if (temp_path_.empty()) {  // written through: there is nothing to sync or rename
    committed_ = true;
    HEED_CHECK(::close(fd) == 0, "{}: close failed: {}", final_path_, errno_text());
    return;
  }
  if (::fsync(fd) != 0) {
    const std::string error = errno_text();
    ::close(fd);
    fail("{}: fsync failed: {}", final_path_, error);
  }
  HEED_CHECK(::close(fd) == 0, "{}: close failed: {}", final_path_, errno_text());
  HEED_CHECK(::rename(temp_path_.c_str(), final_path_.c_str()) == 0,
             "{}: cannot rename {} into place: {}", final_path_, temp_path_, errno_text());
  committed_ = true;
  const fs::path parent = fs::path(final_path_).parent_path();
  fsync_path(parent.empty() ? std::string(".") : parent.string());
}

void write_file_atomically(const std::string& path, std::string_view text) {
  AtomicFile file(path);
  file.write(text);
  file.commit();
}

void fsync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  HEED_CHECK(fd >= 0, "{}: cannot open it to sync it: {}", path, errno_text());
  const int status = ::fsync(fd);
  ::close(fd);
  HEED_CHECK(status == 0, "{}: fsync failed: {}", path, errno_text());
}

std::vector<std::string> remove_stale_temporaries(const std::string& dir) {
  static const std::regex kTemporary(R"(.+\.tmp\.(\d{1,9})\.\d+)");
  std::vector<std::string> removed;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    std::smatch match;
    if (!entry.is_regular_file(ec) || !std::regex_match(name, match, kTemporary)) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(match[1].str()));
    const bool writer_alive = ::kill(pid, 0) == 0 || errno == EPERM;
    if (!writer_alive && fs::remove(entry.path(), ec)) removed.push_back(name);
  }
  return removed;
}

}  // namespace heed::io
