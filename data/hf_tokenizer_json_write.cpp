// Writing tokenizer.json, key for key in the order tokenizers serializes, and building one for a
// WordPiece tokenizer or a byte-level BPE.
#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "data/byte_level_bpe.h"
#include "data/hf_tokenizer_json.h"
#include "data/hf_tokenizer_json_template.h"
#include "data/wordpiece.h"
#include "io/atomic_file.h"

namespace heed::data {
namespace {

using OrderedJson = nlohmann::ordered_json;
using hf_tokenizer_json::kA;
using hf_tokenizer_json::set_bert_like;
using hf_tokenizer_json::set_plain;

OrderedJson byte_level_json(const ByteLevelFlags& flags) {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", flags.add_prefix_space},
          {"trim_offsets", flags.trim_offsets},
          {"use_regex", flags.use_regex}};
}

OrderedJson token_with_id_json(const TokenWithId& t) {
  return OrderedJson::array({t.token, t.id});
}

OrderedJson template_json(const std::vector<TemplatePiece>& pieces) {
  OrderedJson list = OrderedJson::array();
  for (const TemplatePiece& piece : pieces) {
    if (piece.kind == TemplatePiece::Kind::kSpecial) {
      list.push_back({{"SpecialToken", {{"id", piece.name}, {"type_id", piece.type_id}}}});
    } else {
      list.push_back(
          {{"Sequence", {{"id", piece.kind == kA ? "A" : "B"}, {"type_id", piece.type_id}}}});
    }
  }
  return list;
}

OrderedJson post_processor_json(const PostProcessor& p) {
  switch (p.type) {
    case PostProcessorType::kNone:
      return nullptr;
    case PostProcessorType::kByteLevel:
      return byte_level_json(p.byte_level);
    case PostProcessorType::kBert:
    case PostProcessorType::kRoberta: {
      HEED_CHECK(
          p.single.size() == 3 && p.single[0].tokens.size() == 1 && p.single[2].tokens.size() == 1,
          "write_tokenizer_json: a BertProcessing or RobertaProcessing post-processor "
          "needs the template [cls] $A [sep]");
      OrderedJson j = {
          {"type", p.type == PostProcessorType::kBert ? "BertProcessing" : "RobertaProcessing"},
          {"sep", token_with_id_json(p.single[2].tokens[0])},
          {"cls", token_with_id_json(p.single[0].tokens[0])}};
      if (p.type == PostProcessorType::kRoberta) {
        j["trim_offsets"] = p.byte_level.trim_offsets;
        j["add_prefix_space"] = p.byte_level.add_prefix_space;
      }
      return j;
    }
    case PostProcessorType::kTemplate: {
      // special_tokens is sorted by name, as tokenizers writes it.
      std::map<std::string, const TemplatePiece*> specials;
      for (const auto* list : {&p.single, &p.pair})
        for (const TemplatePiece& piece : *list)
          if (piece.kind == TemplatePiece::Kind::kSpecial) specials.emplace(piece.name, &piece);
      OrderedJson map = OrderedJson::object();
      for (const auto& [name, piece] : specials) {
        OrderedJson ids = OrderedJson::array(), tokens = OrderedJson::array();
        for (const TokenWithId& t : piece->tokens) {
          ids.push_back(t.id);
          tokens.push_back(t.token);
        }
        map[name] = {{"id", name}, {"ids", ids}, {"tokens", tokens}};
      }
      return {{"type", "TemplateProcessing"},
              {"single", template_json(p.single)},
              {"pair", template_json(p.pair)},
              {"special_tokens", map}};
    }
  }
  return nullptr;
}

OrderedJson truncation_json(const std::optional<TokenizerJsonTruncation>& t) {
  if (!t) return nullptr;
  static constexpr const char* kStrategies[] = {"LongestFirst", "OnlyFirst", "OnlySecond"};
  return {{"direction", t->side == Truncation::kTail ? "Left" : "Right"},
          {"max_length", t->max_length},
          {"strategy", kStrategies[static_cast<int>(t->strategy)]},
          {"stride", t->stride}};
}

OrderedJson padding_json(const std::optional<TokenizerJsonPadding>& p) {
  if (!p) return nullptr;
  return {{"strategy", p->fixed_length ? OrderedJson{{"Fixed", *p->fixed_length}}
                                       : OrderedJson("BatchLongest")},
          {"direction", p->pad_left ? "Left" : "Right"},
          {"pad_to_multiple_of",
           p->pad_to_multiple_of ? OrderedJson(*p->pad_to_multiple_of) : OrderedJson(nullptr)},
          {"pad_id", p->pad.id},
          {"pad_type_id", p->pad_type_id},
          {"pad_token", p->pad.token}};
}

// The vocabulary in id order. Entries are appended to the object's storage directly: its
// emplace looks for the key first, which over 50,000 tokens is quadratic (tokens are unique).
OrderedJson vocab_json(const std::vector<std::string>& tokens) {
  OrderedJson vocab = OrderedJson::object();
  auto& entries = vocab.get_ref<OrderedJson::object_t&>();
  entries.reserve(tokens.size());
  for (size_t id = 0; id < tokens.size(); ++id)
    entries.emplace_back(tokens[id], static_cast<int64_t>(id));
  return vocab;
}

OrderedJson model_json(const TokenizerJson& t) {
  if (t.wordpiece) {
    const WordPieceOptions& o = t.wordpiece->options();
    return {{"type", "WordPiece"},
            {"unk_token", o.unk_token},
            {"continuing_subword_prefix", o.continuation_prefix},
            {"max_input_chars_per_word", o.max_input_chars_per_word},
            {"vocab", vocab_json(t.wordpiece->vocab().tokens())}};
  }
  std::vector<std::string> tokens;
  tokens.reserve(static_cast<size_t>(t.bpe->vocab_size()));
  for (int32_t id = 0; id < t.bpe->vocab_size(); ++id) tokens.push_back(t.bpe->token(id));
  OrderedJson merges = OrderedJson::array();
  for (const auto& [left, right] : t.bpe->merge_list()) merges.push_back({left, right});
  return {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"ignore_merges", false},
          {"vocab", vocab_json(tokens)},
          {"merges", std::move(merges)}};
}

OrderedJson tokenizer_json(const TokenizerJson& t) {
  OrderedJson added = OrderedJson::array();
  std::vector<const AddedToken*> sorted;
  for (const AddedToken& a : t.added_tokens) sorted.push_back(&a);
  std::ranges::sort(sorted, {}, &AddedToken::id);
  for (const AddedToken* a : sorted) {
    added.push_back({{"id", a->id},
                     {"content", a->content},
                     {"single_word", a->single_word},
                     {"lstrip", a->lstrip},
                     {"rstrip", a->rstrip},
                     {"normalized", a->normalized},
                     {"special", a->special}});
  }
  OrderedJson normalizer = nullptr, pre_tokenizer, decoder;
  if (t.wordpiece) {
    const WordPieceOptions& o = t.wordpiece->options();
    normalizer = {{"type", "BertNormalizer"},
                  {"clean_text", true},
                  {"handle_chinese_chars", o.tokenize_chinese_chars},
                  {"strip_accents", o.strip_accents ? OrderedJson(*o.strip_accents) : nullptr},
                  {"lowercase", o.lowercase}};
    pre_tokenizer = {{"type", "BertPreTokenizer"}};
    decoder = {{"type", "WordPiece"},
               {"prefix", o.continuation_prefix},
               {"cleanup", t.wordpiece_decoder_cleanup}};
  } else {
    pre_tokenizer = byte_level_json(
        {t.bpe->options().add_prefix_space, t.byte_level_trim_offsets, /*use_regex=*/true});
    decoder = byte_level_json(t.byte_level_decoder);
  }
  return {{"version", "1.0"},
          {"truncation", truncation_json(t.truncation)},
          {"padding", padding_json(t.padding)},
          {"added_tokens", std::move(added)},
          {"normalizer", std::move(normalizer)},
          {"pre_tokenizer", std::move(pre_tokenizer)},
          {"post_processor", post_processor_json(t.post_processor)},
          {"decoder", std::move(decoder)},
          {"model", model_json(t)}};
}

AddedToken special_added_token(const TokenWithId& t) {
  return {.id = t.id,
          .content = t.token,
          .single_word = false,
          .lstrip = false,
          .rstrip = false,
          .normalized = false,
          .special = true};
}

}  // namespace

void write_tokenizer_json(const std::string& path, const TokenizerJson& tokenizer) {
  HEED_CHECK(tokenizer.wordpiece.has_value() != tokenizer.bpe.has_value(),
             "{}: cannot write a tokenizer.json without exactly one model", path);
  std::string text;
  try {
    text = tokenizer_json(tokenizer).dump(2);
  } catch (const OrderedJson::exception& e) {
    // A vocabulary built in memory may hold a token that is not UTF-8, which JSON cannot.
    fail("{}: cannot write the tokenizer as JSON: {}", path, e.what());
  }
  io::write_file_atomically(path, text);
}

TokenizerJson bert_tokenizer_json(const WordPieceTokenizer& tokenizer) {
  TokenizerJson t;
  t.wordpiece = tokenizer;
  const WordPieceOptions& o = tokenizer.options();
  for (int32_t id : tokenizer.special_ids())
    t.added_tokens.push_back(special_added_token({tokenizer.vocab().token(id), id}));
  t.post_processor.type = PostProcessorType::kTemplate;
  set_bert_like(t.post_processor, {o.cls_token, tokenizer.cls_id()},
                {o.sep_token, tokenizer.sep_id()}, false);
  return t;
}

TokenizerJson byte_level_bpe_tokenizer_json(const ByteLevelBpe& bpe,
                                            const ByteLevelBpeJsonOptions& options) {
  TokenizerJson t;
  t.bpe = bpe;
  const auto entry = [&](const std::string& token) -> TokenWithId {
    const std::optional<int32_t> id = bpe.id(token);
    HEED_CHECK(id.has_value(), "tokenizer.json: the special token \"{}\" is not in the vocabulary",
               token);
    return {token, *id};
  };
  for (const std::string& token : options.special_tokens) {
    const TokenWithId t_id = entry(token);
    if (std::ranges::find(t.added_tokens, t_id.id, &AddedToken::id) == t.added_tokens.end())
      t.added_tokens.push_back(special_added_token(t_id));
  }
  std::ranges::sort(t.added_tokens, {}, &AddedToken::id);
  if (options.post_processing == BpePostProcessing::kGpt2) {
    // As GPT-2's own tokenizer.json.
    t.post_processor.type = PostProcessorType::kByteLevel;
    t.post_processor.byte_level = {.add_prefix_space = true, .trim_offsets = false};
    set_plain(t.post_processor);
  } else {
    t.post_processor.type = PostProcessorType::kRoberta;
    t.post_processor.byte_level = {.add_prefix_space = bpe.options().add_prefix_space,
                                   .trim_offsets = true};
    set_bert_like(t.post_processor, entry(options.cls_token), entry(options.sep_token), true);
    if (options.mask_token) {
      const int32_t mask = entry(*options.mask_token).id;
      for (AddedToken& added : t.added_tokens) added.lstrip = added.lstrip || added.id == mask;
    }
  }
  return t;
}

void write_tokenizer_json(const std::string& path, const WordPieceTokenizer& tokenizer) {
  write_tokenizer_json(path, bert_tokenizer_json(tokenizer));
}

void write_tokenizer_json(const std::string& path, const ByteLevelBpe& bpe,
                          const ByteLevelBpeJsonOptions& options) {
  write_tokenizer_json(path, byte_level_bpe_tokenizer_json(bpe, options));
}

}  // namespace heed::data
