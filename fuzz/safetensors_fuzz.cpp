// The safetensors reader (io/safetensors.h) on arbitrary file bytes. A file it accepts must
// keep its promises: every tensor's bytes lie inside the data buffer and match its shape, the
// tensors heed can hold load, and writing them back gives a file that reads the same.
#include <cstring>
#include <optional>

#include "fuzz/fuzz_util.h"
#include "io/safetensors.h"

namespace {

using heed::fuzz::as_text;
using heed::fuzz::write_scratch;

// The reader's dtypes that become heed tensors (SafetensorsFile::get).
bool heed_can_hold(const std::string& dtype) {
  for (const char* name : {"F32", "F64", "BF16", "I32", "I64", "U8", "BOOL"}) {
    if (dtype == name) return true;
  }
  return false;
}

void check_accepted_file(const heed::io::SafetensorsFile& file, std::string_view input) {
  uint64_t header_length;
  std::memcpy(&header_length, input.data(), 8);
  const uint64_t buffer_size = input.size() - 8 - header_length;
  const char* buffer = input.data() + 8 + header_length;
  uint64_t covered = 0;
  std::vector<std::pair<std::string, heed::Tensor>> tensors;
  for (const std::string& name : file.names()) {
    const heed::io::SafetensorsTensorInfo& info = file.info(name);
    HEED_FUZZ_REQUIRE(info.begin <= info.end && info.end <= buffer_size);
    covered += info.end - info.begin;
    const std::span<const std::byte> bytes = file.bytes(name);
    HEED_FUZZ_REQUIRE(bytes.size() == info.end - info.begin);
    HEED_FUZZ_REQUIRE(bytes.empty() ||
                      std::memcmp(bytes.data(), buffer + info.begin, bytes.size()) == 0);
    if (!heed_can_hold(info.dtype)) continue;
    const heed::Tensor tensor = file.get(name);
    HEED_FUZZ_REQUIRE(tensor.shape() == info.shape);
    HEED_FUZZ_REQUIRE(static_cast<uint64_t>(tensor.numel()) * heed::dtype_size(tensor.dtype()) ==
                      bytes.size());
    HEED_FUZZ_REQUIRE(bytes.empty() ||
                      std::memcmp(tensor.raw_data(), bytes.data(), bytes.size()) == 0);
    tensors.emplace_back(name, tensor);
  }
  HEED_FUZZ_REQUIRE(covered == buffer_size);  // the tensors tile the buffer

  // Round trip through the writer when every tensor is one heed holds. BOOL comes back as U8.
  if (tensors.size() != file.names().size()) return;
  const std::string copy = (heed::fuzz::scratch_dir() / "copy.safetensors").string();
  heed::io::save_safetensors(copy, tensors, file.metadata());
  const heed::io::SafetensorsFile reread(copy);
  HEED_FUZZ_REQUIRE(reread.names().size() == tensors.size());
  HEED_FUZZ_REQUIRE(reread.metadata() == file.metadata());
  for (const auto& [name, tensor] : tensors) {
    HEED_FUZZ_REQUIRE(reread.info(name).shape == tensor.shape());
    const std::span<const std::byte> a = file.bytes(name);
    const std::span<const std::byte> b = reread.bytes(name);
    HEED_FUZZ_REQUIRE(a.size() == b.size() &&
                      (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = as_text(data, size);
  const std::string path = write_scratch("model.safetensors", input);
  std::optional<heed::io::SafetensorsFile> file;
  heed::fuzz::rejecting_with_heed_errors([&] { file.emplace(path); });
  // Past the constructor every error is a finding: the header was validated.
  if (file) check_accepted_file(*file, input);
  return 0;
}
