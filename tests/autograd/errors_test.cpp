// Bad calls throw heed::Error with a message naming the op and the shapes.
#include <gtest/gtest.h>

#include "autograd/ops.h"

using namespace heed;

namespace {

// Runs `f`, expecting an Error whose message contains every fragment.
template <typename F>
void expect_error(F f, std::initializer_list<const char*> fragments) {
  try {
    f();
    FAIL() << "expected heed::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const char* fragment : fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos) << "message: " << message;
    }
  }
}

}  // namespace

TEST(Errors, BroadcastMismatchNamesOpAndShapes) {
  expect_error([] { add(zeros({2, 3}), zeros({4})); }, {"add", "[2, 3]", "[4]"});
}

TEST(Errors, MatmulInnerSizeMismatch) {
  expect_error([] { matmul(zeros({2, 3}), zeros({4, 5})); }, {"matmul", "[2, 3]", "[4, 5]"});
}

TEST(Errors, WrongDtype) {
  expect_error([] { mul(zeros({2}), zeros({2}, DType::f64)); }, {"mul", "f32", "f64"});
  expect_error([] { exp(zeros({2}, DType::i64)); }, {"exp", "i64"});
}

TEST(Errors, BackwardOnNonScalarNeedsAGradient) {
  Tensor x = zeros({3});
  x.set_requires_grad(true);
  Tensor y = mul(x, 2.0);
  expect_error([&] { y.backward(); }, {"backward", "non-scalar", "[3]"});
}

TEST(Errors, BackwardWithoutGraph) {
  expect_error([] { sum(zeros({3})).backward(); }, {"backward", "does not require grad"});
}

TEST(Errors, LinearShapeMismatch) {
  expect_error([] { linear(zeros({2, 3}), zeros({4, 5})); }, {"linear", "[2, 3]", "[4, 5]"});
}

TEST(Errors, EmbeddingIdOutOfRange) {
  expect_error(
      [] {
        embedding(zeros({4, 2}), from_vector<int64_t>({1, 4}, {2}));
      },
      {"embedding", "id 4", "4"});
}

TEST(Errors, CrossEntropyTargetOutOfRange) {
  expect_error(
      [] {
        cross_entropy(zeros({2, 3}), from_vector<int64_t>({0, 3}, {2}));
      },
      {"cross_entropy", "target 3", "3 classes"});
}

TEST(Errors, ReshapeToWrongSize) {
  expect_error([] { zeros({2, 3}).reshape({4, 2}); }, {"reshape", "[2, 3]", "[4, 2]"});
}

TEST(Errors, DimensionOutOfRange) {
  expect_error([] { zeros({2, 3}).transpose(0, 2); }, {"transpose", "dimension 2"});
}

TEST(Errors, LayerNormWeightMismatch) {
  expect_error([] { layer_norm(zeros({2, 4}), ones({3}), zeros({3})); }, {"layer_norm", "[3]"});
}

TEST(Errors, DropoutProbabilityOutOfRange) {
  Generator g(1);
  expect_error([&] { dropout(zeros({2}), 1.5, true, g); }, {"dropout", "1.5"});
}
