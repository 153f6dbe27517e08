#pragma once
// A distillation's model: the student, which is all that the run trains, checkpoints and
// saves (its parameters under its own names, its config.json and architecture), holding the
// frozen teacher that the loss compares it with, and how (the run's `distill` settings). The
// teacher is no child module: it has no gradients, no optimizer state, no place in a checkpoint,
// and stays in eval mode.
#include <memory>

#include "nn/models/pretrained.h"
#include "train/config/config.h"

namespace heed::train {

class StudentWithTeacher final : public nn::PretrainedModel {
 public:
  StudentWithTeacher(std::shared_ptr<nn::PretrainedModel> student,
                     std::shared_ptr<const nn::PretrainedModel> teacher, DistillConfig settings);

  nn::ModelOutputs forward(const nn::ModelInputs& inputs) const override {
    return student_->forward(inputs);
  }
  std::string model_type() const override { return student_->model_type(); }
  std::string architecture() const override { return student_->architecture(); }
  nlohmann::json config_json() const override { return student_->config_json(); }
  std::string base_prefix() const override { return student_->base_prefix(); }
  bool ignores_checkpoint_name(const std::string& name) const override {
    return student_->ignores_checkpoint_name(name);
  }
  std::string canonical_checkpoint_name(const std::string& name) const override {
    return student_->canonical_checkpoint_name(name);
  }

  const nn::PretrainedModel& student() const { return *student_; }
  const nn::PretrainedModel& teacher() const { return *teacher_; }
  const DistillConfig& settings() const { return settings_; }

 private:
  std::shared_ptr<nn::PretrainedModel> student_;
  std::shared_ptr<const nn::PretrainedModel> teacher_;
  DistillConfig settings_;
};

}  // namespace heed::train
