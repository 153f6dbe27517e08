#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>

#include "autograd/grad_mode.h"
#include "io/atomic_file.h"
#include "io/utf8.h"

namespace heed::io {

// heed writes tensor memory to disk as it is and maps file bytes straight into tensors.
static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; heed assumes a little-endian host");

namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference reader's limit
constexpr std::string_view kMetadataKey = "__metadata__";

struct FileDtype {
  std::string_view name;
  uint64_t bits;  // per element; F4 and F6 pack several elements into a byte
};

// Every dtype of the format, in the reference implementation's enum order. The writer sorts
// by this rank (descending) so that, given a header padded to 8 bytes, each tensor's data is
// aligned to its element size.
constexpr std::array<FileDtype, 22> kFileDtypes = {{
    {"BOOL", 8},        {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
    {"I8", 8},          {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8},
    {"F8_E5M2FNUZ", 8}, {"I16", 16},    {"U16", 16},    {"F16", 16},    {"BF16", 16},
    {"I32", 32},        {"U32", 32},    {"F32", 32},    {"C64", 64},    {"F64", 64},
    {"I64", 64},        {"U64", 64},
}};

std::optional<size_t> file_dtype_rank(std::string_view name) {
  for (size_t i = 0; i < kFileDtypes.size(); ++i) {
    if (kFileDtypes[i].name == name) return i;
  }
  return std::nullopt;
}

std::string_view file_dtype_of(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "F32";
    case DType::f64:
      return "F64";
    case DType::bf16:
      return "BF16";
    case DType::i32:
      return "I32";
    case DType::i64:
      return "I64";
    case DType::u8:
      return "U8";
  }
  fail("safetensors: no file dtype for heed dtype {}", dtype);
}

std::optional<DType> heed_dtype_of(std::string_view file_dtype) {
  if (file_dtype == "F32") return DType::f32;
  if (file_dtype == "F64") return DType::f64;
  if (file_dtype == "BF16") return DType::bf16;
  if (file_dtype == "I32") return DType::i32;
  if (file_dtype == "I64") return DType::i64;
  if (file_dtype == "U8" || file_dtype == "BOOL") return DType::u8;
  return std::nullopt;
}

std::string errno_text() {
  return std::strerror(errno);
}

// ---------------------------------------------------------------------------------------
// Writing

struct PlannedTensor {
  const std::string* name;
  Tensor tensor;  // any layout; made contiguous only while it is written
  std::string_view dtype;
  uint64_t begin;
  uint64_t end;
};

void check_names(const std::string& path,
                 const std::vector<std::pair<std::string, Tensor>>& tensors,
                 const std::map<std::string, std::string>& metadata) {
  std::set<std::string_view> seen;
  for (const auto& [name, tensor] : tensors) {
    HEED_CHECK(name != kMetadataKey,
               "{}: cannot save a tensor named '{}': the name is reserved for the metadata", path,
               name);
    HEED_CHECK(seen.insert(name).second, "{}: tensor '{}' is given twice", path, name);
    HEED_CHECK(tensor.defined(), "{}: tensor '{}' is undefined", path, name);
    HEED_CHECK(find_invalid_utf8(name) == std::string_view::npos,
               "{}: tensor name '{}' is not valid UTF-8", path, name);
  }
  for (const auto& [key, value] : metadata) {
    HEED_CHECK(find_invalid_utf8(key) == std::string_view::npos &&
                   find_invalid_utf8(value) == std::string_view::npos,
               "{}: metadata entry '{}' is not valid UTF-8", path, key);
  }
}

// The reference writer's layout: descending dtype rank, then name, packed with no gaps.
std::vector<PlannedTensor> plan_layout(const std::vector<std::pair<std::string, Tensor>>& tensors) {
  std::vector<PlannedTensor> plan;
  plan.reserve(tensors.size());
  for (const auto& [name, tensor] : tensors) {
    plan.push_back({&name, tensor, file_dtype_of(tensor.dtype()), 0, 0});
  }
  std::sort(plan.begin(), plan.end(), [](const PlannedTensor& a, const PlannedTensor& b) {
    const size_t rank_a = *file_dtype_rank(a.dtype);
    const size_t rank_b = *file_dtype_rank(b.dtype);
    if (rank_a != rank_b) return rank_a > rank_b;
    return *a.name < *b.name;
  });
  uint64_t offset = 0;
  for (PlannedTensor& t : plan) {
    t.begin = offset;
    offset += static_cast<uint64_t>(t.tensor.numel()) * dtype_size(t.tensor.dtype());
    t.end = offset;
  }
  return plan;
}

// Compact JSON as serde_json writes it, "__metadata__" first, padded with spaces to a
// multiple of 8 bytes.
std::string build_header(const std::vector<PlannedTensor>& plan,
                         const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header[std::string(kMetadataKey)] = metadata;
  for (const PlannedTensor& t : plan) {
    nlohmann::ordered_json entry;
    entry["dtype"] = t.dtype;
    entry["shape"] = t.tensor.shape();
    entry["data_offsets"] = {t.begin, t.end};
    header[*t.name] = std::move(entry);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

// ---------------------------------------------------------------------------------------
// Reading

std::shared_ptr<const std::byte> map_file(const std::string& path, size_t& file_size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  HEED_CHECK(fd >= 0, "{}: cannot open: {}", path, errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("{}: not a regular file", path);
  }
  file_size = static_cast<size_t>(st.st_size);
  if (file_size < 8) {
    ::close(fd);
    fail("{}: file is {} bytes, too small to hold the 8-byte header length (truncated?)", path,
         file_size);
  }
  void* address = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  const std::string mmap_error = address == MAP_FAILED ? errno_text() : "";
  ::close(fd);  // the mapping stays valid without the descriptor
  HEED_CHECK(address != MAP_FAILED, "{}: mmap failed: {}", path, mmap_error);
  return std::shared_ptr<const std::byte>(
      static_cast<const std::byte*>(address),
      [file_size](const std::byte* p) { ::munmap(const_cast<std::byte*>(p), file_size); });
}

uint64_t read_header_length(const std::string& path, const std::byte* file, size_t file_size) {
  uint64_t n;
  std::memcpy(&n, file, 8);
  HEED_CHECK(n <= kMaxHeaderBytes,
             "{}: header length {} exceeds the limit of {} bytes; this is not a safetensors "
             "file, or it is corrupt",
             path, n, kMaxHeaderBytes);
  HEED_CHECK(n <= file_size - 8,
             "{}: header length {} runs past the end of the file ({} bytes); the file is "
             "truncated or not a safetensors file",
             path, n, file_size);
  return n;
}

// Parses the header text, rejecting duplicate keys at any level: the format forbids them and a
// JSON parser would silently keep one of the two.
nlohmann::json parse_header_json(const std::string& path, std::string_view text) {
  const size_t bad_byte = find_invalid_utf8(text);
  HEED_CHECK(bad_byte == std::string_view::npos, "{}: header is not valid UTF-8 (at byte {})", path,
             bad_byte);
  std::vector<std::set<std::string>> open_objects;
  std::optional<std::string> duplicate_key;
  auto watch_keys = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) open_objects.emplace_back();
    if (event == Event::object_end) open_objects.pop_back();
    if (event == Event::key && !open_objects.back().insert(parsed.get<std::string>()).second &&
        !duplicate_key) {
      duplicate_key = parsed.get<std::string>();
    }
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text.begin(), text.end(), watch_keys);
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for a number too large for a double (1e400).
    fail("{}: header is not valid JSON: {}", path, e.what());
  }
  HEED_CHECK(!duplicate_key, "{}: header has the key '{}' more than once", path, *duplicate_key);
  HEED_CHECK(header.is_object(), "{}: header must be a JSON object, not {}", path,
             header.type_name());
  return header;
}

std::map<std::string, std::string> parse_metadata(const std::string& path,
                                                  const nlohmann::json& value) {
  std::map<std::string, std::string> metadata;
  if (value.is_null()) return metadata;
  HEED_CHECK(value.is_object(), "{}: '{}' must be an object of strings, not {}", path, kMetadataKey,
             value.type_name());
  for (const auto& [key, entry] : value.items()) {
    HEED_CHECK(entry.is_string(), "{}: '{}' entry '{}' must be a string, not {}", path,
               kMetadataKey, key, entry.type_name());
    metadata[key] = entry.get<std::string>();
  }
  return metadata;
}

// A non-negative integer that fits `limit`, as serde reads a usize.
uint64_t parse_count(const nlohmann::json& value, uint64_t limit, bool& ok) {
  ok = value.is_number_unsigned() && value.get<uint64_t>() <= limit;
  return ok ? value.get<uint64_t>() : 0;
}

SafetensorsTensorInfo parse_tensor_info(const std::string& path, const std::string& name,
                                        const nlohmann::json& entry) {
  HEED_CHECK(entry.is_object(), "{}: tensor '{}': entry must be an object, not {}", path, name,
             entry.type_name());
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    HEED_CHECK(entry.contains(field), "{}: tensor '{}': missing '{}'", path, name, field);
  }
  SafetensorsTensorInfo info;
  const nlohmann::json& dtype = entry["dtype"];
  HEED_CHECK(dtype.is_string(), "{}: tensor '{}': 'dtype' must be a string, not {}", path, name,
             dtype.type_name());
  info.dtype = dtype.get<std::string>();
  HEED_CHECK(file_dtype_rank(info.dtype), "{}: tensor '{}': unknown dtype '{}'", path, name,
             info.dtype);

  const nlohmann::json& shape = entry["shape"];
  HEED_CHECK(shape.is_array(), "{}: tensor '{}': 'shape' must be an array, not {}", path, name,
             shape.type_name());
  for (const nlohmann::json& dim : shape) {
    bool ok;
    // heed shapes are int64: a larger dimension could only belong to an empty tensor.
    const uint64_t size = parse_count(dim, std::numeric_limits<int64_t>::max(), ok);
    HEED_CHECK(ok, "{}: tensor '{}': shape {} must hold non-negative integers below 2^63", path,
               name, shape.dump());
    info.shape.push_back(static_cast<int64_t>(size));
  }

  const nlohmann::json& offsets = entry["data_offsets"];
  bool begin_ok = false;
  bool end_ok = false;
  if (offsets.is_array() && offsets.size() == 2) {
    info.begin = parse_count(offsets[0], std::numeric_limits<uint64_t>::max(), begin_ok);
    info.end = parse_count(offsets[1], std::numeric_limits<uint64_t>::max(), end_ok);
  }
  HEED_CHECK(begin_ok && end_ok,
             "{}: tensor '{}': 'data_offsets' must be [BEGIN, END] with non-negative integers, "
             "not {}",
             path, name, offsets.dump());
  return info;
}

// The number of bytes a tensor's shape and dtype call for, checked as the reference does:
// for overflow of the element count and of the bit count, and for sub-byte dtypes ending
// mid-byte.
uint64_t expected_bytes(const std::string& path, const std::string& name,
                        const SafetensorsTensorInfo& info) {
  uint64_t numel = 1;
  bool overflow = false;
  for (int64_t dim : info.shape) {
    overflow = overflow || __builtin_mul_overflow(numel, static_cast<uint64_t>(dim), &numel);
    // heed counts elements in int64, so every partial product must fit one.
    overflow = overflow || numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  }
  uint64_t bits = 0;
  const uint64_t bits_per_element = kFileDtypes[*file_dtype_rank(info.dtype)].bits;
  overflow = overflow || __builtin_mul_overflow(numel, bits_per_element, &bits);
  HEED_CHECK(!overflow, "{}: tensor '{}': shape {} of {} overflows 64-bit arithmetic", path, name,
             shape_str(info.shape), info.dtype);
  HEED_CHECK(bits % 8 == 0,
             "{}: tensor '{}': shape {} of {} is {} bits, not a whole number of bytes", path, name,
             shape_str(info.shape), info.dtype, bits);
  return bits / 8;
}

// Checks that the tensors, in offset order, tile the byte buffer from 0 with no overlap and no
// hole, each holding exactly the bytes its shape needs. Returns the names in offset order.
std::vector<std::string> validate_layout(
    const std::string& path, const std::unordered_map<std::string, SafetensorsTensorInfo>& infos,
    uint64_t buffer_size, uint64_t header_end) {
  std::vector<const std::pair<const std::string, SafetensorsTensorInfo>*> order;
  for (const auto& entry : infos) order.push_back(&entry);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    const auto& x = a->second;
    const auto& y = b->second;
    if (x.begin != y.begin) return x.begin < y.begin;
    if (x.end != y.end) return x.end < y.end;
    return a->first < b->first;
  });

  uint64_t previous_end = 0;
  const std::string* previous_name = nullptr;
  for (const auto* entry : order) {
    const std::string& name = entry->first;
    const SafetensorsTensorInfo& info = entry->second;
    HEED_CHECK(info.end >= info.begin,
               "{}: tensor '{}': data_offsets [{}, {}] end before they begin", path, name,
               info.begin, info.end);
    HEED_CHECK(info.begin >= previous_end,
               "{}: tensor '{}': data_offsets [{}, {}] overlap the previous tensor '{}', which "
               "ends at {}",
               path, name, info.begin, info.end, *previous_name, previous_end);
    if (info.begin > previous_end) {
      fail(
          "{}: tensor '{}': data_offsets [{}, {}] leave a hole: bytes [{}, {}) of the data "
          "buffer belong to no tensor",
          path, name, info.begin, info.end, previous_end, info.begin);
    }
    const uint64_t needed = expected_bytes(path, name, info);
    HEED_CHECK(info.end - info.begin == needed,
               "{}: tensor '{}': shape {} of {} needs {} bytes, but data_offsets [{}, {}] hold {}",
               path, name, shape_str(info.shape), info.dtype, needed, info.begin, info.end,
               info.end - info.begin);
    previous_end = info.end;
    previous_name = &name;
  }

  HEED_CHECK(previous_end <= buffer_size,
             "{}: file is truncated: the tensors' data ends at byte {} but the file has {} bytes",
             path, header_end + previous_end, header_end + buffer_size);
  HEED_CHECK(previous_end == buffer_size,
             "{}: {} trailing bytes after the last tensor's data (the tensors cover {} of the {} "
             "data bytes)",
             path, buffer_size - previous_end, previous_end, buffer_size);

  std::vector<std::string> names;
  names.reserve(order.size());
  for (const auto* entry : order) names.push_back(entry->first);
  return names;
}

}  // namespace

void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  check_names(path, tensors, metadata);
  const std::vector<PlannedTensor> plan = plan_layout(tensors);
  const std::string header = build_header(plan, metadata);
  const uint64_t header_length = header.size();

  AtomicFile file(path);
  file.write(&header_length, 8);
  file.write(header.data(), header.size());
  for (const PlannedTensor& t : plan) {
    NoGradGuard no_grad;  // copying a parameter's view to disk must not record a graph
    const Tensor row_major = t.tensor.contiguous();
    file.write(row_major.raw_data(), t.end - t.begin);
  }
  file.commit();
}

SafetensorsFile::SafetensorsFile(std::string path) : path_(std::move(path)) {
  mapping_ = map_file(path_, file_size_);
  const std::byte* file = mapping_.get();
  const uint64_t header_length = read_header_length(path_, file, file_size_);
  const std::string_view header_text(reinterpret_cast<const char*>(file + 8), header_length);
  const nlohmann::json header = parse_header_json(path_, header_text);

  for (const auto& [key, value] : header.items()) {
    if (key == kMetadataKey) {
      metadata_ = parse_metadata(path_, value);
    } else {
      infos_.emplace(key, parse_tensor_info(path_, key, value));
    }
  }
  const uint64_t header_end = 8 + header_length;
  names_ = validate_layout(path_, infos_, file_size_ - header_end, header_end);
  buffer_ = file + header_end;
}

const SafetensorsTensorInfo& SafetensorsFile::info(const std::string& name) const {
  const auto it = infos_.find(name);
  HEED_CHECK(it != infos_.end(), "{}: no tensor named '{}' (the file holds {} tensors)", path_,
             name, infos_.size());
  return it->second;
}

std::span<const std::byte> SafetensorsFile::bytes(const std::string& name) const {
  const SafetensorsTensorInfo& i = info(name);
  return {buffer_ + i.begin, static_cast<size_t>(i.end - i.begin)};
}

Tensor SafetensorsFile::get(const std::string& name) const {
  const SafetensorsTensorInfo& i = info(name);
  const std::optional<DType> dtype = heed_dtype_of(i.dtype);
  HEED_CHECK(dtype,
             "{}: tensor '{}': dtype {} not supported by heed (it reads F32, F64, BF16, I32, "
             "I64, U8 and BOOL)",
             path_, name, i.dtype);
  // A copy, not a view of the mapping: file offsets need not be aligned to the element size,
  // and the result must be writable and outlive the mapping.
  Tensor tensor = Tensor::empty(i.shape, *dtype);
  const std::span<const std::byte> data = bytes(name);
  if (!data.empty()) std::memcpy(tensor.raw_data(), data.data(), data.size());
  return tensor;
}

}  // namespace heed::io
