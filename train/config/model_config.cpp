#include "train/config/model_config.h"

#include <utility>

namespace heed::train {
namespace {

// A default-constructed alternative number `index`, chosen at run time.
template <size_t... I>
ArchConfig default_config(size_t index, std::index_sequence<I...>) {
  ArchConfig config;
  ((I == index ? void(config.emplace<I>()) : void()), ...);
  return config;
}

}  // namespace

void ModelConfig::set_arch(Arch arch) {
  const auto index = static_cast<size_t>(arch);
  HEED_CHECK(index < std::variant_size_v<ArchConfig>, "model.arch: no config for value {}", index);
  if (index == config.index()) return;
  config = default_config(index, std::make_index_sequence<std::variant_size_v<ArchConfig>>());
}

}  // namespace heed::train
