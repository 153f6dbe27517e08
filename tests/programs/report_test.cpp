// `report` on runs as a careless user or a damaged disk leaves them, and the programs' --out onto
// devices: found by the second bad-input and fault matrix. A reader never locks or writes a run;
// a bad record is skipped with a counted warning; every error names its file.
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "programs/programs_fixture.h"
#include "support/page_data.h"

namespace heed {
namespace {

using namespace heed::testing;

class Report : public Programs {
 protected:
  // A run directory as train leaves it, with the records given.
  std::string make_run(const std::string& name, const std::string& records) {
    const fs::path run_dir = dir_ / name;
    fs::create_directories(run_dir);
    std::ofstream(run_dir / "metrics.jsonl") << records;
    return run_dir.string();
  }
};

const std::string kGoodRecords =
    "{\"step\": 1, \"loss\": 2.5}\n{\"step\": 2, \"loss\": 2.0}\n"
    "{\"step\": 2, \"split\": \"valid\", \"loss\": 2.1}\n";

TEST_F(Report, BadRecordsAreSkippedWithACountedWarningNamingTheFileAndLine) {
  const std::string run_dir = make_run("run", kGoodRecords +
                                                  "{\"step\": \"3\", \"loss\": 1.0}\n"
                                                  "[1, 2]\n"
                                                  "{\"step\": 4, \"split\": 7}\n"
                                                  "{\"step\": 5, \"loss\": 1.5}\n"
                                                  "{\"step\": 6, \"lo");  // cut short by a kill
  const Outcome r = run_report(run_dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "report: warning: " + run_dir +
                       "/metrics.jsonl: skipped 3 lines that are not a metrics record (first: "
                       "line 4: 'step' is \"3\", not a step number)\n");
  const std::string page = file(path("page.html"));
  EXPECT_NE(page.find("{\"loss\":1.5,\"step\":5}"), std::string::npos);  // the good ones drawn
}

// A 100 MB metrics.jsonl made a page no browser could open: the page draws at most 20,000
// training records a run (every k-th, and the last), says so, and keeps every evaluation.
TEST_F(Report, ALongRunsTrainingRecordsAreThinnedForDrawingAndEvaluationsKept) {
  std::string records;
  for (int step = 1; step <= 50000; ++step) {
    records += "{\"step\": " + std::to_string(step) + ", \"loss\": 1.5}\n";
    if (step % 1000 == 0) {
      records += "{\"step\": " + std::to_string(step) + ", \"split\": \"valid\", \"loss\": 2}\n";
    }
  }
  const Outcome r = run_report(make_run("long", records));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json run = heed::testing::page_data(file(path("page.html")))["runs"][0];
  EXPECT_EQ(run["records_thinned"], nlohmann::json({{"every", 3}, {"of", 50000}}));
  size_t training = 0, evaluations = 0;
  for (const nlohmann::json& record : run["records"]) {
    ++(record.contains("split") ? evaluations : training);
  }
  EXPECT_EQ(training, 16668u);  // steps 1, 4, ..., 49999, and the last, 50000
  EXPECT_EQ(evaluations, 50u);
  EXPECT_EQ(run["progress"]["step"], 50000);
}

TEST_F(Report, EveryDamagedFileIsAnErrorNamingIt) {
  const std::string run_dir = make_run("run", kGoodRecords);
  fs::create_directories(fs::path(run_dir) / "final_metrics.json");
  Outcome r = run_report(run_dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "report: " + run_dir + "/final_metrics.json: is a directory, not a file\n");
  fs::remove(fs::path(run_dir) / "final_metrics.json");
  std::ofstream(fs::path(run_dir) / "final_metrics.json") << "[1, 2]";
  r = run_report(run_dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "report: " + run_dir + "/final_metrics.json: expected a JSON object, got array\n");

  const std::string metrics_dir = make_run("metrics_dir", "");
  fs::remove(fs::path(metrics_dir) / "metrics.jsonl");
  fs::create_directories(fs::path(metrics_dir) / "metrics.jsonl");
  r = run_report(metrics_dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "report: " + metrics_dir + "/metrics.jsonl: is a directory, not a file\n");

  std::ofstream(path("a_file")) << "x";
  r = run_report(path("a_file"));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "report: " + path("a_file") + ": is a file, not a run directory (train.output_dir)\n");
  EXPECT_FALSE(fs::exists(path("page.html")));
}

// A reader took the run's write lock: another user's or a read-only run could not be reported,
// and a train --resume started meanwhile was refused as "in use".
TEST_F(Report, AReaderCreatesAndWritesNothingInTheRun) {
  const std::string run_dir = make_run("run", kGoodRecords);
  fs::permissions(run_dir, fs::perms::owner_read | fs::perms::owner_exec);
  const Outcome r = run_report(run_dir);
  fs::permissions(run_dir, fs::perms::owner_all);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(fs::path(run_dir) / ".lock"));
  EXPECT_EQ(std::distance(fs::directory_iterator(run_dir), fs::directory_iterator()), 1);
  EXPECT_NE(file(path("page.html")).find("\"status\":\"stopped\""), std::string::npos);
}

// As root, atomic writes renamed a temporary file over /dev/null (and /dev/stdout), breaking it
// for the whole machine. As root the programs write to the real names, inside a private mount
// namespace whose /dev is a fresh tmpfs, so a regression breaks only that copy; as another user
// (who cannot replace /dev/null anyway) a FIFO stands for the device.
TEST_F(Report, DevicesPipesAndStandardOutputAreWrittenThroughNeverReplaced) {
  const std::string run_dir = make_run("run", kGoodRecords);
  const std::string corpus = path("corpus.txt");
  std::ofstream(corpus) << "the cat sat on the mat\n";
  const std::string commands = kReport + " " + run_dir + " --out $NULL >/dev/null && " + kTokenize +
                               " --train-vocab $NULL --vocab-size 30 <" + corpus + " && " +
                               kReport + " " + run_dir + " --out /dev/stdout >" + path("out.html") +
                               " && test -c $NULL -o -p $NULL && test -L /dev/stdout";
  Outcome r;
  if (::geteuid() == 0) {
    r =
        run("unshare -m sh -c 'mount -t tmpfs tmpfs /dev && mknod -m 666 /dev/null c 1 3 && "
            "ln -s /proc/self/fd/1 /dev/stdout && NULL=/dev/null && " +
            commands + "'");
  } else {
    const std::string fifo = path("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // One reader for each of the two writes to it; the timeout ends a reader left waiting.
    r = run("NULL=" + fifo + "; timeout 60 sh -c 'cat $0 >/dev/null; cat $0 >/dev/null' " + fifo +
            " & " + commands + "; status=$?; wait; exit $status");
  }
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(file(path("out.html")).find("<!DOCTYPE html>"), std::string::npos);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST_F(Report, ADirectoryAsTheOutputIsRefusedByName) {
  const std::string run_dir = make_run("run", kGoodRecords);
  const Outcome r = run(kReport + " " + run_dir + " --out " + dir_.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "report: " + dir_.string() + ": is a directory; name a file to write\n");
}

}  // namespace
}  // namespace heed
