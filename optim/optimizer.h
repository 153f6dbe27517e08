#pragma once
// Optimizer: the base of AdamW and SGD. It sees only named parameter tensors, grouped into
// parameter groups that each carry their own hyper-parameters (as torch.optim does), and it
// knows nothing of models.
//
// A training step with gradient accumulation over N micro-batches (heed's engine adds into
// `.grad` on every backward, so gradients accumulate by themselves):
//
//   optimizer.zero_grad();
//   for (int k = 0; k < N; ++k) {
//     Tensor loss = compute_loss(micro_batch[k]);   // the mean over the micro-batch
//     (loss * (1.0 / N)).backward();                // so the sum is the mean over N of them
//   }
//   clip_grad_norm_(optimizer, max_norm);           // optional (clip.h)
//   optimizer.step();
//   scheduler.step();                               // optional (schedule.h)
//
// Clipping inside the update reads every gradient once less and gives the same numbers:
//   optimizer.step(clip_coefficient(grad_norm(optimizer), max_norm));
//
// With equal micro-batch sizes this gives the gradient of the mean loss over the whole batch.
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "autograd/tensor.h"

namespace heed::io {
class SafetensorsFile;
}

namespace heed::optim {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Parameters that share hyper-parameters. What is left unset takes the optimizer's default;
// once the optimizer is built, every one of its groups has lr, weight_decay and every
// option set.
struct ParamGroup {
  NamedTensors params;
  std::optional<double> lr;
  std::optional<double> weight_decay;
  // The optimizer's other hyper-parameters by name (AdamW: beta1, beta2, eps, amsgrad;
  // SGD: momentum, dampening, nesterov). Flags are stored as 0 or 1.
  std::map<std::string, double> options;

  double option(const std::string& key) const;
};

// What an optimizer keeps for one parameter: the number of updates it made to it and its
// state tensors (AdamW: exp_avg, exp_avg_sq; SGD: momentum_buffer), made on first use.
struct ParamState {
  int64_t step = 0;
  std::map<std::string, Tensor> tensors;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // "AdamW", "SGD": also what a state file records, so that one is not loaded into the other.
  virtual std::string_view name() const = 0;

  // One update of every parameter that has a gradient; parameters without one are skipped
  // and their state is left as it is (as torch.optim does). Each gradient enters the update
  // multiplied by `grad_scale` rounded to its type, the numbers clip_grad_norm_ would have
  // left in it: clipping by clip_coefficient (clip.h) inside the update saves a pass over
  // every gradient. The gradients themselves are not changed.
  void step(double grad_scale = 1.0);
  // Drops every parameter's gradient (PyTorch's set_to_none=True).
  void zero_grad();

  // PyTorch's register_step_pre_hook / register_step_post_hook: calls before and after every
  // step(), in the order registered. ZeRO-1 (train/distributed/optimizer_shards.h) uses them so
  // that a step updates this rank's share of the parameters and shares the new values after,
  // while the code that calls step() stays the same. Returns an id for remove_step_hook.
  using StepHook = std::function<void()>;
  uint64_t register_step_pre_hook(StepHook hook);
  uint64_t register_step_post_hook(StepHook hook);
  void remove_step_hook(uint64_t id);

  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  // The state of a parameter by name; null before its first update. Throws for a name this
  // optimizer does not have.
  const ParamState* state(const std::string& param_name) const;
  // Replaces a parameter's state (a state with step 0 is "none yet"): for optimizer state
  // sharded over data-parallel ranks, gathered for a checkpoint and dropped again after.
  void set_state(const std::string& param_name, ParamState state);

  // Writes the state to a safetensors file: each state tensor as "<param name>.<slot>"
  // (the parameter's dtype; its shape, or state_shape's), each step count as "<param name>.step"
  // (I64 scalar), and in the metadata the optimizer's name and the groups' hyper-parameters and
  // parameter names (JSON).
  void save_state(const std::string& path) const;
  // Reads a file written by save_state for the same parameters: same optimizer, same groups
  // with the same parameter names, state tensors of the parameters' shapes. Restores the
  // hyper-parameters (lr included) and the state. Any mismatch throws a message naming the
  // parameter, and leaves this optimizer as it was.
  void load_state(const std::string& path);

 protected:
  // Hyper-parameters that groups take when they do not set them. `defaults.options` also
  // lists every option key this optimizer knows; any other key is an error.
  Optimizer(std::vector<ParamGroup> groups, ParamGroup defaults);

  // Throws if a group's hyper-parameters are out of range (`where` names the group).
  virtual void check_hyper_parameters(const ParamGroup& group, const std::string& where) const = 0;
  // The state tensors `param` of `group` has after its first update.
  virtual std::vector<std::string> state_names(const ParamGroup& group,
                                               const Tensor& param) const = 0;
  // The shape of state `slot` of `param`: the parameter's own unless an optimizer keeps less
  // (Adafactor's factored second moments).
  virtual Shape state_shape(const std::string& slot, const Tensor& param) const;
  // One update of `param` (contiguous) with its gradient `grad` times `grad_scale`
  // (contiguous, same dtype and shape). `state.step` is already incremented for this update.
  virtual void update(const ParamGroup& group, const Tensor& param, const Tensor& grad,
                      double grad_scale, ParamState& state) = 0;
  // Derived constructors call this once their hyper-parameter checks can run.
  void check_all_groups() const;

 private:
  struct Location {
    size_t group;
    size_t index;
  };
  // The steps of load_state.
  nlohmann::json read_saved_groups(const io::SafetensorsFile& file) const;
  void restore_group(const nlohmann::json& saved, size_t g, ParamGroup& group,
                     const std::string& path) const;
  void read_state_tensors(const io::SafetensorsFile& file,
                          std::vector<std::vector<ParamState>>& state) const;
  void check_state_complete(const std::vector<ParamGroup>& groups,
                            const std::vector<std::vector<ParamState>>& state,
                            const std::string& path) const;

  std::vector<ParamGroup> groups_;
  std::vector<std::pair<uint64_t, StepHook>> pre_step_hooks_, post_step_hooks_;
  uint64_t next_hook_id_ = 1;
  std::vector<std::vector<ParamState>> state_;  // [group][parameter], as groups_
  std::unordered_map<std::string, Location> by_name_;
};

// A tensor shaped and typed as `like`, filled with zeros: how state tensors start.
Tensor zeros_like(const Tensor& like);

}  // namespace heed::optim
