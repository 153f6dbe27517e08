#pragma once
// output_dir/metrics.jsonl: one JSON record per line, appended as the run goes.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace heed::train {

// Appends `record`; throws naming the file when it cannot (a full disk).
void append_metrics_record(const std::string& output_dir, const nlohmann::json& record);

// metrics.jsonl's size in bytes (0 when absent): a checkpoint records it, so that a resume
// knows which records came after it.
uint64_t metrics_size(const std::string& output_dir);

// Drops what was logged after the checkpoint a run resumes from: an interrupted run may have
// logged past it (later steps, or the final evaluations of a run stopped before its
// final_metrics.json), and the resumed run logs them again. With `size_at_checkpoint` (what the
// checkpoint recorded) the file is cut back to it; checkpoints older than that record drop the
// records of steps after `step`. A line cut short by a kill goes too.
void truncate_metrics_after(const std::string& output_dir, int64_t step,
                            std::optional<uint64_t> size_at_checkpoint = std::nullopt);

}  // namespace heed::train
