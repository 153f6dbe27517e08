#pragma once
// A Node is one step of the backward graph: the backward of the op that produced a tensor.
// It holds edges to the nodes of its inputs (null where an input needs no gradient) and the
// tensors its backward needs (SavedTensor fields). An op in ops/*.cpp reads top-down: its
// Node is declared above the forward (what backward keeps), and its backward() is defined
// after the forward.
#include <memory>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace heed {

class Node;

// A tensor that a node's backward needs, held in a named field of the node:
//   struct MulBackward : Node { SavedTensor a{this}, b{this}; ... };
// The field registers with its node, so that the engine's Node::release_saved() frees it after
// backward without the node listing its fields. The saved handle is cut from the graph (no
// reference cycle through an op's own output) and remembers the storage version at save time.
class SavedTensor {
 public:
  explicit SavedTensor(Node* owner);
  SavedTensor(const SavedTensor&) = delete;
  SavedTensor& operator=(const SavedTensor&) = delete;

  // Saves `t` (undefined: nothing to save, get() returns an undefined tensor).
  void save(const Tensor& t);
  // Saves `copy` (a bf16 copy of `original`, say) in place of `original`, and checks
  // `original` for in-place changes as if it had been saved itself, without keeping it alive.
  void save_copy_of(const Tensor& copy, const Tensor& original);
  // The saved tensor; throws if it was released or changed in place since it was saved.
  Tensor get() const;
  // The same, handed over: the node lets go of it when the engine frees the saved tensors
  // right after this backward (the graph is not retained), so that backward may reuse its
  // memory if nothing else holds it. Otherwise the same as get().
  Tensor take();

 private:
  friend class Node;
  void release();

  Node* owner_;
  Tensor tensor_;
  uint64_t version_ = 0;
  std::weak_ptr<Storage> original_;  // save_copy_of: the storage watched instead
  uint64_t original_version_ = 0;
};

class Node {
 public:
  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Releases edges through a queue rather than recursively, so that
  // dropping the last handle on a graph thousands of nodes deep does not grow the stack.
  virtual ~Node();

  virtual const char* name() const = 0;
  // Given the gradient of the loss w.r.t. this node's output, returns the gradients w.r.t.
  // each input, in the order of `next_edges` (undefined where an edge is null).
  virtual std::vector<Tensor> backward(const Tensor& grad_output) = 0;
  // For a node with one input whose gradient is mostly zeros (the backward of a slice):
  // adds this node's gradient into `pending`, the input's gradient summed so far, in place,
  // and returns true; false to have backward() run instead. The engine offers it only when
  // nothing else holds `pending`. Slices of one tensor (q, k and v of a fused projection)
  // then write into one buffer instead of each filling a full-size one to be summed.
  virtual bool accumulate_backward(const Tensor& /*grad_output*/, Tensor& /*pending*/) {
    return false;
  }

  // Frees what backward saved (every SavedTensor field); called by the engine unless the graph
  // is retained. A backward run after this throws instead of reading freed tensors.
  void release_saved();

  std::vector<std::shared_ptr<Node>> next_edges;
  // Non-leaf tensors produced by this node that asked to keep their gradient.
  std::vector<std::weak_ptr<TensorImpl>> retained_outputs;

  // Set by the engine before backward: whether it frees the saved tensors right after.
  bool saved_freed_after_backward = false;

 private:
  friend class SavedTensor;
  std::vector<SavedTensor*> saved_;  // the node's SavedTensor fields, registered as built
  bool released_ = false;
};

// The gradient sink of a leaf: adds incoming gradients into the leaf's .grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf) : leaf_(std::move(leaf)) {}
  const char* name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> backward(const Tensor& grad_output) override;

 private:
  std::shared_ptr<TensorImpl> leaf_;
};

// The node that gradients for `t` flow into: its grad_fn, its AccumulateGrad if it is a leaf
// that requires grad, or null.
std::shared_ptr<Node> gradient_edge(const Tensor& t);

// True when grad mode is on and any of `inputs` requires grad: the op must record a node.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
bool needs_grad(const std::vector<Tensor>& inputs);

// Connects `node` to `inputs` and makes it the grad_fn of `output`.
void attach_node(Tensor& output, std::shared_ptr<Node> node, const std::vector<Tensor>& inputs);

}  // namespace heed
