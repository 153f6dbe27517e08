#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "io/safetensors.h"
#include "optim/adamw.h"
#include "optim/param_groups.h"
#include "optim/schedule.h"
#include "optim/sgd.h"
#include "optim_test_util.h"

namespace heed::optim {
namespace {

using heed::testing::bitwise_equal;
using heed::testing::set_grad;
using heed::testing::temp_path;

// A small "model": a matrix bigger than one kernel block, a vector, and a bias that only gets
// a gradient on odd steps (so its step count lags the others').
NamedTensors make_params() {
  Generator gen(5);
  NamedTensors params = {{"layer.weight", randn({70, 90}, gen)},
                         {"layer.bias", randn({90}, gen)},
                         {"head.bias", randn({3}, gen)}};
  for (auto& [name, p] : params) p.set_requires_grad(true);
  return params;
}

NamedTensors clone_all(const NamedTensors& params) {
  NamedTensors out;
  for (const auto& [name, p] : params) {
    Tensor c = p.detach().clone();
    c.set_requires_grad(true);
    out.emplace_back(name, c);
  }
  return out;
}

// The gradients of step `step`: a pure function of it, so two runs see the same ones.
void set_step_grads(const NamedTensors& params, int step) {
  Generator gen(100 + step);
  for (const auto& [name, p] : params) {
    Tensor(p).zero_grad();
    if (name == "head.bias" && step % 2 == 0) continue;
    set_grad(p, randn(p.shape(), gen));
  }
}

using MakeOptimizer = std::function<std::unique_ptr<Optimizer>(const NamedTensors&)>;

void expect_resume_is_bit_identical(const MakeOptimizer& make) {
  constexpr int kSteps = 7, kStop = 4;
  auto run = [&](NamedTensors& params, Optimizer& opt, LRScheduler& sched, int from, int to) {
    for (int s = from; s < to; ++s) {
      set_step_grads(params, s);
      opt.step();
      sched.step();
    }
  };

  NamedTensors straight = make_params();
  auto opt_a = make(straight);
  LRScheduler sched_a(*opt_a, make_schedule("cosine", 2, kSteps));
  run(straight, *opt_a, sched_a, 0, kSteps);

  NamedTensors first = make_params();
  auto opt_b = make(first);
  LRScheduler sched_b(*opt_b, make_schedule("cosine", 2, kSteps));
  run(first, *opt_b, sched_b, 0, kStop);
  const std::string path = temp_path("resume_" + std::string(opt_b->name()) + ".safetensors");
  opt_b->save_state(path);
  const nlohmann::json sched_state = sched_b.state_dict();

  // A fresh process: new parameters (the saved values), optimizer and scheduler.
  NamedTensors resumed = clone_all(first);
  auto opt_c = make(resumed);
  LRScheduler sched_c(*opt_c, make_schedule("cosine", 2, kSteps));
  opt_c->load_state(path);
  sched_c.load_state_dict(sched_state);
  EXPECT_EQ(opt_c->state("head.bias")->step, kStop / 2);
  EXPECT_EQ(opt_c->state("layer.weight")->step, kStop);
  run(resumed, *opt_c, sched_c, kStop, kSteps);

  for (size_t i = 0; i < straight.size(); ++i) {
    EXPECT_TRUE(bitwise_equal(resumed[i].second, straight[i].second)) << straight[i].first;
  }
  EXPECT_EQ(sched_c.last_lr(), sched_a.last_lr());
  for (const auto& [name, p] : straight) {
    for (const auto& [slot, t] : opt_a->state(name)->tensors) {
      EXPECT_TRUE(bitwise_equal(opt_c->state(name)->tensors.at(slot), t)) << name << " " << slot;
    }
  }
}

TEST(OptimizerState, AdamWSaveLoadContinueIsBitIdentical) {
  expect_resume_is_bit_identical([](const NamedTensors& params) {
    return std::make_unique<AdamW>(weight_decay_groups(params, 0.01),
                                   AdamWOptions{.lr = 1e-2, .amsgrad = true});
  });
}

TEST(OptimizerState, SGDSaveLoadContinueIsBitIdentical) {
  expect_resume_is_bit_identical([](const NamedTensors& params) {
    return std::make_unique<SGD>(params, SGDOptions{.lr = 0.1, .momentum = 0.9, .nesterov = true});
  });
}

TEST(OptimizerState, RestoresHyperParameters) {
  NamedTensors params = make_params();
  AdamW saved(params, {.lr = 0.5, .beta1 = 0.7, .weight_decay = 0.2});
  const std::string path = temp_path("hyper.safetensors");
  saved.save_state(path);  // before any step: no state, only hyper-parameters
  AdamW loaded(clone_all(params), {});
  loaded.load_state(path);
  const ParamGroup& g = loaded.param_groups()[0];
  EXPECT_EQ(*g.lr, 0.5);
  EXPECT_EQ(*g.weight_decay, 0.2);
  EXPECT_EQ(g.option("beta1"), 0.7);
  EXPECT_EQ(loaded.state("layer.weight"), nullptr);

  io::SafetensorsFile file(path);
  EXPECT_EQ(file.metadata().at("optimizer"), "AdamW");
}

// Runs `load` and returns the message of the Error it throws ("" if none).
std::string load_error(Optimizer& opt, const std::string& path) {
  try {
    opt.load_state(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string saved_adamw_state(const NamedTensors& params, const std::string& file) {
  AdamW opt(params, {.lr = 0.3});
  set_step_grads(params, 1);
  opt.step();
  const std::string path = temp_path(file);
  opt.save_state(path);
  return path;
}

TEST(OptimizerState, WrongNamesFailNamingTheParameter) {
  const std::string path = saved_adamw_state(make_params(), "names.safetensors");
  NamedTensors renamed = make_params();
  renamed[1].first = "layer.beta";
  AdamW opt(renamed, {.lr = 0.1});
  const std::string message = load_error(opt, path);
  EXPECT_NE(message.find("'layer.bias'"), std::string::npos) << message;
  EXPECT_NE(message.find(path), std::string::npos) << message;
  // A failed load changes nothing.
  EXPECT_EQ(*opt.param_groups()[0].lr, 0.1);
  EXPECT_EQ(opt.state("layer.weight"), nullptr);

  NamedTensors fewer = make_params();
  fewer.pop_back();
  AdamW opt2(fewer, {});
  EXPECT_NE(load_error(opt2, path).find("'head.bias'"), std::string::npos);
}

TEST(OptimizerState, WrongShapeFailsNamingTheParameterAndShapes) {
  const std::string path = saved_adamw_state(make_params(), "shapes.safetensors");
  NamedTensors reshaped = make_params();
  reshaped[1].second = randn({91}, *std::make_unique<Generator>(1));
  reshaped[1].second.set_requires_grad(true);
  AdamW opt(reshaped, {.lr = 0.1});
  const std::string message = load_error(opt, path);
  for (const char* part : {"'layer.bias'", "[90]", "[91]"}) {
    EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;
  }
  EXPECT_EQ(*opt.param_groups()[0].lr, 0.1);
  EXPECT_EQ(opt.state("layer.weight"), nullptr);
}

TEST(OptimizerState, WrongOptimizerOrFileFails) {
  const NamedTensors params = make_params();
  const std::string path = saved_adamw_state(params, "adamw_for_sgd.safetensors");
  SGD sgd(clone_all(params), {.lr = 0.1, .momentum = 0.9});
  EXPECT_NE(load_error(sgd, path).find("AdamW"), std::string::npos);

  AdamW adamw(clone_all(params), {});
  const std::string fixture = std::string(HEED_FIXTURES_DIR) + "/adamw.safetensors";
  EXPECT_NE(load_error(adamw, fixture).find("not an optimizer state file"), std::string::npos);
  EXPECT_NE(load_error(adamw, temp_path("missing.safetensors")), "");

  // The groups' hyper-parameters come from the file, amsgrad included (as in PyTorch).
  AdamW plain(params, {});
  set_step_grads(params, 1);
  plain.step();
  const std::string plain_path = temp_path("plain.safetensors");
  plain.save_state(plain_path);
  AdamW ams(clone_all(params), {.amsgrad = true});
  ams.load_state(plain_path);
  EXPECT_EQ(ams.param_groups()[0].option("amsgrad"), 0.0);

  // A file whose groups say amsgrad but whose state lacks max_exp_avg_sq is refused.
  io::SafetensorsFile file(plain_path);
  NamedTensors tensors;
  for (const std::string& name : file.names()) tensors.emplace_back(name, file.get(name));
  auto metadata = file.metadata();
  nlohmann::json groups = nlohmann::json::parse(metadata.at("param_groups"));
  groups[0]["options"]["amsgrad"] = 1.0;
  metadata["param_groups"] = groups.dump();
  const std::string doctored = temp_path("doctored.safetensors");
  io::save_safetensors(doctored, tensors, metadata);
  AdamW fresh(clone_all(params), {});
  const std::string message = load_error(fresh, doctored);
  EXPECT_NE(message.find("max_exp_avg_sq"), std::string::npos) << message;
  EXPECT_NE(message.find("'layer.weight'"), std::string::npos) << message;
}

}  // namespace
}  // namespace heed::optim
