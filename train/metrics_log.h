#pragma once
// output_dir/metrics.jsonl: one JSON record per line, appended as the run goes.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace heed::train {

// Appends `record`; throws naming the file when it cannot (a full disk).
void append_metrics_record(const std::string& output_dir, const nlohmann::json& record);

// Drops the records of steps after `step`: an interrupted run may have logged past its last
// checkpoint, and the resumed run logs those steps again. A line cut short by a kill goes too.
void truncate_metrics_after(const std::string& output_dir, int64_t step);

}  // namespace heed::train
