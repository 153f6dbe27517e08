#include "autograd/checkpoint.h"

#include <memory>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"

namespace heed {
namespace {

struct CheckpointBackward : Node {
  CheckpointedFunction function;
  std::vector<std::unique_ptr<SavedTensor>> inputs;
  std::vector<bool> input_needs_grad;
  Generator* generator = nullptr;
  Generator::State generator_state;  // before the first run
  const char* name() const override { return "CheckpointBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

}  // namespace

Tensor checkpoint(const CheckpointedFunction& function, const std::vector<Tensor>& inputs,
                  Generator* generator) {
  if (!grad_enabled()) return function(inputs);
  for (const Tensor& input : inputs) {
    HEED_CHECK(input.defined(), "checkpoint: an input is undefined; pass only defined tensors");
  }
  const Generator::State before = generator ? generator->state() : Generator::State{};
  // The first run records its graph as usual and drops it at once: run without grad mode, the
  // ops could take other kernels (inference paths), and the output would differ in its last
  // bits from the one backward rebuilds. Only one block's saved tensors live at a time.
  const Tensor recorded = function(inputs);
  if (!recorded.requires_grad()) return recorded;
  Tensor out = recorded.detach();
  auto node = std::make_shared<CheckpointBackward>();
  node->function = function;
  for (const Tensor& input : inputs) {
    node->inputs.push_back(std::make_unique<SavedTensor>(node.get()));
    node->inputs.back()->save(input);
    node->input_needs_grad.push_back(input.defined() && input.requires_grad());
  }
  node->generator = generator;
  node->generator_state = before;
  attach_node(out, node, inputs);
  return out;
}

std::vector<Tensor> CheckpointBackward::backward(const Tensor& g) {
  std::vector<Tensor> leaves;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor t = inputs[i]->get().detach();
    if (input_needs_grad[i]) t.set_requires_grad(true);
    leaves.push_back(t);
  }
  Tensor rebuilt;
  {
    GradModeGuard grad_mode(true);
    Generator::State now;
    if (generator) {
      now = generator->state();
      generator->set_state(generator_state);
    }
    rebuilt = function(leaves);
    if (generator) generator->set_state(now);
  }
  HEED_CHECK(rebuilt.shape() == g.shape() && rebuilt.requires_grad(),
             "checkpoint: the recomputed block gave {} where its first run gave {}",
             rebuilt.shape_str(), g.shape_str());
  run_backward(rebuilt, g, /*retain_graph=*/false);
  std::vector<Tensor> grads(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (input_needs_grad[i]) grads[i] = leaves[i].grad();
  }
  return grads;
}

}  // namespace heed
