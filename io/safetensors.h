#pragma once
// The safetensors file format (huggingface/safetensors), so that heed checkpoints load in
// `transformers` and theirs load in heed:
//
//   [u64 N, little-endian][N bytes of UTF-8 JSON header][byte buffer]
//
// The header maps each tensor name to {"dtype", "shape", "data_offsets": [BEGIN, END]}, with
// offsets relative to the byte buffer, plus an optional "__metadata__" string -> string map.
// Data is little-endian and row-major.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "autograd/tensor.h"

namespace heed::io {

// Writes `tensors` as the reference writer does: data sorted by descending dtype rank, then by
// name, packed with no gaps; the header lists "__metadata__" first (omitted when empty), then
// the tensors in offset order, and is padded with spaces to a multiple of 8 bytes so that
// every tensor's data is aligned to its element size. Non-contiguous tensors are written in
// logical row-major order; u8 tensors are written as U8. The file is written atomically: a
// temporary file in the same directory is filled, fsynced and renamed over `path`, so a crash
// leaves either the old file or the new one, never a half-written one.
void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// What the header says about one tensor.
struct SafetensorsTensorInfo {
  std::string dtype;   // the file's dtype string: "F32", "BF16", "F16", "BOOL", ...
  Shape shape;         // [] for a scalar
  uint64_t begin = 0;  // data_offsets, in bytes from the start of the byte buffer
  uint64_t end = 0;    // exclusive
};

// A safetensors file opened for reading. The constructor memory-maps the file read-only and
// validates the whole header (lengths, UTF-8, JSON schema, dtypes, offsets that tile the
// buffer exactly, byte counts that match shapes) before anything is returned, so every later
// read is in bounds. Every error names the file and, where one is involved, the tensor.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(std::string path);

  const std::string& path() const { return path_; }
  // Tensor names in the order their data appears in the file.
  const std::vector<std::string>& names() const { return names_; }
  bool contains(const std::string& name) const { return infos_.count(name) != 0; }
  // The "__metadata__" map; empty when the file has none.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const SafetensorsTensorInfo& info(const std::string& name) const;

  // A fresh, contiguous, writable heed tensor holding a copy of the tensor's data (so it
  // is aligned whatever the file's offsets, and outlives this object). F32, F64, BF16, I32,
  // I64 and U8 map to the heed dtypes of the same name, BOOL to u8; any other dtype throws.
  Tensor get(const std::string& name) const;
  // The tensor's raw little-endian bytes inside the mapping, for dtypes heed cannot hold
  // (F16, I8, ...). Valid while this object (or a copy of it) lives.
  std::span<const std::byte> bytes(const std::string& name) const;

 private:
  std::string path_;
  std::shared_ptr<const std::byte> mapping_;  // the whole file; unmapped with the last copy
  size_t file_size_ = 0;
  const std::byte* buffer_ = nullptr;  // the byte buffer: mapping_ + 8 + N
  std::vector<std::string> names_;
  std::unordered_map<std::string, SafetensorsTensorInfo> infos_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace heed::io
