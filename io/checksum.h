#pragma once
// SHA-256 digests (OpenSSL's libcrypto): a checkpoint's manifest records one per file, so that a
// flipped bit of the same size is caught on resume; the ranks of a job compare their data files'
// digests; the HTML pages name their own scripts by digest in their Content-Security-Policy.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace heed::io {

using Sha256 = std::array<uint8_t, 32>;

Sha256 sha256(std::string_view bytes);
// The file's digest, read in blocks; throws heed::Error naming the file when it cannot be read.
Sha256 sha256_file(const std::string& path);

// Lower-case hexadecimal, as sha256sum prints it.
std::string to_hex(const Sha256& digest);
// Standard base64 with padding, as a CSP source 'sha256-...' takes it.
std::string to_base64(const Sha256& digest);

}  // namespace heed::io
