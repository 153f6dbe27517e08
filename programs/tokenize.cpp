// tokenize: tokenizes text lines from stdin, one output line per input line.
//   tokenize --tokenizer DIR [--tokens] [--special] [--decode] < text.txt
//   tokenize --vocab vocab.txt [--cased] [--tokens] [--special] < text.txt     (WordPiece)
//   tokenize --train-vocab OUT [--type wordpiece|bpe|sentencepiece] [--vocab-size N] < corpus.txt
//            (bpe: [--arch gpt2|roberta], whose special tokens)
// DIR is a model or tokenizer directory of any kind heed reads (WordPiece, byte-level BPE,
// SentencePiece, characters). Ids (or pieces with --tokens) are space-separated, without
// special tokens unless --special; --decode reads ids and prints their text. An empty input
// line gives an empty output line. Errors are one line on stderr and exit code 2.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "base/error.h"
#include "data/text_tokenizer.h"
#include "heed/version.h"
#include "programs/cli_checks.h"
#include "programs/stdout_check.h"
#include "programs/tokenize_train.h"

namespace {

using heed::data::TextTokenizer;

struct PrintOptions {
  bool tokens = false;   // pieces instead of ids
  bool special = false;  // the model's special tokens around each line ([CLS] ... [SEP])
  bool decode = false;   // ids in, text out
  bool stats = false;    // lines, tokens and throughput to stderr
};

// Throws "cannot write to standard output: REASON" once std::cout has failed. errno is the
// failed write's reason when it was cleared before the operation that wrote.
void check_stdout() {
  if (!std::cout) {
    heed::fail("cannot write to standard output: {}",
               errno != 0 ? std::strerror(errno) : "write error");
  }
}

// The ids of a --decode input line: whole numbers inside the vocabulary, space-separated.
std::vector<int32_t> parse_ids(const std::string& line, const TextTokenizer& tokenizer) {
  std::vector<int32_t> ids;
  const char* p = line.data();
  const char* end = p + line.size();
  while (p < end) {
    if (*p == ' ' || *p == '\t') {
      ++p;
      continue;
    }
    int32_t id = 0;
    const auto [next, error] = std::from_chars(p, end, id);
    HEED_CHECK(error == std::errc() && (next == end || *next == ' ' || *next == '\t'),
               "'{}' is not a token id", std::string(p, std::min<size_t>(end - p, 20)));
    HEED_CHECK(id >= 0 && id < tokenizer.vocab_size(),
               "token id {} is outside the vocabulary (size {})", id, tokenizer.vocab_size());
    ids.push_back(id);
    p = next;
  }
  return ids;
}

// The output line of one input line.
std::string process(const std::string& line, const TextTokenizer& tokenizer,
                    const PrintOptions& print, size_t& n_tokens) {
  if (print.decode) {
    const std::vector<int32_t> ids = parse_ids(line, tokenizer);
    n_tokens += ids.size();
    return tokenizer.decode(ids);
  }
  const std::vector<int32_t> ids =
      print.special ? tokenizer.encode_source(line) : tokenizer.encode(line);
  n_tokens += ids.size();
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out.push_back(' ');
    out += print.tokens ? tokenizer.token(ids[i]) : std::to_string(ids[i]);
  }
  return out;
}

// Prints the output of each line of stdin, one line each. A failed write stops it at once:
// the rest of the input would be tokenized for nothing.
void tokenize_lines(const TextTokenizer& tokenizer, const PrintOptions& print) {
  std::string line, out;
  size_t line_no = 0, bytes = 0, n_tokens = 0;
  double seconds = 0;
  // std::cin is tied to std::cout: each read flushes the lines printed so far, and may fail.
  errno = 0;
  while (std::getline(std::cin, line)) {
    check_stdout();
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    bytes += line.size() + 1;
    auto start = std::chrono::steady_clock::now();
    try {
      out = process(line, tokenizer, print, n_tokens);
    } catch (const heed::Error& e) {
      heed::fail("stdin:{}: {}", line_no, e.what());
    }
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.push_back('\n');
    errno = 0;
    std::cout << out;
    check_stdout();
  }
  check_stdout();  // the last read flushed too
  if (print.stats)
    std::fprintf(stderr, "tokenize: %zu lines, %zu bytes, %zu tokens, %.2f MB/s (tokenizer only)\n",
                 line_no, bytes, n_tokens, seconds > 0 ? bytes / seconds / 1e6 : 0.0);
}

int run(int argc, char** argv) {
  CLI::App app{"Tokenize lines of text read from stdin, or train a tokenizer on them"};
  std::string tokenizer_dir, vocab_path;
  bool cased = false, lowercase = false;
  PrintOptions print;
  heed::programs::VocabularyTraining training;
  using heed::programs::in_range;
  auto* dir_opt = app.add_option(
      "--tokenizer", tokenizer_dir,
      "a model or tokenizer directory (WordPiece, byte-level BPE, SentencePiece or characters)");
  auto* vocab_opt =
      app.add_option("--vocab", vocab_path, "a WordPiece vocab.txt: one token per line, id = line")
          ->excludes(dir_opt);
  auto* train_opt =
      app.add_option("--train-vocab", training.output,
                     "train a tokenizer on stdin and write it here (wordpiece: vocab.txt; bpe: a "
                     "directory; sentencepiece: a .model file)")
          ->excludes(vocab_opt)
          ->excludes(dir_opt);
  app.add_option("--type", training.type, "the kind to train")
      ->check(CLI::IsMember({"wordpiece", "bpe", "sentencepiece"}))
      ->capture_default_str()
      ->needs(train_opt);
  app.add_option("--vocab-size", training.vocab_size,
                 "trained vocabulary size; at least the special tokens and the alphabet, which an "
                 "error names")
      ->check(in_range<int64_t>(1, INT32_MAX))
      ->capture_default_str()
      ->needs(train_opt);
  app.add_option("--arch", training.arch,
                 "bpe: the model whose special tokens it gets: gpt2 (<|endoftext|>) or roberta "
                 "(<s> <pad> </s> <unk> <mask> at ids 0 to 4, and <s> text </s> with --special)")
      ->check(CLI::IsMember({"gpt2", "roberta"}))
      ->capture_default_str()
      ->needs(train_opt);
  app.add_option("--min-frequency", training.min_frequency,
                 "wordpiece, bpe: smallest pair count worth a merge")
      ->check(in_range<int64_t>(0))
      ->capture_default_str()
      ->needs(train_opt);
  app.add_option("--limit-alphabet", training.limit_alphabet,
                 "wordpiece: most frequent characters kept as the initial alphabet")
      ->check(in_range<int64_t>(1))
      ->capture_default_str()
      ->needs(train_opt);
  app.add_option("--model-type", training.model_type, "sentencepiece: unigram or bpe")
      ->check(CLI::IsMember({"unigram", "bpe"}))
      ->capture_default_str()
      ->needs(train_opt);
  auto* lower_flag = app.add_flag("--lowercase", lowercase,
                                  "wordpiece: lower-case and strip accents (the default)");
  app.add_flag("--cased", cased, "wordpiece: keep case and accents")->excludes(lower_flag);
  app.add_flag("--tokens", print.tokens, "print pieces instead of ids");
  auto* special_flag =
      app.add_flag("--special", print.special, "add the model's special tokens around each line");
  app.add_flag("--decode", print.decode, "read space-separated ids and print their text")
      ->excludes(special_flag)
      ->excludes(train_opt);
  app.add_flag("--stats", print.stats, "print lines, tokens and throughput (MB/s) to stderr");
  app.set_version_flag("--version", std::string("tokenize (heed) ") + heed::version());
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tokenize: %s\n", e.what());
    return 2;
  }

  if (training.output.empty() && vocab_path.empty() && tokenizer_dir.empty()) {
    std::fprintf(stderr, "tokenize: one of --tokenizer, --vocab or --train-vocab is required\n");
    return 2;
  }
  std::ios::sync_with_stdio(false);
  if (!training.output.empty()) {
    training.lowercase = !cased;
    heed::programs::train_vocabulary_from_stdin(training);
    return 0;
  }
  if (!tokenizer_dir.empty()) {
    tokenize_lines(TextTokenizer::load(tokenizer_dir), print);
    return 0;
  }
  heed::data::WordPieceOptions options;
  options.lowercase = !cased;
  tokenize_lines(TextTokenizer(heed::data::WordPieceTokenizer::from_file(vocab_path, options)),
                 print);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int code = 2;
  try {
    code = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenize: %s\n", e.what());
    return 2;
  }
  return heed::programs::finish_stdout("tokenize", code, 2);
}
