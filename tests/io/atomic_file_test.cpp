#include "io/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "autograd/error.h"
#include "io/json_file.h"

namespace heed::io {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("heed_io_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(AtomicFile, ReplacesTheFileOnlyOnCommit) {
  const fs::path dir = fresh_dir("commit");
  const fs::path path = dir / "a.txt";
  write_file_atomically(path.string(), "old");
  {
    AtomicFile file(path.string());
    file.write("new, but never committed");
    EXPECT_EQ(read_text(path), "old");  // a reader meanwhile sees the old file whole
  }
  EXPECT_EQ(read_text(path), "old");
  // The uncommitted temporary file is gone: the directory holds the one file.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  write_file_atomically(path.string(), "new");
  EXPECT_EQ(read_text(path), "new");
}

TEST(AtomicFile, NamesTheFileWhenItsDirectoryIsMissing) {
  const fs::path path = fresh_dir("missing") / "no_such_dir" / "a.txt";
  try {
    AtomicFile file(path.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST(JsonFile, RoundTripsAndNamesABadFile) {
  const fs::path dir = fresh_dir("json");
  const nlohmann::json j = {{"step", 3}, {"loss", 1.5}, {"names", {"a", "b"}}};
  write_json_file((dir / "state.json").string(), j);
  EXPECT_EQ(read_json_file((dir / "state.json").string()), j);
  std::ofstream(dir / "bad.json") << "{\"step\": ";
  try {
    read_json_file((dir / "bad.json").string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: not valid JSON"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_json_file((dir / "absent.json").string()), Error);
}

}  // namespace
}  // namespace heed::io
