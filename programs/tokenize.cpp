// tokenize: WordPiece-tokenizes text lines from stdin, one output line per input line.
//   tokenize --vocab vocab.txt [--cased] [--tokens] [--special] < text.txt
//   tokenize --train-vocab vocab.txt [--vocab-size N] [--min-frequency N] < corpus.txt
// Ids (or word pieces with --tokens) are space-separated; an empty input line gives an
// empty output line. Errors are one line on stderr and exit code 2.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "autograd/error.h"
#include "data/wordpiece.h"
#include "data/wordpiece_trainer.h"
#include "programs/cli_checks.h"
#include "programs/stdout_check.h"

namespace {

// Trains a vocabulary on the lines of stdin and writes it to `path`.
void train_vocabulary(const heed::data::WordPieceTrainerOptions& options, const std::string& path) {
  heed::data::WordPieceTrainer trainer(options);
  std::string text;
  size_t n = 0;
  while (std::getline(std::cin, text)) {
    ++n;
    try {
      trainer.add_text(text);
    } catch (const heed::Error& e) {
      heed::fail("stdin:{}: {}", n, e.what());
    }
  }
  trainer.train().save(path);
}

struct PrintOptions {
  bool tokens = false;   // word pieces instead of ids
  bool special = false;  // [CLS] ... [SEP] around each line
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

// Prints the ids (or pieces) of each line of stdin, one line each. A failed write stops it at
// once: the rest of the input would be tokenized for nothing.
void tokenize_lines(const heed::data::WordPieceTokenizer& tokenizer, const PrintOptions& print) {
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
    std::vector<int32_t> ids;
    auto start = std::chrono::steady_clock::now();
    try {
      ids = print.special ? tokenizer.encode(line).input_ids : tokenizer.encode_ids(line);
    } catch (const heed::Error& e) {
      heed::fail("stdin:{}: {}", line_no, e.what());
    }
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    n_tokens += ids.size();
    out.clear();
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) out.push_back(' ');
      out += print.tokens ? tokenizer.vocab().token(ids[i]) : std::to_string(ids[i]);
    }
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
  CLI::App app{"WordPiece-tokenize lines of text read from stdin (BERT's algorithm)"};
  std::string vocab_path;
  bool cased = false, lowercase = false, tokens = false, special = false, stats = false;
  std::string train_path;
  heed::data::WordPieceTrainerOptions train_options;
  // Read signed, so that a negative size is an error rather than a huge unsigned one.
  int64_t vocab_size = static_cast<int64_t>(train_options.vocab_size);
  int64_t limit_alphabet = static_cast<int64_t>(train_options.limit_alphabet);
  using heed::programs::in_range;
  auto* vocab_opt =
      app.add_option("--vocab", vocab_path, "vocab.txt: one token per line, id = line number");
  auto* train_opt = app.add_option("--train-vocab", train_path,
                                   "train a WordPiece vocabulary on stdin and write it here")
                        ->excludes(vocab_opt);
  app.add_option("--vocab-size", vocab_size,
                 "trained vocabulary size; at least the special tokens and the alphabet (the "
                 "corpus's characters and their ## forms), which an error names")
      ->check(in_range<int64_t>(1))
      ->capture_default_str()
      ->needs(train_opt);
  app.add_option("--min-frequency", train_options.min_frequency,
                 "smallest pair count worth a merge")
      ->check(in_range<int64_t>(0))
      ->capture_default_str()
      ->needs(train_opt);
  app.add_option("--limit-alphabet", limit_alphabet,
                 "most frequent characters kept as the initial alphabet")
      ->check(in_range<int64_t>(1))
      ->capture_default_str()
      ->needs(train_opt);
  auto* lower_flag = app.add_flag("--lowercase", lowercase,
                                  "lower-case and strip accents (uncased models; the default)");
  app.add_flag("--cased", cased, "keep case and accents (cased models)")->excludes(lower_flag);
  app.add_flag("--tokens", tokens, "print word pieces instead of ids");
  app.add_flag("--special", special, "add [CLS] ... [SEP] around each line");
  app.add_flag("--stats", stats, "print lines, tokens and throughput (MB/s) to stderr");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tokenize: %s\n", e.what());
    return 2;
  }

  if (train_path.empty() && vocab_path.empty()) {
    std::fprintf(stderr, "tokenize: one of --vocab or --train-vocab is required\n");
    return 2;
  }
  std::ios::sync_with_stdio(false);
  if (!train_path.empty()) {
    train_options.vocab_size = static_cast<size_t>(vocab_size);
    train_options.limit_alphabet = static_cast<size_t>(limit_alphabet);
    train_options.lowercase = !cased;
    train_vocabulary(train_options, train_path);
    return 0;
  }
  heed::data::WordPieceOptions options;
  options.lowercase = !cased;
  tokenize_lines(heed::data::WordPieceTokenizer::from_file(vocab_path, options),
                 {.tokens = tokens, .special = special, .stats = stats});
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
