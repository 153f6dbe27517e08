#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "autograd/allocator.h"

namespace heed {

// A block of bytes that tensors view. Views of one tensor share its Storage, and so share
// its version counter: every in-place write bumps it, which is how backward detects that a
// tensor it saved was changed after the save.
class Storage {
 public:
  explicit Storage(size_t nbytes) : data_(allocate_block(nbytes)), nbytes_(nbytes) {}
  // Wraps memory owned elsewhere (a memory-mapped file); `release` runs when the last view
  // goes away.
  Storage(void* data, size_t nbytes, std::function<void()> release)
      : data_(data), nbytes_(nbytes), release_(std::move(release)) {}
  ~Storage() {
    if (release_) {
      release_();
    } else {
      free_block(data_, nbytes_);
    }
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  void* data_;
  size_t nbytes_;
  std::function<void()> release_;
  uint64_t version_ = 0;
};

}  // namespace heed
