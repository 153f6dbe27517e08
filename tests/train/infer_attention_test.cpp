// `infer attention` on tiny random checkpoints: the probabilities it writes are the in-memory
// model's output_attentions exactly, with the tokens the model read, for BERT and RoBERTa (a
// pair), GPT (causal) and the encoder-decoder (encoder, decoder and cross-attention); the page
// carries the same data; bad input is one line on stderr.
#include <gtest/gtest.h>

#include "train/infer_fixture.h"

namespace heed::train {
namespace {

using namespace heed::decode;

class InferAttention : public Infer {};

Tensor row_of(const std::vector<int32_t>& ids) {
  return from_vector(std::vector<int64_t>(ids.begin(), ids.end()),
                     {1, static_cast<int64_t>(ids.size())});
}

// The view's probabilities equal `layers` ([1, heads, Tq, Tk] each) float for float, and every
// query's row sums to 1.
void expect_view_is(const json& view, const std::vector<Tensor>& layers) {
  const json& attention = view.at("attention");
  ASSERT_EQ(attention.size(), layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    const Tensor& p = layers[l];
    const int64_t heads = p.size(1), Tq = p.size(2), Tk = p.size(3);
    const std::vector<float> want = p.contiguous().to_vector<float>();
    ASSERT_EQ(static_cast<int64_t>(attention[l].size()), heads);
    ASSERT_EQ(static_cast<int64_t>(view.at("query_tokens").size()), Tq);
    ASSERT_EQ(static_cast<int64_t>(view.at("key_tokens").size()), Tk);
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t q = 0; q < Tq; ++q) {
        const json& row = attention[l][h][q];
        ASSERT_EQ(static_cast<int64_t>(row.size()), Tk);
        double sum = 0;
        for (int64_t k = 0; k < Tk; ++k) {
          EXPECT_EQ(static_cast<float>(row[k].get<double>()), want[(h * Tq + q) * Tk + k])
              << "layer " << l << " head " << h << " query " << q << " key " << k;
          sum += row[k].get<double>();
        }
        EXPECT_NEAR(sum, 1.0, 1e-5);
      }
    }
  }
}

std::vector<std::string> tokens_of(const data::Vocab& vocab, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(vocab.token(id));
  return out;
}

TEST_F(InferAttention, BertPairIsTheModelsOwnAttentionWithItsTokens) {
  const Outcome r = infer("attention --json --checkpoint " + path("mlm") +
                          " --text 'the cat sat on the mat' --text-pair 'the dog ran'");
  ASSERT_EQ(r.code, 0) << r.err;
  const json data = json::parse(r.out);
  EXPECT_EQ(data.at("format"), "heed-attention/1");
  EXPECT_EQ(data.at("model_type"), "bert");
  EXPECT_EQ(data.at("texts").at("text_pair"), "the dog ran");
  ASSERT_EQ(data.at("views").size(), 1u);
  const json& view = data.at("views")[0];
  EXPECT_EQ(view.at("name"), "self-attention");
  EXPECT_FALSE(view.at("causal").get<bool>());

  const data::WordPieceTokenizer tok = tiny_wordpiece();
  const data::Encoding enc = tok.encode_pair("the cat sat on the mat", "the dog ran");
  EXPECT_EQ(view.at("query_tokens").get<std::vector<std::string>>(),
            tokens_of(tok.vocab(), enc.input_ids));
  EXPECT_EQ(view.at("key_tokens"), view.at("query_tokens"));
  EXPECT_EQ(view.at("pair_start"), 8);  // [CLS] the cat sat on the mat [SEP] | the dog ran [SEP]
  const std::vector<bool> special = view.at("query_special");
  EXPECT_TRUE(special.front() && special[7] && special.back());
  EXPECT_FALSE(special[1] || special[8]);

  NoGradGuard no_grad;
  nn::ModelInputs in;
  in.input_ids = row_of(enc.input_ids);
  in.token_type_ids = row_of(enc.token_type_ids);
  in.output_attentions = true;
  expect_view_is(view, mlm_->forward(in).attentions);
}

// RoBERTa: <s> a </s></s> b </s>, one token type, the second text after the double separator;
// the page for its checkpoint carries the same.
TEST_F(InferAttention, RobertaPairStartsAfterItsDoubleSeparator) {
  const std::string args = " --checkpoint " + path("roberta_mlm") +
                           " --text 'the cat sat on the mat' --text-pair 'the dog ran'";
  const Outcome r = infer("attention --json" + args);
  ASSERT_EQ(r.code, 0) << r.err;
  const json data = json::parse(r.out);
  EXPECT_EQ(data.at("model_type"), "roberta");
  ASSERT_EQ(data.at("views").size(), 1u);
  const json& view = data.at("views")[0];
  EXPECT_FALSE(view.at("causal").get<bool>());

  const data::BpeTokenizer tok = tiny_roberta_bpe();
  const data::Encoding enc = tok.build_inputs(
      tok.encode("the cat sat on the mat"), tok.encode("the dog ran"), 0, data::Truncation::kHead);
  EXPECT_EQ(view.at("query_tokens"), json({"<s>", "the", "Ġcat", "Ġsat", "Ġon", "Ġthe", "Ġmat",
                                           "</s>", "</s>", "the", "Ġdog", "Ġran", "</s>"}));
  EXPECT_EQ(view.at("pair_start"), 9);
  const std::vector<bool> special = view.at("query_special");
  EXPECT_TRUE(special.front() && special[7] && special[8] && special.back());
  EXPECT_FALSE(special[1] || special[9]);

  NoGradGuard no_grad;
  nn::ModelInputs in;
  in.input_ids = row_of(enc.input_ids);
  in.token_type_ids = row_of(enc.token_type_ids);
  in.output_attentions = true;
  expect_view_is(view, roberta_mlm_->forward(in).attentions);

  const std::string page = (dir_ / "roberta_attention.html").string();
  const Outcome html = infer("attention --out " + page + args);
  ASSERT_EQ(html.code, 0) << html.err;
  EXPECT_EQ(html.out, "wrote " + page + "\n");
  std::stringstream text;
  text << std::ifstream(page).rdbuf();
  EXPECT_NE(text.str().find(R"("model_type":"roberta")"), std::string::npos);
}

TEST_F(InferAttention, GptIsCausalAfterItsBosToken) {
  const Outcome r = infer("attention --json --checkpoint " + path("gpt") + " --text 'the cat sat'");
  ASSERT_EQ(r.code, 0) << r.err;
  const json view = json::parse(r.out).at("views")[0];
  EXPECT_EQ(view.at("name"), "causal self-attention");
  EXPECT_TRUE(view.at("causal").get<bool>());
  EXPECT_EQ(view.at("query_tokens"), json({"[SEP]", "the", "cat", "sat"}));
  EXPECT_EQ(view.at("query_special"), json({true, false, false, false}));
  for (const json& layer : view.at("attention")) {
    for (const json& head : layer) {
      for (size_t q = 0; q < head.size(); ++q) {
        for (size_t k = q + 1; k < head[q].size(); ++k) EXPECT_EQ(head[q][k], 0.0);
      }
    }
  }
  NoGradGuard no_grad;
  nn::ModelInputs in;
  in.input_ids = row_of({3, 5, 6, 8});  // [SEP] the cat sat
  in.output_attentions = true;
  expect_view_is(view, gpt_->forward(in).attentions);
}

TEST_F(InferAttention, EncoderDecoderHasItsThreeViews) {
  const Outcome given =
      infer("attention --json --checkpoint " + path("bart") + " --text 'abc def' --target 'fed'");
  ASSERT_EQ(given.code, 0) << given.err;
  const json data = json::parse(given.out);
  ASSERT_EQ(data.at("views").size(), 3u);
  const json &encoder = data["views"][0], &decoder = data["views"][1], &cross = data["views"][2];
  EXPECT_EQ(encoder.at("name"), "encoder self-attention");
  EXPECT_EQ(decoder.at("name"), "decoder self-attention");
  EXPECT_EQ(cross.at("name"), "cross-attention");
  EXPECT_TRUE(decoder.at("causal").get<bool>());
  EXPECT_EQ(decoder.at("query_tokens"), json({"[BOS]", "f", "e", "d"}));
  EXPECT_EQ(cross.at("query_tokens"), decoder.at("query_tokens"));
  EXPECT_EQ(cross.at("key_tokens"), encoder.at("query_tokens"));

  const data::CharTokenizer chars =
      data::CharTokenizer::load(path("bart") + "/char_tokenizer.json");
  const data::TextTokenizer text_tokenizer = data::TextTokenizer::load(path("bart"));
  NoGradGuard no_grad;
  nn::ModelInputs in;
  in.input_ids = row_of(chars.encode("abc def"));
  std::vector<int32_t> decoder_ids = {chars.bos_id()};
  for (int32_t id : chars.encode("fed")) decoder_ids.push_back(id);
  in.decoder_input_ids = row_of(decoder_ids);
  in.output_attentions = true;
  const nn::ModelOutputs out = bart_->forward(in);
  expect_view_is(encoder, out.attentions);
  expect_view_is(decoder, out.decoder_attentions);
  expect_view_is(cross, out.cross_attentions);

  // Without --target, the decoder reads the model's own greedy output.
  const Outcome own = infer("attention --json --checkpoint " + path("bart") + " --text 'abc def'");
  ASSERT_EQ(own.code, 0) << own.err;
  GenerationOptions options;
  options.greedy = true;
  options.max_new_tokens = 23;
  const GenerationResult greedy = generate(*bart_, chars.encode("abc def"), options);
  const json tokens = json::parse(own.out).at("views")[1].at("query_tokens");
  ASSERT_EQ(tokens.size(), greedy.tokens.size() + 1);
  for (size_t i = 0; i < greedy.tokens.size(); ++i) {
    EXPECT_EQ(tokens[i + 1], text_tokenizer.token(greedy.tokens[i]));
  }
}

TEST_F(InferAttention, ThePageCarriesTheSameDataAsJson) {
  const std::string page = (dir_ / "attention.html").string();
  const std::string args = " --checkpoint " + path("cls") + " --text 'the cat </script> sat'";
  const Outcome html = infer("attention --out " + page + args);
  ASSERT_EQ(html.code, 0) << html.err;
  EXPECT_EQ(html.out, "wrote " + page + "\n");
  const Outcome data = infer("attention --json" + args);
  ASSERT_EQ(data.code, 0) << data.err;

  std::stringstream text;
  text << std::ifstream(page).rdbuf();
  const std::string s = text.str();
  const std::string open = R"(<script id="heed-data" type="application/json">)";
  const size_t begin = s.find(open), end = s.find("</script>", begin);
  ASSERT_NE(begin, std::string::npos);
  const std::string embedded = s.substr(begin + open.size(), end - begin - open.size());
  EXPECT_EQ(embedded.find('<'), std::string::npos);  // "</script>" in the text cannot end it
  EXPECT_EQ(json::parse(embedded), json::parse(data.out));
  EXPECT_EQ(s.find("/*HEED_DATA*/"), std::string::npos);
}

TEST_F(InferAttention, BadInputIsOneLineOnStderr) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"attention --checkpoint " + path("gpt") + " --text a --text-pair b --json",
       "infer attention: --text-pair: only an encoder checkpoint reads a pair; " + path("gpt") +
           " is a GPT2LMHeadModel"},
      {"attention --checkpoint " + path("mlm") + " --text a --target b --json",
       "infer attention: --target: only an encoder-decoder checkpoint has a decoder to read it"},
      {"attention --checkpoint " + path("mlm") + " --text a",
       "infer attention: --out: the page needs a file to go to (or --json for the "
       "probabilities)"},
      {"attention --checkpoint " + path("mlm") + " --text '' --json",
       "infer attention: --text: is empty"},
  };
  for (const auto& [args, message] : cases) {
    const Outcome r = infer(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
  }
}

// "-" read the text "-" itself; as in infer's other commands it is stdin.
TEST_F(InferAttention, ADashReadsTheTextFromStdin) {
  const Outcome r =
      infer("attention --json --checkpoint " + path("gpt") + " --text -", "the cat sat\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).at("views")[0].at("query_tokens"),
            json({"[SEP]", "the", "cat", "sat"}));
  EXPECT_EQ(json::parse(r.out).at("texts").at("text"), "the cat sat");
  const Outcome two =
      infer("attention --json --checkpoint " + path("gpt") + " --text -", "the cat\nsat\n");
  EXPECT_EQ(two.code, 2);
  EXPECT_EQ(two.err,
            "infer attention: --text -: the page draws one text, but stdin holds 2 lines\n");
}

}  // namespace
}  // namespace heed::train
