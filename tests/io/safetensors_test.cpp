#include "io/safetensors.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace heed;
using namespace heed::io;

namespace {

// A fresh directory under the test temp dir, removed with everything in it at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::path(::testing::TempDir()) / "heed_safetensors_XXXXXX").string();
    const char* made = mkdtemp(pattern.data());
    if (made == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    dir_ = made;
  }
  ~ScratchDir() { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path dir_;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

// The 8-byte little-endian length prefix, built by shifts so it does not depend on the host.
std::string le64(uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out;
}

uint64_t read_le64(const std::string& file) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(file[i]);
  return n;
}

std::string file_with_header(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

std::string raw_bytes(const Tensor& t) {
  return std::string(static_cast<const char*>(t.raw_data()), t.numel() * dtype_size(t.dtype()));
}

// The message of the error opening `path` throws, or "" if it opens.
std::string open_error(const std::string& path) {
  try {
    SafetensorsFile file(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Writes `file_bytes` and expects the reader to reject them with a message that names the file
// and contains every one of `needles`.
void expect_rejected(const std::string& file_bytes, std::initializer_list<std::string> needles) {
  ScratchDir dir;
  const std::string path = dir.file("bad.safetensors");
  write_bytes(path, file_bytes);
  const std::string message = open_error(path);
  ASSERT_FALSE(message.empty()) << "the reader accepted a malformed file";
  EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
  for (const std::string& needle : needles) {
    EXPECT_NE(message.find(needle), std::string::npos)
        << "expected '" << needle << "' in: " << message;
  }
}

const std::string kOneF32 = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

Tensor bf16_from_bits(std::initializer_list<uint16_t> bits, const Shape& shape) {
  Tensor t = Tensor::empty(shape, DType::bf16);
  bf16* p = t.data<bf16>();
  for (uint16_t b : bits) (p++)->bits = b;
  return t;
}

}  // namespace

TEST(Safetensors, RoundTripsEverySupportedDtypeBitExactly) {
  const float nan_with_payload = std::bit_cast<float>(0x7fc12345u);
  const std::vector<std::pair<std::string, Tensor>> tensors = {
      {"f32", from_vector<float>({0.0f, -0.0f, 1.5f, std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::denorm_min(), nan_with_payload,
                                  std::numeric_limits<float>::max()},
                                 {2, 4})},
      {"f64",
       from_vector<double>(
           {-0.0, 1e-310, std::numeric_limits<double>::quiet_NaN(), 3.141592653589793}, {4})},
      {"bf16", bf16_from_bits({0x3f80, 0x8000, 0x7fc1, 0xff80, 0x0001, 0x7f7f}, {3, 2})},
      {"i32", from_vector<int32_t>(
                  {std::numeric_limits<int32_t>::min(), -1, 0, std::numeric_limits<int32_t>::max()},
                  {2, 2})},
      {"i64", from_vector<int64_t>({std::numeric_limits<int64_t>::min(), -1, 42,
                                    std::numeric_limits<int64_t>::max()},
                                   {1, 4})},
      {"u8", from_vector<uint8_t>({0, 1, 127, 128, 255}, {5})},
      {"scalar", from_vector<float>({3.25f}, {})},
      {"empty_f32", Tensor::empty({0, 3}, DType::f32)},
      {"empty_i64", Tensor::empty({2, 0}, DType::i64)},
  };
  ScratchDir dir;
  const std::string path = dir.file("all.safetensors");
  save_safetensors(path, tensors);

  SafetensorsFile file(path);
  ASSERT_EQ(file.names().size(), tensors.size());
  const std::map<std::string, std::string> file_dtypes = {
      {"f32", "F32"}, {"f64", "F64"},    {"bf16", "BF16"},     {"i32", "I32"},      {"i64", "I64"},
      {"u8", "U8"},   {"scalar", "F32"}, {"empty_f32", "F32"}, {"empty_i64", "I64"}};
  for (const auto& [name, original] : tensors) {
    SCOPED_TRACE(name);
    EXPECT_EQ(file.info(name).dtype, file_dtypes.at(name));
    EXPECT_EQ(file.info(name).shape, original.shape());
    const Tensor loaded = file.get(name);
    EXPECT_EQ(loaded.dtype(), original.dtype());
    EXPECT_EQ(loaded.shape(), original.shape());
    EXPECT_TRUE(loaded.is_contiguous());
    EXPECT_EQ(raw_bytes(loaded), raw_bytes(original));
  }
  EXPECT_TRUE(file.metadata().empty());
}

TEST(Safetensors, WritesNonContiguousTensorsInRowMajorOrder) {
  Tensor base = from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  base.set_requires_grad(true);  // saving a parameter's view must not trip autograd
  ScratchDir dir;
  const std::string path = dir.file("views.safetensors");
  save_safetensors(path, {{"transposed", base.transpose(0, 1)}, {"sliced", base.slice(1, 1, 3)}});

  SafetensorsFile file(path);
  EXPECT_EQ(file.get("transposed").shape(), (Shape{3, 2}));
  EXPECT_EQ(file.get("transposed").to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(file.get("sliced").shape(), (Shape{2, 2}));
  EXPECT_EQ(file.get("sliced").to_vector<float>(), (std::vector<float>{1, 2, 4, 5}));
}

TEST(Safetensors, HeaderStartsWithBraceAndIsPaddedToEightBytes) {
  // Names of every length mod 8, so the padding takes every value from 0 to 7 across runs.
  for (int name_length = 1; name_length <= 8; ++name_length) {
    SCOPED_TRACE(name_length);
    ScratchDir dir;
    const std::string path = dir.file("pad.safetensors");
    save_safetensors(path, {{std::string(name_length, 'w'), from_vector<double>({1.0}, {1})},
                            {"b", from_vector<uint8_t>({7, 8, 9}, {3})},
                            {"h", bf16_from_bits({0x3f80}, {1})},
                            {"i", from_vector<int32_t>({5}, {1})}});
    const std::string file = read_bytes(path);
    const uint64_t n = read_le64(file);
    EXPECT_EQ(n % 8, 0u);
    ASSERT_GE(file.size(), 8 + n);
    const std::string header = file.substr(8, n);
    EXPECT_EQ(header.front(), '{');
    const size_t json_end = header.rfind('}');
    EXPECT_LT(n - 1 - json_end, 8u);
    EXPECT_EQ(header.find_first_not_of(' ', json_end + 1), std::string::npos);

    // So every tensor's data starts at a file position aligned to its element size.
    SafetensorsFile reader(path);
    for (const std::string& name : reader.names()) {
      const Tensor t = reader.get(name);
      EXPECT_EQ((8 + n + reader.info(name).begin) % dtype_size(t.dtype()), 0u) << name;
    }
  }
}

TEST(Safetensors, OrdersByDescendingDtypeRankThenNameWithMetadataFirst) {
  ScratchDir dir;
  const std::string path = dir.file("order.safetensors");
  save_safetensors(path,
                   {{"z.u8", from_vector<uint8_t>({1, 2, 3}, {3})},
                    {"b.f32", from_vector<float>({1, 2}, {2})},
                    {"y.i64", from_vector<int64_t>({1}, {1})},
                    {"a.f32", from_vector<float>({1}, {1})},
                    {"m.bf16", bf16_from_bits({1, 2, 3}, {3})},
                    {"k.i32", from_vector<int32_t>({1}, {1})},
                    {"q.f64", from_vector<double>({1}, {1})},
                    {"a.u8", from_vector<uint8_t>({1}, {1})}},
                   {{"format", "pt"}});

  // The reference ranks I64 > F64 > F32 > I32 > BF16 > U8; within a rank, names ascend.
  const std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>> expected = {
      {"y.i64", {0, 8}},   {"q.f64", {8, 16}},   {"a.f32", {16, 20}}, {"b.f32", {20, 28}},
      {"k.i32", {28, 32}}, {"m.bf16", {32, 38}}, {"a.u8", {38, 39}},  {"z.u8", {39, 42}}};

  const std::string file = read_bytes(path);
  const auto header = nlohmann::ordered_json::parse(file.substr(8, read_le64(file)));
  auto it = header.items().begin();
  EXPECT_EQ(it.key(), "__metadata__");
  for (const auto& [name, offsets] : expected) {
    ++it;
    ASSERT_NE(it, header.items().end());
    EXPECT_EQ(it.key(), name);
    EXPECT_EQ(it.value()["data_offsets"], nlohmann::ordered_json({offsets.first, offsets.second}));
  }
  EXPECT_EQ(++it, header.items().end());

  SafetensorsFile reader(path);
  std::vector<std::string> expected_names;
  for (const auto& entry : expected) expected_names.push_back(entry.first);
  EXPECT_EQ(reader.names(), expected_names);
}

TEST(Safetensors, WriterMatchesTheReferenceImplementationsBytes) {
  // Expected files from the serialization tests of huggingface/safetensors (tensor.rs).
  ScratchDir dir;
  const std::string path = dir.file("ref.safetensors");

  save_safetensors(path, {{"attn.0", from_vector<float>({0, 1, 2, 3, 4, 5}, {1, 2, 3})}});
  const std::string attn_header =
      R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})";
  ASSERT_EQ(attn_header.size(), 64u);
  const std::string attn_data = bytes({0, 0, 0,    0,    0, 0, 0x80, 0x3f, 0, 0, 0,    0x40,
                                       0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40, 0, 0, 0xa0, 0x40});
  EXPECT_EQ(read_bytes(path), le64(64) + attn_header + attn_data);

  save_safetensors(path, {});
  EXPECT_EQ(read_bytes(path), le64(8) + "{}      ");
  EXPECT_TRUE(SafetensorsFile(path).names().empty());

  save_safetensors(path, {}, {{"framework", "pt"}});
  EXPECT_EQ(read_bytes(path), le64(40) + R"({"__metadata__":{"framework":"pt"}})" + "     ");
  EXPECT_EQ(SafetensorsFile(path).metadata().at("framework"), "pt");
}

TEST(Safetensors, FormatPtMetadataRoundTrips) {
  ScratchDir dir;
  const std::string path = dir.file("meta.safetensors");
  const std::map<std::string, std::string> metadata = {{"format", "pt"}};
  save_safetensors(path, {{"w", from_vector<float>({1, 2}, {2})}}, metadata);
  SafetensorsFile file(path);
  EXPECT_EQ(file.metadata(), metadata);
  EXPECT_NE(read_bytes(path).find(R"({"__metadata__":{"format":"pt"},"w":)"), std::string::npos);

  save_safetensors(path, {{"w", from_vector<float>({1, 2}, {2})}});
  EXPECT_EQ(read_bytes(path).find("__metadata__"), std::string::npos);
  EXPECT_TRUE(SafetensorsFile(path).metadata().empty());
}

TEST(Safetensors, ReadsAHandBuiltFile) {
  // Written without the writer: tensors listed out of offset order, whitespace around the JSON,
  // a header length that leaves the F32 data at an odd file position, BOOL and F16 data.
  const std::string header =
      R"(  {"__metadata__": {"format": "pt"},
      "weight": {"dtype": "F32", "shape": [2], "data_offsets": [3, 11]},
      "flags": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]},
      "half": {"dtype": "F16", "shape": [1], "data_offsets": [11, 13]},
      "step": {"dtype": "I64", "shape": [], "data_offsets": [13, 21]}} )";
  const std::string data = bytes({
      0x01, 0x00, 0x01,                                // flags: true, false, true
      0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0,  // weight: 1.0f, -2.5f
      0x00, 0x3c,                                      // half: 1.0 in IEEE half precision
      0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // step: -2
  });
  ScratchDir dir;
  const std::string path = dir.file("hand.safetensors");
  write_bytes(path, file_with_header(header, data));

  SafetensorsFile file(path);
  EXPECT_EQ(file.names(), (std::vector<std::string>{"flags", "weight", "half", "step"}));
  EXPECT_EQ(file.metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));

  const Tensor weight = file.get("weight");
  EXPECT_EQ(weight.dtype(), DType::f32);
  EXPECT_EQ(weight.to_vector<float>(), (std::vector<float>{1.0f, -2.5f}));
  const Tensor flags = file.get("flags");
  EXPECT_EQ(flags.dtype(), DType::u8);
  EXPECT_EQ(flags.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 1}));
  const Tensor step = file.get("step");
  EXPECT_EQ(step.shape(), Shape{});
  EXPECT_EQ(step.to_vector<int64_t>(), std::vector<int64_t>{-2});

  // F16 is parsed and validated, and its bytes are reachable, but heed has no f16 tensors.
  EXPECT_EQ(file.info("half").dtype, "F16");
  EXPECT_EQ(file.info("half").shape, Shape{1});
  const auto half = file.bytes("half");
  ASSERT_EQ(half.size(), 2u);
  EXPECT_EQ(static_cast<int>(half[1]), 0x3c);
  try {
    file.get("half");
    FAIL() << "get of an F16 tensor should throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": tensor 'half': dtype F16 not supported by heed"),
              std::string::npos)
        << e.what();
  }
}

TEST(Safetensors, GetOfAMissingNameNamesTheFileAndTheTensor) {
  ScratchDir dir;
  const std::string path = dir.file("one.safetensors");
  save_safetensors(path, {{"present", from_vector<float>({1}, {1})}});
  SafetensorsFile file(path);
  EXPECT_FALSE(file.contains("absent"));
  try {
    file.get("absent");
    FAIL() << "get of a missing name should throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": no tensor named 'absent'"), std::string::npos)
        << e.what();
  }
}

TEST(Safetensors, SaveReplacesTheFileAtomically) {
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  save_safetensors(path, {{"w", from_vector<float>({1, 2}, {2})}});
  save_safetensors(path, {{"w", from_vector<float>({3, 4, 5}, {3})}});
  EXPECT_EQ(SafetensorsFile(path).get("w").to_vector<float>(), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"model.safetensors"});

  // A save that fails leaves the previous file as it was, and no temporary file behind.
  const std::string before = read_bytes(path);
  EXPECT_THROW(save_safetensors(path, {{"w", from_vector<float>({1}, {1})},
                                       {"w", from_vector<float>({2}, {1})}}),
               Error);
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"model.safetensors"});

  EXPECT_THROW(save_safetensors(dir.file("missing/dir/model.safetensors"), {}), Error);
}

TEST(Safetensors, SaveRejectsDuplicateAndReservedNames) {
  ScratchDir dir;
  const std::string path = dir.file("bad.safetensors");
  try {
    save_safetensors(path, {{"w", from_vector<float>({1}, {1})}, {"w", zeros({2})}});
    FAIL() << "duplicate names should throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'w' is given twice"), std::string::npos)
        << e.what();
  }
  try {
    save_safetensors(path, {{"__metadata__", zeros({1})}});
    FAIL() << "the reserved name should throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reserved"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(dir.listing().empty());
}

// --- malformed files: one test per condition the reader rejects -------------------------

TEST(Safetensors, RejectsAFileTooShortForTheHeaderLength) {
  expect_rejected("", {"0 bytes, too small"});
  expect_rejected(bytes({8, 0, 0}), {"3 bytes, too small"});
}

TEST(Safetensors, RejectsAHeaderLengthPastTheEndOfTheFile) {
  expect_rejected(le64(100) + "{}", {"header length 100 runs past the end of the file (10 bytes)"});
}

TEST(Safetensors, RejectsAHugeHeaderLength) {
  expect_rejected(le64(100'000'001) + "{}", {"header length 100000001 exceeds the limit"});
  expect_rejected(le64(std::numeric_limits<uint64_t>::max()) + "{}", {"exceeds the limit"});
}

TEST(Safetensors, RejectsAHeaderThatIsNotUtf8) {
  expect_rejected(file_with_header("{\"a\xff\":1}", ""), {"not valid UTF-8 (at byte 3)"});
  // An overlong encoding of '/' is not UTF-8 either.
  expect_rejected(file_with_header("{\"\xc0\xaf\":1}", ""), {"not valid UTF-8"});
}

TEST(Safetensors, RejectsAHeaderThatIsNotJson) {
  expect_rejected(file_with_header(R"({"a": {"dtype": "F32",)", ""), {"not valid JSON"});
  expect_rejected(file_with_header(R"({"a": 1} trailing)", ""), {"not valid JSON"});
}

// Found by fuzz/safetensors_fuzz.cpp: a number too large for a double made the JSON parser
// throw out_of_range, which the reader let out instead of its own error.
TEST(Safetensors, RejectsAHeaderNumberTooLargeForADouble) {
  // The fuzzer's input, minimised: a 9-byte header "1e1111\x01" "1\x01".
  expect_rejected(bytes({9, 0, 0, 0, 0, 0, 0, 0, '1', 'e', '1', '1', '1', '1', 1, '1', 1}),
                  {"header is not valid JSON", "number overflow"});
  expect_rejected(file_with_header(R"({"a":{"dtype":"F32","shape":[1e400],"data_offsets":[0,4]}})",
                                   std::string(4, '\0')),
                  {"header is not valid JSON", "number overflow"});
}

TEST(Safetensors, RejectsAHeaderThatIsNotAnObject) {
  expect_rejected(file_with_header("[1, 2]", ""), {"header must be a JSON object, not array"});
}

TEST(Safetensors, RejectsANonStringMetadataValue) {
  expect_rejected(file_with_header(R"({"__metadata__": {"format": "pt", "step": 3}})", ""),
                  {"'__metadata__' entry 'step' must be a string, not number"});
}

TEST(Safetensors, RejectsADuplicateKey) {
  expect_rejected(file_with_header("{" + kOneF32 + "," + kOneF32 + "}", std::string(8, '\0')),
                  {"key 'a' more than once"});
}

TEST(Safetensors, RejectsEntriesThatDoNotMatchTheSchema) {
  expect_rejected(file_with_header(R"({"a": {"dtype": "F32", "shape": [1]}})", std::string(4, 0)),
                  {"tensor 'a': missing 'data_offsets'"});
  expect_rejected(
      file_with_header(R"({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})",
                       std::string(4, 0)),
      {"tensor 'a': shape [-1] must hold non-negative integers"});
  expect_rejected(file_with_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0]}})",
                                   std::string(4, 0)),
                  {"tensor 'a': 'data_offsets' must be [BEGIN, END]"});
  expect_rejected(file_with_header(R"({"a": {"dtype": 32, "shape": [1], "data_offsets": [0, 4]}})",
                                   std::string(4, 0)),
                  {"tensor 'a': 'dtype' must be a string"});
}

TEST(Safetensors, RejectsAnUnknownDtype) {
  expect_rejected(
      file_with_header(R"({"a": {"dtype": "F31", "shape": [1], "data_offsets": [0, 4]}})",
                       std::string(4, 0)),
      {"tensor 'a': unknown dtype 'F31'"});
}

TEST(Safetensors, RejectsOverlappingOffsets) {
  expect_rejected(file_with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                       "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                                   std::string(12, 0)),
                  {"tensor 'b': data_offsets [4, 12] overlap the previous tensor 'a'"});
}

TEST(Safetensors, RejectsAHoleBetweenTensors) {
  expect_rejected(file_with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                       "b": {"dtype": "F32", "shape": [2], "data_offsets": [12, 20]}})",
                                   std::string(20, 0)),
                  {"tensor 'b': data_offsets [12, 20] leave a hole: bytes [8, 12)"});
  // The first tensor must start at the beginning of the buffer.
  expect_rejected(
      file_with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                       std::string(12, 0)),
      {"tensor 'a': data_offsets [4, 12] leave a hole: bytes [0, 4)"});
}

TEST(Safetensors, RejectsAnEndBeforeTheBegin) {
  expect_rejected(file_with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                       "b": {"dtype": "U8", "shape": [0], "data_offsets": [8, 4]}})",
                                   std::string(8, 0)),
                  {"tensor 'b': data_offsets [8, 4] end before they begin"});
}

TEST(Safetensors, RejectsAByteCountThatDoesNotMatchTheShape) {
  expect_rejected(
      file_with_header(R"({"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}})",
                       std::string(20, 0)),
      {"tensor 'a': shape [2, 3] of F32 needs 24 bytes, but data_offsets [0, 20] hold 20"});
}

TEST(Safetensors, RejectsAShapeWhoseSizeOverflows) {
  expect_rejected(
      file_with_header(
          R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})",
          ""),
      {"tensor 'a': shape [4294967296, 4294967296] of F32 overflows"});
  // Empty, yet its partial element count 2^63 does not fit heed's int64 counts.
  expect_rejected(
      file_with_header(
          R"({"a": {"dtype": "U8", "shape": [4611686018427387904, 2, 0], "data_offsets": [0, 0]}})",
          ""),
      {"tensor 'a': shape [4611686018427387904, 2, 0] of U8 overflows"});
}

TEST(Safetensors, RejectsASubByteDtypeThatEndsMidByte) {
  expect_rejected(
      file_with_header(R"({"a": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}})",
                       std::string(2, 0)),
      {"tensor 'a': shape [3] of F4 is 12 bits, not a whole number of bytes"});
  // Four F4 values fill exactly two bytes.
  ScratchDir dir;
  const std::string path = dir.file("f4.safetensors");
  write_bytes(path,
              file_with_header(R"({"a": {"dtype": "F4", "shape": [4], "data_offsets": [0, 2]}})",
                               std::string(2, 0)));
  EXPECT_EQ(SafetensorsFile(path).bytes("a").size(), 2u);
}

TEST(Safetensors, RejectsTrailingBytes) {
  expect_rejected(file_with_header("{" + kOneF32 + "}", std::string(10, 0)),
                  {"2 trailing bytes after the last tensor's data"});
}

TEST(Safetensors, RejectsTruncatedData) {
  const std::string header = "{" + kOneF32 + "}";
  expect_rejected(file_with_header(header, std::string(5, 0)),
                  {fmt::format("file is truncated: the tensors' data ends at byte {} but the file "
                               "has {} bytes",
                               8 + header.size() + 8, 8 + header.size() + 5)});
}
