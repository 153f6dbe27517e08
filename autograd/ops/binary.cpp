// add, sub, mul, div with broadcasting, and their scalar forms.
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/elementwise.h"
#include "base/profile.h"

namespace heed {
namespace {

struct AddBackward : Node {
  Shape a_shape, b_shape;
  double b_sign = 1.0;  // -1 for sub
  const char* name() const override { return b_sign > 0 ? "AddBackward" : "SubBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

struct MulBackward : Node {
  Shape a_shape, b_shape;
  SavedTensor a{this}, b{this};
  const char* name() const override { return "MulBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

struct DivBackward : Node {
  Shape a_shape, b_shape;
  SavedTensor a{this}, b{this};
  const char* name() const override { return "DivBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

struct ScalarMulBackward : Node {
  double factor;
  const char* name() const override { return "ScalarMulBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

struct IdentityBackward : Node {
  const char* name() const override { return "ScalarAddBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

// mul and div save both operands and their shapes (for un-broadcasting the gradients).
template <typename Backward>
Tensor record_product(const Tensor& a, const Tensor& b, Tensor out) {
  if (needs_grad({&a, &b})) {
    auto node = std::make_shared<Backward>();
    node->a_shape = a.shape();
    node->b_shape = b.shape();
    node->a.save(a);
    node->b.save(b);
    attach_node(out, node, {a, b});
  }
  return out;
}

Tensor add_or_sub(const Tensor& a, const Tensor& b, double sign) {
  const char* op = sign > 0 ? "add" : "sub";
  Tensor out = sign > 0 ? map2(a, b, op, []<typename T>(T x, T y) { return x + y; })
                        : map2(a, b, op, []<typename T>(T x, T y) { return x - y; });
  if (needs_grad({&a, &b})) {
    auto node = std::make_shared<AddBackward>();
    node->a_shape = a.shape();
    node->b_shape = b.shape();
    node->b_sign = sign;
    attach_node(out, node, {a, b});
  }
  return out;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  OpTimer timer("add");
  return add_or_sub(a, b, 1.0);
}
Tensor sub(const Tensor& a, const Tensor& b) {
  return add_or_sub(a, b, -1.0);
}

std::vector<Tensor> AddBackward::backward(const Tensor& g) {
  Tensor gb = sum_to(g, b_shape);
  return {sum_to(g, a_shape), b_sign > 0 ? gb : neg(gb)};
}

Tensor mul(const Tensor& a, const Tensor& b) {
  return record_product<MulBackward>(a, b,
                                     map2(a, b, "mul", []<typename T>(T x, T y) { return x * y; }));
}

std::vector<Tensor> MulBackward::backward(const Tensor& g) {
  const Tensor a_value = a.get(), b_value = b.get();
  Tensor ga, gb;
  if (next_edges[0]) ga = sum_to(mul(g, b_value), a_shape);
  if (next_edges[1]) gb = sum_to(mul(g, a_value), b_shape);
  return {ga, gb};
}

Tensor div(const Tensor& a, const Tensor& b) {
  return record_product<DivBackward>(a, b,
                                     map2(a, b, "div", []<typename T>(T x, T y) { return x / y; }));
}

std::vector<Tensor> DivBackward::backward(const Tensor& g) {
  const Tensor a_value = a.get(), b_value = b.get();
  Tensor ga, gb;
  if (next_edges[0]) ga = sum_to(div(g, b_value), a_shape);
  if (next_edges[1]) {
    gb = sum_to(map3(g, a_value, b_value, "div backward",
                     []<typename T>(T gv, T av, T bv) { return -gv * av / (bv * bv); }),
                b_shape);
  }
  return {ga, gb};
}

Tensor add(const Tensor& a, double b) {
  Tensor out = map1(a, "add", [b]<typename T>(T x) { return x + static_cast<T>(b); });
  if (needs_grad({&a})) attach_node(out, std::make_shared<IdentityBackward>(), {a});
  return out;
}

std::vector<Tensor> IdentityBackward::backward(const Tensor& g) {
  return {g};
}

Tensor mul(const Tensor& a, double b) {
  Tensor out = map1(a, "mul", [b]<typename T>(T x) { return x * static_cast<T>(b); });
  if (needs_grad({&a})) {
    auto node = std::make_shared<ScalarMulBackward>();
    node->factor = b;
    attach_node(out, node, {a});
  }
  return out;
}

std::vector<Tensor> ScalarMulBackward::backward(const Tensor& g) {
  return {mul(g, factor)};
}

}  // namespace heed
