#include "data/bpe_tokenizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "data/fingerprint.h"
#include "io/json_file.h"

namespace heed::data {
namespace {

namespace fs = std::filesystem;

constexpr const char* kEndOfText = "<|endoftext|>";

// The roles in the order transformers lists them, with their tokenizer_config.json keys.
struct Role {
  const char* key;
  std::optional<std::string> BpeSpecialTokens::*field;
};
constexpr Role kRoles[] = {
    {"bos_token", &BpeSpecialTokens::bos},   {"eos_token", &BpeSpecialTokens::eos},
    {"unk_token", &BpeSpecialTokens::unk},   {"sep_token", &BpeSpecialTokens::sep},
    {"pad_token", &BpeSpecialTokens::pad},   {"cls_token", &BpeSpecialTokens::cls},
    {"mask_token", &BpeSpecialTokens::mask},
};

BpeSpecialTokens roberta_specials() {
  return {.bos = "<s>",
          .eos = "</s>",
          .unk = "<unk>",
          .pad = "<pad>",
          .mask = "<mask>",
          .cls = "<s>",
          .sep = "</s>"};
}

// A special token as transformers writes it: a string, or an AddedToken object.
std::optional<std::string> token_text(const nlohmann::json& value, const std::string& path,
                                      const char* key) {
  if (value.is_null()) return std::nullopt;
  if (value.is_string()) return value.get<std::string>();
  HEED_CHECK(value.is_object() && value.contains("content") && value["content"].is_string(),
             "{}: {} is {}; it must be a string or an object with a string \"content\"", path, key,
             value.dump());
  return value["content"].get<std::string>();
}

// Overrides `specials` with the roles `file` names (a missing file changes nothing).
void read_roles(const fs::path& file, BpeSpecialTokens& specials) {
  if (!fs::exists(file)) return;
  const nlohmann::json j = io::read_json_file(file.string());
  HEED_CHECK(j.is_object(), "{}: expected a JSON object, not {}", file.string(), j.type_name());
  for (const Role& role : kRoles) {
    if (auto it = j.find(role.key); it != j.end())
      specials.*role.field = token_text(*it, file.string(), role.key);
  }
}

}  // namespace

BpeTokenizer::BpeTokenizer(ByteLevelBpe bpe, BpeSpecialTokens specials, BpeTemplate layout)
    : bpe_(std::move(bpe)), specials_(std::move(specials)), layout_(layout) {
  auto id_of = [&](const std::optional<std::string>& token,
                   const char* role) -> std::optional<int32_t> {
    if (!token) return std::nullopt;
    const std::optional<int32_t> id = bpe_.id(*token);
    HEED_CHECK(id.has_value(), "the {} \"{}\" is not in the vocabulary", role, *token);
    special_ids_.push_back(*id);
    return id;
  };
  bos_ = id_of(specials_.bos, "bos_token");
  eos_ = id_of(specials_.eos, "eos_token");
  id_of(specials_.unk, "unk_token");
  pad_ = id_of(specials_.pad, "pad_token");
  mask_ = id_of(specials_.mask, "mask_token");
  cls_ = id_of(specials_.cls, "cls_token");
  sep_ = id_of(specials_.sep, "sep_token");
  if (layout_ == BpeTemplate::kRoberta) {
    HEED_CHECK(cls_ && sep_, "a RoBERTa-style tokenizer needs a cls_token and a sep_token");
  }
  std::ranges::sort(special_ids_);
  special_ids_.erase(std::unique(special_ids_.begin(), special_ids_.end()), special_ids_.end());
}

BpeTokenizer BpeTokenizer::gpt2(ByteLevelBpe bpe) {
  return BpeTokenizer(std::move(bpe), {.bos = kEndOfText, .eos = kEndOfText, .unk = kEndOfText},
                      BpeTemplate::kGpt2);
}

BpeTokenizer BpeTokenizer::load(const std::string& dir) {
  const fs::path base(dir);
  const fs::path config_path = base / "tokenizer_config.json";
  std::string cls = "GPT2Tokenizer";
  bool add_prefix_space = false;
  nlohmann::json config = nlohmann::json::object();
  if (fs::exists(config_path)) {
    config = io::read_json_file(config_path.string());
    HEED_CHECK(config.is_object(), "{}: expected a JSON object, not {}", config_path.string(),
               config.type_name());
    if (auto it = config.find("tokenizer_class"); it != config.end() && !it->is_null()) {
      HEED_CHECK(it->is_string(), "{}: tokenizer_class is {}; it must be a string",
                 config_path.string(), it->dump());
      cls = it->get<std::string>();
    }
    if (auto it = config.find("add_prefix_space"); it != config.end() && !it->is_null()) {
      HEED_CHECK(it->is_boolean(), "{}: add_prefix_space is {}; it must be true or false",
                 config_path.string(), it->dump());
      add_prefix_space = it->get<bool>();
    }
  }
  // The fast classes read the same files.
  if (cls.ends_with("Fast")) cls.resize(cls.size() - 4);
  const bool roberta = cls == "RobertaTokenizer" || cls == "BartTokenizer";
  HEED_CHECK(roberta || cls == "GPT2Tokenizer",
             "{}: tokenizer_class is {}; a byte-level BPE directory is GPT2Tokenizer, "
             "RobertaTokenizer or BartTokenizer",
             config_path.string(), cls);
  BpeSpecialTokens specials =
      roberta ? roberta_specials()
              : BpeSpecialTokens{.bos = kEndOfText, .eos = kEndOfText, .unk = kEndOfText};
  read_roles(config_path, specials);
  read_roles(base / "special_tokens_map.json", specials);
  ByteLevelBpe bpe =
      ByteLevelBpe::load((base / "vocab.json").string(), (base / "merges.txt").string(),
                         {.add_prefix_space = add_prefix_space});
  try {
    return BpeTokenizer(std::move(bpe), std::move(specials),
                        roberta ? BpeTemplate::kRoberta : BpeTemplate::kGpt2);
  } catch (const Error& e) {
    fail("{}: {}", dir, e.what());
  }
}

BpeTokenizer BpeTokenizer::from_tokenizer_json(const TokenizerJson& json) {
  HEED_CHECK(json.bpe.has_value(), "tokenizer.json: not a byte-level BPE");
  const std::vector<TemplatePiece>& single = json.post_processor.single;
  const auto special_at = [&](size_t i) -> std::optional<std::string> {
    if (i >= single.size() || single[i].kind != TemplatePiece::Kind::kSpecial ||
        single[i].tokens.empty())
      return std::nullopt;
    return single[i].tokens.front().token;
  };
  if (single.size() == 3) {  // <s> $A </s>
    BpeSpecialTokens specials{.cls = special_at(0), .sep = special_at(2)};
    specials.bos = specials.cls;
    specials.eos = specials.sep;
    for (const AddedToken& added : json.added_tokens) {
      if (added.content == "<unk>") specials.unk = added.content;
      if (added.content == "<pad>") specials.pad = added.content;
      if (added.content == "<mask>") specials.mask = added.content;
    }
    return BpeTokenizer(*json.bpe, std::move(specials), BpeTemplate::kRoberta);
  }
  HEED_CHECK(single.size() == 1,
             "tokenizer.json: heed reads a byte-level BPE whose post-processor adds nothing "
             "(GPT-2) or one token on each side (RoBERTa), not {} pieces",
             single.size());
  BpeSpecialTokens specials;
  if (json.bpe->id(kEndOfText))
    specials = {.bos = kEndOfText, .eos = kEndOfText, .unk = kEndOfText};
  return BpeTokenizer(*json.bpe, std::move(specials), BpeTemplate::kGpt2);
}

void BpeTokenizer::save(const std::string& dir, int64_t model_max_length,
                        Truncation truncation) const {
  fs::create_directories(dir);
  const fs::path base(dir);
  bpe_.save(dir);
  ByteLevelBpeJsonOptions json{.post_processing = layout_ == BpeTemplate::kRoberta
                                                      ? BpePostProcessing::kRoberta
                                                      : BpePostProcessing::kGpt2};
  for (int32_t id : special_ids_) json.special_tokens.push_back(bpe_.token(id));
  if (cls_) json.cls_token = *specials_.cls;
  if (sep_) json.sep_token = *specials_.sep;
  if (mask_) json.mask_token = specials_.mask;
  write_tokenizer_json((base / "tokenizer.json").string(), bpe_, json);
  nlohmann::json roles = nlohmann::json::object();
  for (const Role& role : kRoles) {
    if (const auto& token = specials_.*role.field) roles[role.key] = *token;
  }
  nlohmann::json config = {{"tokenizer_class", std::string(class_name())},
                           {"add_prefix_space", bpe_.options().add_prefix_space},
                           {"model_max_length", model_max_length},
                           {"truncation_side", std::string(hf_truncation_side(truncation))},
                           {"heed_truncation", std::string(truncation_name(truncation))},
                           {"errors", "replace"}};
  config.update(roles);
  io::write_json_file((base / "tokenizer_config.json").string(), config);
  io::write_json_file((base / "special_tokens_map.json").string(), roles);
}

std::string_view BpeTokenizer::class_name() const {
  return layout_ == BpeTemplate::kRoberta ? "RobertaTokenizer" : "GPT2Tokenizer";
}

std::vector<int32_t> BpeTokenizer::encode_with_specials(std::string_view text) const {
  std::vector<int32_t> ids = bpe_.encode(text);
  if (layout_ == BpeTemplate::kRoberta) {
    ids.insert(ids.begin(), *cls_);
    ids.push_back(*sep_);
  }
  return ids;
}

Encoding BpeTokenizer::build_inputs(std::vector<int32_t> a, std::optional<std::vector<int32_t>> b,
                                    size_t max_length, Truncation side) const {
  HEED_CHECK(layout_ == BpeTemplate::kRoberta,
             "a GPT-2 byte-level BPE has no template for an encoder's inputs (<s> text </s>)");
  const size_t n_special = b ? 4 : 2;
  if (max_length > 0) {
    HEED_CHECK(max_length >= n_special,
               "max_length {} leaves no room for the {} special tokens of a {}", max_length,
               n_special, b ? "pair" : "single sequence");
    truncate_longest_first(a, b ? &*b : nullptr, max_length - n_special, side);
  }
  Encoding e;
  e.input_ids.push_back(*cls_);
  e.input_ids.insert(e.input_ids.end(), a.begin(), a.end());
  e.input_ids.push_back(*sep_);
  if (b) {
    e.input_ids.push_back(*sep_);
    e.input_ids.insert(e.input_ids.end(), b->begin(), b->end());
    e.input_ids.push_back(*sep_);
  }
  e.token_type_ids.assign(e.input_ids.size(), 0);
  e.special_tokens_mask.assign(e.input_ids.size(), 0);
  for (size_t i = 0; i < e.input_ids.size(); ++i) {
    e.special_tokens_mask[i] =
        i == 0 || i == a.size() + 1 ||
        (b && i >= a.size() + 2 && (i == a.size() + 2 || i + 1 == e.input_ids.size()));
  }
  return e;
}

std::string BpeTokenizer::decode(std::span<const int32_t> ids) const {
  std::vector<int32_t> kept;
  kept.reserve(ids.size());
  for (int32_t id : ids)
    if (!is_special(id)) kept.push_back(id);
  return bpe_.decode(kept);
}

bool BpeTokenizer::is_special(int32_t id) const {
  return std::ranges::binary_search(special_ids_, id);
}

uint64_t BpeTokenizer::fingerprint() const {
  Fnv1a64 h;
  h.update("byte-level-bpe");
  h.update_u64(bpe_.fingerprint());
  h.update_u64(bpe_.options().add_prefix_space);
  h.update_u64(static_cast<uint64_t>(layout_));
  return h.value();
}

}  // namespace heed::data
