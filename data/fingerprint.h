#pragma once
// 64-bit FNV-1a: a cheap, stable content fingerprint for cache keys (not for security).
#include <cstdint>
#include <string>
#include <string_view>

namespace heed::data {

class Fnv1a64 {
 public:
  void update(std::string_view bytes) {
    for (unsigned char c : bytes) {
      hash_ ^= c;
      hash_ *= 0x100000001b3ULL;
    }
  }
  void update_u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      hash_ ^= (v >> (8 * i)) & 0xFF;
      hash_ *= 0x100000001b3ULL;
    }
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// Fingerprint of a whole file's bytes; throws naming the file when it cannot be read.
uint64_t fingerprint_file(const std::string& path);

}  // namespace heed::data
