#include "data/hf_tokenizer_json.h"

#include <unicode/uchar.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unordered_set>

#include "autograd/error.h"
#include "data/unicode.h"
#include "io/atomic_file.h"
#include "io/text_file.h"

namespace heed::data {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// Reading: a value of the file together with its JSON path, so every message names both.

// A value as a message shows it: short, since a damaged file can hold anything.
std::string shown(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 60) {
    size_t cut = 57;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  return text;
}

// ".key" when the key reads as a name, else ["key"] (special_tokens' "[CLS]").
std::string member_path(const std::string& parent, std::string_view key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (plain) return parent.empty() ? std::string(key) : parent + "." + std::string(key);
  return parent + "[" + Json(key).dump(-1, ' ', false, Json::error_handler_t::replace) + "]";
}

class Node {
 public:
  Node(const Json& value, const std::string& file, std::string path)
      : value_(&value), file_(&file), path_(std::move(path)) {}

  const Json& json() const { return *value_; }
  const std::string& file() const { return *file_; }
  std::string name() const { return path_.empty() ? "the file" : path_; }

  template <typename... Args>
  [[noreturn]] void fail_here(fmt::format_string<Args...> what, Args&&... args) const {
    fail("{}: {} {}", *file_, name(), fmt::format(what, std::forward<Args>(args)...));
  }
  void expect(bool ok, std::string_view wanted) const {
    if (!ok) fail_here("is {}; it must be {}", shown(*value_), wanted);
  }
  // A value heed does not read: `why` says what it reads instead.
  [[noreturn]] void unsupported(std::string_view why) const {
    fail_here("{} is not supported ({})", shown(*value_), why);
  }

  // A member of this object that must be there (null counts as there).
  Node at(std::string_view key) const {
    expect(value_->is_object(), "an object");
    const auto it = value_->find(key);
    if (it == value_->end()) fail("{}: {} is missing", *file_, member_path(path_, key));
    return Node(*it, *file_, member_path(path_, key));
  }
  // A member that may be absent or null.
  std::optional<Node> get(std::string_view key) const {
    expect(value_->is_object(), "an object");
    const auto it = value_->find(key);
    if (it == value_->end() || it->is_null()) return std::nullopt;
    return Node(*it, *file_, member_path(path_, key));
  }
  size_t size() const {
    expect(value_->is_array(), "a list");
    return value_->size();
  }
  Node operator[](size_t i) const {
    return Node((*value_)[i], *file_, fmt::format("{}[{}]", path_, i));
  }

  std::string string() const {
    expect(value_->is_string(), "a string");
    return value_->get<std::string>();
  }
  bool boolean() const {
    expect(value_->is_boolean(), "true or false");
    return value_->get<bool>();
  }
  // A whole number in [low, high] (3, and also 3.0, as some writers spell integers).
  int64_t integer(int64_t low, int64_t high) const {
    const Json& v = *value_;
    bool ok = false;
    int64_t n = 0;
    if (v.is_number_unsigned()) {
      ok = v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX);
      n = ok ? static_cast<int64_t>(v.get<uint64_t>()) : 0;
    } else if (v.is_number_integer()) {
      ok = true;
      n = v.get<int64_t>();
    } else if (v.is_number_float()) {
      const double d = v.get<double>();
      ok = std::isfinite(d) && d == std::floor(d) && d >= -0x1p63 && d < 0x1p63;
      n = ok ? static_cast<int64_t>(d) : 0;
    }
    if (!ok || n < low || n > high)
      fail_here("is {}; it must be a whole number from {} to {}", shown(v), low, high);
    return n;
  }
  int32_t id() const { return static_cast<int32_t>(integer(0, INT32_MAX)); }
  bool is_string(std::string_view s) const { return value_->is_string() && *value_ == s; }

 private:
  const Json* value_;
  const std::string* file_;
  std::string path_;
};

// Parses the file, refusing a key that appears twice in one object: JSON readers keep one of
// the two values (which one differs), and in model.vocab the other id would have no token.
Json parse_json(const std::string& path) {
  const std::string text = io::read_text_file(path);
  // Per depth: the keys of the object open there, and whether it is an object.
  std::vector<std::unordered_set<std::string>> keys;
  std::vector<std::string> names;
  std::vector<bool> is_object;
  const auto on_event = [&](int depth, Json::parse_event_t event, Json& j) {
    const auto d = static_cast<size_t>(depth);
    if (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) {
      keys.resize(d + 2);
      names.resize(d + 2);
      is_object.resize(d + 1);
      keys[d + 1].clear();
      is_object[d] = event == Json::parse_event_t::object_start;
    } else if (event == Json::parse_event_t::key) {
      const std::string key = j.get<std::string>();
      if (!keys[d].insert(key).second) {
        std::string where;
        for (size_t i = 1; i < d; ++i)
          where = is_object[i - 1] ? member_path(where, names[i]) : where + "[]";
        fail("{}: the key {} appears twice in {}", path, shown(key),
             where.empty() ? "the top-level object" : where);
      }
      names[d] = key;
    }
    return true;
  };
  try {
    return Json::parse(text, on_event);
  } catch (const Json::exception& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
}

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

TemplatePiece sequence_piece(TemplatePiece::Kind kind, int32_t type_id) {
  return {.kind = kind, .type_id = type_id, .name = {}, .tokens = {}};
}
TemplatePiece special_piece(const TokenWithId& token, int32_t type_id) {
  return {.kind = TemplatePiece::Kind::kSpecial,
          .type_id = type_id,
          .name = token.token,
          .tokens = {token}};
}

constexpr auto kA = TemplatePiece::Kind::kSequenceA;
constexpr auto kB = TemplatePiece::Kind::kSequenceB;

// [CLS] $A [SEP] and [CLS] $A [SEP] $B:1 [SEP]:1, as BertProcessing applies them; RoBERTa's
// <s> $A </s> and <s> $A </s> </s> $B </s>, all of type 0.
void set_bert_like(PostProcessor& p, const TokenWithId& cls, const TokenWithId& sep, bool roberta) {
  const int32_t b_type = roberta ? 0 : 1;
  p.single = {special_piece(cls, 0), sequence_piece(kA, 0), special_piece(sep, 0)};
  p.pair = {special_piece(cls, 0), sequence_piece(kA, 0), special_piece(sep, 0)};
  if (roberta) p.pair.push_back(special_piece(sep, 0));
  p.pair.push_back(sequence_piece(kB, b_type));
  p.pair.push_back(special_piece(sep, b_type));
}

void set_plain(PostProcessor& p) {
  p.single = {sequence_piece(kA, 0)};
  p.pair = {sequence_piece(kA, 0), sequence_piece(kB, 1)};
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

// ---------------------------------------------------------------------------------------------
// Encoding: added tokens first, then the model, then the template.

bool is_word_char(char32_t c) {
  // Rust regex's Unicode \w, which tokenizers' single_word test uses.
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_NON_SPACING_MARK:
    case U_ENCLOSING_MARK:
    case U_COMBINING_SPACING_MARK:
    case U_DECIMAL_DIGIT_NUMBER:
    case U_CONNECTOR_PUNCTUATION:
      return true;
    default:
      return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_ALPHABETIC) ||
             u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_JOIN_CONTROL);
  }
}

// In valid UTF-8: the offset of the code point after the one at `i`, of the one before `i`, and
// the code point at `i`.
size_t next_char(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  return i + (b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4);
}
size_t previous_char(std::string_view s, size_t i) {
  do --i;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80);
  return i;
}
char32_t char_at(std::string_view s, size_t i) {
  return decode_utf8(s.substr(i, next_char(s, i) - i), "text")[0];
}

// A piece of the text: text for the model (id < 0) or an added token.
struct Piece {
  std::string_view text;
  int32_t id = -1;
};

// Hugging Face's AddedVocabulary::find_matches over one piece: leftmost-longest matches, each
// kept only where its single_word allows, widened by its lstrip and rstrip; the search goes on
// after the match as found (a widened one may overlap what it took, as there).
void split_on(std::string_view text, const std::array<std::vector<const AddedToken*>, 256>& first,
              std::vector<Piece>& out) {
  size_t start_offset = 0, pos = 0;
  while (pos < text.size()) {
    const AddedToken* found = nullptr;
    size_t start = pos;
    for (; start < text.size() && !found; ++start) {
      for (const AddedToken* a : first[static_cast<unsigned char>(text[start])]) {
        if (text.substr(start).starts_with(a->content)) {
          found = a;  // the longest: each list runs longest first
          break;
        }
      }
    }
    if (!found) break;
    --start;
    size_t stop = start + found->content.size();
    pos = stop;
    if (found->single_word) {
      const bool word_before = start > 0 && is_word_char(char_at(text, previous_char(text, start)));
      const bool word_after = stop < text.size() && is_word_char(char_at(text, stop));
      if (word_before || word_after) continue;
    }
    if (found->lstrip) {
      size_t s = start;
      while (s > 0 && is_split_whitespace(char_at(text, previous_char(text, s))))
        s = previous_char(text, s);
      start = std::max(s, start_offset);
    }
    if (found->rstrip) {
      while (stop < text.size() && is_split_whitespace(char_at(text, stop)))
        stop = next_char(text, stop);
    }
    if (start_offset < start) out.push_back({text.substr(start_offset, start - start_offset)});
    out.push_back({text.substr(start, stop - start), found->id});
    start_offset = stop;
  }
  if (start_offset < text.size()) out.push_back({text.substr(start_offset)});
}

// The added tokens with this normalized flag by first byte, longest first.
std::array<std::vector<const AddedToken*>, 256> by_first_byte(const std::vector<AddedToken>& all,
                                                              bool normalized) {
  std::array<std::vector<const AddedToken*>, 256> first;
  for (const AddedToken& a : all) {
    if (a.normalized == normalized && !a.content.empty())
      first[static_cast<unsigned char>(a.content[0])].push_back(&a);
  }
  for (auto& list : first) {
    std::ranges::stable_sort(list, std::greater<>(),
                             [](const AddedToken* a) { return a->content.size(); });
  }
  return first;
}

std::vector<int32_t> model_ids(const TokenizerJson& t, std::string_view text) {
  if (size_t bad = find_invalid_utf8(text); bad != std::string_view::npos)
    fail("tokenizer.json encode: the text is not valid UTF-8 (byte {})", bad);
  // Non-normalized tokens are found in the text as written, then normalized ones in the pieces
  // between; with BertNormalizer there are none (refused), and BPE has no normalizer.
  std::vector<Piece> raw, pieces;
  split_on(text, by_first_byte(t.added_tokens, false), raw);
  const auto normalized = by_first_byte(t.added_tokens, true);
  for (const Piece& piece : raw) {
    if (piece.id >= 0) {
      pieces.push_back(piece);
    } else {
      split_on(piece.text, normalized, pieces);
    }
  }
  std::vector<int32_t> ids;
  for (const Piece& piece : pieces) {
    if (piece.id >= 0) {
      ids.push_back(piece.id);
    } else if (t.wordpiece) {
      const std::vector<int32_t> part = t.wordpiece->encode_ids(piece.text);
      ids.insert(ids.end(), part.begin(), part.end());
    } else {
      // tokenizers' ByteLevel puts a space before each piece that does not start with ' ';
      // the BPE, given one, adds none of its own.
      std::string spaced;
      if (t.bpe->options().add_prefix_space && !piece.text.starts_with(' '))
        spaced.append(1, ' ').append(piece.text);
      const std::vector<int32_t> part = t.bpe->encode(spaced.empty() ? piece.text : spaced);
      ids.insert(ids.end(), part.begin(), part.end());
    }
  }
  return ids;
}

Encoding apply_template(const std::vector<TemplatePiece>& pieces, const std::vector<int32_t>& a,
                        const std::vector<int32_t>* b, bool add_special_tokens) {
  Encoding e;
  const auto add = [&](int32_t id, int32_t type_id, int32_t special) {
    e.input_ids.push_back(id);
    e.token_type_ids.push_back(type_id);
    e.special_tokens_mask.push_back(special);
  };
  for (const TemplatePiece& piece : pieces) {
    if (piece.kind == TemplatePiece::Kind::kSpecial) {
      if (add_special_tokens)
        for (const TokenWithId& t : piece.tokens) add(t.id, piece.type_id, 1);
    } else {
      HEED_CHECK(piece.kind == kA || b != nullptr,
                 "tokenizer.json encode: the single-sequence template names $B");
      for (int32_t id : piece.kind == kA ? a : *b) add(id, piece.type_id, 0);
    }
  }
  return e;
}

// ---------------------------------------------------------------------------------------------
// Writing, key for key in the order tokenizers serializes.

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

int32_t TokenizerJson::vocab_size() const {
  HEED_CHECK(wordpiece.has_value() != bpe.has_value(),
             "tokenizer.json: exactly one model (WordPiece or byte-level BPE) must be set");
  return wordpiece ? wordpiece->vocab_size() : bpe->vocab_size();
}

Encoding TokenizerJson::encode(std::string_view text, bool add_special_tokens) const {
  vocab_size();  // checks that there is one model
  return apply_template(post_processor.single, model_ids(*this, text), nullptr, add_special_tokens);
}

Encoding TokenizerJson::encode_pair(std::string_view a, std::string_view b,
                                    bool add_special_tokens) const {
  vocab_size();
  const std::vector<int32_t> b_ids = model_ids(*this, b);
  return apply_template(post_processor.pair, model_ids(*this, a), &b_ids, add_special_tokens);
}

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
