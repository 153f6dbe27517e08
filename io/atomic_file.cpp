#include "io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "autograd/error.h"

namespace heed::io {
namespace {

std::string errno_text() {
  return std::strerror(errno);
}

}  // namespace

AtomicFile::AtomicFile(std::string final_path) : final_path_(std::move(final_path)) {
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
  if (!committed_) ::unlink(temp_path_.c_str());
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
  HEED_CHECK(::fsync(fd_) == 0, "{}: fsync failed: {}", final_path_, errno_text());
  const int fd = fd_;
  fd_ = -1;
  HEED_CHECK(::close(fd) == 0, "{}: close failed: {}", final_path_, errno_text());
  HEED_CHECK(::rename(temp_path_.c_str(), final_path_.c_str()) == 0,
             "{}: cannot rename {} into place: {}", final_path_, temp_path_, errno_text());
  committed_ = true;
  const std::filesystem::path parent = std::filesystem::path(final_path_).parent_path();
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

}  // namespace heed::io
