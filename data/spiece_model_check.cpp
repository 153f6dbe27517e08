#include "data/spiece_model_check.h"

#include <fmt/format.h>

#include <cstdint>

namespace heed::data {
namespace {

// Protobuf's wire format, as far as finding ModelProto.pieces[].piece takes: a reader over
// bytes that fails (returns false) at anything malformed, leaving the verdict to the library.
struct WireReader {
  std::string_view bytes;
  size_t at = 0;

  bool done() const { return at >= bytes.size(); }

  bool varint(uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64 && at < bytes.size(); shift += 7) {
      const auto byte = static_cast<uint8_t>(bytes[at++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  // The next field's number and, for a length-delimited one, its bytes (others are skipped).
  bool field(uint32_t& number, std::optional<std::string_view>& payload) {
    uint64_t key = 0, length = 0;
    if (!varint(key)) return false;
    number = static_cast<uint32_t>(key >> 3);
    payload.reset();
    switch (key & 7) {
      case 0:
        return varint(length);
      case 1:
        return skip(8);
      case 5:
        return skip(4);
      case 2:
        if (!varint(length) || length > bytes.size() - at) return false;
        payload = bytes.substr(at, length);
        at += length;
        return true;
      default:
        return false;
    }
  }

  bool skip(size_t n) {
    if (n > bytes.size() - at) return false;
    at += n;
    return true;
  }
};

// The `piece` (field 1) of one SentencePiece message, if it has one.
std::optional<std::string_view> piece_of(std::string_view message) {
  WireReader reader{message};
  std::optional<std::string_view> piece;
  while (!reader.done()) {
    uint32_t number = 0;
    std::optional<std::string_view> payload;
    if (!reader.field(number, payload)) return std::nullopt;
    if (number == 1 && payload) piece = payload;
  }
  return piece;
}

}  // namespace

std::optional<std::string> unloadable_piece(std::string_view model_bytes) {
  WireReader reader{model_bytes};
  for (size_t index = 0; !reader.done();) {
    uint32_t number = 0;
    std::optional<std::string_view> payload;
    if (!reader.field(number, payload)) return std::nullopt;
    if (number != 1 || !payload) continue;  // ModelProto.pieces is field 1
    const std::optional<std::string_view> piece = piece_of(*payload);
    if (piece && piece->empty()) return fmt::format("piece {} is empty", index);
    if (piece && piece->find('\0') != std::string_view::npos) {
      return fmt::format("piece {} holds a NUL byte", index);
    }
    ++index;
  }
  return std::nullopt;
}

}  // namespace heed::data
