#include "io/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/error.h"
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

// A FIFO (or a character device such as /dev/null) is written through, never renamed over.
TEST(AtomicFile, WritesThroughAFifoAndLeavesItAFifo) {
  const fs::path dir = fresh_dir("fifo");
  const fs::path fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_text(fifo); });
  write_file_atomically(fifo.string(), "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

// /dev/fd/N (and /dev/stdout, /proc/self/fd/N) write to the process's own descriptor.
TEST(AtomicFile, WritesToTheProcesssOwnDescriptor) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  write_file_atomically("/dev/fd/" + std::to_string(fds[1]), "to my descriptor");
  ::close(fds[1]);
  char buf[64] = {};
  const ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "to my descriptor");
}

TEST(AtomicFile, RefusesADirectoryByName) {
  const fs::path dir = fresh_dir("directory");
  try {
    write_file_atomically(dir.string(), "x");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir.string() + ": is a directory; name a file to write");
  }
  EXPECT_TRUE(fs::is_directory(dir));
}

TEST(AtomicFile, StaleTemporariesOfDeadWritersAreRemovedLiveOnesKept) {
  const fs::path dir = fresh_dir("stale");
  // Beyond Linux's largest pid (2^22): no such process.
  const std::string dead = "metrics.jsonl.tmp.999999999.3";
  const std::string live = "report.html.tmp." + std::to_string(::getpid()) + ".0";
  for (const std::string& name : {dead, live, std::string("notes.tmp.txt")}) {
    std::ofstream(dir / name) << "x";
  }
  EXPECT_EQ(remove_stale_temporaries(dir.string()), std::vector<std::string>{dead});
  EXPECT_FALSE(fs::exists(dir / dead));
  EXPECT_TRUE(fs::exists(dir / live));
  EXPECT_TRUE(fs::exists(dir / "notes.tmp.txt"));
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
