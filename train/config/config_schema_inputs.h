#pragma once
// The schema's `tokenizer` and `data` sections: what the run reads (config_schema.h).
#include "data/sentencepiece_tokenizer.h"
#include "train/config/config.h"
#include "train/config/config_enums.h"
#include "train/config/config_row.h"

namespace heed::train {

template <typename V, typename C>
void visit_input_sections(V& v, C& c) {
  v.section("tokenizer", [&] {
    auto& t = c.tokenizer;
    v.field("type", t.type,
            {.doc = "`wordpiece` (BERT's), `bpe` (GPT-2's byte-level BPE: every byte has a "
                    "spelling, no unknown token), `sentencepiece` (Google's library: T5's, "
                    "ALBERT's) or `char` (one token per character or symbol). The encoder tasks "
                    "(`mlm`, `classification`, `token_classification`) need the arch's own: "
                    "`wordpiece` for bert, `bpe` for roberta.",
             .resume = OnResume::kFixed});
    v.field(
        "vocab", t.vocab,
        {.doc =
             "wordpiece: a `vocab.txt`; bpe: a directory holding `vocab.json` and `merges.txt` (a "
             "Hugging Face GPT-2 or RoBERTa directory works); sentencepiece: a `spiece.model`; "
             "char: the JSON file a char tokenizer saves. If it does not exist, the trainer builds "
             "the vocabulary from `data.train` and writes it there (wordpiece, bpe and "
             "sentencepiece need `vocab_size` for that; without it a missing file is an error). "
             "`null`: `init_from`'s tokenizer, else a vocabulary built into `train.output_dir`.",
         .resume = OnResume::kFixed,
         .type = "path"});
    v.field(
        "vocab_size", t.vocab_size,
        {.doc = "wordpiece, bpe, sentencepiece: the size of the vocabulary to train when `vocab` "
                "is missing. A trained bpe holds `<|endoftext|>` (id 0), the 256 byte symbols and "
                "its merges, as Hugging Face's `ByteLevelBPETokenizer` trains it (for roberta "
                "RoBERTa's `<s>` 0, `<pad>` 1, `</s>` 2, `<unk>` 3 and `<mask>` 4 instead of "
                "`<|endoftext|>`); a trained "
                "sentencepiece model has T5's `<pad>` 0, `</s>` 1, `<unk>` 2, and `<s>` 3.",
         .resume = OnResume::kFixed,
         .rule = rule::AtLeast{1}});
    v.field(
        "lowercase", t.lowercase,
        {.doc = "wordpiece: lower-case the text (uncased models).", .resume = OnResume::kFixed});
    v.field("strip_accents", t.strip_accents,
            {.doc = "wordpiece: strip accents; `null`: follow `lowercase` (as BertTokenizer).",
             .resume = OnResume::kFixed});
    v.field("min_frequency", t.min_frequency,
            {.doc = "wordpiece training: words seen fewer times are not counted; bpe training: a "
                    "pair seen fewer times is not merged.",
             .resume = OnResume::kFixed,
             .rule = rule::AtLeast{1}});
    v.field(
        "model_type", t.model_type,
        {.doc = "sentencepiece training: `unigram` or `bpe`, the library's two model types.",
         .resume = OnResume::kFixed,
         .rule =
             rule::TextIs{is_sentencepiece_model_type,
                          "'{}' is not a SentencePiece model type heed trains (unigram or bpe)"},
         .type = "name"});
    v.field("extra_ids", t.extra_ids,
            {.doc = "sentencepiece: T5's sentinels `<extra_id_0>`, `<extra_id_1>`, ... appended "
                    "after the model's pieces, numbered backwards as Hugging Face's T5Tokenizer "
                    "does (`<extra_id_0>` is the last id); T5 uses 100, and `span_corruption` "
                    "needs them. `null`: `init_from`'s tokenizer's own, else none.",
             .resume = OnResume::kFixed,
             .rule = rule::AtLeast{0, data::SentencePieceTokenizer::kMaxExtraIds}});
    v.field("unit", t.unit,
            {.doc = "char: `character` (each Unicode character is a token) or `whitespace` (each "
                    "whitespace-separated symbol, e.g. phonemes).",
             .resume = OnResume::kFixed});
    v.field(
        "target_unit", t.target_unit,
        {.doc =
             "char, seq2seq only: how targets are split, when not as `unit` (grapheme-to-phoneme: "
             "`unit: character`, `target_unit: whitespace`). Both sides share one vocabulary.",
         .resume = OnResume::kFixed});
  });
  v.section("data", [&] {
    auto& d = c.data;
    v.field("train", d.train,
            {.doc = "Training data: plain text (one document per line, `mlm`/`clm`), TSV "
                    "`label<TAB>text[<TAB>text_b]` (`classification`), CoNLL `word<TAB>tag` lines "
                    "with blank lines between sentences (`token_classification`), TSV "
                    "`source<TAB>target` (`seq2seq`). Must exist.",
             .resume = OnResume::kFixed,
             .need = Need::kRequired,
             .type = "path"});
    v.field(
        "valid", d.valid,
        {.doc =
             "Validation data, same format; needed for `eval.every_steps`. Must exist when given.",
         .resume = OnResume::kApplies,
         .type = "path"});
    v.field("test", d.test,
            {.doc = "Test data, evaluated at the end. Must exist when given.",
             .resume = OnResume::kApplies,
             .type = "path"});
    v.field(
        "max_seq_length", d.max_seq_length,
        {.doc = "Tokens per example (MLM windows with `[CLS]`/`[SEP]`, causal LM context, "
                "classification truncation, `span_corruption`'s corrupted input with `</s>`). At "
                "least 3 for `mlm`; at most the model's positions.",
         .resume = OnResume::kFixed});
    v.field(
        "truncation", d.truncation,
        {.doc = "`classification`: which tokens a text longer than `max_seq_length` keeps. "
                "`head`: the first ones (Hugging Face's default, `truncation_side=\"right\"`); "
                "`tail`: the last ones; `head_tail`: the first half and the last half of the "
                "budget (the head gets the odd one), which Sun et al. (2019) found best for long "
                "documents, whose ends carry signatures and footers. A checkpoint records it in "
                "`tokenizer_config.json` (`heed_truncation`, and `truncation_side` `left` for "
                "`tail`, `right` otherwise, which is what transformers reads), and `infer "
                "classify` cuts the same way unless `--truncation` says otherwise. Other tasks "
                "refuse anything but `head`.",
         .resume = OnResume::kFixed});
    v.field("mlm_probability", d.mlm_probability,
            {.doc = "`mlm`: share of non-special tokens selected for prediction, in (0, 1).",
             .resume = OnResume::kFixed,
             .rule = rule::UnitInterval{.low_open = true}});
    v.field("noise_density", d.noise_density,
            {.doc = "`span_corruption`: share of each window's tokens dropped in spans, in (0, 1) "
                    "(T5: 0.15).",
             .resume = OnResume::kFixed,
             .rule = rule::UnitInterval{.low_open = true}});
    v.field("mean_noise_span_length", d.mean_noise_span_length,
            {.doc = "`span_corruption`: the spans' mean length in tokens, at least 1 (T5: 3). Each "
                    "span becomes one sentinel in the input.",
             .resume = OnResume::kFixed,
             .rule = rule::Positive{}});
    v.field("mask_replace_prob", d.mask_replace_prob,
            {.doc = "`mlm`: of the selected, the share replaced by `[MASK]`. A micro-batch in "
                    "which no position was selected (short sequences, a small last batch) has no "
                    "loss; it is skipped, with a line saying so, and the step's mean is over the "
                    "other micro-batches; a step whose micro-batches all have none makes no update "
                    "and is not counted. Masking stays Hugging Face's, with no position forced.",
             .resume = OnResume::kFixed,
             .rule = rule::UnitInterval{.high_open = false}});
    v.field("random_replace_prob", d.random_replace_prob,
            {.doc = "`mlm`: of the selected, the share replaced by a random token (the rest stay); "
                    "`mask_replace_prob + random_replace_prob ≤ 1`.",
             .resume = OnResume::kFixed});
    v.field("labels", d.labels,
            {.doc = "Classification label names, index = class id. `null`: the distinct labels of "
                    "`data.train`, sorted.",
             .resume = OnResume::kFixed,
             .rule = rule::DistinctNames{}});
    v.field("max_source_length", d.max_source_length,
            {.doc = "`seq2seq`: source tokens kept.", .resume = OnResume::kFixed});
    v.field("max_target_length", d.max_target_length,
            {.doc = "`seq2seq`: target tokens kept (room for the start/end token included).",
             .resume = OnResume::kFixed});
    v.field("max_train_samples", d.max_train_samples,
            {.doc = "Train on the first N examples of `data.train` only (Hugging Face's "
                    "`max_train_samples`; MLM/CLM: the first N windows); `null`: all of them. "
                    "Validation and test stay whole. The first N in file order are a random sample "
                    "only if the file is in random order, as the prepared `datasets/` files are. "
                    "Used to compare a pretrained encoder with a random one when labels are few. A "
                    "resume refuses a changed value.",
             .resume = OnResume::kFixed,
             .rule = rule::AtLeast{1}});
    v.field("shuffle", d.shuffle,
            {.doc = "Shuffle the training examples each epoch (seeded by `train.seed`).",
             .resume = OnResume::kFixed});
    v.field(
        "group_by_length", d.group_by_length,
        {.doc = "With `shuffle`: put examples of similar length in a batch, so that batches pad "
                "little (Hugging Face's `group_by_length`). The shuffled order is cut into groups "
                "of 50 batches, each sorted by length, and the batches are then shuffled. Worth it "
                "when lengths vary a lot (words, sentences, e-mails). MLM/CLM windows are full "
                "length on a corpus of long documents but as short as the document on one of short "
                "documents (`datasets/spam_text/`: mean about 290 of 512 tokens).",
         .resume = OnResume::kFixed});
    v.field("prefetch", d.prefetch,
            {.doc = "Batches collated ahead on a background thread; 0 = none.",
             .resume = OnResume::kAppliesNotMade,
             .rule = rule::AtLeast{0}});
  });
}

}  // namespace heed::train
