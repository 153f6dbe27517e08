#include "train/reporting/metrics_log.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "base/error.h"
#include "io/atomic_file.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

fs::path metrics_path(const std::string& output_dir) {
  return fs::path(output_dir) / "metrics.jsonl";
}

}  // namespace

void append_metrics_record(const std::string& output_dir, const nlohmann::json& record) {
  const fs::path path = metrics_path(output_dir);
  std::ofstream out(path, std::ios::app);
  out << record.dump() << "\n";
  out.flush();
  HEED_CHECK(out.good(), "{}: cannot append a record: {}", path.string(), std::strerror(errno));
}

uint64_t metrics_size(const std::string& output_dir) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(metrics_path(output_dir), ec);
  return ec ? 0 : size;
}

void truncate_metrics_after(const std::string& output_dir, int64_t step,
                            std::optional<uint64_t> size_at_checkpoint) {
  const fs::path path = metrics_path(output_dir);
  if (!fs::exists(path)) return;
  std::ifstream in(path);
  std::string kept, line;
  uint64_t read = 0;
  while (std::getline(in, line)) {
    read += line.size() + 1;
    if (size_at_checkpoint && read > *size_at_checkpoint) break;
    try {
      if (nlohmann::json::parse(line).value("step", int64_t{0}) <= step) kept += line + "\n";
    } catch (const nlohmann::json::exception&) {
      // A line cut short by a kill: drop it.
    }
  }
  in.close();
  io::write_file_atomically(path.string(), kept);
}

}  // namespace heed::train
