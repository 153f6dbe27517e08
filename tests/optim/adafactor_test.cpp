#include "optim/adafactor.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "autograd/grad_mode.h"
#include "io/safetensors.h"
#include "optim_test_util.h"

namespace heed::optim {
namespace {

using heed::testing::bitwise_equal;
using heed::testing::set_grad;
using heed::testing::temp_path;

// The fixture's hyper-parameters (Hugging Face's keyword arguments, as JSON) as options.
AdafactorOptions options_from(const nlohmann::json& h) {
  AdafactorOptions o;
  if (!h["lr"].is_null()) o.lr = h["lr"].get<double>();
  o.eps1 = h["eps"][0].get<double>();
  o.eps2 = h["eps"][1].get<double>();
  o.clip_threshold = h["clip_threshold"].get<double>();
  o.decay_rate = h["decay_rate"].get<double>();
  o.beta1 = h["beta1"].is_null() ? 0.0 : h["beta1"].get<double>();
  o.weight_decay = h["weight_decay"].get<double>();
  o.scale_parameter = h["scale_parameter"].get<bool>();
  o.relative_step = h["relative_step"].get<bool>();
  o.warmup_init = h["warmup_init"].get<bool>();
  return o;
}

// Every element within `rtol` of the reference relative to that element. The reference is the
// same update computed by PyTorch in the same dtype; the two differ in how they sum (PyTorch's
// f32 means and norms against heed's sums in double) and by a few roundings of each element's
// chain of about ten operations: a few units in the last place. f32: 1e-5 (~80 ulp, far less
// than any wrong term: the eps placement, the clip, the step size or a factor's mean move
// values by 1e-3 or more); f64: 1e-12. The first moment beta1 m + (1 - beta1) d adds terms of
// either sign, so where they cancel an element's rounding error is relative to the terms, not
// to the small sum: for it the error is measured against the tensor's largest magnitude.
void expect_close(const Tensor& ours, const Tensor& ref, double rtol, const std::string& what,
                  bool cancels = false) {
  ASSERT_EQ(ours.shape(), ref.shape()) << what;
  std::vector<double> a = ours.to_vector<double>(), b = ref.to_vector<double>();
  double largest = 0.0;
  for (double x : b) largest = std::max(largest, std::abs(x));
  for (size_t i = 0; i < a.size(); ++i) {
    const double scale = cancels ? largest : std::abs(b[i]);
    EXPECT_LE(std::abs(a[i] - b[i]), rtol * scale)
        << what << "[" << i << "]: " << a[i] << " vs " << b[i];
  }
}

TEST(Adafactor, MatchesHuggingFaceDefinition) {
  io::SafetensorsFile fixture(std::string(HEED_FIXTURES_DIR) + "/adafactor.safetensors");
  const auto& meta = fixture.metadata();
  ASSERT_EQ(meta.at("optimizer"), "transformers.optimization.Adafactor");
  int compared = 0;
  for (const std::string c : {"relative", "fixed", "warmup"}) {
    const AdafactorOptions options = options_from(nlohmann::json::parse(meta.at(c)));
    for (const std::string shape : {"matrix", "stack", "vector"}) {
      for (const std::string dtype : {"f32", "f64"}) {
        const std::string prefix = c + "." + shape + "." + dtype;
        SCOPED_TRACE(prefix);
        const double rtol = dtype == "f32" ? 1e-5 : 1e-12;
        Tensor p = fixture.get(prefix + ".param.0");
        p.set_requires_grad(true);
        Adafactor adafactor(NamedTensors{{"p", p}}, options);
        for (int k = 0; k < 3; ++k) {
          const std::string after = std::to_string(k + 1);
          set_grad(p, fixture.get(prefix + ".grad." + std::to_string(k)));
          adafactor.step();
          const ParamState* state = adafactor.state("p");
          ASSERT_NE(state, nullptr);
          EXPECT_EQ(state->step, k + 1);
          expect_close(p, fixture.get(prefix + ".param." + after), rtol, "param." + after);
          for (const auto& [slot, tensor] : state->tensors) {
            expect_close(tensor, fixture.get(prefix + "." + slot + "." + after), rtol,
                         slot + "." + after, slot == "exp_avg");
            ++compared;
          }
        }
      }
    }
  }
  // relative, warmup: v or R and C; fixed adds the first moment. 3 steps, 2 dtypes.
  EXPECT_EQ(compared, 3 * 2 * (2 * (2 + 2 + 1) + (3 + 3 + 2)));
}

TEST(Adafactor, KeepsFactoredMomentsOfRowsAndColumns) {
  Tensor w = heed::testing::leaf<float>(std::vector<float>(2 * 3 * 4, 0.5f), {2, 3, 4});
  Tensor b = heed::testing::leaf<float>(std::vector<float>(5, 0.1f), {5});
  Adafactor adafactor(NamedTensors{{"w", w}, {"b", b}}, AdafactorOptions{.beta1 = 0.9});
  set_grad(w, full({2, 3, 4}, 0.25, DType::f32));
  set_grad(b, full({5}, -1.0, DType::f32));
  adafactor.step();
  const ParamState& ws = *adafactor.state("w");
  EXPECT_EQ(ws.tensors.at("exp_avg_sq_row").shape(), (Shape{2, 3}));
  EXPECT_EQ(ws.tensors.at("exp_avg_sq_col").shape(), (Shape{2, 4}));
  EXPECT_EQ(ws.tensors.at("exp_avg").shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(ws.tensors.size(), 3u);
  const ParamState& bs = *adafactor.state("b");
  EXPECT_EQ(bs.tensors.at("exp_avg_sq").shape(), (Shape{5}));
  EXPECT_EQ(bs.tensors.size(), 2u);
}

// The state file holds the factored shapes, and a run resumed from it steps bit for bit as the
// run that went on.
TEST(Adafactor, StateFileResumesBitForBit) {
  auto make = [](uint64_t seed) {
    Generator gen(seed);
    return NamedTensors{{"w", randn({16, 24}, gen).set_requires_grad(true)},
                        {"b", randn({24}, gen).set_requires_grad(true)}};
  };
  auto grads = [](const NamedTensors& params, int step) {
    Generator gen(100 + step);
    for (const auto& [name, p] : params) set_grad(p, randn(p.shape(), gen));
  };
  const AdafactorOptions options{
      .lr = 1e-2, .beta1 = 0.9, .weight_decay = 0.01, .relative_step = false};
  NamedTensors straight = make(1), resumed = make(1);
  Adafactor a(straight, options);
  Adafactor b(resumed, options);
  for (int s = 0; s < 2; ++s) {
    grads(straight, s);
    a.step();
    grads(resumed, s);
    b.step();
  }
  const std::string path = temp_path("adafactor_state.safetensors");
  b.save_state(path);
  NamedTensors reloaded = make(1);
  {
    NoGradGuard no_grad;
    for (size_t i = 0; i < reloaded.size(); ++i) reloaded[i].second.copy_(resumed[i].second);
  }
  Adafactor c(reloaded, AdafactorOptions{.lr = 1.0, .relative_step = false});
  c.load_state(path);
  EXPECT_EQ(c.state("w")->tensors.at("exp_avg_sq_row").shape(), (Shape{16}));
  for (int s = 2; s < 4; ++s) {
    grads(straight, s);
    a.step();
    grads(reloaded, s);
    c.step();
  }
  for (size_t i = 0; i < straight.size(); ++i) {
    EXPECT_TRUE(bitwise_equal(straight[i].second, reloaded[i].second)) << straight[i].first;
  }
}

TEST(Adafactor, StateOfTheWrongShapeIsRefused) {
  Generator gen(3);
  NamedTensors params{{"w", randn({4, 6}, gen).set_requires_grad(true)}};
  Adafactor a(params, AdafactorOptions{});
  set_grad(params[0].second, randn({4, 6}, gen));
  a.step();
  const std::string path = temp_path("adafactor_wrong_shape.safetensors");
  a.save_state(path);
  NamedTensors other{{"w", randn({6, 4}, gen).set_requires_grad(true)}};
  Adafactor b(other, AdafactorOptions{});
  try {
    b.load_state(path);
    FAIL() << "a state of another shape loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("state 'exp_avg_sq_col' of parameter 'w' has shape [6]"),
              std::string::npos)
        << e.what();
  }
}

// Sums are taken in blocks added in order, so the thread count does not change a bit.
TEST(Adafactor, SameBitsOnOneThreadAndTwo) {
  auto run = [](int threads) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    Generator gen(7);
    NamedTensors params{{"w", randn({300, 500}, gen).set_requires_grad(true)}};
    Adafactor a(params, AdafactorOptions{});
    for (int s = 0; s < 3; ++s) {
      set_grad(params[0].second, randn({300, 500}, gen));
      a.step();
    }
    omp_set_num_threads(before);
    return params[0].second.detach().clone();
  };
  EXPECT_TRUE(bitwise_equal(run(1), run(2)));
}

TEST(Adafactor, RefusesContradictoryHyperParameters) {
  Generator gen(1);
  NamedTensors params{{"w", randn({2, 2}, gen).set_requires_grad(true)}};
  EXPECT_THROW(Adafactor(params, AdafactorOptions{.lr = 1e-3}), Error);  // and relative_step
  EXPECT_THROW(Adafactor(params, AdafactorOptions{.relative_step = false}), Error);  // no lr
  EXPECT_THROW(Adafactor(params, AdafactorOptions{.decay_rate = 0.5}), Error);
  EXPECT_THROW(Adafactor(params, AdafactorOptions{.clip_threshold = 0.0}), Error);
  EXPECT_THROW(Adafactor(params, AdafactorOptions{.beta1 = 1.0}), Error);
  EXPECT_NO_THROW(Adafactor(params, AdafactorOptions{}));
}

}  // namespace
}  // namespace heed::optim
