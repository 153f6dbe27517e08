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

  // A parameter's storage keeps the bf16 copy that bf16 matrix products read, until its next
  // write (the optimizer's update bumps the version): a weight is then converted once per
  // optimizer step, not once per product that reads it. Element i of the copy is element i
  // of this f32 storage rounded, so any view here is the same view there.
  void set_keeps_bf16_copy(bool keep) { keeps_bf16_copy_ = keep; }
  bool keeps_bf16_copy() const { return keeps_bf16_copy_; }
  // The copy made at version `version`, or null.
  std::shared_ptr<Storage> bf16_copy_at(uint64_t version) const {
    return bf16_copy_version_ == version ? bf16_copy_ : nullptr;
  }
  void set_bf16_copy(std::shared_ptr<Storage> copy) {
    bf16_copy_ = std::move(copy);
    bf16_copy_version_ = version_;
  }

 private:
  void* data_;
  size_t nbytes_;
  std::function<void()> release_;
  uint64_t version_ = 0;
  bool keeps_bf16_copy_ = false;
  std::shared_ptr<Storage> bf16_copy_;
  uint64_t bf16_copy_version_ = 0;
};

}  // namespace heed
