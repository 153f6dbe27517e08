#include "io/checksum.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"

namespace heed::io {
namespace {

namespace fs = std::filesystem;

// FIPS 180-2's example "abc", and the empty message.
TEST(Checksum, Sha256MatchesTheStandardsExamples) {
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_base64(sha256("abc")), "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
}

TEST(Checksum, AFilesDigestIsItsBytesDigestAndAMissingFileIsNamed) {
  const fs::path path = fs::temp_directory_path() / "heed_checksum_test.bin";
  std::string bytes;
  for (int i = 0; i < 3 * (1 << 20) + 17; ++i) bytes += static_cast<char>(i * 7);  // > one block
  std::ofstream(path, std::ios::binary) << bytes;
  EXPECT_EQ(sha256_file(path.string()), sha256(bytes));
  fs::remove(path);
  try {
    sha256_file(path.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace heed::io
