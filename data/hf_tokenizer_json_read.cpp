// Reading tokenizer.json: the model with its normalizer, pre-tokenizer and decoder, the added
// tokens, the post-processor, truncation and padding, each checked against what heed encodes.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "data/byte_level_bpe.h"
#include "data/hf_tokenizer_json.h"
#include "data/hf_tokenizer_json_node.h"
#include "data/hf_tokenizer_json_template.h"
#include "data/vocab.h"
#include "data/wordpiece.h"

namespace heed::data {
namespace {

using hf_tokenizer_json::Json;
using hf_tokenizer_json::kA;
using hf_tokenizer_json::kB;
using hf_tokenizer_json::Node;
using hf_tokenizer_json::parse_json;
using hf_tokenizer_json::sequence_piece;
using hf_tokenizer_json::set_bert_like;
using hf_tokenizer_json::set_plain;
using hf_tokenizer_json::shown;

// model.vocab: an object of token -> id whose ids are 0..N-1, each once.
std::vector<std::string> read_vocab(const Node& vocab) {
  vocab.expect(vocab.json().is_object() && !vocab.json().empty(), "a non-empty object of ids");
  const int64_t size = static_cast<int64_t>(vocab.json().size());
  std::vector<std::string> tokens(static_cast<size_t>(size));
  std::vector<bool> taken(tokens.size(), false);
  for (const auto& [token, value] : vocab.json().items()) {
    // Ids index the embedding matrix: a gap would be a row that no token owns.
    const int64_t id = vocab.at(token).integer(0, size - 1);
    if (taken[id]) {
      vocab.fail_here("gives id {} to both {} and {}", id, shown(tokens[id]), shown(token));
    }
    taken[id] = true;
    tokens[id] = token;
  }
  return tokens;
}

// The vocabulary as the checks of added tokens and post-processors see it.
struct VocabView {
  const TokenizerJson& t;
  std::optional<int32_t> find(std::string_view token) const {
    return t.wordpiece ? t.wordpiece->vocab().find(token) : t.bpe->id(token);
  }
  const std::string& token(int32_t id) const {
    return t.wordpiece ? t.wordpiece->vocab().token(id) : t.bpe->token(id);
  }
};

// `token` must be the vocabulary entry of `id`: heed's embedding rows are the vocabulary's.
void check_entry(const Node& where, const VocabView& vocab, const std::string& token, int32_t id) {
  const int32_t size = vocab.t.vocab_size();
  if (id >= size) {
    where.fail_here("gives {} id {}, which model.vocab lacks (its ids run to {})", shown(token), id,
                    size - 1);
  }
  if (vocab.token(id) != token) {
    where.fail_here("gives {} id {}, which model.vocab gives to {}", shown(token), id,
                    shown(vocab.token(id)));
  }
}

// ---------------------------------------------------------------------------------------------
// The models, with the normalizer, pre-tokenizer and decoder each allows.

WordPieceTokenizer read_wordpiece(const Node& root, const Node& model, TokenizerJson& t) {
  WordPieceOptions o;
  o.unk_token = model.at("unk_token").string();
  o.continuation_prefix = model.at("continuing_subword_prefix").string();
  o.max_input_chars_per_word =
      static_cast<int>(model.at("max_input_chars_per_word").integer(1, INT32_MAX));
  Vocab vocab(read_vocab(model.at("vocab")));
  if (!vocab.contains(o.unk_token)) model.at("unk_token").fail_here("is not in model.vocab");

  const std::optional<Node> normalizer = root.get("normalizer");
  if (!normalizer) root.at("normalizer").unsupported("heed's WordPiece reads BertNormalizer");
  if (!normalizer->at("type").is_string("BertNormalizer"))
    normalizer->at("type").unsupported("heed's WordPiece reads BertNormalizer");
  if (!normalizer->at("clean_text").boolean())
    normalizer->at("clean_text").unsupported("heed's WordPiece always cleans text, as BERT does");
  o.tokenize_chinese_chars = normalizer->at("handle_chinese_chars").boolean();
  o.lowercase = normalizer->at("lowercase").boolean();
  if (const std::optional<Node> strip = normalizer->get("strip_accents"))
    o.strip_accents = strip->boolean();

  const std::optional<Node> pre = root.get("pre_tokenizer");
  if (!pre || !pre->at("type").is_string("BertPreTokenizer")) {
    (pre ? pre->at("type") : root.at("pre_tokenizer"))
        .unsupported("heed's WordPiece reads BertPreTokenizer");
  }
  const std::optional<Node> decoder = root.get("decoder");
  if (!decoder || !decoder->at("type").is_string("WordPiece"))
    (decoder ? decoder->at("type") : root.at("decoder")).unsupported("heed reads WordPiece");
  if (decoder->at("prefix").string() != o.continuation_prefix)
    decoder->at("prefix").unsupported("heed decodes with model.continuing_subword_prefix");
  t.wordpiece_decoder_cleanup = decoder->at("cleanup").boolean();
  return WordPieceTokenizer(std::move(vocab), std::move(o));
}

ByteLevelFlags read_byte_level_flags(const Node& node) {
  ByteLevelFlags flags;
  flags.add_prefix_space = node.at("add_prefix_space").boolean();
  flags.trim_offsets = node.at("trim_offsets").boolean();
  // Files written before tokenizers 0.12 have no use_regex; it was always on.
  if (const std::optional<Node> use_regex = node.get("use_regex"))
    flags.use_regex = use_regex->boolean();
  return flags;
}

// model.merges: "a b" strings (tokenizers before 0.20) or ["a", "b"] pairs.
std::vector<std::pair<std::string, std::string>> read_merges(const Node& merges) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const Node merge = merges[i];
    if (merge.json().is_string()) {
      const std::string line = merge.string();
      const size_t space = line.find(' ');
      merge.expect(space != std::string::npos && space > 0 && space + 1 < line.size() &&
                       line.find(' ', space + 1) == std::string::npos,
                   "two pieces separated by one space");
      out.emplace_back(line.substr(0, space), line.substr(space + 1));
    } else {
      merge.expect(merge.json().is_array() && merge.json().size() == 2,
                   "a pair of pieces or \"a b\"");
      out.emplace_back(merge[0].string(), merge[1].string());
    }
  }
  return out;
}

ByteLevelBpe read_bpe(const Node& root, const Node& model, TokenizerJson& t) {
  // Each of these would change ids, and heed's byte-level BPE has none of them.
  const auto must_be_null = [&](const char* key, bool empty_string_too) {
    const std::optional<Node> value = model.get(key);
    if (value && !(empty_string_too && value->is_string(""))) {
      value->unsupported(empty_string_too ? "heed's byte-level BPE reads null or \"\""
                                          : "heed's byte-level BPE reads null");
    }
  };
  must_be_null("dropout", false);
  must_be_null("unk_token", false);
  must_be_null("continuing_subword_prefix", true);
  must_be_null("end_of_word_suffix", true);
  for (const char* key : {"fuse_unk", "byte_fallback", "ignore_merges"}) {
    if (const std::optional<Node> value = model.get(key); value && value->boolean())
      value->unsupported("heed's byte-level BPE reads false");
  }
  if (const std::optional<Node> normalizer = root.get("normalizer"))
    normalizer->at("type").unsupported("heed's byte-level BPE reads null");

  const std::optional<Node> pre = root.get("pre_tokenizer");
  if (!pre || !pre->at("type").is_string("ByteLevel")) {
    (pre ? pre->at("type") : root.at("pre_tokenizer"))
        .unsupported("heed's byte-level BPE reads ByteLevel");
  }
  const ByteLevelFlags pre_flags = read_byte_level_flags(*pre);
  if (!pre_flags.use_regex)
    pre->at("use_regex").unsupported("heed's byte-level BPE always splits by GPT-2's pattern");
  t.byte_level_trim_offsets = pre_flags.trim_offsets;

  const std::optional<Node> decoder = root.get("decoder");
  if (!decoder || !decoder->at("type").is_string("ByteLevel"))
    (decoder ? decoder->at("type") : root.at("decoder")).unsupported("heed reads ByteLevel");
  t.byte_level_decoder = read_byte_level_flags(*decoder);

  ByteLevelBpeOptions options;
  options.add_prefix_space = pre_flags.add_prefix_space;
  return ByteLevelBpe::from_parts(read_vocab(model.at("vocab")), read_merges(model.at("merges")),
                                  options, model.file());
}

// ---------------------------------------------------------------------------------------------
// Added tokens, the post-processor, truncation and padding.

std::vector<AddedToken> read_added_tokens(const Node& root, const VocabView& vocab) {
  std::vector<AddedToken> tokens;
  const std::optional<Node> list = root.get("added_tokens");
  if (!list) return tokens;
  std::unordered_set<int32_t> ids;
  std::unordered_set<std::string> contents;
  for (size_t i = 0; i < list->size(); ++i) {
    const Node entry = (*list)[i];
    AddedToken a;
    a.id = entry.at("id").id();
    a.content = entry.at("content").string();
    a.single_word = entry.at("single_word").boolean();
    a.lstrip = entry.at("lstrip").boolean();
    a.rstrip = entry.at("rstrip").boolean();
    a.normalized = entry.at("normalized").boolean();
    a.special = entry.at("special").boolean();
    if (a.content.empty()) entry.at("content").fail_here("is empty");
    check_entry(entry, vocab, a.content, a.id);
    // A second entry would be a second rule for the same text or id.
    if (!ids.insert(a.id).second) entry.at("id").fail_here("is {}, listed before", a.id);
    if (!contents.insert(a.content).second)
      entry.at("content").fail_here("is {}, listed before", shown(a.content));
    if (vocab.t.wordpiece && a.normalized) {
      entry.at("normalized")
          .unsupported(
              "heed's WordPiece matches added tokens in the text as written; normalized false");
    }
    tokens.push_back(std::move(a));
  }
  std::ranges::sort(tokens, {}, &AddedToken::id);
  return tokens;
}

// BertProcessing's and RobertaProcessing's ["[SEP]", 102].
TokenWithId read_token_with_id(const Node& node, const VocabView& vocab) {
  node.expect(node.json().is_array() && node.json().size() == 2, "a pair [token, id]");
  TokenWithId t{node[0].string(), node[1].id()};
  check_entry(node, vocab, t.token, t.id);
  return t;
}

std::vector<TemplatePiece> read_template(
    const Node& list, const std::map<std::string, std::vector<TokenWithId>>& specials, bool pair) {
  std::vector<TemplatePiece> pieces;
  int a_count = 0, b_count = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const Node entry = list[i];
    entry.expect(entry.json().is_object() && entry.json().size() == 1,
                 "{\"Sequence\": ...} or {\"SpecialToken\": ...}");
    if (const std::optional<Node> seq = entry.get("Sequence")) {
      const Node id = seq->at("id");
      if (!id.is_string("A") && !id.is_string("B")) id.expect(false, "\"A\" or \"B\"");
      const bool is_a = id.is_string("A");
      (is_a ? a_count : b_count) += 1;
      pieces.push_back(sequence_piece(is_a ? kA : kB, seq->at("type_id").id()));
    } else {
      const Node special = entry.at("SpecialToken");
      const std::string name = special.at("id").string();
      const auto it = specials.find(name);
      if (it == specials.end())
        special.at("id").fail_here("names {}, which special_tokens lacks", shown(name));
      pieces.push_back({.kind = TemplatePiece::Kind::kSpecial,
                        .type_id = special.at("type_id").id(),
                        .name = name,
                        .tokens = it->second});
    }
  }
  // Hugging Face fails (or panics) at encode time on the other shapes.
  if (a_count != 1 || b_count != (pair ? 1 : 0))
    list.fail_here("must hold $A once{}", pair ? " and $B once" : " and no $B");
  return pieces;
}

PostProcessor read_post_processor(const Node& root, const VocabView& vocab) {
  PostProcessor p;
  const std::optional<Node> node = root.get("post_processor");
  if (!node) {
    set_plain(p);
    return p;
  }
  const Node type = node->at("type");
  if (type.is_string("ByteLevel")) {
    p.type = PostProcessorType::kByteLevel;
    p.byte_level = read_byte_level_flags(*node);
    set_plain(p);
  } else if (type.is_string("BertProcessing") || type.is_string("RobertaProcessing")) {
    const bool roberta = type.is_string("RobertaProcessing");
    p.type = roberta ? PostProcessorType::kRoberta : PostProcessorType::kBert;
    const TokenWithId sep = read_token_with_id(node->at("sep"), vocab);
    const TokenWithId cls = read_token_with_id(node->at("cls"), vocab);
    if (roberta) {
      p.byte_level.trim_offsets = node->at("trim_offsets").boolean();
      p.byte_level.add_prefix_space = node->at("add_prefix_space").boolean();
    }
    set_bert_like(p, cls, sep, roberta);
  } else if (type.is_string("TemplateProcessing")) {
    p.type = PostProcessorType::kTemplate;
    std::map<std::string, std::vector<TokenWithId>> specials;
    const Node map = node->at("special_tokens");
    map.expect(map.json().is_object(), "an object");
    for (const auto& [name, value] : map.json().items()) {
      const Node entry = map.at(name);
      const Node ids = entry.at("ids"), tokens = entry.at("tokens");
      if (ids.size() != tokens.size())
        entry.fail_here("has {} ids but {} tokens", ids.size(), tokens.size());
      std::vector<TokenWithId>& list = specials[name];
      for (size_t i = 0; i < ids.size(); ++i) {
        list.push_back({tokens[i].string(), ids[i].id()});
        check_entry(ids[i], vocab, list.back().token, list.back().id);
      }
    }
    p.single = read_template(node->at("single"), specials, false);
    p.pair = read_template(node->at("pair"), specials, true);
  } else {
    type.unsupported(
        "heed reads TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, or null");
  }
  return p;
}

// Left and Right, with Right the default, as Hugging Face spells directions.
bool read_left(const Node& parent) {
  const std::optional<Node> direction = parent.get("direction");
  if (!direction || direction->is_string("Right")) return false;
  if (!direction->is_string("Left")) direction->expect(false, "\"Left\" or \"Right\"");
  return true;
}

std::optional<TokenizerJsonTruncation> read_truncation(const Node& root) {
  const std::optional<Node> node = root.get("truncation");
  if (!node) return std::nullopt;
  TokenizerJsonTruncation t;
  t.side = read_left(*node) ? Truncation::kTail : Truncation::kHead;
  t.max_length = node->at("max_length").integer(0, INT64_MAX);
  const Node strategy = node->at("strategy");
  if (strategy.is_string("LongestFirst")) {
    t.strategy = TokenizerJsonTruncation::Strategy::kLongestFirst;
  } else if (strategy.is_string("OnlyFirst")) {
    t.strategy = TokenizerJsonTruncation::Strategy::kOnlyFirst;
  } else if (strategy.is_string("OnlySecond")) {
    t.strategy = TokenizerJsonTruncation::Strategy::kOnlySecond;
  } else {
    strategy.expect(false, "\"LongestFirst\", \"OnlyFirst\" or \"OnlySecond\"");
  }
  t.stride = node->at("stride").integer(0, INT64_MAX);
  return t;
}

std::optional<TokenizerJsonPadding> read_padding(const Node& root, const VocabView& vocab) {
  const std::optional<Node> node = root.get("padding");
  if (!node) return std::nullopt;
  TokenizerJsonPadding p;
  const Node strategy = node->at("strategy");
  if (!strategy.is_string("BatchLongest")) {
    strategy.expect(strategy.json().is_object() && strategy.json().size() == 1,
                    "\"BatchLongest\" or {\"Fixed\": n}");
    p.fixed_length = strategy.at("Fixed").integer(0, INT64_MAX);
  }
  p.pad_left = read_left(*node);
  if (const std::optional<Node> multiple = node->get("pad_to_multiple_of"))
    p.pad_to_multiple_of = multiple->integer(0, INT64_MAX);
  p.pad = {node->at("pad_token").string(), node->at("pad_id").id()};
  check_entry(*node, vocab, p.pad.token, p.pad.id);
  p.pad_type_id = node->at("pad_type_id").id();
  return p;
}

// heed's WordPiece puts [CLS] ... [SEP] around its ids whatever the file says, so the file
// must say that: its cls and sep.
std::pair<std::string, std::string> bert_cls_sep(const Node& root, const PostProcessor& p) {
  const auto one_token = [](const TemplatePiece& piece) {
    return piece.kind == TemplatePiece::Kind::kSpecial && piece.tokens.size() == 1 &&
           piece.type_id == 0;
  };
  if (p.single.size() == 3 && one_token(p.single[0]) && one_token(p.single[2])) {
    PostProcessor bert;
    set_bert_like(bert, p.single[0].tokens[0], p.single[2].tokens[0], false);
    const auto same = [](const TemplatePiece& a, const TemplatePiece& b) {
      return a.kind == b.kind && a.type_id == b.type_id && a.tokens == b.tokens;
    };
    if (std::ranges::equal(p.single, bert.single, same) &&
        std::ranges::equal(p.pair, bert.pair, same)) {
      return {p.single[0].tokens[0].token, p.single[2].tokens[0].token};
    }
  }
  const std::optional<Node> node = root.get("post_processor");
  (node ? *node : root.at("post_processor"))
      .unsupported(
          "heed's WordPiece adds [CLS] $A [SEP] and [CLS] $A [SEP] $B:1 [SEP]:1, as BERT does");
}

}  // namespace

TokenizerJson read_tokenizer_json(const std::string& path) {
  const Json json = parse_json(path);
  const Node root(json, path, "");
  root.expect(json.is_object(), "a JSON object");
  // As tokenizers, a file without a version is read as "1.0".
  if (const std::optional<Node> version = root.get("version");
      version && !version->is_string("1.0"))
    version->unsupported("heed reads version \"1.0\"");

  TokenizerJson t;
  const Node model = root.at("model");
  const Node type = model.at("type");
  if (type.is_string("WordPiece")) {
    t.wordpiece.emplace(read_wordpiece(root, model, t));
  } else if (type.is_string("BPE")) {
    t.bpe.emplace(read_bpe(root, model, t));
  } else {
    type.unsupported("heed reads WordPiece or BPE");
  }
  const VocabView vocab{t};
  t.added_tokens = read_added_tokens(root, vocab);
  t.post_processor = read_post_processor(root, vocab);
  t.truncation = read_truncation(root);
  t.padding = read_padding(root, vocab);
  if (t.wordpiece) {
    WordPieceOptions o = t.wordpiece->options();
    std::tie(o.cls_token, o.sep_token) = bert_cls_sep(root, t.post_processor);
    if (t.padding) o.pad_token = t.padding->pad.token;
    WordPieceTokenizer named(t.wordpiece->vocab(), std::move(o));
    t.wordpiece.emplace(std::move(named));
  }
  return t;
}

}  // namespace heed::data
