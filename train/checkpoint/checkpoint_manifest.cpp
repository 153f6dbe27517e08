#include "train/checkpoint/checkpoint_manifest.h"

#include <filesystem>

#include "base/error.h"
#include "io/atomic_file.h"
#include "io/checksum.h"
#include "io/json_fields.h"
#include "io/json_file.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;
constexpr const char* kManifest = "manifest.json";
// What resuming reads; a checkpoint without any of them is not one.
constexpr const char* kRequiredFiles[] = {"config.json", "model.safetensors",
                                          "optimizer.safetensors", "trainer_state.json",
                                          "run_config.yaml"};

// The step a checkpoint-STEP directory's name gives.
int64_t step_of(const fs::path& dir) {
  return std::stoll(dir.filename().string().substr(dir.filename().string().rfind('-') + 1));
}

// Why one file of a manifest does not match what is on disk, if it does not. An entry is a size
// (manifests written before checksums) or {size, sha256}.
std::optional<std::string> file_problem(const fs::path& dir, const std::string& name,
                                        const io::JsonFields& files, CheckpointCheck check) {
  const bool has_digest = files.json().at(name).is_object();
  const uint64_t expected = has_digest ? files.object(name).uint64("size") : files.uint64(name);
  std::error_code ec;
  const uintmax_t actual = fs::file_size(dir / name, ec);
  if (ec) return fmt::format("{} is missing", name);
  if (actual != expected) {
    return fmt::format("{} has {} bytes, {} when it was written", name, actual, expected);
  }
  if (check == CheckpointCheck::contents && has_digest &&
      io::to_hex(io::sha256_file((dir / name).string())) != files.object(name).string("sha256")) {
    return fmt::format("{} has other contents than when it was written (its SHA-256 differs)",
                       name);
  }
  return std::nullopt;
}

// Why the steps that the manifest and trainer_state.json record are not the directory's.
std::optional<std::string> step_problem(const fs::path& dir, const nlohmann::json& manifest) {
  const int64_t step = step_of(dir);
  if (manifest.contains("step") && manifest.at("step") != step) {
    return fmt::format("{} records step {}, not {}", kManifest, manifest.at("step").dump(), step);
  }
  const std::string state_path = (dir / "trainer_state.json").string();
  const nlohmann::json state = io::read_json_file(state_path);
  const int64_t recorded = io::JsonFields(state, state_path).int64("step");
  if (recorded != step) {
    return fmt::format("trainer_state.json records step {}, not {}", recorded, step);
  }
  return std::nullopt;
}

}  // namespace

// Records every file of the filled temporary directory with its size and SHA-256, after fsyncing
// each. Written last, so that its presence says the rest was written whole.
void write_manifest(const std::string& dir, int64_t step) {
  const fs::path tmp(dir);
  nlohmann::json files = nlohmann::json::object();
  for (const auto& entry : fs::directory_iterator(tmp)) {
    HEED_CHECK(entry.is_regular_file(), "{}: a checkpoint holds files only", entry.path().string());
    io::fsync_path(entry.path().string());
    files[entry.path().filename().string()] = {
        {"size", entry.file_size()},
        {"sha256", io::to_hex(io::sha256_file(entry.path().string()))}};
  }
  for (const char* name : kRequiredFiles) {
    HEED_CHECK(files.contains(name), "{}: the checkpoint's writer left out {}", tmp.string(), name);
  }
  io::write_json_file((tmp / kManifest).string(), {{"step", step}, {"files", files}});
}

std::optional<std::string> checkpoint_problem(const std::string& dir, CheckpointCheck check) {
  const fs::path d(dir);
  if (!fs::exists(d / kManifest)) {
    // Written before checkpoints had a manifest: complete if its files are there and not empty.
    for (const char* name : kRequiredFiles) {
      std::error_code ec;
      if (fs::file_size(d / name, ec) == 0 || ec) {
        return fmt::format("{} is missing or empty (and it has no {})", name, kManifest);
      }
    }
    return std::nullopt;
  }
  try {
    const std::string path = (d / kManifest).string();
    const nlohmann::json manifest = io::read_json_file(path);
    const io::JsonFields files = io::JsonFields(manifest, path).object("files");
    for (const auto& [name, entry] : files.json().items()) {
      if (std::optional<std::string> problem = file_problem(d, name, files, check)) return problem;
    }
    return step_problem(d, manifest);
  } catch (const std::exception& e) {
    return fmt::format("unreadable: {}", e.what());
  }
}

}  // namespace heed::train
