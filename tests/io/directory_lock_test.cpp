#include "io/directory_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace fs = std::filesystem;
using heed::io::DirectoryLock;

TEST(DirectoryLock, ASecondLockIsRefusedAndNamesTheHolderUntilTheFirstIsReleased) {
  const fs::path dir = fs::path(::testing::TempDir()) / "heed_directory_lock";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string holder;
  {
    std::optional<DirectoryLock> first = DirectoryLock::try_lock(dir.string(), &holder);
    ASSERT_TRUE(first.has_value());
    // flock locks belong to the open file, so a second open in this process conflicts too, as
    // another process's would.
    const std::optional<DirectoryLock> second = DirectoryLock::try_lock(dir.string(), &holder);
    EXPECT_FALSE(second.has_value());
    EXPECT_EQ(holder, "process " + std::to_string(::getpid()));
  }
  EXPECT_TRUE(DirectoryLock::try_lock(dir.string(), &holder).has_value());
}

TEST(DirectoryLock, AMissingDirectoryIsAnErrorNamingIt) {
  std::string holder;
  try {
    DirectoryLock::try_lock("/no/such/dir", &holder);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/dir/.lock: cannot open the lock file"),
              std::string::npos)
        << e.what();
  }
}
