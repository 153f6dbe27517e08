#include "train/tasks/student_with_teacher.h"

namespace heed::train {

StudentWithTeacher::StudentWithTeacher(std::shared_ptr<nn::PretrainedModel> student,
                                       std::shared_ptr<const nn::PretrainedModel> teacher,
                                       DistillConfig settings)
    : student_(std::move(student)), teacher_(std::move(teacher)), settings_(std::move(settings)) {
  // The student's parameters appear under this module's names unchanged.
  register_module("", student_);
  dropout_generator = student_->dropout_generator;
}

}  // namespace heed::train
