// The readers of a run directory that `report` and `train --resume` take as a crash, a full
// disk or a careless hand left it. Byte 0 chooses the file (its value modulo 5); the rest is the
// file's bytes:
//   0  metrics.jsonl       train::run_report_data: every record it returns has a step that is a
//                          non-negative integer and a split that is a name; bad lines are
//                          skipped (with a warning), never an exception of another kind
//   1  final_metrics.json  train::run_report_data
//   2  run_info.json       train::run_report_data
//   3  manifest.json       train::checkpoint_problem, by sizes and by contents, of a
//                          checkpoint-7 directory that holds the files a checkpoint needs
//   4  .lock               io::DirectoryLock::holder, then try_lock: a lock file holding
//                          anything but a process id is refused and left as it was
#include <filesystem>

#include "fuzz/fuzz_util.h"
#include "io/directory_lock.h"
#include "io/text_file.h"
#include "train/checkpoint/training_checkpoint.h"
#include "train/reporting/run_report.h"

namespace {

namespace fs = std::filesystem;
using heed::fuzz::write_scratch;

// A run directory holding only `name` with `bytes` (and metrics.jsonl, so that it is a run).
std::string run_with(const std::string& name, std::string_view bytes) {
  const fs::path dir = heed::fuzz::scratch_dir() / "run";
  fs::remove_all(dir);
  write_scratch("run/metrics.jsonl", "{\"step\": 1, \"loss\": 2.0}\n");
  write_scratch("run/" + name, bytes);
  return dir.string();
}

void report(const std::string& name, std::string_view bytes) {
  const nlohmann::json data =
      heed::train::run_report_data(run_with(name, bytes), std::nullopt, [](const std::string&) {});
  for (const nlohmann::json& record : data.at("records")) {
    HEED_FUZZ_REQUIRE(record.is_object());
    HEED_FUZZ_REQUIRE(record.at("step").is_number_integer() && record.at("step") >= 0);
    HEED_FUZZ_REQUIRE(!record.contains("split") || record.at("split").is_string());
  }
}

void manifest(std::string_view bytes) {
  const fs::path dir = heed::fuzz::scratch_dir() / "out" / "checkpoint-7";
  fs::remove_all(dir.parent_path());
  for (const char* name :
       {"config.json", "model.safetensors", "optimizer.safetensors", "run_config.yaml"}) {
    write_scratch(std::string("out/checkpoint-7/") + name, "x");
  }
  write_scratch("out/checkpoint-7/trainer_state.json", "{\"step\": 7}");
  write_scratch("out/checkpoint-7/manifest.json", bytes);
  for (auto check : {heed::train::CheckpointCheck::sizes, heed::train::CheckpointCheck::contents}) {
    heed::train::checkpoint_problem(dir.string(), check);
  }
  heed::train::latest_checkpoint(dir.parent_path().string());
}

void lock_file(std::string_view bytes) {
  const fs::path dir = heed::fuzz::scratch_dir() / "locked";
  fs::remove_all(dir);
  const std::string path = write_scratch("locked/.lock", bytes);
  heed::io::DirectoryLock::holder(dir.string());
  std::string holder;
  try {
    const auto lock = heed::io::DirectoryLock::try_lock(dir.string(), &holder);
    HEED_FUZZ_REQUIRE(lock.has_value());  // nobody else holds it
  } catch (const heed::Error&) {
    HEED_FUZZ_REQUIRE(heed::io::read_text_file(path) == bytes);  // refused: left as it was
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes = heed::fuzz::as_text(data + 1, size - 1);
  heed::fuzz::rejecting_with_heed_errors([&] {
    switch (data[0] % 5) {
      case 0:
        return report("metrics.jsonl", bytes);
      case 1:
        return report("final_metrics.json", bytes);
      case 2:
        return report("run_info.json", bytes);
      case 3:
        return manifest(bytes);
      default:
        return lock_file(bytes);
    }
  });
  return 0;
}
