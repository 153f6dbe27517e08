// Every program says which heed it is: `--version` prints "<program> (heed) <version>" on
// stdout and exits 0, before anything it would otherwise require (infer's subcommand, train's
// --config, report's runs).
#include "heed/version.h"
#include "programs/programs_fixture.h"

namespace heed {
namespace {

using namespace heed::testing;

TEST_F(Programs, EveryProgramPrintsItsVersion) {
  const std::pair<std::string, std::string> programs[] = {
      {"train", kTrain}, {"infer", kInfer}, {"tokenize", kTokenize}, {"report", kReport}};
  for (const auto& [name, binary] : programs) {
    const Outcome r = run(binary + " --version");
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out, name + " (heed) " + HEED_VERSION_STRING + "\n");
    EXPECT_EQ(r.err, "") << name;
  }
}

TEST(Version, TheLibraryAndItsHeadersAgree) {
  EXPECT_STREQ(version(), HEED_VERSION_STRING);
  EXPECT_EQ(std::string(HEED_VERSION_STRING), std::to_string(HEED_VERSION_MAJOR) + "." +
                                                  std::to_string(HEED_VERSION_MINOR) + "." +
                                                  std::to_string(HEED_VERSION_PATCH));
}

}  // namespace
}  // namespace heed
