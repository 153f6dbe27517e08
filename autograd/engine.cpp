#include "autograd/engine.h"

#include <unordered_map>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "base/profile.h"

namespace heed {
namespace {

// Counts, for every node reachable from `root`, how many edges point at it.
std::unordered_map<Node*, int> count_dependencies(Node* root) {
  std::unordered_map<Node*, int> dependencies;
  dependencies[root] = 0;
  std::vector<Node*> stack{root};
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const auto& edge : node->next_edges) {
      if (!edge) continue;
      auto [it, inserted] = dependencies.try_emplace(edge.get(), 0);
      it->second++;
      if (inserted) stack.push_back(edge.get());
    }
  }
  return dependencies;
}

// Lets a one-input node add its gradient into its input's pending gradient in place
// (Node::accumulate_backward) when that gradient exists and nothing else holds it.
bool accumulate_in_place(Node& node, const Tensor& grad,
                         std::unordered_map<Node*, Tensor>& pending_grads) {
  if (node.next_edges.size() != 1 || !node.next_edges[0]) return false;
  auto it = pending_grads.find(node.next_edges[0].get());
  if (it == pending_grads.end() || !it->second.sole_owner()) return false;
  OpTimer timer(node.name());
  return node.accumulate_backward(grad, it->second);
}

// slot += grad, in place when nothing else holds slot's memory (no allocation, and the sum
// lands in memory that was just written); else into a new tensor. The same bits either way.
void add_gradient(Tensor& slot, const Tensor& grad) {
  if (slot.sole_owner() && slot.is_contiguous() && slot.shape() == grad.shape() &&
      slot.dtype() == grad.dtype()) {
    slot.add_(grad);
  } else {
    slot = add(slot, grad);
  }
}

}  // namespace

void run_backward(const Tensor& root, const Tensor& grad_root, bool retain_graph) {
  HEED_CHECK(root.defined(), "backward: called on an undefined tensor");
  HEED_CHECK(root.requires_grad(),
             "backward: the tensor of shape {} does not require grad and has no grad_fn",
             root.shape_str());
  Tensor seed = grad_root;
  if (!seed.defined()) {
    HEED_CHECK(root.numel() == 1,
               "backward: a gradient must be given for a non-scalar output of shape {}",
               root.shape_str());
    seed = ones(root.shape(), root.dtype());
  }
  HEED_CHECK(seed.shape() == root.shape(),
             "backward: gradient of shape {} for an output of shape {}", seed.shape_str(),
             root.shape_str());

  NoGradGuard no_grad;
  std::shared_ptr<Node> root_node = gradient_edge(root);
  std::unordered_map<Node*, int> dependencies = count_dependencies(root_node.get());
  std::unordered_map<Node*, Tensor> pending_grads;
  pending_grads[root_node.get()] = seed;

  // The ready stack keeps owning references: a node stays alive while it may still run.
  std::vector<std::shared_ptr<Node>> ready{root_node};
  while (!ready.empty()) {
    std::shared_ptr<Node> node = std::move(ready.back());
    ready.pop_back();
    Tensor grad;
    if (auto it = pending_grads.find(node.get()); it != pending_grads.end()) {
      grad = std::move(it->second);
      pending_grads.erase(it);
    }
    std::vector<Tensor> input_grads;
    if (grad.defined()) {
      for (const auto& weak : node->retained_outputs) {
        if (auto impl = weak.lock()) impl->grad = grad.clone().impl_ptr();
      }
      node->saved_freed_after_backward = !retain_graph;
      if (!accumulate_in_place(*node, grad, pending_grads)) {
        OpTimer timer(node->name());
        input_grads = node->backward(grad);
      }
      if (!retain_graph) node->release_saved();
    }
    for (size_t i = 0; i < node->next_edges.size(); ++i) {
      const std::shared_ptr<Node>& next = node->next_edges[i];
      if (!next) continue;
      if (i < input_grads.size() && input_grads[i].defined()) {
        Tensor& slot = pending_grads[next.get()];
        if (!slot.defined()) {
          slot = std::move(input_grads[i]);
        } else {
          OpTimer timer("(gradient sum)");
          add_gradient(slot, input_grads[i]);
        }
      }
      if (--dependencies[next.get()] == 0) ready.push_back(next);
    }
  }
}

}  // namespace heed
