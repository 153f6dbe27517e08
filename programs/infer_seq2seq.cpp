// infer translate (alias seq2seq): the encoder-decoder checkpoints (BART's layout and T5).
#include <nlohmann/json.hpp>

#include <algorithm>

#include "base/error.h"
#include "decode/generation.h"
#include "nn/models/seq2seq_model.h"
#include "programs/infer_commands.h"
#include "programs/infer_common.h"

namespace heed::infer {

void run_translate(const TranslateArgs& args, std::ostream& out) {
  HEED_CHECK(args.num_beams >= 1, "--num-beams: must be at least 1, got {}", args.num_beams);
  const std::vector<std::string> texts = input_texts(args.text, "text");
  HEED_CHECK(!args.do_sample || args.num_beams == 1,
             "--do-sample: samples one output; with --num-beams {} it would be beam sampling, "
             "which infer does not do",
             args.num_beams);
  const bool sampling_options = args.temperature != 1.0 || args.top_k != 0 || args.top_p != 1.0;
  HEED_CHECK(args.do_sample || !sampling_options,
             "--temperature, --top-k and --top-p shape sampling: add --do-sample");
  Checkpoint c = load_checkpoint(args, "translate",
                                 {"BartForConditionalGeneration", "T5ForConditionalGeneration"});
  check_top_k(args.top_k, c);
  const auto& model = dynamic_cast<const nn::Seq2SeqModel&>(*c.model);
  const int64_t positions = model.max_positions();
  // The decoder start token takes the first position.
  const int64_t room = std::max<int64_t>(positions - 1, 1);
  const int64_t max_new_tokens =
      args.max_new_tokens.value_or(std::min(TranslateArgs::kDefaultMaxNewTokens, room));
  HEED_CHECK(max_new_tokens >= 1, "--max-new-tokens: must be at least 1, got {}", max_new_tokens);
  HEED_CHECK(max_new_tokens <= room,
             "--max-new-tokens: must be at most {} for checkpoint {} (its {} positions, "
             "max_position_embeddings, less the decoder start token), got {}",
             room, args.checkpoint, positions, max_new_tokens);
  for (const std::string& text : texts) {
    const std::vector<int32_t> source = c.tokenizer.encode_source(text);
    HEED_CHECK(!source.empty(), "text \"{}\" has no tokens", text);
    check_length(source.size(), positions, "text", "max_position_embeddings");
    decode::GenerationResult r;
    double beam_score = 0.0;
    if (args.num_beams == 1) {
      decode::GenerationOptions options;
      options.greedy = !args.do_sample;
      options.temperature = args.temperature;
      options.top_k = args.top_k;
      options.top_p = args.top_p;
      options.seed = args.seed;
      options.max_new_tokens = max_new_tokens;
      r = decode::generate(model, source, options);
    } else {
      decode::BeamSearchOptions options;
      options.num_beams = args.num_beams;
      options.max_new_tokens = max_new_tokens;
      decode::BeamSearchResult b = decode::beam_search(model, source, options);
      r = std::move(b.best);
      beam_score = b.score;
    }
    const std::string output = c.tokenizer.decode(r.tokens);
    if (args.json) {
      nlohmann::json j = {{"text", text},
                          {"input_ids", source},
                          {"output", output},
                          {"output_ids", r.tokens},
                          {"log_probs", r.log_probs},
                          {"total_log_prob", r.total_log_prob},
                          {"num_beams", args.num_beams},
                          {"stop_reason", decode::to_string(r.stop_reason)}};
      if (args.num_beams > 1) j["score"] = beam_score;
      if (args.do_sample) j["seed"] = args.seed;
      out << j.dump() << "\n";
    } else {
      out << output << "\n";
    }
  }
}

void run_score_seq2seq(const ScoreArgs& args, const Checkpoint& c, std::ostream& out) {
  HEED_CHECK(!args.target.empty(),
             "--target: {} is an encoder-decoder ({}); score needs the output to score given "
             "--text",
             args.checkpoint, c.model->architecture());
  // Pairs: one source and one target, or lines "source<TAB>target" from stdin.
  std::vector<std::pair<std::string, std::string>> pairs;
  if (args.text == "-" && args.target == "-") {
    for (const std::string& line : input_texts("-", "text")) {
      const size_t tab = line.find('\t');
      HEED_CHECK(tab != std::string::npos,
                 "--text - --target -: line \"{}\" has no tab between "
                 "its source and target",
                 line);
      pairs.emplace_back(line.substr(0, tab), line.substr(tab + 1));
    }
  } else {
    HEED_CHECK(args.text != "-" && args.target != "-",
               "--text and --target: '-' reads both from stdin as tab-separated lines; give "
               "both or neither as '-'");
    pairs.emplace_back(args.text, args.target);
  }
  const auto& model = dynamic_cast<const nn::Seq2SeqModel&>(*c.model);
  const int64_t positions = model.max_positions();
  for (size_t n = 0; n < pairs.size(); ++n) {
    const auto& [text, target_text] = pairs[n];
    const std::vector<int32_t> source = c.tokenizer.encode_source(text);
    HEED_CHECK(!source.empty(), "text \"{}\" has no tokens", text);
    check_length(source.size(), positions, "text", "max_position_embeddings");
    // The output as decoding would produce it: its tokens, then the eos.
    std::vector<int32_t> target = c.tokenizer.encode_target(target_text);
    target.push_back(static_cast<int32_t>(model.special_tokens().eos));
    check_length(target.size(), positions, "target (with the decoder start token)",
                 "max_position_embeddings");
    write_score(out, args.json, {{"text", text}, {"target", target_text}, {"input_ids", source}},
                c.tokenizer, target, decode::score(model, source, target), n == 0);
  }
}

}  // namespace heed::infer
