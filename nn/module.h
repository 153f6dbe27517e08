#pragma once
// Module: the unit models are built from. It registers parameters, buffers and children by
// name, so that named_parameters() yields dotted names exactly as Hugging Face writes them
// (`encoder.layer.0.attention.self.query.weight`), and switches train/eval recursively.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/tensor.h"

namespace heed::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Parameters of this module and its children, depth-first in registration order, each
  // once: a parameter shared by two modules (tied weights) appears under its first name.
  NamedTensors named_parameters() const;
  std::vector<Tensor> parameters() const;
  // Parameters and buffers (non-trainable state such as fixed position tables).
  NamedTensors named_buffers() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const {
    return children_;
  }

  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Activation recomputation (Hugging Face's gradient_checkpointing_enable), recursively: the
  // modules that support it (Transformer layers) then keep only their inputs for backward and
  // run again during it (autograd/checkpoint.h). Gradients are the same bits either way.
  void set_gradient_checkpointing(bool on);
  bool gradient_checkpointing() const { return gradient_checkpointing_; }
  // Drops every parameter's gradient (PyTorch's set_to_none behaviour).
  void zero_grad();
  int64_t num_parameters() const;

 protected:
  // Registers `t` as a trainable parameter (marks it requires_grad) and returns it.
  Tensor register_parameter(std::string name, Tensor t);
  Tensor register_buffer(std::string name, Tensor t);
  // `name` may contain dots (`attention.output.LayerNorm`), or be empty: the child's
  // parameters then appear directly under this module's prefix.
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    children_.emplace_back(std::move(name), module);
    return module;
  }

 private:
  void collect(const std::string& prefix, bool buffers, NamedTensors& out,
               std::vector<const TensorImpl*>& seen) const;

  NamedTensors parameters_;
  NamedTensors buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  bool gradient_checkpointing_ = false;
};

}  // namespace heed::nn
