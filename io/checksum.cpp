#include "io/checksum.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "base/error.h"

namespace heed::io {
namespace {

using DigestContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

DigestContext new_sha256() {
  DigestContext context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  HEED_CHECK(context && EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) == 1,
             "SHA-256: libcrypto could not start a digest");
  return context;
}

Sha256 finish(EVP_MD_CTX* context) {
  Sha256 digest{};
  unsigned int size = 0;
  HEED_CHECK(EVP_DigestFinal_ex(context, digest.data(), &size) == 1 && size == digest.size(),
             "SHA-256: libcrypto could not finish a digest");
  return digest;
}

}  // namespace

Sha256 sha256(std::string_view bytes) {
  DigestContext context = new_sha256();
  HEED_CHECK(EVP_DigestUpdate(context.get(), bytes.data(), bytes.size()) == 1,
             "SHA-256: libcrypto could not digest {} bytes", bytes.size());
  return finish(context.get());
}

Sha256 sha256_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  HEED_CHECK(fd >= 0, "{}: cannot open it to check its contents: {}", path, std::strerror(errno));
  DigestContext context = new_sha256();
  std::vector<char> block(1 << 20);
  for (;;) {
    const ssize_t n = ::read(fd, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string error = std::strerror(errno);
      ::close(fd);
      fail("{}: cannot read it to check its contents: {}", path, error);
    }
    if (n == 0) break;
    EVP_DigestUpdate(context.get(), block.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return finish(context.get());
}

std::string to_hex(const Sha256& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t byte : digest) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out;
}

std::string to_base64(const Sha256& digest) {
  // 4 characters per 3 bytes, rounded up, and the terminating NUL EVP_EncodeBlock writes.
  char out[4 * ((sizeof(Sha256) + 2) / 3) + 1] = {};
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out), digest.data(),
                                static_cast<int>(digest.size()));
  return std::string(out, static_cast<size_t>(n));
}

}  // namespace heed::io
