// infer fill-mask and classify: the encoder checkpoints (BERT and DistilBERT with WordPiece,
// RoBERTa with its byte-level BPE).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "data/tokenizer_io.h"
#include "nn/models/bert.h"
#include "programs/infer_commands.h"
#include "programs/infer_common.h"

namespace heed::infer {
namespace {

using nlohmann::json;

// softmax over the last dim of logits [.., L], as one row per leading index.
std::vector<std::vector<double>> probabilities(const Tensor& logits) {
  const Tensor p = softmax(logits.to(DType::f32), -1).contiguous();
  const int64_t L = p.size(-1);
  std::vector<float> flat = p.to_vector<float>();
  std::vector<std::vector<double>> rows;
  for (size_t i = 0; i < flat.size(); i += L)
    rows.emplace_back(flat.begin() + i, flat.begin() + i + L);
  return rows;
}

// Indices of the k largest values, largest first (smaller index first on ties).
std::vector<int32_t> top_indices(const std::vector<double>& values, size_t k) {
  std::vector<int32_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  k = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
    return values[a] > values[b] || (values[a] == values[b] && a < b);
  });
  order.resize(k);
  return order;
}

std::vector<std::string> label_names(const nn::BertConfig& config) {
  std::vector<std::string> names = config.id2label;
  if (static_cast<int64_t>(names.size()) != config.num_labels) {
    names.clear();  // Hugging Face's default names
    for (int64_t i = 0; i < config.num_labels; ++i) names.push_back("LABEL_" + std::to_string(i));
  }
  return names;
}

// Every architecture of the encoder family with a head `head` ("ForMaskedLM").
std::vector<std::string> encoder_architectures(std::initializer_list<const char*> heads) {
  std::vector<std::string> names;
  for (const char* family : {"Bert", "Roberta", "DistilBert"}) {
    for (const char* head : heads) names.push_back(std::string(family) + head);
  }
  return names;
}

// The text's model inputs with each spelled mask token as the mask id: WordPiece keeps [MASK]
// whole; a byte-level BPE would split "<mask>", so the text is encoded between the masks (the
// space before a mask goes with it, as RoBERTa's <mask> token strips on its left).
data::Encoding mask_aware_encoding(const data::TextTokenizer& tok, std::string_view text,
                                   const std::string& mask_token) {
  if (tok.type_name() == "wordpiece") return tok.encode_inputs(text);
  std::vector<int32_t> ids;
  size_t from = 0;
  while (true) {
    const size_t at = text.find(mask_token, from);
    std::string_view part = text.substr(from, at == std::string_view::npos ? at : at - from);
    if (at != std::string_view::npos && part.ends_with(' ')) part.remove_suffix(1);
    const std::vector<int32_t> piece = tok.encode(part);
    ids.insert(ids.end(), piece.begin(), piece.end());
    if (at == std::string_view::npos) break;
    ids.push_back(tok.mask_id());
    from = at + mask_token.size();
  }
  return tok.build_inputs(std::move(ids));
}

}  // namespace

void run_fill_mask(const FillMaskArgs& args, std::ostream& out) {
  HEED_CHECK(args.top_k >= 1, "--top-k must be >= 1, got {}", args.top_k);
  const std::vector<std::string> texts = input_texts(args.text, "text");
  Checkpoint c = load_checkpoint(args, "fill-mask", encoder_architectures({"ForMaskedLM"}));
  check_top_k(args.top_k, c);
  const auto& model = static_cast<const nn::BertForMaskedLM&>(*c.model);
  const data::TextTokenizer& tok = c.tokenizer;
  const int32_t mask_id = tok.mask_id();
  const std::string mask_token = tok.token(mask_id);
  NoGradGuard no_grad;
  for (size_t n = 0; n < texts.size(); ++n) {
    const data::Encoding enc = mask_aware_encoding(tok, texts[n], mask_token);
    check_encoder_length(enc.input_ids.size(), model);
    std::vector<size_t> masks;
    for (size_t t = 0; t < enc.input_ids.size(); ++t) {
      if (enc.input_ids[t] == mask_id) masks.push_back(t);
    }
    HEED_CHECK(!masks.empty(), "no {} in the text \"{}\"", mask_token, texts[n]);

    const auto probs = probabilities(model.forward(encoder_inputs(enc)).logits.select(0, 0));
    std::vector<int32_t> filled = enc.input_ids;
    json masks_json = json::array();
    if (!args.json && n > 0) out << "\n";
    for (size_t m = 0; m < masks.size(); ++m) {
      const std::vector<double>& p = probs[masks[m]];
      const std::vector<int32_t> best = top_indices(p, static_cast<size_t>(args.top_k));
      filled[masks[m]] = best[0];
      json candidates = json::array();
      for (int32_t id : best) {
        candidates.push_back({{"token", tok.token(id)}, {"id", id}, {"probability", p[id]}});
        if (!args.json) {
          out << mask_token << " " << m + 1 << ": " << tok.token(id) << " " << fixed4(p[id])
              << "\n";
        }
      }
      masks_json.push_back({{"position", masks[m]}, {"candidates", candidates}});
    }
    const std::string filled_text = tok.decode(filled);
    if (args.json) {
      out << json{{"text", texts[n]},
                  {"input_ids", enc.input_ids},
                  {"masks", masks_json},
                  {"filled", filled_text},
                  {"filled_ids", filled}}
                 .dump()
          << "\n";
    } else {
      out << "filled: " << filled_text << "\n";
    }
  }
}

namespace {

void classify_sequence(const Checkpoint& c, const ClassifyArgs& args,
                       const std::vector<std::string>& texts, std::ostream& out) {
  const auto& model = static_cast<const nn::BertBase&>(*c.model);
  const data::TextTokenizer& tok = c.tokenizer;
  const std::vector<std::string> names = label_names(model.config);
  // By default inputs are cut as the training run cut them, so that a prediction here is the
  // one its evaluation scored.
  const data::TruncationSettings trained = data::load_truncation(c.dir);
  const size_t max_length =
      static_cast<size_t>(args.max_length.value_or(trained.max_length.value_or(0)));
  const data::Truncation side = args.truncation.value_or(trained.side);
  for (size_t n = 0; n < texts.size(); ++n) {
    const data::Encoding enc = tok.encode_inputs(
        texts[n],
        args.text_pair.empty() ? std::nullopt : std::optional<std::string_view>(args.text_pair),
        max_length, side);
    check_encoder_length(enc.input_ids.size(), model);
    const Tensor logits = model.forward(encoder_inputs(enc)).logits;  // [1, L]
    json j = {{"text", texts[n]}, {"input_ids", enc.input_ids}};
    if (!args.text_pair.empty()) j["text_pair"] = args.text_pair;
    if (!args.json && n > 0) out << "\n";
    if (model.config.num_labels == 1) {  // a regression head: the score itself
      const double value = logits.to_vector<double>()[0];
      j["score"] = value;
      if (!args.json) out << "score: " << fixed4(value) << "\n";
    } else {
      const std::vector<double> p = probabilities(logits)[0];
      const std::vector<int32_t> order = top_indices(p, p.size());
      j["label"] = names[order[0]];
      j["label_id"] = order[0];
      json labels = json::array();
      for (int32_t id : order) {
        labels.push_back({{"label", names[id]}, {"id", id}, {"probability", p[id]}});
        if (!args.json) out << names[id] << " " << fixed4(p[id]) << "\n";
      }
      j["labels"] = labels;
    }
    if (args.json) out << j.dump() << "\n";
  }
}

// Each word is tagged by its first word piece, the alignment token classification trains
// with (transformers' run_ner).
void classify_tokens(const Checkpoint& c, const ClassifyArgs& args,
                     const std::vector<std::string>& texts, std::ostream& out) {
  const auto& model = static_cast<const nn::BertBase&>(*c.model);
  HEED_CHECK(args.text_pair.empty(),
             "--text-pair is for sequence classification; checkpoint {} "
             "is a {}",
             args.checkpoint, model.architecture());
  HEED_CHECK(!args.max_length && !args.truncation,
             "--max-length and --truncation are for sequence classification (words past the "
             "cut would get no tag); checkpoint {} is a {}",
             args.checkpoint, model.architecture());
  const data::TextTokenizer& tok = c.tokenizer;
  const std::vector<std::string> names = label_names(model.config);
  for (size_t n = 0; n < texts.size(); ++n) {
    const std::vector<std::string> words = tok.split_words(texts[n]);
    std::vector<int32_t> pieces;
    std::vector<size_t> first_piece;  // position of each word's first piece in the input
    for (const std::string& word : words) {
      first_piece.push_back(pieces.size() + 1);  // + 1: after [CLS] (<s>)
      tok.append_word_ids(word, pieces);
    }
    const data::Encoding enc = tok.build_inputs(pieces, std::nullopt, 0);
    check_encoder_length(enc.input_ids.size(), model);
    const auto probs = probabilities(model.forward(encoder_inputs(enc)).logits.select(0, 0));

    json words_json = json::array(), tokens_json = json::array();
    for (size_t t = 0; t < enc.input_ids.size(); ++t) {
      const int32_t label = top_indices(probs[t], 1)[0];
      tokens_json.push_back({{"token", tok.token(enc.input_ids[t])},
                             {"id", enc.input_ids[t]},
                             {"label", names[label]},
                             {"probability", probs[t][label]}});
    }
    if (!args.json && n > 0) out << "\n";
    for (size_t w = 0; w < words.size(); ++w) {
      const std::vector<double>& p = probs[first_piece[w]];
      const int32_t label = top_indices(p, 1)[0];
      words_json.push_back({{"word", words[w]},
                            {"position", first_piece[w]},
                            {"label", names[label]},
                            {"label_id", label},
                            {"probability", p[label]}});
      if (!args.json) out << words[w] << "\t" << names[label] << "\t" << fixed4(p[label]) << "\n";
    }
    if (args.json) {
      out << json{{"text", texts[n]},
                  {"input_ids", enc.input_ids},
                  {"words", words_json},
                  {"tokens", tokens_json}}
                 .dump()
          << "\n";
    }
  }
}

}  // namespace

void run_classify(const ClassifyArgs& args, std::ostream& out) {
  const std::vector<std::string> texts = input_texts(args.text, "text");
  Checkpoint c = load_checkpoint(
      args, "classify",
      encoder_architectures({"ForSequenceClassification", "ForTokenClassification"}));
  NoGradGuard no_grad;
  if (c.model->architecture().ends_with("ForTokenClassification")) {
    classify_tokens(c, args, texts, out);
  } else {
    classify_sequence(c, args, texts, out);
  }
}

}  // namespace heed::infer
