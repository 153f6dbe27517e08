#include "autograd/segment_pool.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#include "base/error.h"

namespace heed {
namespace {

size_t round_up(size_t n, size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

}  // namespace

SegmentPool::~SegmentPool() {
  // Every segment's first block has no previous neighbour; free each segment once.
  auto release_segment_of = [](Block* first) {
    std::free(first->address);
    for (Block* b = first; b != nullptr;) {
      Block* next = b->next;
      delete b;
      b = next;
    }
  };
  std::set<Block*> firsts;
  for (Block* b : free_blocks_) {
    if (b->previous == nullptr) firsts.insert(b);
  }
  for (auto& [ptr, b] : used_blocks_) {
    if (b->previous == nullptr) firsts.insert(b);
  }
  for (Block* first : firsts) release_segment_of(first);
}

void* SegmentPool::allocate(size_t nbytes, bool* new_segment_taken) {
  if (nbytes > SIZE_MAX - kSegmentAlignment) throw std::bad_alloc();
  const size_t size = round_up(nbytes == 0 ? 1 : nbytes, kGranularity);
  Block key{nullptr, size, true, nullptr, nullptr};
  auto it = free_blocks_.lower_bound(&key);
  *new_segment_taken = it == free_blocks_.end();
  const size_t block_bytes = *new_segment_taken ? round_up(size, kSegmentAlignment) : (*it)->size;
  // The spare block is made before the pool changes, so that running out of memory here
  // leaves the pool as it was.
  std::unique_ptr<Block> rest;
  if (block_bytes > size) {
    rest = std::make_unique<Block>(Block{nullptr, block_bytes - size, true, nullptr, nullptr});
  }
  Block* block = nullptr;
  if (*new_segment_taken) {
    block = new_segment(block_bytes);
  } else {
    block = *it;
    erase_free(block);
  }
  if (rest) {  // the rest stays free, to merge back when this block is freed
    rest->address = block->address + size;
    rest->previous = block;
    rest->next = block->next;
    if (block->next != nullptr) block->next->previous = rest.get();
    block->next = rest.get();
    block->size = size;
    insert_free(rest.release());
  }
  block->free = false;
  used_blocks_.emplace(block->address, block);
  return block->address;
}

size_t SegmentPool::block_size(const void* ptr) const {
  auto it = used_blocks_.find(ptr);
  return it == used_blocks_.end() ? 0 : it->second->size;
}

size_t SegmentPool::free(void* ptr) {
  auto it = used_blocks_.find(ptr);
  HEED_CHECK(it != used_blocks_.end(), "SegmentPool::free: no block was handed out at {}", ptr);
  Block* block = it->second;
  used_blocks_.erase(it);
  const size_t size = block->size;
  block->free = true;
  if (Block* next = block->next; next != nullptr && next->free) {
    erase_free(next);
    join_next(block);
  }
  if (Block* previous = block->previous; previous != nullptr && previous->free) {
    erase_free(previous);
    join_next(previous);
    block = previous;
  }
  insert_free(block);
  return size;
}

void SegmentPool::release_free_segments() {
  for (auto it = free_blocks_.begin(); it != free_blocks_.end();) {
    Block* b = *it;
    if (b->previous != nullptr || b->next != nullptr) {
      ++it;
      continue;
    }
    it = free_blocks_.erase(it);
    free_bytes_ -= b->size;
    segment_bytes_ -= b->size;
    std::free(b->address);
    delete b;
  }
}

SegmentPool::Block* SegmentPool::new_segment(size_t size) {
  auto block = std::make_unique<Block>(Block{nullptr, size, true, nullptr, nullptr});
  void* memory = std::aligned_alloc(kSegmentAlignment, size);
  if (memory == nullptr) throw std::bad_alloc();
  madvise(memory, size, MADV_HUGEPAGE);
  block->address = static_cast<char*>(memory);
  segment_bytes_ += size;
  ++segments_taken_;
  return block.release();
}

void SegmentPool::insert_free(Block* block) {
  free_blocks_.insert(block);
  free_bytes_ += block->size;
}

void SegmentPool::erase_free(Block* block) {
  free_blocks_.erase(block);
  free_bytes_ -= block->size;
}

void SegmentPool::join_next(Block* block) {
  Block* next = block->next;
  block->size += next->size;
  block->next = next->next;
  if (next->next != nullptr) next->next->previous = block;
  delete next;
}

}  // namespace heed
