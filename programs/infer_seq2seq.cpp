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
  Checkpoint c = load_checkpoint(args, "translate",
                                 {"BartForConditionalGeneration", "T5ForConditionalGeneration"});
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
      options.greedy = true;
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
      out << j.dump() << "\n";
    } else {
      out << output << "\n";
    }
  }
}

}  // namespace heed::infer
