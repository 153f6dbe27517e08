#pragma once
// JSON files as the programs write and read them: config.json, trainer_state.json,
// final_metrics.json, tokenizer_config.json.
#include <nlohmann/json.hpp>

#include <string>

namespace heed::io {

// Pretty-printed (2 spaces), written atomically (io/atomic_file.h).
void write_json_file(const std::string& path, const nlohmann::json& j);
// Throws heed::Error naming the file when it cannot be read or is not valid JSON.
nlohmann::json read_json_file(const std::string& path);

}  // namespace heed::io
