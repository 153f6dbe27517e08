#include "autograd/node.h"

#include "autograd/grad_mode.h"
#include "autograd/grad_ready_hook.h"
#include "autograd/ops.h"

namespace heed {
namespace {

// Nodes whose release was deferred by ~Node, drained by the outermost ~Node. (Saved tensors
// need no queue: they are detached, so releasing one never releases a node.)
struct DeletionQueue {
  std::vector<std::shared_ptr<Node>> nodes;
  bool draining = false;
};

DeletionQueue& deletion_queue() {
  thread_local DeletionQueue queue;
  return queue;
}

}  // namespace

Node::~Node() {
  DeletionQueue& queue = deletion_queue();
  for (auto& edge : next_edges) {
    if (edge) queue.nodes.push_back(std::move(edge));
  }
  if (queue.draining) return;
  queue.draining = true;
  while (!queue.nodes.empty()) {
    std::shared_ptr<Node> node = std::move(queue.nodes.back());
    queue.nodes.pop_back();
    node.reset();  // may run ~Node, which only enqueues
  }
  queue.draining = false;
}

void Node::release_saved() {
  for (SavedTensor* s : saved_) s->release();
  released_ = true;
}

SavedTensor::SavedTensor(Node* owner) : owner_(owner) {
  owner->saved_.push_back(this);
}

void SavedTensor::save(const Tensor& t) {
  if (!t.defined()) return;
  tensor_ = t.detach();
  version_ = t.version();
}

void SavedTensor::save_copy_of(const Tensor& copy, const Tensor& original) {
  save(copy);
  if (original.defined() && original.storage() != copy.storage()) {
    original_ = original.storage();
    original_version_ = original.version();
  }
}

Tensor SavedTensor::get() const {
  HEED_CHECK(!owner_->released_,
             "{}: backward through a graph whose saved tensors were already freed; pass "
             "retain_graph=true to the first backward to run it twice",
             owner_->name());
  if (tensor_.defined()) {
    HEED_CHECK(tensor_.version() == version_,
               "{}: a tensor of shape {} that backward needs was modified in place after it was "
               "saved (version {} -> {})",
               owner_->name(), tensor_.shape_str(), version_, tensor_.version());
  }
  if (std::shared_ptr<Storage> original = original_.lock()) {
    HEED_CHECK(original->version() == original_version_,
               "{}: a tensor of shape {} that backward needs was modified in place after it was "
               "saved (version {} -> {})",
               owner_->name(), tensor_.shape_str(), original_version_, original->version());
  }
  return tensor_;
}

Tensor SavedTensor::take() {
  Tensor t = get();
  if (owner_->saved_freed_after_backward) tensor_ = Tensor();
  return t;
}

void SavedTensor::release() {
  tensor_ = Tensor();
  original_.reset();
}

std::vector<Tensor> AccumulateGrad::backward(const Tensor& grad_output) {
  HEED_CHECK(grad_output.shape() == leaf_->shape,
             "AccumulateGrad: gradient of shape {} for a leaf of shape {}", grad_output.shape_str(),
             shape_str(leaf_->shape));
  Tensor converted;  // a reference to grad_output otherwise, so that sole_owner() can hold
  if (grad_output.dtype() != leaf_->dtype) converted = grad_output.to(leaf_->dtype);
  const Tensor& g = converted.defined() ? converted : grad_output;
  if (!leaf_->grad) {
    // The incoming gradient becomes .grad when nothing else holds it or its memory (the
    // usual case: the engine hands over the last handle); otherwise a private copy, since it
    // may alias another tensor's gradient.
    leaf_->grad = (g.sole_owner() && g.is_contiguous() ? g : g.clone()).impl_ptr();
  } else {
    Tensor(leaf_->grad).add_(g);
  }
  notify_grad_ready(*leaf_);
  return {};
}

std::shared_ptr<Node> gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return nullptr;
  if (t.grad_fn()) return t.grad_fn();
  std::shared_ptr<Node> acc = t.impl()->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl_ptr());
    t.impl()->grad_accumulator = acc;
  }
  return acc;
}

bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor* t : inputs) {
    if (t && t->defined() && t->requires_grad()) return true;
  }
  return false;
}

bool needs_grad(const std::vector<Tensor>& inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor& t : inputs) {
    if (t.defined() && t.requires_grad()) return true;
  }
  return false;
}

void attach_node(Tensor& output, std::shared_ptr<Node> node, const std::vector<Tensor>& inputs) {
  node->next_edges.reserve(inputs.size());
  for (const Tensor& t : inputs) node->next_edges.push_back(gradient_edge(t));
  output.impl()->grad_fn = std::move(node);
  output.impl()->requires_grad = true;
}

}  // namespace heed
