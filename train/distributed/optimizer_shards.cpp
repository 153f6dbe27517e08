#include "train/distributed/optimizer_shards.h"

#include <algorithm>
#include <cstring>

#include "autograd/ops.h"
#include "base/error.h"

namespace heed::train {
std::string pack_state(const optim::ParamState& state) {
  std::string out;
  const auto put = [&](const void* data, size_t bytes) {
    const char* p = static_cast<const char*>(data);
    out.insert(out.end(), p, p + bytes);
  };
  const int64_t count = static_cast<int64_t>(state.tensors.size());
  put(&state.step, sizeof state.step);
  put(&count, sizeof count);
  for (const auto& [name, t] : state.tensors) {
    HEED_CHECK(t.dtype() == DType::f32 && t.is_contiguous(),
               "ZeRO-1 shards f32 optimizer state, '{}' is {}", name, dtype_name(t.dtype()));
    const int64_t length = static_cast<int64_t>(name.size()), dims = t.dim();
    put(&length, sizeof length);
    put(name.data(), name.size());
    put(&dims, sizeof dims);
    put(t.shape().data(), t.shape().size() * sizeof(int64_t));
    put(t.data<float>(), static_cast<size_t>(t.numel()) * sizeof(float));
  }
  return out;
}

optim::ParamState unpack_state(const std::string& bytes, const Tensor& param) {
  size_t at = 0;
  const auto get = [&](void* into, size_t n) {
    HEED_CHECK(at + n <= bytes.size(), "a damaged optimizer state message");
    std::memcpy(into, bytes.data() + at, n);
    at += n;
  };
  optim::ParamState state;
  int64_t count = 0;
  get(&state.step, sizeof state.step);
  get(&count, sizeof count);
  for (int64_t k = 0; k < count; ++k) {
    int64_t length = 0, dims = 0;
    get(&length, sizeof length);
    HEED_CHECK(length >= 0 && static_cast<size_t>(length) <= bytes.size(),
               "a damaged optimizer state message");
    std::string name(static_cast<size_t>(length), '\0');
    get(name.data(), name.size());
    get(&dims, sizeof dims);
    HEED_CHECK(dims >= 0 && dims <= param.dim(),
               "state '{}' of {} dimensions for a parameter of {}", name, dims, param.dim());
    Shape shape(static_cast<size_t>(dims));
    get(shape.data(), shape.size() * sizeof(int64_t));
    // Optimizer state is the parameter's size or less (Adafactor's factored moments).
    int64_t numel = 1;
    for (int64_t d : shape) {
      HEED_CHECK(d >= 0 && d <= param.numel(), "state '{}' of shape {} for a parameter of {}", name,
                 shape_str(shape), param.shape_str());
      numel *= d;
    }
    HEED_CHECK(numel <= param.numel(), "state '{}' of shape {} for a parameter of {}", name,
               shape_str(shape), param.shape_str());
    Tensor t = zeros(shape, DType::f32);
    get(t.data<float>(), static_cast<size_t>(numel) * sizeof(float));
    state.tensors.emplace(name, t);
  }
  return state;
}

OptimizerShards::OptimizerShards(const World& world, optim::Optimizer& optimizer)
    : world_(world), optimizer_(optimizer) {
  for (const optim::ParamGroup& group : optimizer.param_groups()) {
    for (const auto& named : group.params) params_.push_back(named);
  }
  // Largest first, each to the rank holding the fewest elements so far: balanced within one
  // parameter's size, and the same on every rank.
  std::vector<size_t> order(params_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::ranges::stable_sort(order, [&](size_t a, size_t b) {
    return params_[a].second.numel() > params_[b].second.numel();
  });
  std::vector<int64_t> load(static_cast<size_t>(world.size()), 0);
  owners_.assign(params_.size(), 0);
  for (size_t i : order) {
    const int rank = static_cast<int>(std::ranges::min_element(load) - load.begin());
    owners_[i] = rank;
    load[static_cast<size_t>(rank)] += params_[i].second.numel();
  }
  owned_elements_ = load[static_cast<size_t>(world.rank())];
  pre_hook_ = optimizer.register_step_pre_hook([this] { before_step(); });
  post_hook_ = optimizer.register_step_post_hook([this] { after_step(); });
}

OptimizerShards::~OptimizerShards() {
  optimizer_.remove_step_hook(pre_hook_);
  optimizer_.remove_step_hook(post_hook_);
}

void OptimizerShards::before_step() {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (owners_[i] != world_.rank()) params_[i].second.zero_grad();
  }
}

void OptimizerShards::after_step() {
  std::vector<World::Piece> pieces;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i].second;
    pieces.push_back(
        {p.raw_data(), static_cast<size_t>(p.numel()) * dtype_size(p.dtype()), owners_[i]});
  }
  world_.broadcast_all(pieces);
  // The values changed under any cached copy (a bf16 weight): say so.
  for (size_t i = 0; i < params_.size(); ++i) {
    if (owners_[i] != world_.rank()) params_[i].second.storage()->bump_version();
  }
}

void OptimizerShards::gather_state() {
  for (size_t i = 0; i < params_.size(); ++i) {
    const int owner = owners_[i];
    if (owner == 0) continue;
    const std::string& name = params_[i].first;
    if (world_.rank() == owner) {
      const optim::ParamState* state = optimizer_.state(name);
      const std::string bytes = pack_state(state ? *state : optim::ParamState{});
      const uint64_t size = bytes.size();
      world_.send(&size, sizeof size, 0);
      world_.send(bytes.data(), bytes.size(), 0);
    } else if (world_.is_main()) {
      uint64_t size = 0;
      world_.receive(&size, sizeof size, owner);
      std::string bytes(size, '\0');
      world_.receive(bytes.data(), bytes.size(), owner);
      optimizer_.set_state(name, unpack_state(bytes, params_[i].second));
    }
  }
}

void OptimizerShards::drop_others_state() {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (owners_[i] != world_.rank()) optimizer_.set_state(params_[i].first, optim::ParamState{});
  }
}

}  // namespace heed::train
