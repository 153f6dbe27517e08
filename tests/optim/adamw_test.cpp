#include "optim/adamw.h"

#include <gtest/gtest.h>

#include <cmath>

#include "io/safetensors.h"
#include "optim_test_util.h"

namespace heed::optim {
namespace {

using heed::testing::leaf;
using heed::testing::set_grad;

// Every element within `rtol` of the reference, relative to that element: the reference is
// PyTorch's f32 computation of the same operations, so the two differ only by the rounding of
// a handful of f32 operations (a few units in the last place, ~1e-7 relative each); 1e-6
// leaves room for that and for PyTorch's kernels fusing or reordering them, while any wrong
// formula (eps placement, bias correction, decay order) moves values by far more.
void expect_close_elementwise(const Tensor& ours, const Tensor& ref, double rtol,
                              const std::string& what) {
  std::vector<double> a = ours.to_vector<double>(), b = ref.to_vector<double>();
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_LE(std::abs(a[i] - b[i]), rtol * std::abs(b[i]))
        << what << "[" << i << "]: " << a[i] << " vs " << b[i];
  }
}

TEST(AdamW, MatchesPyTorchFixture) {
  io::SafetensorsFile fixture(std::string(HEED_FIXTURES_DIR) + "/adamw.safetensors");
  const auto& meta = fixture.metadata();
  ASSERT_EQ(meta.at("optimizer"), "torch.optim.AdamW");
  ASSERT_EQ(meta.at("steps"), "3");
  for (const std::string prefix : {"wd", "nowd"}) {
    SCOPED_TRACE(prefix);
    AdamWOptions options;
    options.lr = std::stod(meta.at("lr"));
    options.beta1 = std::stod(meta.at("beta1"));
    options.beta2 = std::stod(meta.at("beta2"));
    options.eps = std::stod(meta.at("eps"));
    options.weight_decay = std::stod(meta.at(prefix + ".weight_decay"));
    Tensor p = fixture.get(prefix + ".param.0");
    p.set_requires_grad(true);
    AdamW adamw(NamedTensors{{"p", p}}, options);
    for (int k = 0; k < 3; ++k) {
      const std::string after = std::to_string(k + 1);
      set_grad(p, fixture.get(prefix + ".grad." + std::to_string(k)));
      adamw.step();
      const ParamState* state = adamw.state("p");
      ASSERT_NE(state, nullptr);
      EXPECT_EQ(state->step, k + 1);
      expect_close_elementwise(p, fixture.get(prefix + ".param." + after), 1e-6, "param." + after);
      expect_close_elementwise(state->tensors.at("exp_avg"),
                               fixture.get(prefix + ".exp_avg." + after), 1e-6, "exp_avg." + after);
      expect_close_elementwise(state->tensors.at("exp_avg_sq"),
                               fixture.get(prefix + ".exp_avg_sq." + after), 1e-6,
                               "exp_avg_sq." + after);
    }
  }
}

// The update rule of REFERENCE.md section 6 written out in double, element by element.
struct ReferenceAdamW {
  double lr, beta1, beta2, eps, wd;
  bool amsgrad = false;
  std::vector<double> m, v, vmax;
  int t = 0;
  void step(std::vector<double>& p, const std::vector<double>& g) {
    if (m.empty()) m = v = vmax = std::vector<double>(p.size(), 0.0);
    ++t;
    for (size_t i = 0; i < p.size(); ++i) {
      p[i] *= 1.0 - lr * wd;
      m[i] = beta1 * m[i] + (1.0 - beta1) * g[i];
      v[i] = beta2 * v[i] + (1.0 - beta2) * g[i] * g[i];
      vmax[i] = std::max(vmax[i], v[i]);
      const double vd = amsgrad ? vmax[i] : v[i];
      const double denom = std::sqrt(vd) / std::sqrt(1.0 - std::pow(beta2, t)) + eps;
      p[i] -= lr / (1.0 - std::pow(beta1, t)) * m[i] / denom;
    }
  }
};

void check_against_reference(DType dtype, bool amsgrad, int64_t n, double tol) {
  Generator gen(7);
  Tensor p0 = randn({n}, gen, DType::f64);
  Tensor p = p0.to(dtype);
  p.set_requires_grad(true);
  AdamWOptions o{.lr = 0.05,
                 .beta1 = 0.8,
                 .beta2 = 0.95,
                 .eps = 1e-6,
                 .weight_decay = 0.1,
                 .amsgrad = amsgrad};
  AdamW adamw(NamedTensors{{"p", p}}, o);
  ReferenceAdamW ref{o.lr, o.beta1, o.beta2, o.eps, o.weight_decay, amsgrad, {}, {}, {}, 0};
  std::vector<double> expected = p.to_vector<double>();
  for (int step = 0; step < 5; ++step) {
    // Gradients whose size falls and rises, so that amsgrad's maximum matters.
    Tensor g = (randn({n}, gen, DType::f64) * (step % 2 == 0 ? 3.0 : 0.1)).to(dtype);
    ref.step(expected, g.to_vector<double>());
    set_grad(p, g);
    adamw.step();
  }
  const double err = heed::testing::max_relative_error(p, from_vector<double>(expected, {n}));
  EXPECT_LE(err, tol);
  EXPECT_EQ(adamw.state("p")->tensors.count("max_exp_avg_sq"), amsgrad ? 1u : 0u);
}

TEST(AdamW, F64MatchesUpdateRuleWrittenOut) {
  check_against_reference(DType::f64, false, 37, 1e-14);
}

TEST(AdamW, AmsgradMatchesUpdateRuleWrittenOut) {
  check_against_reference(DType::f64, true, 37, 1e-14);
}

// Large enough for several blocks, the parallel path and a ragged tail; f32 rounding of the
// gradients is shared, so what remains is the f32 arithmetic of five updates.
TEST(AdamW, F32ParallelKernelMatchesRule) {
  check_against_reference(DType::f32, false, 3 * 4096 * 7 + 13, 2e-6);
  check_against_reference(DType::f32, true, 3 * 4096 * 7 + 13, 2e-6);
}

TEST(AdamW, ZeroGradientStillDecaysAndUpdatesMoments) {
  Tensor p = leaf<float>({2.0f, -4.0f}, {2});
  AdamW adamw(NamedTensors{{"p", p}}, {.lr = 0.1, .weight_decay = 0.5});
  set_grad(p, zeros({2}));
  adamw.step();
  // m = v = 0, so the Adam term is 0 / (0 + eps) = 0: only the decay p * (1 - 0.05) is left.
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{2.0f * 0.95f, -4.0f * 0.95f}));
  EXPECT_EQ(adamw.state("p")->step, 1);
}

TEST(AdamW, SkipsParametersWithoutGradient) {
  Tensor a = leaf<float>({1.0f, 2.0f}, {2});
  Tensor b = leaf<float>({3.0f}, {1});
  AdamW adamw(NamedTensors{{"a", a}, {"b", b}}, {});
  set_grad(a, from_vector<float>({0.5f, -0.5f}, {2}));
  adamw.step();
  adamw.step();
  EXPECT_EQ(adamw.state("a")->step, 2);
  EXPECT_EQ(adamw.state("b"), nullptr);
  EXPECT_EQ(b.to_vector<float>(), std::vector<float>{3.0f});  // not even decayed
  adamw.zero_grad();
  EXPECT_FALSE(a.grad().defined());
}

TEST(AdamW, StepBumpsTheParameterVersion) {
  Tensor p = leaf<float>({1.0f}, {1});
  AdamW adamw(NamedTensors{{"p", p}}, {});
  const uint64_t before = p.version();
  set_grad(p, ones({1}));
  adamw.step();
  EXPECT_GT(p.version(), before);
}

TEST(AdamW, RejectsBadHyperParameters) {
  Tensor p = leaf<float>({1.0f}, {1});
  EXPECT_THROW(AdamW(NamedTensors{{"p", p}}, {.beta1 = 1.0}), Error);
  EXPECT_THROW(AdamW(NamedTensors{{"p", p}}, {.lr = -1.0}), Error);
  EXPECT_THROW(AdamW(NamedTensors{{"p", p}}, {.eps = -1e-8}), Error);
  ParamGroup g{{{"p", p}}, {}, {}, {{"beta3", 0.5}}};
  try {
    AdamW adamw(std::vector<ParamGroup>{g});
    FAIL() << "an unknown option was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("beta3"), std::string::npos) << e.what();
  }
  Tensor ids = from_vector<int64_t>({1}, {1});
  EXPECT_THROW(AdamW(NamedTensors{{"ids", ids}}, {}), Error);
  EXPECT_THROW(AdamW(NamedTensors{}, {}), Error);
}

}  // namespace
}  // namespace heed::optim
