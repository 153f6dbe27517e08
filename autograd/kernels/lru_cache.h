#pragma once
// A map that keeps at most `capacity` entries, dropping the least recently used one to make
// room. The oneDNN primitive caches use it: each primitive holds ~70 KB of generated code, and
// batches of varying length (grouped by length, up to 512 tokens) ask for thousands of shapes
// over a run, where a step itself uses a few dozen.
#include <cstddef>
#include <list>
#include <unordered_map>
#include <utility>

namespace heed {

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // The value for `key`, now the most recently used; null if there is none.
  Value* find(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }

  // Adds (or replaces) `key`'s value as the most recently used, dropping the least recently
  // used entry when the cache is full. Returns the stored value.
  Value& insert(const Key& key, Value value) {
    if (Value* existing = find(key)) return *existing = std::move(value);
    if (index_.size() == capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
      ++evictions_;
    }
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
    return order_.front().second;
  }

  size_t size() const { return index_.size(); }
  size_t capacity() const { return capacity_; }
  size_t evictions() const { return evictions_; }

 private:
  using Order = std::list<std::pair<Key, Value>>;  // most recently used first
  size_t capacity_;
  size_t evictions_ = 0;
  Order order_;
  std::unordered_map<Key, typename Order::iterator, Hash> index_;
};

}  // namespace heed
