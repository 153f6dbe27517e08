// Knowledge distillation (Sanh et al. 2019, DistilBERT): a student masked LM learns from a
// frozen teacher's softened predictions, its own masked-LM loss and the direction of the
// teacher's last hidden states:
//   alpha_ce KL(teacher || student at T) T^2 + alpha_mlm MLM + alpha_cos (1 - cos(h_s, h_t)).
// The data, the collator and the evaluation are masked LM's; an evaluation measures the
// student alone (its own masked-LM loss and accuracy), as one trained from scratch is measured.
#include <filesystem>

#include "autograd/grad_mode.h"
#include "nn/pretrained_io.h"
#include "train/config/config_check.h"
#include "train/run/batch_tensors.h"
#include "train/tasks/model_configs.h"
#include "train/tasks/registry.h"
#include "train/tasks/student_init.h"
#include "train/tasks/student_with_teacher.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

const TrainingTask& masked_lm() {
  return task_for("mlm");
}

// The flat [B * T] indices of the real tokens (every position without an attention mask).
std::vector<int64_t> real_token_rows(const data::Batch& batch) {
  std::vector<int64_t> rows;
  const auto positions = static_cast<int64_t>(batch.input_ids.size());
  for (int64_t i = 0; i < positions; ++i) {
    if (batch.attention_mask.empty() || batch.attention_mask[static_cast<size_t>(i)] != 0)
      rows.push_back(i);
  }
  return rows;
}

// The indices among `labels` (i64 [N]) of the labelled rows.
Tensor labelled_among(const Tensor& labels) {
  std::vector<int64_t> picked;
  const std::vector<int64_t> all = labels.to_vector<int64_t>();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] != -100) picked.push_back(static_cast<int64_t>(i));
  }
  return from_vector<int64_t>(picked, {static_cast<int64_t>(picked.size())});
}

std::shared_ptr<nn::BertBase> load_teacher(const std::string& dir) {
  std::shared_ptr<nn::PretrainedModel> loaded = nn::from_pretrained(dir);
  auto teacher = std::dynamic_pointer_cast<nn::BertBase>(loaded);
  HEED_CHECK(teacher && loaded->architecture().ends_with("ForMaskedLM"),
             "distill.teacher: {} holds a {}; a teacher must be a masked LM of BERT's layout "
             "(BertForMaskedLM, RobertaForMaskedLM)",
             dir, loaded->architecture());
  teacher->eval();
  for (Tensor p : teacher->parameters()) p.set_requires_grad(false);
  return teacher;
}

// One size of an encoder: its name in BERT's config and in DistilBERT's.
struct EncoderSize {
  const char* bert;
  const char* distilbert;
  int64_t nn::BertConfig::*field;
};
constexpr EncoderSize kHidden{"hidden_size", "dim", &nn::BertConfig::hidden_size};
constexpr EncoderSize kLayers{"num_hidden_layers", "n_layers", &nn::BertConfig::num_hidden_layers};
constexpr EncoderSize kWidths[] = {
    kHidden,
    {"intermediate_size", "hidden_dim", &nn::BertConfig::intermediate_size},
    {"num_attention_heads", "n_heads", &nn::BertConfig::num_attention_heads},
};

// A size from a config.json of either family.
int64_t json_size(const nlohmann::json& config, const EncoderSize& size) {
  if (config.contains(size.bert)) return config[size.bert].get<int64_t>();
  return config.value(size.distilbert, int64_t{-1});
}

// What distill.init_from_teacher needs of the student: the teacher's widths, and no more layers
// than it has, chosen as distill.student_layers says.
void check_student_fits(Checker& k, const RunConfig& c, const nlohmann::json& teacher) {
  const nn::BertConfig student = encoder_config_fields(c.model);
  const bool distilbert = c.model.arch() == Arch::kDistilBert;
  const auto key = [&](const EncoderSize& size) {
    return fmt::format("model.{}", distilbert ? size.distilbert : size.bert);
  };
  for (const EncoderSize& size : kWidths) {
    const int64_t theirs = json_size(teacher, size), ours = student.*size.field;
    k.check(theirs == ours, key(size),
            "{} differs from the teacher's {} (distill.init_from_teacher copies its layers)", ours,
            theirs);
  }
  const int64_t layers = json_size(teacher, kLayers);
  k.check(student.num_hidden_layers <= layers, key(kLayers),
          "{} is more than the teacher's {} layers (distill.init_from_teacher takes the "
          "student's layers from the teacher's)",
          student.num_hidden_layers, layers);
  const DistillConfig& d = c.distill;
  if (!d.student_layers) return;
  const std::vector<int64_t>& chosen = *d.student_layers;
  k.check(static_cast<int64_t>(chosen.size()) == student.num_hidden_layers,
          "distill.student_layers", "names {} layers for a student of {} ({})", chosen.size(),
          student.num_hidden_layers, key(kLayers));
  for (size_t i = 0; i < chosen.size(); ++i) {
    k.check(chosen[i] >= 0 && chosen[i] < layers, "distill.student_layers",
            "{} is not a layer of the teacher (0 to {})", chosen[i], layers - 1);
    k.check(std::ranges::count(chosen, chosen[i]) == 1, "distill.student_layers",
            "names layer {} twice", chosen[i]);
  }
}

class DistillationTask final : public TrainingTask {
 public:
  std::string_view summary() const override {
    return "knowledge distillation of a masked-LM teacher (`distill.teacher`) into a student";
  }
  std::vector<Arch> architectures() const override {
    return {Arch::kBert, Arch::kRoberta, Arch::kDistilBert};
  }
  int64_t min_sequence_length() const override { return masked_lm().min_sequence_length(); }
  bool has_teacher() const override { return true; }

  void check(const RunConfig& c) const override {
    TrainingTask::check(c);
    Checker k(c.origins);
    const DistillConfig& d = c.distill;
    k.check(d.teacher.has_value(), "distill.teacher",
            "missing: task 'distill' needs a teacher model directory");
    k.check(d.alpha_ce > 0 || d.alpha_mlm > 0 || d.alpha_cos > 0, "distill.alpha_ce",
            "distill.alpha_ce, alpha_mlm and alpha_cos are all 0: nothing to learn");
    // A teacher that a pipeline's earlier stage writes is checked when the stage runs.
    if (!d.teacher || !fs::is_regular_file(fs::path(*d.teacher) / "config.json")) return;
    const nlohmann::json teacher = nn::read_model_config(*d.teacher);
    const std::string arch = nn::declared_architecture(teacher);
    k.check(arch.ends_with("ForMaskedLM"), "distill.teacher",
            "{} holds a {}; a teacher must be a masked LM", *d.teacher, arch);
    if (d.init_from_teacher) check_student_fits(k, c, teacher);
  }

  std::shared_ptr<const data::Dataset> read_split(const SplitSource& s,
                                                  data::LabelNames& labels) const override {
    return masked_lm().read_split(s, labels);
  }
  data::CollateFn collator(const RunConfig& c, const TaskData& d) const override {
    return masked_lm().collator(c, d);
  }

  std::shared_ptr<nn::PretrainedModel> make_model(const RunConfig& c,
                                                  const TaskData& d) const override {
    std::shared_ptr<nn::BertBase> teacher = load_teacher(*c.distill.teacher);
    auto student = std::dynamic_pointer_cast<nn::BertBase>(make_masked_lm(c, d));
    HEED_CHECK(student, "distill: model.arch {} is no encoder of BERT's layout",
               to_string(c.model.arch()));
    HEED_CHECK(student->config.vocab_size == teacher->config.vocab_size,
               "distill.teacher: the teacher's vocabulary has {} tokens, the student's {} (give "
               "the student the teacher's tokenizer: leave tokenizer.vocab unset)",
               teacher->config.vocab_size, student->config.vocab_size);
    if (c.distill.init_from_teacher) {
      const std::vector<int64_t> layers =
          student_layer_map(teacher->config.num_hidden_layers, student->config.num_hidden_layers,
                            c.distill.student_layers);
      init_student_from_teacher(*student, *teacher, layers);
    }
    return std::make_shared<StudentWithTeacher>(student, teacher, c.distill);
  }

  BatchLoss loss(const nn::PretrainedModel& model, const data::Batch& batch,
                 const LossRequest& request) const override {
    const auto& pair = dynamic_cast<const StudentWithTeacher&>(model);
    if (!model.is_training()) return masked_lm().loss(pair.student(), batch, request);
    const DistillConfig& d = pair.settings();
    nn::ModelInputs in = to_model_inputs(batch);
    const std::vector<int64_t> real = real_token_rows(batch);
    in.output_rows = from_vector<int64_t>(real, {static_cast<int64_t>(real.size())});
    in.label_smoothing = request.label_smoothing;
    const nn::ModelOutputs student = pair.student().forward(in);
    nn::ModelOutputs teacher;
    {
      NoGradGuard no_grad;
      nn::ModelInputs teacher_in = in;
      teacher_in.labels = Tensor();
      teacher = pair.teacher().forward(teacher_in);
    }
    Tensor total;
    const auto add_term = [&total](const Tensor& term, double weight) {
      if (weight == 0.0) return;
      total = total.defined() ? add(total, mul(term, weight)) : mul(term, weight);
    };
    Tensor s_logits = student.logits, t_logits = teacher.logits;
    if (d.restrict_ce_to_mask) {
      const Tensor masked = labelled_among(student.labels);
      s_logits = embedding(s_logits, masked);
      NoGradGuard no_grad;
      t_logits = embedding(t_logits, masked);
    }
    add_term(soft_target_kl(s_logits, t_logits, d.temperature), d.alpha_ce);
    add_term(student.loss, d.alpha_mlm);
    add_term(cosine_embedding_loss(student.hidden_states, teacher.hidden_states), d.alpha_cos);
    return {.loss = total, .targets = batch.num_target_tokens};
  }

  std::string end_of_run_examples(const nn::PretrainedModel& model, const TaskData& d,
                                  const RunConfig& c) const override {
    const auto& pair = dynamic_cast<const StudentWithTeacher&>(model);
    return masked_lm().end_of_run_examples(pair.student(), d, c);
  }
};

const TrainingTask& distillation_task() {
  static const DistillationTask task;
  return task;
}

[[maybe_unused]] const bool kRegistered = register_task("distill", 15, distillation_task);

}  // namespace

}  // namespace heed::train
