#include "nn/models/pretrained.h"

namespace heed::nn {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

bool PretrainedModel::ignores_checkpoint_name(const std::string&) const {
  return false;
}

std::string PretrainedModel::canonical_checkpoint_name(const std::string& name) const {
  // The original BERT checkpoints name LayerNorm parameters gamma and beta.
  if (name.find("LayerNorm") != std::string::npos) {
    if (ends_with(name, ".gamma")) return name.substr(0, name.size() - 6) + ".weight";
    if (ends_with(name, ".beta")) return name.substr(0, name.size() - 5) + ".bias";
  }
  return name;
}

}  // namespace heed::nn
