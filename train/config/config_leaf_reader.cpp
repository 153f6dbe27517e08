#include "train/config/config_leaf_reader.h"

#include <algorithm>
#include <cmath>

#include "train/config/config_overrides.h"
#include "train/config/did_you_mean.h"
#include "train/config/task_names.h"

namespace heed::train {

void read(const YAML::Node& node, int64_t& out, const Ctx& ctx) {
  if (!is_plain_scalar(node) || !YAML::convert<int64_t>::decode(node, out)) {
    ctx.fail_expected("an integer", node);
  }
}

void read(const YAML::Node& node, double& out, const Ctx& ctx) {
  if (!is_plain_scalar(node) || !YAML::convert<double>::decode(node, out) || !std::isfinite(out)) {
    ctx.fail_expected("a finite number", node);
  }
}

void read(const YAML::Node& node, bool& out, const Ctx& ctx) {
  // Only true/false: YAML 1.1's yes/no/on/off/y/n surprise more often than they help.
  static const std::vector<std::string> kTrue{"true", "True", "TRUE"},
      kFalse{"false", "False", "FALSE"};
  if (is_plain_scalar(node)) {
    if (std::ranges::count(kTrue, node.Scalar())) return void(out = true);
    if (std::ranges::count(kFalse, node.Scalar())) return void(out = false);
  }
  ctx.fail_expected("true or false", node);
}

void read(const YAML::Node& node, std::string& out, const Ctx& ctx) {
  if (!node.IsScalar()) ctx.fail_expected("a string", node);
  out = node.Scalar();
}

void read(const YAML::Node& node, std::array<double, 2>& out, const Ctx& ctx) {
  if (!node.IsSequence() || node.size() != 2) ctx.fail_expected("a list of 2 numbers", node);
  for (size_t i = 0; i < 2; ++i) {
    if (!is_plain_scalar(node[i]) || !YAML::convert<double>::decode(node[i], out[i]) ||
        !std::isfinite(out[i])) {
      ctx.fail_expected("a list of 2 numbers", node);
    }
  }
}

void read(const YAML::Node& node, std::vector<std::string>& out, const Ctx& ctx) {
  if (!node.IsSequence()) ctx.fail_expected("a list of strings", node);
  out.clear();
  for (const YAML::Node& item : node) {
    if (!item.IsScalar()) ctx.fail_expected("a list of strings", node);
    out.push_back(item.Scalar());
  }
}

void read(const YAML::Node& node, std::vector<int64_t>& out, const Ctx& ctx) {
  if (!node.IsSequence()) ctx.fail_expected("a list of integers", node);
  out.clear();
  for (const YAML::Node& item : node) {
    int64_t value = 0;
    if (!is_plain_scalar(item) || !YAML::convert<int64_t>::decode(item, value)) {
      ctx.fail_expected("a list of integers", node);
    }
    out.push_back(value);
  }
}

void read(const YAML::Node& node, TaskName& out, const Ctx& ctx) {
  const std::vector<std::string> names = task_names();
  out.name = names[read_name(node, names, "task", ctx)];
}

size_t read_name(const YAML::Node& node, const std::vector<std::string>& names,
                 std::string_view what, const Ctx& ctx) {
  if (!node.IsScalar()) {
    ctx.fail_expected(fmt::format("one of {}", fmt::join(names, ", ")).c_str(), node);
  }
  if (auto it = std::ranges::find(names, node.Scalar()); it != names.end()) {
    return it - names.begin();
  }
  config_fail(ctx.where, "{}: {}", ctx.key, unknown_name(what, node.Scalar(), names));
}

}  // namespace heed::train
