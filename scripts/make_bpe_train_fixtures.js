#!/usr/bin/env node
// Writes the expected results of training a byte-level BPE on tests/data/bpe_train/corpus.txt,
// from Hugging Face's own trainer, so that heed's (data/byte_level_bpe_trainer.cpp) is checked
// against it rather than against itself:
//
//   expected_vocab.json, expected_merges.txt: what Hugging Face's BPE model.save writes after
//       Tokenizer::train_from_files with a ByteLevel pre-tokenizer (add_prefix_space false) and
//       the model's default BpeTrainer (vocab_size 30000, min_frequency 0, no special tokens,
//       no initial alphabet): the Node bindings can train with no other trainer.
//   expected_prefix_space_merges.txt: the merges of the same training with the pre-tokenizer's
//       add_prefix_space true (a space before every line that does not start with one); its
//       vocabulary is the same alphabet followed by one new token per merge, as checked here.
//   expected_counts.txt: for each merge, in rank order, how often its pair occurred when it was
//       made. They are counted here by replaying the merges on the corpus's words (split by
//       Hugging Face's pre-tokenizer), one merge at a time over every word, not by the trainer's
//       bookkeeping: the test finds from them where a min_frequency run must stop.
//
// The package is `tokenizers` on npm (Hugging Face's official Node bindings of the Rust
// library, Apache-2.0). Usage, from the repository root (the npm prefix is any scratch
// directory outside the repo):
//   npm install --prefix /tmp/hftok tokenizers@0.23.2
//   node scripts/make_bpe_train_fixtures.js /tmp/hftok
'use strict';

const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const prefix = process.argv[2];
if (!prefix) {
  console.error('usage: node scripts/make_bpe_train_fixtures.js <npm prefix with tokenizers>');
  process.exit(2);
}
const {Tokenizer, BPE, byteLevelPreTokenizer} =
    require(path.resolve(prefix, 'node_modules', 'tokenizers'));
const dir = path.join(__dirname, '..', 'tests', 'data', 'bpe_train');
const corpus = path.join(dir, 'corpus.txt');

// The model section of tokenizer.json after training: the same ordering code as model.save
// (vocab by id, merges by rank, one line per distinct pair).
function train(addPrefixSpace) {
  const tokenizer = new Tokenizer(BPE.empty());
  tokenizer.setPreTokenizer(byteLevelPreTokenizer(addPrefixSpace, true));
  tokenizer.train([corpus]);
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bpe-train-')), 'tokenizer.json');
  tokenizer.save(out);
  const model = JSON.parse(fs.readFileSync(out, 'utf8')).model;
  fs.rmSync(path.dirname(out), {recursive: true});
  // Sorted by id: JSON.parse moves integer-like keys ("1999") to the front of an object.
  const tokens = Object.entries(model.vocab).sort((a, b) => a[1] - b[1]);
  tokens.forEach(([, id], i) => assert.strictEqual(id, i, 'the ids are not 0..n-1'));
  const merges = model.merges.map((m) => (Array.isArray(m) ? m : m.split(' ')));
  return {tokens: tokens.map(([t]) => t), merges};
}

const first = train(false);
// The Rust trainer hashes with a random seed per process; a second run must agree.
assert.deepStrictEqual(train(false), first, 'two training runs differ');
const {tokens, merges} = first;
assert(tokens.length < 30000, 'the run stopped at vocab_size: the corpus gives more merges');

// model.save: serde_json's compact map, which escapes as JSON.stringify does for these keys.
const vocabJson = '{' + tokens.map((t, i) => JSON.stringify(t) + ':' + i).join(',') + '}';
fs.writeFileSync(path.join(dir, 'expected_vocab.json'), vocabJson);
fs.writeFileSync(
    path.join(dir, 'expected_merges.txt'),
    '#version: 0.2\n' + merges.map(([a, b]) => `${a} ${b}\n`).join(''));

// The words of the corpus, as the trainer reads it: line by line, each with its "\n".
const text = fs.readFileSync(corpus, 'utf8');
const preTokenizer = byteLevelPreTokenizer(false, true);
const wordCounts = new Map();
for (const line of text.match(/[^\n]*\n|[^\n]+$/g)) {
  for (const [word] of preTokenizer.preTokenizeString(line))
    wordCounts.set(word, (wordCounts.get(word) || 0) + 1);
}
const words = [...wordCounts].map(([w, count]) => ({symbols: [...w], count}));
const alphabet = new Set(words.flatMap((w) => w.symbols));
assert.strictEqual(
    tokens.slice(0, alphabet.size).join(''), [...alphabet].sort().join(''),
    'the vocabulary does not start with the alphabet');

const prefixed = train(true);
assert.deepStrictEqual(prefixed, train(true), 'two training runs differ');
assert.deepStrictEqual(
    prefixed.tokens,
    [
      ...tokens.slice(0, alphabet.size),
      ...prefixed.merges.map(([a, b]) => a + b),
    ],
    'with add_prefix_space the vocabulary is not the alphabet and one token per merge');
fs.writeFileSync(
    path.join(dir, 'expected_prefix_space_merges.txt'),
    '#version: 0.2\n' + prefixed.merges.map(([a, b]) => `${a} ${b}\n`).join(''));

// Replays the merges in rank order, each on every word (the vocabulary is the alphabet and one
// new token per merge, so no merge is special), counting each pair before it is merged.
assert.deepStrictEqual(
    tokens.slice(alphabet.size), merges.map(([a, b]) => a + b),
    'the vocabulary is not the alphabet and one token per merge');
const counts = [];
for (const [k, [a, b]] of merges.entries()) {
  let count = 0;
  for (const w of words) {
    const s = w.symbols;
    for (let i = 0; i + 1 < s.length; ++i)
      if (s[i] === a && s[i + 1] === b) count += w.count;
    const merged = [];
    for (let i = 0; i < s.length; ++i) {
      if (i + 1 < s.length && s[i] === a && s[i + 1] === b) {
        merged.push(a + b);
        ++i;
      } else {
        merged.push(s[i]);
      }
    }
    w.symbols = merged;
  }
  assert(count > 0, `merge ${k} (${a} ${b}) does not occur in the replay`);
  // The most frequent pair is merged first, and merging never makes a pair more frequent.
  assert(
      k === 0 || count <= counts[k - 1], `merge ${k} (${a} ${b}) occurs more than merge ${k - 1}`);
  counts.push(count);
}
fs.writeFileSync(path.join(dir, 'expected_counts.txt'), counts.map((c) => `${c}\n`).join(''));
console.log(
    `${tokens.length} tokens (${alphabet.size} symbols), ${merges.length} merges, ` +
    `${counts.length} counts; written to ${dir}`);
