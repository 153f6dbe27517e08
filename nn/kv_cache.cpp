#include "nn/kv_cache.h"

#include "autograd/ops.h"
#include "base/error.h"

namespace heed::nn {

Tensor select_batch_rows(const Tensor& t, const std::vector<int64_t>& rows) {
  if (!t.defined()) return t;
  std::vector<Tensor> picked;
  picked.reserve(rows.size());
  for (int64_t r : rows) {
    HEED_CHECK(r >= 0 && r < t.size(0), "select_batch_rows: row {} outside a batch of {}", r,
               t.size(0));
    picked.push_back(t.slice(0, r, r + 1));
  }
  return concat(picked, 0);
}

namespace {

void gather(std::vector<AttentionCache>& caches, const std::vector<int64_t>& rows) {
  for (AttentionCache& c : caches) {
    c.key = select_batch_rows(c.key, rows);
    c.value = select_batch_rows(c.value, rows);
  }
}

}  // namespace

void KVCache::clear() {
  self_attention.clear();
  cross_attention.clear();
}

void KVCache::select_rows(const std::vector<int64_t>& rows) {
  HEED_CHECK(!rows.empty(), "KVCache: selecting no rows");
  gather(self_attention, rows);
  gather(cross_attention, rows);
}

}  // namespace heed::nn
