// infer generate and score: the GPT checkpoints (score hands an encoder-decoder to
// infer_seq2seq.cpp).
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "decode/generation.h"
#include "nn/models/gpt.h"
#include "programs/infer_commands.h"
#include "programs/infer_common.h"

namespace heed::infer {

using nlohmann::json;

void run_generate(const GenerateArgs& args, std::ostream& out) {
  const std::vector<std::string> prompts = input_texts(args.prompt, "prompt");
  Checkpoint c = load_checkpoint(args, "generate", {"GPT2LMHeadModel"});
  check_top_k(args.top_k, c);
  const auto& model = static_cast<const nn::GPT&>(*c.model);
  decode::GenerationOptions options;
  options.max_new_tokens = args.max_new_tokens;
  options.greedy = args.greedy;
  options.temperature = args.temperature;
  options.top_k = args.top_k;
  options.top_p = args.top_p;
  options.seed = args.seed;
  options.eos_token_id = static_cast<int32_t>(model.config.eos_token_id);
  for (size_t n = 0; n < prompts.size(); ++n) {
    const std::string& prompt = prompts[n];
    const std::vector<int32_t> prompt_ids = c.tokenizer.encode(prompt);
    HEED_CHECK(!prompt_ids.empty(), "prompt \"{}\" has no tokens", prompt);
    const std::vector<int32_t> input = with_bos(model, prompt_ids);
    HEED_CHECK(
        static_cast<int64_t>(input.size()) < model.config.n_positions,
        "prompt is {} tokens (with the bos token); the model takes at most {} (n_positions), "
        "leaving no room to generate",
        input.size(), model.config.n_positions);
    const decode::GenerationResult r = decode::generate(model, input, options);
    if (r.stop_reason == decode::StopReason::max_length) {
      note_context_full("generate", n, prompts.size(), r.tokens.size(), model.config.n_positions,
                        "n_positions");
    }

    std::vector<int32_t> all = prompt_ids;
    all.insert(all.end(), r.tokens.begin(), r.tokens.end());
    const std::string text = c.tokenizer.decode(all);
    if (args.json) {
      out << json{{"prompt", prompt},
                  {"input_ids", input},
                  {"generated_ids", r.tokens},
                  {"generated_text", c.tokenizer.decode(r.tokens)},
                  {"text", text},
                  {"tokens", tokens_json(c.tokenizer, r.tokens, r.log_probs)},
                  {"total_log_prob", r.total_log_prob},
                  {"stop_reason", decode::to_string(r.stop_reason)}}
                 .dump()
          << "\n";
    } else {
      out << text << "\n";
    }
  }
}

void run_score(const ScoreArgs& args, std::ostream& out) {
  Checkpoint c = load_checkpoint(
      args, "score",
      {"GPT2LMHeadModel", "BartForConditionalGeneration", "T5ForConditionalGeneration"});
  if (c.model->model_type() != "gpt2") return run_score_seq2seq(args, c, out);
  HEED_CHECK(args.target.empty(),
             "--target: only an encoder-decoder checkpoint scores a target; {} is a {}",
             args.checkpoint, c.model->architecture());
  const std::vector<std::string> texts = input_texts(args.text, "text");
  const auto& model = static_cast<const nn::GPT&>(*c.model);
  for (size_t n = 0; n < texts.size(); ++n) {
    const std::vector<int32_t> text_ids = c.tokenizer.encode(texts[n]);
    HEED_CHECK(!text_ids.empty(), "text \"{}\" has no tokens", texts[n]);
    const std::vector<int32_t> input = with_bos(model, text_ids);
    check_length(input.size(), model.config.n_positions, "text (with the bos token)",
                 "n_positions");
    write_score(out, args.json, {{"text", texts[n]}, {"input_ids", input}}, c.tokenizer, text_ids,
                decode::score(model, input), n == 0);
  }
}

}  // namespace heed::infer
