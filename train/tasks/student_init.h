#pragma once
// How a distillation's student starts from its teacher (Sanh et al. 2019; Hugging Face's
// extract_distilbert.py): the embeddings, a chosen subset of the teacher's layers and the
// prediction head, copied by name.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nn/models/bert.h"

namespace heed::train {

// The teacher's layers that become the student's layers 0, 1, ...: `chosen` when given (each in
// [0, teacher_layers), none twice, one per student layer), else spread evenly, keeping the first
// and the last: round(i (teacher - 1) / (student - 1)), which is DistilBERT's [0, 2, 4, 7, 9,
// 11] for 6 of 12. Throws an Error naming distill.student_layers.
std::vector<int64_t> student_layer_map(int64_t teacher_layers, int64_t student_layers,
                                       const std::optional<std::vector<int64_t>>& chosen);

// The student's name of one of the teacher's parameters, or nothing for one the student does
// not take: teacher layer layer_map[i] becomes student layer i. A student of the teacher's
// family keeps the rest of each name; a DistilBERT student of a BERT teacher takes the names
// of Hugging Face's extract_distilbert.py (nn/models/distilbert.h).
std::optional<std::string> student_name(const std::string& teacher_name,
                                        const nn::BertBase& teacher, const nn::BertBase& student,
                                        std::span<const int64_t> layer_map);

// Copies the teacher's parameters into the student's under student_name, and its fixed tables
// into the student's. Every parameter of the student must receive one: throws naming the first
// it lacks, or a shape that differs.
// Returns how many tensors were copied.
int64_t init_student_from_teacher(nn::BertBase& student, const nn::BertBase& teacher,
                                  std::span<const int64_t> layer_map);

}  // namespace heed::train
