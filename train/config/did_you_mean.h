#pragma once
// "Did you mean ...?" for misspelt names: the closest candidate by edit distance, when it is
// close enough to be a likely typo rather than a different word.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace heed::train {

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// adjacent characters ("trian" -> "train") each cost 1.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` (the first one on ties), if within a tolerance that grows
// with the word's length; or a candidate that `word` is a prefix of ("warmup" ->
// "warmup_steps").
std::optional<std::string> did_you_mean(std::string_view word,
                                        std::span<const std::string> candidates);

// "unknown WHAT 'word' (did you mean 'x'?)", or "(expected one of a, b, c)" with no close one.
std::string unknown_name(std::string_view what, std::string_view word,
                         std::span<const std::string> candidates);

}  // namespace heed::train
