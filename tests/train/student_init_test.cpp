// A distillation's student from its teacher: which layers it keeps and what it copies.
#include <gtest/gtest.h>

#include "nn/models/bert.h"
#include "train/tasks/student_init.h"

using namespace heed;
using namespace heed::train;

namespace {

nn::BertConfig tiny_encoder(int64_t layers) {
  nn::BertConfig c;
  c.vocab_size = 50;
  c.hidden_size = 16;
  c.num_hidden_layers = layers;
  c.num_attention_heads = 2;
  c.intermediate_size = 32;
  c.max_position_embeddings = 24;
  return c;
}

Tensor parameter(const nn::Module& m, const std::string& name) {
  for (const auto& [n, t] : m.named_parameters())
    if (n == name) return t;
  ADD_FAILURE() << "no parameter " << name;
  return Tensor();
}

}  // namespace

TEST(StudentLayerMap, SpreadsEvenlyKeepingTheEndsAsDistilBertDoes) {
  EXPECT_EQ(student_layer_map(12, 6, std::nullopt), (std::vector<int64_t>{0, 2, 4, 7, 9, 11}));
  EXPECT_EQ(student_layer_map(4, 2, std::nullopt), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(student_layer_map(4, 1, std::nullopt), (std::vector<int64_t>{0}));
  EXPECT_EQ(student_layer_map(4, 4, std::nullopt), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(student_layer_map(4, 2, std::vector<int64_t>{1, 2}), (std::vector<int64_t>{1, 2}));
}

TEST(StudentLayerMap, RefusesImpossibleChoices) {
  EXPECT_THROW(student_layer_map(2, 3, std::nullopt), Error);
  EXPECT_THROW(student_layer_map(4, 2, std::vector<int64_t>{0, 4}), Error);
  EXPECT_THROW(student_layer_map(4, 2, std::vector<int64_t>{1, 1}), Error);
  EXPECT_THROW(student_layer_map(4, 2, std::vector<int64_t>{0}), Error);
}

TEST(StudentInit, CopiesEmbeddingsTheChosenLayersAndTheHead) {
  nn::BertForMaskedLM teacher(tiny_encoder(4), 1), student(tiny_encoder(2), 2);
  const std::vector<int64_t> map{0, 3};
  EXPECT_EQ(student_name("bert.encoder.layer.3.attention.self.query.weight", teacher, student, map),
            "bert.encoder.layer.1.attention.self.query.weight");
  EXPECT_EQ(student_name("bert.encoder.layer.1.output.dense.bias", teacher, student, map),
            std::nullopt);
  EXPECT_EQ(student_name("cls.predictions.bias", teacher, student, map), "cls.predictions.bias");

  const int64_t copied = init_student_from_teacher(student, teacher, map);
  EXPECT_EQ(copied, static_cast<int64_t>(student.named_parameters().size() +
                                         student.named_buffers().size()));
  EXPECT_EQ(student.named_buffers().size(), 0u);  // BERT with learned absolute positions
  for (const auto& [from, to] :
       {std::pair{"bert.embeddings.word_embeddings.weight",
                  "bert.embeddings.word_embeddings.weight"},
        {"bert.encoder.layer.0.attention.self.key.weight",
         "bert.encoder.layer.0.attention.self.key.weight"},
        {"bert.encoder.layer.3.output.LayerNorm.bias",
         "bert.encoder.layer.1.output.LayerNorm.bias"},
        {"bert.encoder.layer.3.intermediate.dense.weight",
         "bert.encoder.layer.1.intermediate.dense.weight"},
        {"cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.weight"}}) {
    EXPECT_EQ(parameter(teacher, from).to_vector<float>(),
              parameter(student, to).to_vector<float>())
        << from << " -> " << to;
  }
  // The copy is the student's own: training it leaves the teacher as it was.
  EXPECT_FALSE(parameter(student, "bert.encoder.layer.1.output.dense.weight").storage() ==
               parameter(teacher, "bert.encoder.layer.3.output.dense.weight").storage());
}

TEST(StudentInit, RefusesAStudentOfOtherWidths) {
  nn::BertConfig wide = tiny_encoder(2);
  wide.hidden_size = 32;
  wide.intermediate_size = 64;
  nn::BertForMaskedLM teacher(tiny_encoder(4), 1), student(wide, 2);
  try {
    init_student_from_teacher(student, teacher, std::vector<int64_t>{0, 3});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the student's widths must be the teacher's"),
              std::string::npos)
        << e.what();
  }
}
