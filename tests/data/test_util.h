#pragma once
// Helpers shared by the data tests: scratch files in a per-test temporary directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace heed::data::testing {

inline std::string golden_path(const std::string& name) {
  return std::string(HEED_DATA_TEST_DIR) + "/golden/" + name;
}

// A fresh directory under the system temp dir, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("heed_data_") + info->test_suite_name() + "_" + info->name() + "_" +
             std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& content) const {
    std::string p = file(name);
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace heed::data::testing
