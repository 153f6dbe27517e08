// infer: runs a trained checkpoint on text.
//   infer fill-mask --checkpoint DIR --text "the [MASK] of ..." [--top-k 5]
//   infer classify  --checkpoint DIR --text "..." [--text-pair "..."] [--max-length N]
//                   [--truncation head|tail|head_tail]   (default: as the checkpoint trained)
//   infer generate  --checkpoint DIR --prompt "..." [--max-new-tokens N] [--temperature T]
//                   [--top-k K] [--top-p P] [--seed S] [--greedy]
//   infer score     --checkpoint DIR --text "..."
//   infer translate --checkpoint DIR --text "..." [--num-beams N] [--max-new-tokens N]
//   infer attention --checkpoint DIR --text "..." [--text-pair "..."] [--target "..."]
//                   --out attention.html   (--json: the probabilities [layer][head][query][key])
//   infer merge     --checkpoint DIR [--adapter ADAPTER] --out MERGED
//                   (the LoRA adapter merged into the weights: a plain model directory)
// (`seq2seq` is another name for translate.) Every subcommand takes --adapter ADAPTER, a LoRA
// adapter directory in PEFT's layout applied to the checkpoint (a LoRA run's checkpoint applies
// its own without it), and --json (one JSON object
// per text, with the token ids); a text of "-" reads one text per line from stdin. Any error
// is one line on stderr, "infer SUBCOMMAND: ...", and exit code 2.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "base/error.h"
#include "heed/version.h"
#include "programs/cli_checks.h"
#include "programs/infer_commands.h"
#include "programs/stdout_check.h"

namespace {

using namespace heed::infer;
using heed::programs::in_range;

// The widest beam translate searches. Each beam costs a decoder row per step and V candidates
// to rank, so a beam of a million needs gigabytes; published systems search with 4 to 12 beams
// and find wider ones worse (Koehn and Knowles 2017), so 64 leaves room to experiment.
constexpr int64_t kMaxBeams = 64;

// The subcommand being run, for the error line.
std::string g_command;

CLI::App* add_command(CLI::App& app, const std::string& name, const std::string& description,
                      CommonArgs& common) {
  CLI::App* sub = app.add_subcommand(name, description);
  sub->add_option("--checkpoint", common.checkpoint,
                  "model directory (config.json, "
                  "model.safetensors, tokenizer files)")
      ->required();
  sub->add_option("--adapter", common.adapter,
                  "LoRA adapter directory (PEFT's adapter_config.json, adapter_model.safetensors) "
                  "to apply to the checkpoint")
      ->default_str("the checkpoint's own adapter_config.json, if any");
  sub->add_flag("--json", common.json, "one JSON object per text, with token ids");
  return sub;
}

CLI::App* add_fill_mask(CLI::App& app, FillMaskArgs& fill) {
  CLI::App* cmd = add_command(app, "fill-mask", "top-k tokens for each [MASK] (BERT MLM)", fill);
  cmd->add_option("--text", fill.text, "text with [MASK] tokens ('-': lines of stdin)")->required();
  cmd->add_option("--top-k", fill.top_k, "candidates per [MASK] (at most the vocabulary size)")
      ->check(in_range<int64_t>(1))
      ->capture_default_str();
  return cmd;
}

// The names of the config's data.truncation; read as a name so that the help and a bad value
// show the names, not the enum's numbers.
const std::map<std::string, heed::data::Truncation>& truncation_sides() {
  static const std::map<std::string, heed::data::Truncation> sides = [] {
    std::map<std::string, heed::data::Truncation> m;
    for (const auto& [side, name] : heed::data::kTruncationNames) m.emplace(name, side);
    return m;
  }();
  return sides;
}

CLI::App* add_classify(CLI::App& app, ClassifyArgs& classify, std::string& truncation_name) {
  CLI::App* cmd = add_command(
      app, "classify", "label probabilities, or a tag per word (BERT classification)", classify);
  cmd->add_option("--text", classify.text, "text ('-': lines of stdin)")->required();
  cmd->add_option("--text-pair", classify.text_pair, "second text of a pair");
  cmd->add_option("--max-length", classify.max_length,
                  "truncate each input to this many ids, [CLS] and [SEP] included (0: no "
                  "truncation; a longer text is an error)")
      ->check(in_range<int64_t>(0))
      ->default_str("the checkpoint's data.max_seq_length");
  cmd->add_option("--truncation", truncation_name,
                  "which ids --max-length keeps: head, tail or head_tail (the first and the "
                  "last half)")
      ->check(CLI::IsMember(truncation_sides()))
      ->default_str("the checkpoint's data.truncation");
  return cmd;
}

CLI::App* add_generate(CLI::App& app, GenerateArgs& gen) {
  CLI::App* cmd = add_command(app, "generate", "continue a prompt (GPT)", gen);
  cmd->add_option("--prompt", gen.prompt, "prompt ('-': lines of stdin)")->required();
  cmd->add_option("--max-new-tokens", gen.max_new_tokens,
                  "most tokens to add (fewer when the model's context fills: stderr says so)")
      ->check(in_range<int64_t>(0))
      ->capture_default_str();
  cmd->add_option("--temperature", gen.temperature, "sampling temperature; 0 is greedy")
      ->check(in_range<double>(0))
      ->capture_default_str();
  cmd->add_option("--top-k", gen.top_k,
                  "sample among the k most probable tokens (at most the vocabulary size); 0: all")
      ->check(in_range<int64_t>(0))
      ->capture_default_str();
  cmd->add_option("--top-p", gen.top_p, "sample within the smallest set of mass >= p")
      ->check(in_range<double>(0, 1))
      ->capture_default_str();
  cmd->add_option("--seed", gen.seed, "seed of the sampling generator")->capture_default_str();
  cmd->add_flag("--greedy", gen.greedy, "take the most probable token at every step");
  return cmd;
}

CLI::App* add_score(CLI::App& app, ScoreArgs& score) {
  CLI::App* cmd = add_command(
      app, "score", "per-token log-probabilities and perplexity (GPT, encoder-decoder)", score);
  cmd->add_option("--text", score.text, "text ('-': lines of stdin); an encoder-decoder's source")
      ->required();
  cmd->add_option("--target", score.target,
                  "encoder-decoder: the output to score given --text ('-' with --text '-': "
                  "tab-separated source and target lines)");
  return cmd;
}

CLI::App* add_translate(CLI::App& app, TranslateArgs& translate) {
  CLI::App* cmd =
      add_command(app, "translate", "encoder-decoder output, greedy or beam search", translate);
  cmd->alias("seq2seq");
  cmd->add_option("--text", translate.text, "input text ('-': lines of stdin)")->required();
  cmd->add_option("--num-beams", translate.num_beams, "1: greedy")
      ->check(
          in_range<int64_t>(1, kMaxBeams, " (each beam costs time and memory; 4 to 12 is usual)"))
      ->capture_default_str();
  cmd->add_option("--max-new-tokens", translate.max_new_tokens,
                  "most output tokens (at most the model's positions but one, the start token)")
      ->check(in_range<int64_t>(1))
      ->default_str(std::to_string(TranslateArgs::kDefaultMaxNewTokens) +
                    ", or fewer if the model has fewer positions");
  cmd->add_flag("--do-sample", translate.do_sample,
                "sample each token (after --temperature, --top-k, --top-p) instead of greedy");
  cmd->add_option("--temperature", translate.temperature, "--do-sample: sampling temperature")
      ->check(in_range<double>(0))
      ->capture_default_str();
  cmd->add_option("--top-k", translate.top_k,
                  "--do-sample: among the k most probable tokens (at most the vocabulary size); "
                  "0: all")
      ->check(in_range<int64_t>(0))
      ->capture_default_str();
  cmd->add_option("--top-p", translate.top_p, "--do-sample: within the smallest set of mass >= p")
      ->check(in_range<double>(0, 1))
      ->capture_default_str();
  cmd->add_option("--seed", translate.seed, "--do-sample: seed of the sampling generator")
      ->capture_default_str();
  return cmd;
}

CLI::App* add_attention(CLI::App& app, AttentionArgs& attention) {
  CLI::App* cmd = add_command(app, "attention",
                              "every layer's and head's attention on a text, as a page to open "
                              "in a browser (BERT, GPT, encoder-decoder)",
                              attention);
  cmd->add_option("--text", attention.text, "the text")->required();
  cmd->add_option("--text-pair", attention.text_pair, "second text of a pair (BERT)");
  cmd->add_option("--target", attention.target,
                  "the decoder's text (encoder-decoder; default: the model's own greedy output)");
  cmd->add_option("--out", attention.out,
                  "the HTML page to write; with --json, the probabilities' file (default: stdout)");
  return cmd;
}

CLI::App* add_merge(CLI::App& app, MergeArgs& merge) {
  CLI::App* cmd = add_command(app, "merge",
                              "merge a LoRA adapter into the weights (W + lora_alpha / r * B A) "
                              "and write a plain model directory",
                              merge);
  cmd->add_option("--out", merge.out, "the merged model's directory")->required();
  return cmd;
}

int run(int argc, char** argv) {
  CLI::App app{"Run a heed checkpoint on text"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("infer (heed) ") + heed::version());
  FillMaskArgs fill;
  ClassifyArgs classify;
  std::string truncation_name;
  GenerateArgs gen;
  ScoreArgs score;
  TranslateArgs translate;
  AttentionArgs attention;
  MergeArgs merge;
  CLI::App* fill_cmd = add_fill_mask(app, fill);
  CLI::App* classify_cmd = add_classify(app, classify, truncation_name);
  CLI::App* gen_cmd = add_generate(app, gen);
  CLI::App* score_cmd = add_score(app, score);
  CLI::App* translate_cmd = add_translate(app, translate);
  CLI::App* attention_cmd = add_attention(app, attention);
  CLI::App* merge_cmd = add_merge(app, merge);

  // Named before parsing, so that a parse error names the subcommand too.
  if (argc > 1) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->check_name(argv[1])) g_command = argv[1];
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    throw heed::Error(e.what());
  }

  std::ios::sync_with_stdio(false);
  if (*fill_cmd) run_fill_mask(fill, std::cout);
  if (*classify_cmd) {
    if (!truncation_name.empty()) classify.truncation = truncation_sides().at(truncation_name);
    run_classify(classify, std::cout);
  }
  if (*gen_cmd) run_generate(gen, std::cout);
  if (*score_cmd) run_score(score, std::cout);
  if (*translate_cmd) run_translate(translate, std::cout);
  if (*attention_cmd) run_attention(attention, std::cout);
  if (*merge_cmd) run_merge(merge, std::cout);
  return 0;
}

// What the error lines start with: "infer" and the subcommand.
std::string prefix() {
  return g_command.empty() ? "infer" : "infer " + g_command;
}

// One line, whatever the message holds.
std::string one_line(std::string message) {
  std::replace(message.begin(), message.end(), '\n', ' ');
  return message;
}

}  // namespace

int main(int argc, char** argv) {
  int code = 2;
  try {
    code = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", prefix().c_str(), one_line(e.what()).c_str());
    return 2;
  }
  return heed::programs::finish_stdout(prefix().c_str(), code, 2);
}
