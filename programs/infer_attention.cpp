// infer attention: each layer's and head's attention probabilities of a BERT, RoBERTa, GPT or
// encoder-decoder checkpoint on one text, drawn as a self-contained HTML page (viz/page.h)
// or written as JSON. The probabilities come from the model's own forward
// (ModelInputs::output_attentions), in eval mode, so they are what the model computes.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <fstream>
#include <set>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "decode/generation.h"
#include "io/atomic_file.h"
#include "nn/models/bert.h"
#include "nn/models/gpt.h"
#include "nn/models/seq2seq_model.h"
#include "programs/infer_commands.h"
#include "programs/infer_common.h"
#include "viz/page.h"

namespace heed::infer {
namespace {

using nlohmann::json;

// A float as the shortest decimal that reads back as the same float ("0.1", not the
// 0.10000000149011612 of its double): the page and --json stay a third of the size.
double shortest(float x) {
  char buf[32];
  const auto written = std::to_chars(buf, buf + sizeof buf, x);
  double back = 0;
  std::from_chars(buf, written.ptr, back);
  return back;
}

// [layer][head][query][key] of per-layer probabilities [1, heads, Tq, Tk].
json probabilities(const std::vector<Tensor>& layers) {
  json out = json::array();
  for (const Tensor& layer : layers) {
    const Tensor p = layer.to(DType::f32).contiguous();
    const int64_t heads = p.size(1), Tq = p.size(2), Tk = p.size(3);
    const std::vector<float> flat = p.to_vector<float>();
    json layer_json = json::array();
    for (int64_t h = 0; h < heads; ++h) {
      json head = json::array();
      for (int64_t q = 0; q < Tq; ++q) {
        json row = json::array();
        for (int64_t k = 0; k < Tk; ++k) row.push_back(shortest(flat[(h * Tq + q) * Tk + k]));
        head.push_back(std::move(row));
      }
      layer_json.push_back(std::move(head));
    }
    out.push_back(std::move(layer_json));
  }
  return out;
}

// The tokens of `ids` as the vocabulary writes them, and which are special (the ids in
// `special`: [CLS] [SEP] [PAD], bos and eos), which the page can hide.
struct Tokens {
  json text = json::array();
  json special = json::array();
};
Tokens tokens_of(const data::TextTokenizer& tokenizer, const std::vector<int32_t>& ids,
                 const std::set<int64_t>& special) {
  Tokens t;
  for (int32_t id : ids) {
    t.text.push_back(tokenizer.token(id));
    t.special.push_back(special.contains(id));
  }
  return t;
}

json view(const std::string& name, const Tokens& queries, const Tokens& keys, bool causal,
          const std::vector<Tensor>& layers, std::optional<size_t> pair_start = std::nullopt) {
  return {{"name", name},
          {"query_tokens", queries.text},
          {"key_tokens", keys.text},
          {"query_special", queries.special},
          {"key_special", keys.special},
          {"pair_start", pair_start ? json(*pair_start) : json(nullptr)},
          {"causal", causal},
          {"attention", probabilities(layers)}};
}

std::set<int64_t> special_ids(const data::TextTokenizer& tokenizer) {
  return {tokenizer.pad_id(), tokenizer.start_id(), tokenizer.end_id()};
}

// BERT, RoBERTa and DistilBERT: one self-attention view over the encoded text (or pair).
json bert_views(const Checkpoint& c, const AttentionArgs& args) {
  const auto& model = static_cast<const nn::BertBase&>(*c.model);
  const data::Encoding enc = c.tokenizer.encode_inputs(
      args.text,
      args.text_pair.empty() ? std::nullopt : std::optional<std::string_view>(args.text_pair));
  check_encoder_length(enc.input_ids.size(), model);
  nn::ModelInputs in = encoder_inputs(enc);
  in.output_attentions = true;
  const nn::ModelOutputs out = model.forward(in);
  // Where the second text starts: its first token type 1 (BERT), or after RoBERTa's </s></s>.
  std::optional<size_t> pair_start;
  for (size_t i = 0; i < enc.token_type_ids.size(); ++i) {
    if (enc.token_type_ids[i] == 1) {
      pair_start = i;
      break;
    }
  }
  if (model.bert->layout.positions == nn::PositionIds::kAfterPadding && !args.text_pair.empty()) {
    const auto& ids = enc.input_ids;
    for (size_t i = 1; i + 1 < ids.size(); ++i) {
      if (ids[i] == c.tokenizer.end_id() && ids[i + 1] == c.tokenizer.end_id()) {
        pair_start = i + 2;
        break;
      }
    }
  }
  const Tokens tokens = tokens_of(c.tokenizer, enc.input_ids, special_ids(c.tokenizer));
  return json::array({view("self-attention", tokens, tokens, false, out.attentions, pair_start)});
}

json gpt_views(const Checkpoint& c, const AttentionArgs& args) {
  const auto& model = static_cast<const nn::GPT&>(*c.model);
  const std::vector<int32_t> ids = with_bos(model, c.tokenizer.encode(args.text));
  check_length(ids.size(), model.config.n_positions, "text (with the bos token)", "n_positions");
  nn::ModelInputs in;
  in.input_ids = ids_row(ids);
  in.output_attentions = true;
  const nn::ModelOutputs out = model.forward(in);
  std::set<int64_t> special = special_ids(c.tokenizer);
  special.insert({model.config.bos_token_id, model.config.eos_token_id});
  const Tokens tokens = tokens_of(c.tokenizer, ids, special);
  return json::array({view("causal self-attention", tokens, tokens, true, out.attentions)});
}

// The decoder reads --target when given (teacher forcing, as in training), else the model's
// own greedy output: either way, decoder_start followed by the target's tokens.
json encoder_decoder_views(const Checkpoint& c, const AttentionArgs& args) {
  const auto& model = dynamic_cast<const nn::Seq2SeqModel&>(*c.model);
  const nn::Seq2SeqTokens ids = model.special_tokens();
  const std::vector<int32_t> source = c.tokenizer.encode_source(args.text);
  HEED_CHECK(!source.empty(), "text \"{}\" has no tokens", args.text);
  const int64_t positions = model.max_positions();
  check_length(source.size(), positions, "text", "max_position_embeddings");
  std::vector<int32_t> target;
  if (!args.target.empty()) {
    target = c.tokenizer.encode_target(args.target);
  } else {
    decode::GenerationOptions options;
    options.greedy = true;
    options.max_new_tokens = std::min<int64_t>(TranslateArgs::kDefaultMaxNewTokens, positions - 1);
    target = decode::generate(model, source, options).tokens;
  }
  std::vector<int32_t> decoder_ids = {static_cast<int32_t>(ids.decoder_start)};
  decoder_ids.insert(decoder_ids.end(), target.begin(), target.end());
  check_length(decoder_ids.size(), positions, "target (with the decoder start token)",
               "max_position_embeddings");
  nn::ModelInputs in;
  in.input_ids = ids_row(source);
  in.decoder_input_ids = ids_row(decoder_ids);
  in.output_attentions = true;
  const nn::ModelOutputs out = model.forward(in);
  std::set<int64_t> special = special_ids(c.tokenizer);
  special.insert({ids.eos, ids.decoder_start});
  if (ids.bos) special.insert(*ids.bos);
  const Tokens encoder = tokens_of(c.tokenizer, source, special);
  const Tokens decoder = tokens_of(c.tokenizer, decoder_ids, special);
  return json::array(
      {view("encoder self-attention", encoder, encoder, false, out.attentions),
       view("decoder self-attention", decoder, decoder, true, out.decoder_attentions),
       view("cross-attention", decoder, encoder, false, out.cross_attentions)});
}

}  // namespace

void run_attention(const AttentionArgs& given, std::ostream& out) {
  AttentionArgs args = given;
  // "-" reads the text from stdin, as infer's other commands do; the page draws one text.
  if (args.text == "-") {
    const std::vector<std::string> lines = input_texts("-", "text");
    HEED_CHECK(lines.size() == 1, "--text -: the page draws one text, but stdin holds {} lines",
               lines.size());
    args.text = lines[0];
  }
  HEED_CHECK(!args.text.empty(), "--text: is empty");
  HEED_CHECK(args.json || !args.out.empty(),
             "--out: the page needs a file to go to (or --json for the probabilities)");
  Checkpoint c = load_checkpoint(
      args, "attention",
      {"BertForMaskedLM", "BertForSequenceClassification", "BertForTokenClassification",
       "RobertaForMaskedLM", "RobertaForSequenceClassification", "RobertaForTokenClassification",
       "DistilBertForMaskedLM", "DistilBertForSequenceClassification",
       "DistilBertForTokenClassification", "GPT2LMHeadModel", "BartForConditionalGeneration",
       "T5ForConditionalGeneration"});
  const std::string type = c.model->model_type();
  const bool encoder = type == "bert" || type == "roberta" || type == "distilbert";
  HEED_CHECK(args.text_pair.empty() || encoder,
             "--text-pair: only an encoder checkpoint reads a pair; {} is a {}", args.checkpoint,
             c.model->architecture());
  HEED_CHECK(args.target.empty() || type == "bart" || type == "t5",
             "--target: only an encoder-decoder checkpoint has a decoder to read it; {} is a {}",
             args.checkpoint, c.model->architecture());
  NoGradGuard no_grad;
  json data = {{"format", "heed-attention/1"},
               {"model_type", type},
               {"checkpoint", args.checkpoint},
               {"texts",
                {{"text", args.text},
                 {"text_pair", args.text_pair.empty() ? json(nullptr) : json(args.text_pair)},
                 {"target", args.target.empty() ? json(nullptr) : json(args.target)}}}};
  data["views"] = encoder          ? bert_views(c, args)
                  : type == "gpt2" ? gpt_views(c, args)
                                   : encoder_decoder_views(c, args);
  if (!args.json) {
    viz::write_page(args.out, viz::Page::attention, data);
    out << fmt::format("wrote {}\n", args.out);
  } else if (args.out.empty()) {
    out << data.dump() << "\n";
  } else {
    io::write_file_atomically(args.out, data.dump() + "\n");
    out << fmt::format("wrote {}\n", args.out);
  }
}

}  // namespace heed::infer
