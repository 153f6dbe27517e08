// The bounded map behind the oneDNN primitive caches.
#include "autograd/kernels/lru_cache.h"

#include <gtest/gtest.h>

#include <string>

using heed::LruCache;

TEST(LruCache, DropsTheLeastRecentlyUsedEntryWhenFull) {
  LruCache<int, std::string> cache(2);
  cache.insert(1, "one");
  cache.insert(2, "two");
  ASSERT_NE(cache.find(1), nullptr);  // 1 is now more recent than 2
  cache.insert(3, "three");
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.evictions(), 1u);
  EXPECT_EQ(cache.find(2), nullptr);
  ASSERT_NE(cache.find(1), nullptr);
  EXPECT_EQ(*cache.find(1), "one");
  ASSERT_NE(cache.find(3), nullptr);
  EXPECT_EQ(*cache.find(3), "three");
}

TEST(LruCache, ReplacingAValueNeitherGrowsNorEvicts) {
  LruCache<int, int> cache(2);
  cache.insert(1, 10);
  cache.insert(2, 20);
  EXPECT_EQ(cache.insert(1, 11), 11);  // and 1 becomes the most recent
  cache.insert(3, 30);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.evictions(), 1u);
  EXPECT_EQ(cache.find(2), nullptr);
  EXPECT_EQ(*cache.find(1), 11);
}

TEST(LruCache, HoldsAtLeastOneEntry) {
  LruCache<int, int> cache(0);
  EXPECT_EQ(cache.capacity(), 1u);
  cache.insert(1, 1);
  cache.insert(2, 2);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.find(1), nullptr);
  EXPECT_EQ(*cache.find(2), 2);
}
