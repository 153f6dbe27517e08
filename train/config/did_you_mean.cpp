#include "train/config/did_you_mean.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

namespace heed::train {

std::string unknown_name(std::string_view what, std::string_view word,
                         std::span<const std::string> candidates) {
  if (auto suggestion = did_you_mean(word, candidates)) {
    return fmt::format("unknown {} '{}' (did you mean '{}'?)", what, word, *suggestion);
  }
  return fmt::format("unknown {} '{}' (expected one of {})", what, word,
                     fmt::join(candidates, ", "));
}

size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::optional<std::string> did_you_mean(std::string_view word,
                                        std::span<const std::string> candidates) {
  // One edit in a short name, two in a medium one, three in a long one: beyond that the
  // "suggestion" is usually a different word.
  const size_t tolerance = word.size() <= 4 ? 1 : word.size() <= 8 ? 2 : 3;
  std::optional<std::string> best;
  size_t best_distance = tolerance + 1;
  for (const std::string& candidate : candidates) {
    const size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  if (best) return best;
  if (word.size() >= 4) {
    for (const std::string& candidate : candidates) {
      if (candidate.starts_with(word)) return candidate;
    }
  }
  return std::nullopt;
}

}  // namespace heed::train
