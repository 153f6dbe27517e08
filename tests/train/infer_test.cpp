// The `infer` program, run as a subprocess on tiny random checkpoints written with
// save_pretrained: its outputs equal those of the models kept in memory, its JSON carries the
// token ids, and every bad input is one line on stderr with exit code 2.
#include <gtest/gtest.h>

#include "train/infer_fixture.h"

namespace heed::train {
namespace {

using namespace heed::decode;

Tensor ids_row(const std::vector<int32_t>& ids) {
  return from_vector(std::vector<int64_t>(ids.begin(), ids.end()),
                     {1, static_cast<int64_t>(ids.size())});
}

// softmax of the in-memory model's logits [1, T, C] or [1, C], as rows.
std::vector<float> probabilities(const nn::PretrainedModel& model, const data::Encoding& enc) {
  NoGradGuard no_grad;
  nn::ModelInputs in;
  in.input_ids = ids_row(enc.input_ids);
  in.token_type_ids = ids_row(enc.token_type_ids);
  return softmax(model.forward(in).logits, -1).to_vector<float>();
}

TEST_F(Infer, FillMaskJsonHasTokenIdsAndMatchesTheModelInMemory) {
  const std::string text = "the [MASK] sat on the [MASK] .";
  const Outcome r =
      infer("fill-mask --json --top-k 3 --checkpoint " + path("mlm") + " --text " + quote(text));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 1u);
  const json& j = lines[0];

  const data::WordPieceTokenizer tok = tiny_wordpiece();
  const data::Encoding enc = tok.encode(text);
  EXPECT_EQ(j["input_ids"].get<std::vector<int32_t>>(), enc.input_ids);
  const std::vector<float> p = probabilities(*mlm_, enc);
  const int64_t V = tok.vocab_size();
  ASSERT_EQ(j["masks"].size(), 2u);
  std::vector<int32_t> filled = enc.input_ids;
  for (const json& mask : j["masks"]) {
    const size_t pos = mask["position"];
    EXPECT_EQ(enc.input_ids[pos], tok.mask_id());
    const std::vector<float> row(p.begin() + pos * V, p.begin() + (pos + 1) * V);
    ASSERT_EQ(mask["candidates"].size(), 3u);
    double previous = 1.0;
    for (const json& c : mask["candidates"]) {
      const int32_t id = c["id"];
      EXPECT_EQ(c["token"], tok.vocab().token(id));
      EXPECT_NEAR(c["probability"].get<double>(), row[id], 1e-6);
      EXPECT_LE(c["probability"].get<double>(), previous);
      previous = c["probability"];
    }
    // The first candidate is the model's argmax.
    const int32_t best =
        static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    EXPECT_EQ(mask["candidates"][0]["id"], best);
    filled[pos] = best;
  }
  EXPECT_EQ(j["filled_ids"].get<std::vector<int32_t>>(), filled);
  EXPECT_EQ(j["filled"], tok.decode(filled));
}

TEST_F(Infer, FillMaskPlainOutputListsCandidatesAndTheFilledText) {
  const Outcome r =
      infer("fill-mask --top-k 4 --checkpoint " + path("mlm") + " --text 'a big [MASK] ran .'");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(lines[i].rfind("[MASK] 1: ", 0), 0u) << lines[i];
  EXPECT_EQ(lines[4].rfind("filled: a big ", 0), 0u) << lines[4];
}

TEST_F(Infer, FillMaskReadsOneTextPerLineFromStdin) {
  const Outcome r = infer("fill-mask --json --checkpoint " + path("mlm") + " --text -",
                          "the [MASK] ran\na [MASK] house\n");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["text"], "the [MASK] ran");
  EXPECT_EQ(lines[1]["text"], "a [MASK] house");
  EXPECT_EQ(lines[1]["masks"][0]["candidates"].size(), 5u);  // the default top-k
}

TEST_F(Infer, ClassifyGivesLabelProbabilitiesOfTheModelInMemory) {
  const data::WordPieceTokenizer tok = tiny_wordpiece();
  for (bool pair : {false, true}) {
    std::string args = "classify --json --checkpoint " + path("cls") + " --text 'the cat sat'";
    if (pair) args += " --text-pair 'a dog ran'";
    const Outcome r = infer(args);
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json_lines(r.out).at(0);
    const data::Encoding enc =
        pair ? tok.encode_pair("the cat sat", "a dog ran") : tok.encode("the cat sat");
    EXPECT_EQ(j["input_ids"].get<std::vector<int32_t>>(), enc.input_ids);
    const std::vector<float> p = probabilities(*cls_, enc);
    const std::vector<std::string> names = {"negative", "neutral", "positive"};
    ASSERT_EQ(j["labels"].size(), 3u);
    double total = 0.0;
    for (const json& l : j["labels"]) {
      const int id = l["id"];
      EXPECT_EQ(l["label"], names[id]);
      EXPECT_NEAR(l["probability"].get<double>(), p[id], 1e-6);
      total += l["probability"].get<double>();
    }
    EXPECT_NEAR(total, 1.0, 1e-5);
    const int best = static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin());
    EXPECT_EQ(j["label_id"], best);
    EXPECT_EQ(j["label"], names[best]);
  }
}

TEST_F(Infer, ClassifyMaxLengthTruncatesAsTrainingDoes) {
  // 40 word pieces do not fit the 32 positions. By default the text is cut to the
  // checkpoint's model_max_length (32); --max-length 0 keeps it whole (an error), and
  // --max-length 12 gives exactly the encoding that training's max_seq_length 12 makes.
  std::string text;
  for (int i = 0; i < 20; ++i) text += "the cat ";
  const std::string args = "classify --json --checkpoint " + path("cls") + " --text " + quote(text);
  const Outcome by_default = infer(args);
  ASSERT_EQ(by_default.code, 0) << by_default.err;
  EXPECT_EQ(json_lines(by_default.out).at(0)["input_ids"].get<std::vector<int32_t>>(),
            tiny_wordpiece().encode(text, kBertPositions).input_ids);
  const Outcome untruncated = infer(args + " --max-length 0");
  EXPECT_EQ(untruncated.code, 2);
  EXPECT_NE(untruncated.err.find("text is 42 tokens; the model takes at most 32"),
            std::string::npos)
      << untruncated.err;
  const Outcome r = infer(args + " --max-length 12");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json_lines(r.out).at(0);
  const data::Encoding enc = tiny_wordpiece().encode(text, 12);
  ASSERT_EQ(enc.input_ids.size(), 12u);
  EXPECT_EQ(j["input_ids"].get<std::vector<int32_t>>(), enc.input_ids);
  const std::vector<float> p = probabilities(*cls_, enc);
  for (const json& l : j["labels"]) {
    EXPECT_NEAR(l["probability"].get<double>(), p[l["id"].get<int>()], 1e-6);
  }
}

TEST_F(Infer, ClassifyCutsAsTheCheckpointTrainedUnlessTold) {
  // The same model saved as a run with max_seq_length 8 and each data.truncation saves it;
  // and as transformers writes a left-truncating tokenizer (truncation_side only).
  std::string text;
  for (int i = 0; i < 10; ++i) text += "the cat ";
  text += "sat";
  for (const data::Truncation side :
       {data::Truncation::kHead, data::Truncation::kTail, data::Truncation::kHeadTail}) {
    const std::string dir = path("cls_cut");
    fs::remove_all(dir);
    nn::save_pretrained(*cls_, dir);
    data::save_wordpiece(tiny_wordpiece(), dir, 8, side);
    const std::string args = "classify --json --checkpoint " + dir + " --text " + quote(text);
    const Outcome r = infer(args);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(json_lines(r.out).at(0)["input_ids"].get<std::vector<int32_t>>(),
              tiny_wordpiece().encode(text, 8, side).input_ids)
        << static_cast<int>(side);
    // Flags override what the checkpoint says.
    const Outcome told = infer(args + " --max-length 6 --truncation head");
    ASSERT_EQ(told.code, 0) << told.err;
    EXPECT_EQ(json_lines(told.out).at(0)["input_ids"].get<std::vector<int32_t>>(),
              tiny_wordpiece().encode(text, 6).input_ids);
  }
  const fs::path config = fs::path(path("cls_cut")) / "tokenizer_config.json";
  json hf = json::parse(std::ifstream(config));
  hf.erase("heed_truncation");
  hf["truncation_side"] = "left";
  std::ofstream(config) << hf.dump();
  const std::string args =
      "classify --json --checkpoint " + path("cls_cut") + " --text " + quote(text);
  const Outcome left = infer(args);
  ASSERT_EQ(left.code, 0) << left.err;
  EXPECT_EQ(json_lines(left.out).at(0)["input_ids"].get<std::vector<int32_t>>(),
            tiny_wordpiece().encode(text, 8, data::Truncation::kTail).input_ids);
  hf["truncation_side"] = "middle";
  std::ofstream(config) << hf.dump();
  const Outcome bad = infer(args);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find(config.string() + ": truncation_side is \"middle\"; it must be right "
                                           "or left"),
            std::string::npos)
      << bad.err;
}

TEST_F(Infer, ClassifyTruncationKeepsTheSidesTrainingKeeps) {
  std::string text;
  for (int i = 0; i < 10; ++i) text += "the cat ";
  text += "sat";
  const std::string args =
      "classify --json --checkpoint " + path("cls") + " --max-length 8 --text " + quote(text);
  for (const auto& [name, side] :
       {std::pair{"head", data::Truncation::kHead}, std::pair{"tail", data::Truncation::kTail},
        std::pair{"head_tail", data::Truncation::kHeadTail}}) {
    const Outcome r = infer(args + " --truncation " + name);
    ASSERT_EQ(r.code, 0) << r.err;
    const data::Encoding enc = tiny_wordpiece().encode(text, 8, side);
    EXPECT_EQ(json_lines(r.out).at(0)["input_ids"].get<std::vector<int32_t>>(), enc.input_ids)
        << name;
  }
  const Outcome bad = infer(args + " --truncation middle");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--truncation"), std::string::npos) << bad.err;
}

TEST_F(Infer, ClassifyTagsEveryWordByItsFirstPiece) {
  const Outcome r =
      infer("classify --json --checkpoint " + path("tagger") + " --text 'the cats sat'");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json_lines(r.out).at(0);
  const data::WordPieceTokenizer tok = tiny_wordpiece();
  const data::Encoding enc = tok.encode("the cats sat");  // [CLS] the cat ##s sat [SEP]
  ASSERT_EQ(enc.input_ids.size(), 6u);
  EXPECT_EQ(j["input_ids"].get<std::vector<int32_t>>(), enc.input_ids);
  const std::vector<float> p = probabilities(*tagger_, enc);
  const std::vector<std::string> names = {"DET", "NOUN", "VERB", "ADP"};
  const std::vector<std::pair<std::string, size_t>> words = {{"the", 1}, {"cats", 2}, {"sat", 4}};
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
  EXPECT_EQ(j["tokens"].size(), 6u);

  const Outcome plain = infer("classify --checkpoint " + path("tagger") + " --text 'the cats sat'");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.rfind("the\t" + j["words"][0]["label"].get<std::string>() + "\t", 0), 0u)
      << plain.out;
}

TEST_F(Infer, GenerateGreedyContinuesAsTheModelInMemory) {
  const Outcome r = infer("generate --json --greedy --max-new-tokens 8 --checkpoint " +
                          path("gpt") + " --prompt 'the cat'");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json_lines(r.out).at(0);
  const data::WordPieceTokenizer tok = tiny_wordpiece();
  std::vector<int32_t> input = {tok.sep_id()};  // the bos
  for (int32_t id : tok.encode_ids("the cat")) input.push_back(id);
  EXPECT_EQ(j["input_ids"].get<std::vector<int32_t>>(), input);
  GenerationOptions o;
  o.greedy = true;
  o.max_new_tokens = 8;
  o.eos_token_id = tok.sep_id();
  const GenerationResult expected = generate(*gpt_, input, o);
  EXPECT_EQ(j["generated_ids"].get<std::vector<int32_t>>(), expected.tokens);
  EXPECT_EQ(j["stop_reason"], to_string(expected.stop_reason));
  ASSERT_EQ(j["tokens"].size(), expected.tokens.size());
  for (size_t i = 0; i < expected.tokens.size(); ++i) {
    EXPECT_NEAR(j["tokens"][i]["log_prob"].get<double>(), expected.log_probs[i], 1e-6);
  }
  std::vector<int32_t> all = tok.encode_ids("the cat");
  all.insert(all.end(), expected.tokens.begin(), expected.tokens.end());
  EXPECT_EQ(j["text"], tok.decode(all));
}

TEST_F(Infer, GenerateWithASeedIsReproducible) {
  const std::string args =
      "generate --json --temperature 3 --top-p 0.95 --max-new-tokens 10 "
      "--checkpoint " +
      path("gpt") + " --prompt 'a dog'";
  const Outcome a = infer(args + " --seed 7"), b = infer(args + " --seed 7"),
                c = infer(args + " --seed 8");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  // The same draw as in memory.
  const data::WordPieceTokenizer tok = tiny_wordpiece();
  std::vector<int32_t> input = {tok.sep_id()};
  for (int32_t id : tok.encode_ids("a dog")) input.push_back(id);
  GenerationOptions o;
  o.temperature = 3.0;
  o.top_p = 0.95;
  o.max_new_tokens = 10;
  o.seed = 7;
  o.eos_token_id = tok.sep_id();
  EXPECT_EQ(json_lines(a.out).at(0)["generated_ids"].get<std::vector<int32_t>>(),
            generate(*gpt_, input, o).tokens);
  o.seed = 8;
  EXPECT_EQ(json_lines(c.out).at(0)["generated_ids"].get<std::vector<int32_t>>(),
            generate(*gpt_, input, o).tokens);
}

TEST_F(Infer, ScoreGivesTheLogProbabilitiesOfTheModelInMemory) {
  const Outcome r = infer("score --json --checkpoint " + path("gpt") + " --text 'the dog ran .'");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json_lines(r.out).at(0);
  const data::WordPieceTokenizer tok = tiny_wordpiece();
  std::vector<int32_t> input = {tok.sep_id()};
  for (int32_t id : tok.encode_ids("the dog ran .")) input.push_back(id);
  EXPECT_EQ(j["input_ids"].get<std::vector<int32_t>>(), input);
  const ScoreResult s = score(*gpt_, input);
  ASSERT_EQ(j["tokens"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(j["tokens"][i]["id"], input[i + 1]);
    EXPECT_NEAR(j["tokens"][i]["log_prob"].get<double>(), s.log_probs[i], 1e-6);
  }
  EXPECT_NEAR(j["perplexity"].get<double>(), s.perplexity, 1e-6 * s.perplexity);
  EXPECT_EQ(j["num_tokens"], 4);

  const Outcome plain = infer("score --checkpoint " + path("gpt") + " --text 'the dog ran .'");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.out.find("perplexity: "), std::string::npos) << plain.out;
}

TEST_F(Infer, TranslateGreedyAndBeamGiveTheOutputsOfTheModelInMemory) {
  const data::CharTokenizer chars = data::load_char_tokenizer(path("bart"));
  const std::vector<int32_t> source = chars.encode("hello");  // 'l' is in the vocabulary
  for (const std::string command : {"translate", "seq2seq"}) {
    const Outcome greedy = infer(command + " --json --checkpoint " + path("bart") +
                                 " --text hello --max-new-tokens 12");
    ASSERT_EQ(greedy.code, 0) << greedy.err;
    const json g = json_lines(greedy.out).at(0);
    EXPECT_EQ(g["input_ids"].get<std::vector<int32_t>>(), source);
    GenerationOptions o;
    o.greedy = true;
    o.max_new_tokens = 12;
    const GenerationResult expected = generate(*bart_, source, o);
    EXPECT_EQ(g["output_ids"].get<std::vector<int32_t>>(), expected.tokens);
    EXPECT_EQ(g["output"], chars.decode(expected.tokens));
  }
  const Outcome beam = infer("translate --json --num-beams 3 --max-new-tokens 12 --checkpoint " +
                             path("bart") + " --text hello");
  ASSERT_EQ(beam.code, 0) << beam.err;
  const json b = json_lines(beam.out).at(0);
  BeamSearchOptions o;
  o.num_beams = 3;
  o.max_new_tokens = 12;
  const BeamSearchResult expected = beam_search(*bart_, source, o);
  EXPECT_EQ(b["output_ids"].get<std::vector<int32_t>>(), expected.best.tokens);
  EXPECT_NEAR(b["score"].get<double>(), expected.score, 1e-6);
}

// Sampling over the KV cache and scoring an output under an encoder-decoder, as in memory: a
// seeded sample is the one generate draws, and its score is what decoding reported for it.
TEST_F(Infer, TranslateSamplesAndScoreScoresAnOutputAsTheModelInMemory) {
  const data::CharTokenizer chars = data::load_char_tokenizer(path("bart"));
  const std::vector<int32_t> source = chars.encode("hello");
  const Outcome sampled = infer("translate --json --do-sample --top-k 4 --seed 9 --checkpoint " +
                                path("bart") + " --text hello --max-new-tokens 12");
  ASSERT_EQ(sampled.code, 0) << sampled.err;
  const json j = json_lines(sampled.out).at(0);
  GenerationOptions o;
  o.top_k = 4;
  o.seed = 9;
  o.max_new_tokens = 12;
  const GenerationResult expected = generate(*bart_, source, o);
  EXPECT_EQ(j["output_ids"].get<std::vector<int32_t>>(), expected.tokens);
  EXPECT_EQ(j["seed"], 9);

  // The target as decoding produces it: its tokens, then the eos.
  const std::string target = chars.decode(expected.tokens);
  const Outcome scored = infer("score --json --checkpoint " + path("bart") +
                               " --text hello --target '" + target + "'");
  ASSERT_EQ(scored.code, 0) << scored.err;
  const json s = json_lines(scored.out).at(0);
  std::vector<int32_t> ids = chars.encode_target(target);
  ids.push_back(static_cast<int32_t>(bart_->special_tokens().eos));
  const ScoreResult reference = score(*bart_, source, ids);
  ASSERT_EQ(s["tokens"].size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(s["tokens"][i]["id"], ids[i]);
    EXPECT_NEAR(s["tokens"][i]["log_prob"].get<double>(), reference.log_probs[i], 1e-6);
  }
  EXPECT_NEAR(s["perplexity"].get<double>(), reference.perplexity, 1e-6 * reference.perplexity);
  // A sampling option without --do-sample, sampling with beams, score without a target: told.
  const std::string bart = " --checkpoint " + path("bart") + " --text hello";
  EXPECT_NE(infer("translate --top-k 4" + bart).err.find("add --do-sample"), std::string::npos);
  EXPECT_NE(infer("translate --do-sample --num-beams 2" + bart).err.find("beam sampling"),
            std::string::npos);
  EXPECT_NE(infer("score" + bart).err.find("--target: "), std::string::npos);
  EXPECT_NE(infer("score --target x --checkpoint " + path("gpt") + " --text a")
                .err.find("only an encoder-decoder checkpoint scores a target"),
            std::string::npos);
}

TEST_F(Infer, BadInputIsOneLineOnStderrAndExitCodeTwo) {
  const std::string long_text = [] {
    std::string s;
    for (int i = 0; i < 20; ++i) s += "the cat ";
    return s;
  }();  // 40 tokens
  const std::string missing = (dir_ / "no_such_dir").string();
  struct Case {
    std::string args, input, message;
  };
  const std::vector<Case> cases = {
      {"generate --checkpoint " + path("gpt") + " --prompt ''", "", "infer generate: empty prompt"},
      {"generate --checkpoint " + path("gpt") + " --prompt '  '", "",
       "infer generate: empty prompt"},
      {"fill-mask --checkpoint " + path("mlm") + " --text 'the cat sat'", "",
       "infer fill-mask: no [MASK] in the text \"the cat sat\""},
      {"generate --checkpoint " + path("mlm") + " --prompt 'the cat'", "",
       "infer generate: checkpoint " + path("mlm") +
           " is a BertForMaskedLM; generate needs a GPT2LMHeadModel"},
      {"fill-mask --checkpoint " + path("gpt") + " --text 'the [MASK]'", "",
       "infer fill-mask: checkpoint " + path("gpt") +
           " is a GPT2LMHeadModel; fill-mask needs a BertForMaskedLM"},
      {"translate --checkpoint " + path("cls") + " --text abc", "",
       "infer translate: checkpoint " + path("cls") +
           " is a BertForSequenceClassification; translate needs a BartForConditionalGeneration"},
      {"classify --checkpoint " + path("gpt") + " --text abc", "",
       "is a GPT2LMHeadModel; classify needs a BertForSequenceClassification, "
       "BertForTokenClassification, RobertaForSequenceClassification, "
       "RobertaForTokenClassification, DistilBertForSequenceClassification or "
       "DistilBertForTokenClassification"},
      {"score --checkpoint " + missing + " --text 'the cat'", "",
       "infer score: checkpoint " + missing + " does not exist"},
      {"score --checkpoint " + path("gpt") + " --text " + quote(long_text), "",
       "infer score: text (with the bos token) is 41 tokens; the model takes at most 16 "
       "(n_positions)"},
      {"generate --checkpoint " + path("gpt") + " --prompt " + quote(long_text), "",
       "infer generate: prompt is 41 tokens (with the bos token); the model takes at most 16"},
      {"fill-mask --checkpoint " + path("mlm") + " --text " + quote(long_text + "[MASK]"), "",
       "infer fill-mask: text is 43 tokens; the model takes at most 32 (max_position_embeddings)"},
      {"classify --checkpoint " + path("tagger") + " --text 'a' --text-pair 'b'", "",
       "infer classify: --text-pair is for sequence classification"},
      {"classify --checkpoint " + path("tagger") + " --text 'a' --max-length 8", "",
       "infer classify: --max-length and --truncation are for sequence classification"},
      {"classify --checkpoint " + path("tagger") + " --text 'a' --truncation tail", "",
       "infer classify: --max-length and --truncation are for sequence classification"},
      {"fill-mask --checkpoint " + path("mlm") + " --text -", "the [MASK]\n\n",
       "infer fill-mask: stdin:2: empty text"},
      {"generate --checkpoint " + path("gpt"), "", "infer generate: --prompt is required"},
      {"generate --checkpoint " + path("gpt") + " --prompt a --top-p 1.5", "",
       "infer generate: --top-p"},
      {"fill-mask --checkpoint " + path("mlm") + " --text '[MASK]' --top-k 0", "",
       "infer fill-mask: --top-k: must be at least 1, got 0"},
      {"", "", "infer: A subcommand is required"},
  };
  for (const Case& c : cases) {
    const Outcome r = infer(c.args, c.input);
    EXPECT_EQ(r.code, 2) << c.args;
    EXPECT_EQ(r.out, "") << c.args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
}

// A range error states the rule and the value given, not CLI11's bounds (DBL_MAX in full).
TEST_F(Infer, OutOfRangeOptionsStateTheRuleAndTheValue) {
  const std::string gpt = " --checkpoint " + path("gpt") + " --prompt 'the cat'";
  const std::string bart = " --checkpoint " + path("bart") + " --text abc";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"translate --num-beams 0" + bart, "infer translate: --num-beams: must be at least 1, got 0"},
      {"translate --max-new-tokens 0" + bart,
       "infer translate: --max-new-tokens: must be at least 1, got 0"},
      {"translate --num-beams many" + bart,
       "infer translate: --num-beams: expected an integer, got 'many'"},
      {"generate --temperature -1" + gpt,
       "infer generate: --temperature: must be at least 0, got -1"},
      {"generate --top-k -1" + gpt, "infer generate: --top-k: must be at least 0, got -1"},
      {"generate --max-new-tokens -3" + gpt,
       "infer generate: --max-new-tokens: must be at least 0, got -3"},
      {"generate --top-p 1.5" + gpt, "infer generate: --top-p: must be at most 1, got 1.5"},
      {"classify --max-length -1 --checkpoint " + path("cls") + " --text a",
       "infer classify: --max-length: must be at least 0, got -1"},
  };
  for (const auto& [args, message] : cases) {
    const Outcome r = infer(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.err, message + "\n") << args;
  }
}

// Limits that keep a typo from running for hours or taking gigabytes are checked before any
// work, against the checkpoint where they depend on it.
TEST_F(Infer, LimitsOfTheModelAndOfBeamSearchAreCheckedBeforeAnyWork) {
  const std::string V = std::to_string(tiny_wordpiece().vocab_size());  // 25
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"translate --num-beams 1000000 --checkpoint " + path("bart") + " --text abc",
       "infer translate: --num-beams: must be at most 64 (each beam costs time and memory; 4 to "
       "12 is usual), got 1000000"},
      // 24 positions, one of them the decoder start token.
      {"translate --max-new-tokens 100000 --checkpoint " + path("bart") + " --text abc",
       "infer translate: --max-new-tokens: must be at most 23 for checkpoint " + path("bart") +
           " (its 24 positions, max_position_embeddings, less the decoder start token), got "
           "100000"},
      {"fill-mask --top-k 1000 --checkpoint " + path("mlm") + " --text '[MASK]'",
       "infer fill-mask: --top-k: must be at most the vocabulary size, " + V + " (checkpoint " +
           path("mlm") + "), got 1000"},
      {"generate --top-k 26 --checkpoint " + path("gpt") + " --prompt 'the cat'",
       "infer generate: --top-k: must be at most the vocabulary size, " + V + " (checkpoint " +
           path("gpt") + "), got 26"},
  };
  for (const auto& [args, message] : cases) {
    const Outcome r = infer(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.err, message + "\n") << args;
  }
  // The whole vocabulary is a valid top-k; without --max-new-tokens translate decodes as far as
  // the model's positions allow (the default, 100, is more than this model has).
  Outcome r = infer("generate --top-k " + V + " --max-new-tokens 2 --checkpoint " + path("gpt") +
                    " --prompt 'the cat'");
  EXPECT_EQ(r.code, 0) << r.err;
  r = infer("translate --json --num-beams 64 --checkpoint " + path("bart") + " --text abc");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_LE(json_lines(r.out).at(0)["output_ids"].size(), 23u);
}

// A generation cut short by the model's context says so on stderr; its JSON says max_length.
TEST_F(Infer, GenerateSaysWhenTheContextIsFull) {
  const data::WordPieceTokenizer tok = tiny_wordpiece();
  GenerationOptions o;
  o.greedy = true;
  o.max_new_tokens = 100000;
  o.eos_token_id = tok.sep_id();
  // A prompt whose greedy continuation fills the 16 positions before any [SEP].
  std::string prompt;
  GenerationResult expected;
  for (const char* candidate : {"the cat", "a dog", "the big red house", "a small cat sat", "dog",
                                "the mat", "red and big", "of the house"}) {
    std::vector<int32_t> input = {tok.sep_id()};
    for (int32_t id : tok.encode_ids(candidate)) input.push_back(id);
    expected = generate(*gpt_, input, o);
    if (expected.stop_reason == StopReason::max_length) {
      prompt = candidate;
      break;
    }
  }
  ASSERT_FALSE(prompt.empty()) << "no candidate prompt fills the context";
  const Outcome r = infer("generate --json --greedy --max-new-tokens 100000 --checkpoint " +
                          path("gpt") + " --prompt " + quote(prompt));
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json_lines(r.out).at(0);
  EXPECT_EQ(j["stop_reason"], "max_length");
  EXPECT_EQ(j["generated_ids"].get<std::vector<int32_t>>(), expected.tokens);
  EXPECT_EQ(r.err, "infer generate: stopped after " + std::to_string(expected.tokens.size()) +
                       " new tokens: the model's context of 16 positions (n_positions) is full\n");
  // Several prompts from stdin: the note names which one.
  const Outcome many =
      infer("generate --greedy --max-new-tokens 100000 --checkpoint " + path("gpt") + " --prompt -",
            prompt + "\n" + prompt + "\n");
  ASSERT_EQ(many.code, 0) << many.err;
  EXPECT_NE(many.err.find("infer generate: text 2: stopped after "), std::string::npos) << many.err;
  // A generation that ends as asked says nothing.
  const Outcome short_run = infer("generate --greedy --max-new-tokens 1 --checkpoint " +
                                  path("gpt") + " --prompt " + quote(prompt));
  ASSERT_EQ(short_run.code, 0) << short_run.err;
  EXPECT_EQ(short_run.err, "");
}

// A vocab.txt that is not the model's size fails before any output, naming both files.
TEST_F(Infer, ATokenizerOfAnotherSizeThanTheModelFailsBeforeAnyOutput) {
  const fs::path copy = dir_ / "gpt_short_vocab";
  fs::remove_all(copy);
  fs::copy(path("gpt"), copy);
  const std::vector<std::string> tokens = tiny_wordpiece().vocab().tokens();
  {
    std::ofstream vocab(copy / "vocab.txt", std::ios::trunc);
    for (size_t i = 0; i + 5 < tokens.size(); ++i) vocab << tokens[i] << "\n";
  }
  const std::string expected = "infer generate: " + (copy / "vocab.txt").string() +
                               " has 20 tokens, but " + (copy / "config.json").string() +
                               " gives vocab_size 25: the tokenizer and the model must have the "
                               "same vocabulary (files from two different models?)\n";
  Outcome r =
      infer("generate --greedy --checkpoint " + copy.string() + " --prompt -", "the cat\na dog\n");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, expected);
  // A longer one too: its ids past the model's would have no embedding.
  {
    std::ofstream vocab(copy / "vocab.txt", std::ios::trunc);
    for (const std::string& t : tokens) vocab << t << "\n";
    vocab << "extra\n";
  }
  r = infer("score --checkpoint " + copy.string() + " --text 'the cat'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("vocab.txt has 26 tokens, but "), std::string::npos) << r.err;
  fs::remove_all(copy);
}

}  // namespace
}  // namespace heed::train
