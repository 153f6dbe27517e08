#include "nn/module.h"

#include <algorithm>

namespace heed::nn {

Tensor Module::register_parameter(std::string name, Tensor t) {
  HEED_CHECK(t.defined() && t.is_leaf(), "register_parameter: '{}' must be a defined leaf tensor",
             name);
  t.set_requires_grad(true);
  t.storage()->set_keeps_bf16_copy(true);
  parameters_.emplace_back(std::move(name), t);
  return t;
}

Tensor Module::register_buffer(std::string name, Tensor t) {
  buffers_.emplace_back(std::move(name), t);
  return t;
}

void Module::collect(const std::string& prefix, bool buffers, NamedTensors& out,
                     std::vector<const TensorImpl*>& seen) const {
  for (const auto& [name, t] : buffers ? buffers_ : parameters_) {
    if (std::find(seen.begin(), seen.end(), t.impl()) != seen.end()) continue;
    seen.push_back(t.impl());
    out.emplace_back(prefix + name, t);
  }
  for (const auto& [name, child] : children_) {
    // A child registered under an empty name lays its parameters into this module's own
    // namespace (e.g. FeedForward's `intermediate.dense` directly under a BERT layer).
    child->collect(name.empty() ? prefix : prefix + name + ".", buffers, out, seen);
  }
}

NamedTensors Module::named_parameters() const {
  NamedTensors out;
  std::vector<const TensorImpl*> seen;
  collect("", false, out, seen);
  return out;
}

NamedTensors Module::named_buffers() const {
  NamedTensors out;
  std::vector<const TensorImpl*> seen;
  collect("", true, out, seen);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::set_gradient_checkpointing(bool on) {
  gradient_checkpointing_ = on;
  for (auto& [name, child] : children_) child->set_gradient_checkpointing(on);
}

void Module::zero_grad() {
  for (Tensor& t : parameters()) t.zero_grad();
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const Tensor& t : parameters()) n += t.numel();
  return n;
}

}  // namespace heed::nn
