// `infer` on tiny random RoBERTa checkpoints (a byte-level BPE, <s> text </s>): fill-mask finds
// the tokenizer's own <mask> and names it when a text has none, classify and the tagger give the
// in-memory model's outputs on the ids Hugging Face's RobertaTokenizer would make.
#include <gtest/gtest.h>

#include "train/infer_fixture.h"

namespace heed::train {
namespace {

class InferRoberta : public Infer {};

Tensor ids_row(const std::vector<int32_t>& ids) {
  return from_vector(std::vector<int64_t>(ids.begin(), ids.end()),
                     {1, static_cast<int64_t>(ids.size())});
}

// softmax of the in-memory model's logits [1, T, C] or [1, C], flattened; one token type.
std::vector<float> probabilities(const nn::PretrainedModel& model,
                                 const std::vector<int32_t>& ids) {
  NoGradGuard no_grad;
  nn::ModelInputs in;
  in.input_ids = ids_row(ids);
  in.token_type_ids = zeros(in.input_ids.shape(), DType::i64);
  return softmax(model.forward(in).logits, -1).to_vector<float>();
}

std::vector<std::string> tokens_of(const data::BpeTokenizer& tok, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(tok.bpe().token(id));
  return out;
}

TEST_F(InferRoberta, FillMaskFindsTheTokenizersOwnMaskAndMatchesTheModelInMemory) {
  const Outcome r = infer("fill-mask --json --top-k 3 --checkpoint " + path("roberta_mlm") +
                          " --text 'the <mask> sat on the <mask> .'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const json j = json_lines(r.out).at(0);
  const data::BpeTokenizer tok = tiny_roberta_bpe();
  const std::vector<int32_t> ids = j["input_ids"];
  // As RobertaTokenizer reads it: <mask> is one token that takes the space before it (lstrip),
  // and the word after it keeps its own ("Ġsat").
  EXPECT_EQ(tokens_of(tok, ids), (std::vector<std::string>{"<s>", "the", "<mask>", "Ġsat", "Ġon",
                                                           "Ġthe", "<mask>", "Ġ.", "</s>"}));
  const std::vector<float> p = probabilities(*roberta_mlm_, ids);
  const int64_t V = tok.bpe().vocab_size();
  ASSERT_EQ(j["masks"].size(), 2u);
  std::vector<int32_t> filled = ids;
  for (const json& mask : j["masks"]) {
    const size_t pos = mask["position"];
    EXPECT_EQ(ids[pos], 4);  // <mask>
    const std::vector<float> row(p.begin() + pos * V, p.begin() + (pos + 1) * V);
    ASSERT_EQ(mask["candidates"].size(), 3u);
    for (const json& c : mask["candidates"]) {
      EXPECT_EQ(c["token"], tok.bpe().token(c["id"]));
      EXPECT_NEAR(c["probability"].get<double>(), row[c["id"].get<int32_t>()], 1e-6);
    }
    const int32_t best =
        static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    EXPECT_EQ(mask["candidates"][0]["id"], best);
    filled[pos] = best;
  }
  EXPECT_EQ(j["filled_ids"].get<std::vector<int32_t>>(), filled);
  EXPECT_EQ(j["filled"], tok.decode(filled));

  // Plain output names each candidate by the tokenizer's mask token.
  const Outcome plain =
      infer("fill-mask --top-k 2 --checkpoint " + path("roberta_mlm") + " --text '<mask> cat sat'");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.rfind("<mask> 1: ", 0), 0u) << plain.out;
  EXPECT_NE(plain.out.find("\nfilled: "), std::string::npos) << plain.out;
}

// A text without <mask> is an error naming RoBERTa's mask token, BERT's [MASK] included: the
// byte-level BPE spells it as ordinary pieces.
TEST_F(InferRoberta, FillMaskWithoutTheMaskTokenSaysWhichTokenItLookedFor) {
  for (const std::string text : {"the cat sat", "the [MASK] sat"}) {
    const Outcome r =
        infer("fill-mask --checkpoint " + path("roberta_mlm") + " --text " + quote(text));
    EXPECT_EQ(r.code, 2) << text;
    EXPECT_EQ(r.out, "") << text;
    EXPECT_EQ(r.err, "infer fill-mask: no <mask> in the text \"" + text + "\"\n");
  }
  // 31 tokens with <s> and </s>: one more than the 32 positions hold after <pad> (id 1).
  std::string text = "<mask>";
  for (int i = 0; i < 14; ++i) text += " the cat";
  const Outcome r =
      infer("fill-mask --checkpoint " + path("roberta_mlm") + " --text " + quote(text));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "infer fill-mask: text is 31 tokens; the model takes at most 30 "
            "(max_position_embeddings - pad_token_id - 1)\n");
}

TEST_F(InferRoberta, ClassifyGivesLabelProbabilitiesOfTheModelInMemory) {
  const data::BpeTokenizer tok = tiny_roberta_bpe();
  for (bool pair : {false, true}) {
    std::string args =
        "classify --json --checkpoint " + path("roberta_cls") + " --text 'the cat sat'";
    if (pair) args += " --text-pair 'a dog ran'";
    const Outcome r = infer(args);
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json_lines(r.out).at(0);
    const std::vector<int32_t> ids = j["input_ids"];
    const std::vector<std::string> single = {"<s>", "the", "Ġcat", "Ġsat", "</s>"};
    std::vector<std::string> want = single;
    if (pair) want.insert(want.end(), {"</s>", "a", "Ġdog", "Ġran", "</s>"});
    EXPECT_EQ(tokens_of(tok, ids), want);
    const std::vector<float> p = probabilities(*roberta_cls_, ids);
    const std::vector<std::string> names = {"negative", "neutral", "positive"};
    ASSERT_EQ(j["labels"].size(), 3u);
    for (const json& l : j["labels"]) {
      EXPECT_EQ(l["label"], names[l["id"].get<int>()]);
      EXPECT_NEAR(l["probability"].get<double>(), p[l["id"].get<int>()], 1e-6);
    }
    const int best = static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin());
    EXPECT_EQ(j["label"], names[best]);
  }
}

// The checkpoint's tokenizer_config.json says model_max_length 30: a longer text is cut there
// unless told otherwise, keeping <s> and </s>.
TEST_F(InferRoberta, ClassifyCutsAtTheCheckpointsLengthKeepingTheSpecialTokens) {
  std::string text;
  for (int i = 0; i < 20; ++i) text += "the cat ";
  const std::string args =
      "classify --json --checkpoint " + path("roberta_cls") + " --text " + quote(text);
  const data::BpeTokenizer tok = tiny_roberta_bpe();
  for (const auto& [flags, length] : {std::pair{std::string(), size_t{30}},
                                      std::pair{std::string(" --max-length 8"), size_t{8}}}) {
    const Outcome r = infer(args + flags);
    ASSERT_EQ(r.code, 0) << r.err;
    const std::vector<int32_t> ids = json_lines(r.out).at(0)["input_ids"];
    EXPECT_EQ(ids, tok.build_inputs(tok.encode(text), std::nullopt, length, data::Truncation::kHead)
                       .input_ids);
    ASSERT_EQ(ids.size(), length);
    EXPECT_EQ(ids.front(), 0);
    EXPECT_EQ(ids.back(), 2);
  }
}

// Each word is read with a space before it (RobertaTokenizer's is_split_into_words) and tagged by
// its first piece; a word the vocabulary lacks takes several pieces and moves the others along.
TEST_F(InferRoberta, ClassifyTagsEveryWordByItsFirstPiece) {
  const Outcome r =
      infer("classify --json --checkpoint " + path("roberta_tagger") + " --text 'the zebras sat'");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json_lines(r.out).at(0);
  const data::BpeTokenizer tok = tiny_roberta_bpe();
  const std::vector<int32_t> ids = j["input_ids"];
  const size_t zebra_pieces = tok.encode(" zebras").size();
  ASSERT_GT(zebra_pieces, 1u);
  std::vector<std::string> want = {"<s>", "Ġthe"};
  for (int32_t id : tok.encode(" zebras")) want.push_back(tok.bpe().token(id));
  want.insert(want.end(), {"Ġsat", "</s>"});
  EXPECT_EQ(tokens_of(tok, ids), want);
  const std::vector<float> p = probabilities(*roberta_tagger_, ids);
  const std::vector<std::string> names = {"DET", "NOUN", "VERB", "ADP"};
  const std::vector<std::pair<std::string, size_t>> words = {
      {"the", 1}, {"zebras", 2}, {"sat", 2 + zebra_pieces}};
  ASSERT_EQ(j["words"].size(), words.size());
  for (size_t w = 0; w < words.size(); ++w) {
    const json& word = j["words"][w];
    EXPECT_EQ(word["word"], words[w].first);
    EXPECT_EQ(word["position"], words[w].second);
    const auto row = p.begin() + words[w].second * 4;
    const int best = static_cast<int>(std::max_element(row, row + 4) - row);
    EXPECT_EQ(word["label"], names[best]);
    EXPECT_NEAR(word["probability"].get<double>(), row[best], 1e-6);
  }
  EXPECT_EQ(j["tokens"].size(), ids.size());
}

}  // namespace
}  // namespace heed::train
