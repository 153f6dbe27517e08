#include "io/directory_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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
    // OFD locks belong to the open file description, so a second open in this process conflicts
    // too, as another process's would.
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

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("heed_directory_lock_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// try_lock on `dir` fails with an error naming its .lock, and `victim` keeps its text.
void expect_refused_and_untouched(const fs::path& dir, const fs::path& victim) {
  std::string holder;
  try {
    DirectoryLock::try_lock(dir.string(), &holder);
    ADD_FAILURE() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find((dir / ".lock").string()), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_text(victim), "precious\n");
}

}  // namespace

TEST(DirectoryLock, ASymbolicLinkAsTheLockFileIsRefusedAndItsTargetUntouched) {
  const fs::path dir = fresh_dir("symlink");
  std::ofstream(dir / "victim") << "precious\n";
  fs::create_symlink(dir / "victim", dir / ".lock");
  expect_refused_and_untouched(dir, dir / "victim");
  // A dangling link is not followed to create its target either.
  fs::remove(dir / ".lock");
  fs::create_symlink(dir / "created_through_the_link", dir / ".lock");
  std::string holder;
  EXPECT_ANY_THROW(DirectoryLock::try_lock(dir.string(), &holder));
  EXPECT_FALSE(fs::exists(dir / "created_through_the_link"));
}

TEST(DirectoryLock, AHardLinkToAnotherFileIsRefusedAndUntouched) {
  const fs::path dir = fresh_dir("hardlink");
  std::ofstream(dir / "victim") << "precious\n";
  fs::create_hard_link(dir / "victim", dir / ".lock");
  expect_refused_and_untouched(dir, dir / "victim");
}

TEST(DirectoryLock, ALockFileHoldingOtherDataIsNeverTruncated) {
  const fs::path dir = fresh_dir("foreign");
  std::ofstream(dir / ".lock") << "precious\n";
  expect_refused_and_untouched(dir, dir / ".lock");
}

TEST(DirectoryLock, AnEarlierRunsLockFileIsTakenOver) {
  const fs::path dir = fresh_dir("earlier");
  std::ofstream(dir / ".lock") << "123456";
  std::string holder;
  ASSERT_TRUE(DirectoryLock::try_lock(dir.string(), &holder).has_value());
  EXPECT_EQ(read_text(dir / ".lock"), std::to_string(::getpid()));
}

TEST(DirectoryLock, HolderTestsTheLockWithoutTakingOrCreatingIt) {
  const fs::path dir = fresh_dir("holder");
  EXPECT_FALSE(DirectoryLock::holder(dir.string()).has_value());
  EXPECT_FALSE(fs::exists(dir / ".lock"));  // a reader creates nothing
  std::string holder;
  {
    std::optional<DirectoryLock> lock = DirectoryLock::try_lock(dir.string(), &holder);
    ASSERT_TRUE(lock.has_value());
    EXPECT_EQ(DirectoryLock::holder(dir.string()), "process " + std::to_string(::getpid()));
    // Testing leaves the lock with its holder: a second writer is still refused.
    EXPECT_FALSE(DirectoryLock::try_lock(dir.string(), &holder).has_value());
  }
  EXPECT_FALSE(DirectoryLock::holder(dir.string()).has_value());
  // A reader's test leaves no lock behind for a writer to run into.
  EXPECT_TRUE(DirectoryLock::try_lock(dir.string(), &holder).has_value());
}
