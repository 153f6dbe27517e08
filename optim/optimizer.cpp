#include "optim/optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_set>

#include "autograd/grad_mode.h"
#include "base/error.h"
#include "io/safetensors.h"

namespace heed::optim {

namespace {

constexpr const char* kFormat = "heed-optimizer-state-v1";

std::string known_keys(const std::map<std::string, double>& options) {
  std::string out;
  for (const auto& [key, value] : options) out += (out.empty() ? "" : ", ") + key;
  return out.empty() ? "none" : out;
}

}  // namespace

double ParamGroup::option(const std::string& key) const {
  auto it = options.find(key);
  HEED_CHECK(it != options.end(), "parameter group has no option '{}' (it has: {})", key,
             known_keys(options));
  return it->second;
}

Shape Optimizer::state_shape(const std::string& /*slot*/, const Tensor& param) const {
  return param.shape();
}

Tensor zeros_like(const Tensor& like) {
  return zeros(like.shape(), like.dtype());
}

Optimizer::Optimizer(std::vector<ParamGroup> groups, ParamGroup defaults)
    : groups_(std::move(groups)) {
  HEED_CHECK(defaults.lr && defaults.weight_decay, "optimizer defaults need lr and weight_decay");
  std::unordered_set<const TensorImpl*> seen;
  size_t total = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    ParamGroup& group = groups_[g];
    if (!group.lr) group.lr = defaults.lr;
    if (!group.weight_decay) group.weight_decay = defaults.weight_decay;
    for (const auto& [key, value] : group.options) {
      HEED_CHECK(defaults.options.count(key), "parameter group {}: unknown option '{}' (known: {})",
                 g, key, known_keys(defaults.options));
    }
    for (const auto& [key, value] : defaults.options) group.options.emplace(key, value);

    state_.emplace_back(group.params.size());
    for (size_t i = 0; i < group.params.size(); ++i) {
      const auto& [name, p] = group.params[i];
      HEED_CHECK(p.defined(), "parameter '{}' is an undefined tensor", name);
      HEED_CHECK(p.dtype() == DType::f32 || p.dtype() == DType::f64,
                 "parameter '{}' is {}; optimizers update f32 and f64 parameters", name, p.dtype());
      HEED_CHECK(p.is_leaf(), "parameter '{}' is not a leaf tensor (an op made it)", name);
      HEED_CHECK(p.is_contiguous(), "parameter '{}' of shape {} is not contiguous", name,
                 p.shape_str());
      HEED_CHECK(seen.insert(p.impl()).second,
                 "parameter '{}' appears more than once among the parameter groups", name);
      HEED_CHECK(by_name_.emplace(name, Location{g, i}).second,
                 "two parameters are named '{}'; names must be unique", name);
    }
    total += group.params.size();
  }
  HEED_CHECK(total > 0, "the optimizer got no parameters");
}

void Optimizer::check_all_groups() const {
  for (size_t g = 0; g < groups_.size(); ++g) {
    check_hyper_parameters(groups_[g], fmt::format("parameter group {}", g));
  }
}

void Optimizer::step(double grad_scale) {
  NoGradGuard no_grad;
  for (const auto& [id, hook] : pre_step_hooks_) hook();
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroup& group = groups_[g];
    for (size_t i = 0; i < group.params.size(); ++i) {
      const auto& [name, p] = group.params[i];
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      HEED_CHECK(grad.shape() == p.shape() && grad.dtype() == p.dtype(),
                 "parameter '{}' ({} {}) has a gradient of {} {}", name, p.dtype(), p.shape_str(),
                 grad.dtype(), grad.shape_str());
      if (!grad.is_contiguous()) grad = grad.contiguous();
      ParamState& state = state_[g][i];
      ++state.step;
      update(group, p, grad, grad_scale, state);
      // The update wrote through raw pointers: tell any graph that saved `p` it changed.
      p.storage()->bump_version();
    }
  }
  for (const auto& [id, hook] : post_step_hooks_) hook();
}

uint64_t Optimizer::register_step_pre_hook(StepHook hook) {
  pre_step_hooks_.emplace_back(next_hook_id_, std::move(hook));
  return next_hook_id_++;
}

uint64_t Optimizer::register_step_post_hook(StepHook hook) {
  post_step_hooks_.emplace_back(next_hook_id_, std::move(hook));
  return next_hook_id_++;
}

void Optimizer::remove_step_hook(uint64_t id) {
  for (auto* hooks : {&pre_step_hooks_, &post_step_hooks_}) {
    std::erase_if(*hooks, [id](const auto& hook) { return hook.first == id; });
  }
}

void Optimizer::zero_grad() {
  for (auto& group : groups_) {
    for (auto& [name, p] : group.params) p.zero_grad();
  }
}

const ParamState* Optimizer::state(const std::string& param_name) const {
  auto it = by_name_.find(param_name);
  HEED_CHECK(it != by_name_.end(), "the optimizer has no parameter named '{}'", param_name);
  const ParamState& s = state_[it->second.group][it->second.index];
  return s.step > 0 ? &s : nullptr;
}

void Optimizer::set_state(const std::string& param_name, ParamState state) {
  auto it = by_name_.find(param_name);
  HEED_CHECK(it != by_name_.end(), "the optimizer has no parameter named '{}'", param_name);
  state_[it->second.group][it->second.index] = std::move(state);
}

void Optimizer::save_state(const std::string& path) const {
  NamedTensors tensors;
  nlohmann::json groups = nlohmann::json::array();
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroup& group = groups_[g];
    nlohmann::json names = nlohmann::json::array();
    for (size_t i = 0; i < group.params.size(); ++i) {
      const std::string& name = group.params[i].first;
      names.push_back(name);
      const ParamState& s = state_[g][i];
      if (s.step == 0) continue;
      tensors.emplace_back(name + ".step", scalar_tensor(static_cast<double>(s.step), DType::i64));
      for (const auto& [slot, t] : s.tensors) tensors.emplace_back(name + "." + slot, t);
    }
    groups.push_back({{"lr", *group.lr},
                      {"weight_decay", *group.weight_decay},
                      {"options", group.options},
                      {"params", names}});
  }
  // "<a>.<slot>" of one parameter could equal the name of another parameter's state.
  std::set<std::string> unique;
  for (const auto& [name, t] : tensors) {
    HEED_CHECK(unique.insert(name).second,
               "cannot save optimizer state: two state entries are named '{}'", name);
  }
  io::save_safetensors(
      path, tensors,
      {{"format", kFormat}, {"optimizer", std::string(name())}, {"param_groups", groups.dump()}});
}

void Optimizer::load_state(const std::string& path) {
  io::SafetensorsFile file(path);
  const nlohmann::json saved_groups = read_saved_groups(file);
  // Everything is read into copies first, so that a bad file leaves the optimizer untouched.
  std::vector<ParamGroup> groups = groups_;
  std::vector<std::vector<ParamState>> state(groups_.size());
  try {
    for (size_t g = 0; g < groups.size(); ++g) {
      restore_group(saved_groups[g], g, groups[g], path);
      state[g].resize(groups[g].params.size());
    }
  } catch (const nlohmann::json::exception& e) {
    fail("{}: malformed param_groups metadata: {}", path, e.what());
  }
  read_state_tensors(file, state);
  check_state_complete(groups, state, path);
  groups_ = std::move(groups);
  state_ = std::move(state);
}

// The file's groups, after its metadata says it holds this optimizer's state.
nlohmann::json Optimizer::read_saved_groups(const io::SafetensorsFile& file) const {
  const std::string& path = file.path();
  const auto& meta = file.metadata();
  auto meta_value = [&](const std::string& key) -> const std::string& {
    auto it = meta.find(key);
    HEED_CHECK(it != meta.end(), "{}: not an optimizer state file (no '{}' in its metadata)", path,
               key);
    return it->second;
  };
  HEED_CHECK(meta_value("format") == kFormat,
             "{}: not an optimizer state file (its format is '{}', heed writes '{}')", path,
             meta_value("format"), kFormat);
  HEED_CHECK(meta_value("optimizer") == name(), "{}: holds {} state, cannot load it into {}", path,
             meta_value("optimizer"), name());
  nlohmann::json saved_groups;
  try {
    saved_groups = nlohmann::json::parse(meta_value("param_groups"));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: unreadable param_groups metadata: {}", path, e.what());
  }
  HEED_CHECK(saved_groups.is_array() && saved_groups.size() == groups_.size(),
             "{}: holds {} parameter groups, this optimizer has {}", path,
             saved_groups.is_array() ? saved_groups.size() : 0, groups_.size());
  return saved_groups;
}

// Group g's hyper-parameters from the file, after checking that it lists the same parameters
// in the same order.
void Optimizer::restore_group(const nlohmann::json& saved, size_t g, ParamGroup& group,
                              const std::string& path) const {
  std::vector<std::string> names = saved.at("params").get<std::vector<std::string>>();
  for (const std::string& n : names) {
    HEED_CHECK(by_name_.count(n),
               "{}: has state for parameter '{}', which this optimizer does not have", path, n);
    HEED_CHECK(by_name_.at(n).group == g,
               "{}: parameter '{}' is in group {} of the file but in group {} of this optimizer",
               path, n, g, by_name_.at(n).group);
  }
  for (size_t i = 0; i < group.params.size(); ++i) {
    const std::string& n = group.params[i].first;
    if (i < names.size() && names[i] == n) continue;
    HEED_CHECK(std::find(names.begin(), names.end(), n) != names.end(),
               "{}: has no entry for parameter '{}' (group {}): saved for other parameters", path,
               n, g);
    fail("{}: parameter '{}' is at a different position in group {} of the file", path, n, g);
  }
  HEED_CHECK(names.size() == group.params.size(),
             "{}: group {} has {} parameters, this optimizer's has {}", path, g, names.size(),
             group.params.size());
  group.lr = saved.at("lr").get<double>();
  group.weight_decay = saved.at("weight_decay").get<double>();
  auto options = saved.at("options").get<std::map<std::string, double>>();
  for (const auto& [key, value] : group.options) {
    HEED_CHECK(options.count(key), "{}: group {} lacks option '{}'", path, g, key);
  }
  for (const auto& [key, value] : options) {
    HEED_CHECK(group.options.count(key), "{}: group {} has unknown option '{}'", path, g, key);
  }
  group.options = options;
  check_hyper_parameters(group, fmt::format("{}: parameter group {}", path, g));
}

// Each "<param name>.<slot>" entry into `state`, checked against its parameter.
void Optimizer::read_state_tensors(const io::SafetensorsFile& file,
                                   std::vector<std::vector<ParamState>>& state) const {
  const std::string& path = file.path();
  for (const std::string& entry : file.names()) {
    size_t dot = entry.rfind('.');
    HEED_CHECK(dot != std::string::npos && by_name_.count(entry.substr(0, dot)),
               "{}: entry '{}' is not the state of any parameter of this optimizer", path, entry);
    const std::string param_name = entry.substr(0, dot), slot = entry.substr(dot + 1);
    const Location loc = by_name_.at(param_name);
    const Tensor& p = groups_[loc.group].params[loc.index].second;
    ParamState& s = state[loc.group][loc.index];
    Tensor t = file.get(entry);
    if (slot == "step") {
      HEED_CHECK(t.dtype() == DType::i64 && t.numel() == 1 && t.item() >= 1,
                 "{}: '{}' must be a positive I64 scalar (the parameter's update count)", path,
                 entry);
      s.step = static_cast<int64_t>(t.item());
      continue;
    }
    const Shape want = state_shape(slot, p);
    HEED_CHECK(t.shape() == want,
               "{}: state '{}' of parameter '{}' has shape {}, but {} keeps it as {} for a "
               "parameter of shape {}",
               path, slot, param_name, t.shape_str(), name(), shape_str(want), p.shape_str());
    HEED_CHECK(is_floating(t.dtype()), "{}: state '{}' of parameter '{}' is {}", path, slot,
               param_name, t.dtype());
    s.tensors[slot] = t.dtype() == p.dtype() ? t : t.to(p.dtype());
  }
}

// A parameter that was updated has every state tensor its optimizer keeps; one that was not
// has none.
void Optimizer::check_state_complete(const std::vector<ParamGroup>& groups,
                                     const std::vector<std::vector<ParamState>>& state,
                                     const std::string& path) const {
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t i = 0; i < groups[g].params.size(); ++i) {
      const ParamState& s = state[g][i];
      const auto& [n, param] = groups[g].params[i];
      if (s.step == 0) {
        HEED_CHECK(s.tensors.empty(), "{}: parameter '{}' has state tensors but no step count",
                   path, n);
        continue;
      }
      std::vector<std::string> want = state_names(groups[g], param);
      std::sort(want.begin(), want.end());
      std::vector<std::string> have;
      for (const auto& [slot, t] : s.tensors) have.push_back(slot);
      HEED_CHECK(have == want, "{}: parameter '{}' has state [{}], {} expects [{}]", path, n,
                 fmt::join(have, ", "), name(), fmt::join(want, ", "));
    }
  }
}

}  // namespace heed::optim
