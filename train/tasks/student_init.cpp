#include "train/tasks/student_init.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "autograd/grad_mode.h"
#include "base/error.h"
#include "nn/models/distilbert.h"

namespace heed::train {
namespace {

// Copies the tensors of `from` into those of `to` that student_name pairs them with; adds the
// names it filled to `filled`.
void copy_named(const nn::NamedTensors& from, const nn::NamedTensors& to,
                const nn::BertBase& teacher, const nn::BertBase& student,
                std::span<const int64_t> layer_map, std::set<std::string>& filled) {
  std::map<std::string, Tensor> targets(to.begin(), to.end());
  for (const auto& [name, tensor] : from) {
    const std::optional<std::string> as = student_name(name, teacher, student, layer_map);
    if (!as) continue;
    const auto target = targets.find(*as);
    if (target == targets.end()) continue;
    HEED_CHECK(target->second.shape() == tensor.shape(),
               "distill.init_from_teacher: the teacher's {} is {}, the student's {} is {} (the "
               "student's widths must be the teacher's)",
               name, tensor.shape_str(), *as, target->second.shape_str());
    target->second.copy_(tensor);
    filled.insert(*as);
  }
}

}  // namespace

std::vector<int64_t> student_layer_map(int64_t teacher_layers, int64_t student_layers,
                                       const std::optional<std::vector<int64_t>>& chosen) {
  HEED_CHECK(student_layers >= 1 && student_layers <= teacher_layers,
             "distill: a student of {} layers cannot take them from a teacher of {}",
             student_layers, teacher_layers);
  if (chosen) {
    HEED_CHECK(static_cast<int64_t>(chosen->size()) == student_layers,
               "distill.student_layers: names {} teacher layers for a student of {}",
               chosen->size(), student_layers);
    std::set<int64_t> seen;
    for (int64_t layer : *chosen) {
      HEED_CHECK(layer >= 0 && layer < teacher_layers,
                 "distill.student_layers: {} is not a layer of the teacher (0 to {})", layer,
                 teacher_layers - 1);
      HEED_CHECK(seen.insert(layer).second, "distill.student_layers: layer {} twice", layer);
    }
    return *chosen;
  }
  std::vector<int64_t> map;
  for (int64_t i = 0; i < student_layers; ++i) {
    map.push_back(student_layers == 1 ? 0
                                      : std::llround(static_cast<double>(i * (teacher_layers - 1)) /
                                                     static_cast<double>(student_layers - 1)));
  }
  return map;
}

std::optional<std::string> student_name(const std::string& teacher_name,
                                        const nn::BertBase& teacher, const nn::BertBase& student,
                                        std::span<const int64_t> layer_map) {
  if (student.family.model_type == "distilbert" && teacher.family.model_type == "bert")
    return nn::distilbert_name_from_bert(teacher_name, layer_map);
  HEED_CHECK(teacher.family.model_type == student.family.model_type,
             "distill: a {} student cannot start from a {} teacher (set "
             "distill.init_from_teacher: false)",
             student.family.model_type, teacher.family.model_type);
  const std::string layers = teacher.base_prefix() + teacher.family.layout.layers;
  if (!teacher_name.starts_with(layers)) return teacher_name;
  const size_t dot = teacher_name.find('.', layers.size());
  const int64_t layer = std::stoll(teacher_name.substr(layers.size(), dot - layers.size()));
  const auto kept = std::ranges::find(layer_map, layer);
  if (kept == layer_map.end()) return std::nullopt;
  return layers + std::to_string(kept - layer_map.begin()) + teacher_name.substr(dot);
}

int64_t init_student_from_teacher(nn::BertBase& student, const nn::BertBase& teacher,
                                  std::span<const int64_t> layer_map) {
  std::set<std::string> filled;
  NoGradGuard no_grad;
  // Parameters to parameters and fixed tables to fixed tables: a student's sinusoidal position
  // table stays what it is, whatever the teacher learnt.
  copy_named(teacher.named_parameters(), student.named_parameters(), teacher, student, layer_map,
             filled);
  copy_named(teacher.named_buffers(), student.named_buffers(), teacher, student, layer_map, filled);
  for (const auto& [name, tensor] : student.named_parameters()) {
    HEED_CHECK(filled.contains(name),
               "distill.init_from_teacher: the teacher has nothing for the student's {}", name);
  }
  return static_cast<int64_t>(filled.size());
}

}  // namespace heed::train
