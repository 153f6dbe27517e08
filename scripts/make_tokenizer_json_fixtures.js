#!/usr/bin/env node
// Writes tests/data/tokenizer_json/: tokenizer.json files that Hugging Face's own tokenizers
// library saves, and the ids it gives for a set of messy texts, so that heed's reader and writer
// (data/hf_tokenizer_json.h) are checked against Hugging Face rather than against themselves.
//
//   tokenizers 0.23.2: Hugging Face's official Node bindings of its Rust tokenizers library
//                      (Apache-2.0, npm package "tokenizers"), the code behind transformers'
//                      fast tokenizers.
//
// From the committed vocabularies it builds, with the library's own constructors:
//   bert.json, bert_cased.json  BERT's layout over tests/data/golden/vocab.txt (uncased, cased)
//   gpt2.json                   GPT-2 over tests/data/gpt2/vocab.json and merges.txt, saved
//                               compact (pretty it would be 3 MB)
//   roberta.json                RoBERTa's layout (<s> $A </s>, add_prefix_space) over a small
//                               vocabulary: <s> <pad> </s> <unk>, GPT-2's 256 byte symbols and
//                               its first 2,000 merges, <mask>; also written as roberta/vocab.json
//                               and roberta/merges.txt, which heed loads
//   added_tokens.json           a byte-level BPE over the 256 byte symbols and three merges, no
//                               post-processor, and added tokens with every flag: <mask> lstrip,
//                               [X] rstrip, "foo" single_word and normalized (not special), and
//                               "<m", a prefix of <mask>
//   bert_truncation.json        bert.json with truncation and padding set (read, not encoded)
// Each is saved by the library, loaded back from the saved file, and that loaded tokenizer
// encodes every text (ids with and without special tokens, and a few pairs) into
// expected_ids.json. The test writes heed's tokenizer.json for the same tokenizers and compares
// it byte for byte with these files, which shows Hugging Face reads what heed writes.
// Node has no ByteLevel decoder constructor, so that one key is set in the saved JSON, which the
// library then loads and saves again.
//
// Usage (from the repository root; the npm prefix is any scratch directory outside the repo):
//   npm install --prefix /tmp/hf-tokenizers tokenizers@0.23.2
//   node scripts/make_tokenizer_json_fixtures.js /tmp/hf-tokenizers
'use strict';

const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const prefix = process.argv[2];
if (!prefix) {
  console.error('usage: node scripts/make_tokenizer_json_fixtures.js <npm prefix with tokenizers>');
  process.exit(2);
}
const hf = require(path.join(path.resolve(prefix), 'node_modules', 'tokenizers'));
const root = path.join(__dirname, '..');
const outDir = path.join(root, 'tests', 'data', 'tokenizer_json');
fs.mkdirSync(path.join(outDir, 'roberta'), {recursive: true});

// The pretty file ends without a newline, as the library writes it.
function saveWithByteLevelDecoder(tokenizer, file, pretty) {
  const scratch = path.join(os.tmpdir(), `tokenizer-json-fixture-${process.pid}.json`);
  tokenizer.save(scratch, false);
  const json = JSON.parse(fs.readFileSync(scratch, 'utf8'));
  fs.unlinkSync(scratch);
  json.decoder = {type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true};
  hf.Tokenizer.fromString(JSON.stringify(json)).save(file, pretty);
}

function bert(name, lowercase) {
  const tokens = fs.readFileSync(path.join(root, 'tests/data/golden/vocab.txt'), 'utf8')
                     .split('\n')
                     .slice(0, -1);
  const vocab = Object.fromEntries(tokens.map((t, i) => [t, i]));
  const tokenizer = new hf.Tokenizer(hf.WordPiece.init(
      vocab, {unkToken: '[UNK]', continuingSubwordPrefix: '##', maxInputCharsPerWord: 100}));
  tokenizer.setNormalizer(
      hf.bertNormalizer({cleanText: true, handleChineseChars: true, lowercase}));
  tokenizer.setPreTokenizer(hf.bertPreTokenizer());
  tokenizer.setDecoder(hf.wordPieceDecoder('##', true));
  tokenizer.setPostProcessor(hf.templateProcessing(
      '[CLS] $A [SEP]', '[CLS] $A [SEP] $B:1 [SEP]:1',
      [['[CLS]', vocab['[CLS]']], ['[SEP]', vocab['[SEP]']]]));
  tokenizer.addSpecialTokens(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']);
  tokenizer.save(path.join(outDir, name), true);
}

function gpt2() {
  const vocab = JSON.parse(fs.readFileSync(path.join(root, 'tests/data/gpt2/vocab.json'), 'utf8'));
  const merges = fs.readFileSync(path.join(root, 'tests/data/gpt2/merges.txt'), 'utf8')
                     .split('\n')
                     .slice(1, -1)
                     .map((line) => line.split(' '));
  assert.strictEqual(merges.length, 50000);
  const tokenizer = new hf.Tokenizer(hf.BPE.init(vocab, merges, {}));
  tokenizer.setPreTokenizer(hf.byteLevelPreTokenizer(false, true));
  tokenizer.setPostProcessor(hf.byteLevelProcessing(false));
  tokenizer.addSpecialTokens(['<|endoftext|>']);
  saveWithByteLevelDecoder(tokenizer, path.join(outDir, 'gpt2.json'), false);
}

// The byte symbols, as GPT-2's vocabulary has them first (ids 0-255).
function byteSymbols() {
  const gpt2Vocab =
      JSON.parse(fs.readFileSync(path.join(root, 'tests/data/gpt2/vocab.json'), 'utf8'));
  return Object.entries(gpt2Vocab).sort((a, b) => a[1] - b[1]).map((e) => e[0]).slice(0, 256);
}

function addedTokens() {
  const merges = [['\u0120', 't'], ['h', 'e'], ['\u0120t', 'he']];
  const tokens = [...byteSymbols(), '\u0120t', 'he', '\u0120the', '<mask>', '[X]', 'foo', '<m'];
  const vocab = Object.fromEntries(tokens.map((t, i) => [t, i]));
  const tokenizer = new hf.Tokenizer(hf.BPE.init(vocab, merges, {}));
  tokenizer.setPreTokenizer(hf.byteLevelPreTokenizer(false, true));
  tokenizer.addAddedTokens([
    new hf.AddedToken('<mask>', true, {leftStrip: true}),
    new hf.AddedToken('[X]', true, {rightStrip: true}),
    new hf.AddedToken('foo', false, {singleWord: true}),
    new hf.AddedToken('<m', true),
  ]);
  saveWithByteLevelDecoder(tokenizer, path.join(outDir, 'added_tokens.json'), true);
}

function bertTruncation() {
  const tokenizer = hf.Tokenizer.fromFile(path.join(outDir, 'bert.json'));
  tokenizer.setTruncation(16, {direction: 'left', strategy: 'OnlyFirst', stride: 2});
  tokenizer.setPadding(
      {maxLength: 20, direction: 'left', padId: 0, padToken: '[PAD]', padToMultipleOf: 8});
  tokenizer.save(path.join(outDir, 'bert_truncation.json'), true);
}

function roberta() {
  const gpt2Vocab =
      JSON.parse(fs.readFileSync(path.join(root, 'tests/data/gpt2/vocab.json'), 'utf8'));
  const byId = Object.entries(gpt2Vocab).sort((a, b) => a[1] - b[1]).map((e) => e[0]);
  const allMerges = fs.readFileSync(path.join(root, 'tests/data/gpt2/merges.txt'), 'utf8')
                        .split('\n')
                        .slice(1, -1);
  // GPT-2's ids 0-255 are the byte symbols and id 256 + i the result of merge i, so its first
  // 2,000 merges with the tokens they make are a complete, smaller byte-level BPE.
  const merges = allMerges.slice(0, 2000);
  const tokens = ['<s>', '<pad>', '</s>', '<unk>', ...byId.slice(0, 256 + merges.length), '<mask>'];
  merges.forEach((m, i) => assert.strictEqual(m.replace(' ', ''), byId[256 + i]));
  const vocab = Object.fromEntries(tokens.map((t, i) => [t, i]));
  fs.writeFileSync(path.join(outDir, 'roberta', 'vocab.json'), JSON.stringify(vocab));
  fs.writeFileSync(
      path.join(outDir, 'roberta', 'merges.txt'), '#version: 0.2\n' + merges.join('\n') + '\n');

  const tokenizer =
      new hf.Tokenizer(hf.BPE.init(vocab, merges.map((line) => line.split(' ')), {}));
  tokenizer.setPreTokenizer(hf.byteLevelPreTokenizer(true, true));
  tokenizer.setPostProcessor(
      hf.robertaProcessing(['</s>', vocab['</s>']], ['<s>', vocab['<s>']], true, true));
  tokenizer.addSpecialTokens(['<s>', '<pad>', '</s>', '<unk>', '<mask>']);
  saveWithByteLevelDecoder(tokenizer, path.join(outDir, 'roberta.json'), true);
}

// [name, text]: GPT-2's messy texts, BERT's golden cases, and texts that probe added tokens,
// prefix spaces and the post-processors.
function texts() {
  const list = [];
  for (const c of JSON.parse(
           fs.readFileSync(path.join(root, 'tests/data/gpt2/expected_ids.json'), 'utf8'))) {
    list.push([`gpt2: ${c.name}`, c.text]);
  }
  for (const c of JSON.parse(
           fs.readFileSync(path.join(root, 'tests/data/golden/golden.json'), 'utf8'))) {
    if (c.text_pair === null && c.max_length === 0) list.push([`golden: ${c.name}`, c.text]);
  }
  list.push(
      ['special tokens', 'Hello [MASK] world[SEP] [CLS][cls] [UNK]x'],
      ['endoftext', 'a<|endoftext|>b <|endoftext|> c<|endoftext|>'],
      ['roberta specials', '<s>Hi</s> there <mask>! <pad><unk>'],
      ['specials only', '<mask>'],
      ['leading newline', '\nhello world'],
      ['leading tab', '\tindented'],
      ['leading space', ' spaced out'],
      ['leading ideographic space', '\u3000x y'],
      ['lstrip', 'a <mask> b   <mask>\t<mask>'],
      ['rstrip', 'x[X]   y [X]\n[X]'],
      ['single word', 'foo bar foobar a foo_ b food foo! (foo) 3foo'],
      ['longest match', '<m<mask> <<mask>> <m <ma'],
      ['rstrip then lstrip', '[X]   <mask> [X]<mask>'],
      ['CJK Extension E', 'a\u{2B820}b a\u{2B920}b'],
  );
  return list;
}

const PAIRS = [
  ['Hello world', 'How are you?'],
  ['', 'only b'],
  ['only a', ''],
  ['The quick brown fox.', '\u6211\u7231\u4f60 caf\u00e9!'],
  ['a<|endoftext|>b', '<mask> and [MASK]'],
];

async function encodeAll(file, name) {
  const tokenizer = hf.Tokenizer.fromFile(path.join(outDir, file));
  const cases = [];
  for (const [caseName, text] of texts()) {
    const withSpecials = await tokenizer.encode(text, null);
    const plain = await tokenizer.encode(text, null, {addSpecialTokens: false});
    cases.push({
      tokenizer: name,
      name: caseName,
      text,
      pair: null,
      ids: withSpecials.getIds(),
      type_ids: withSpecials.getTypeIds(),
      special_tokens_mask: withSpecials.getSpecialTokensMask(),
      ids_without_specials: plain.getIds(),
    });
  }
  for (const [i, [a, b]] of PAIRS.entries()) {
    const withSpecials = await tokenizer.encode(a, b);
    const plain = await tokenizer.encode(a, b, {addSpecialTokens: false});
    cases.push({
      tokenizer: name,
      name: `pair ${i}`,
      text: a,
      pair: b,
      ids: withSpecials.getIds(),
      type_ids: withSpecials.getTypeIds(),
      special_tokens_mask: withSpecials.getSpecialTokensMask(),
      ids_without_specials: plain.getIds(),
    });
  }
  return cases;
}

async function main() {
  bert('bert.json', true);
  bert('bert_cased.json', false);
  gpt2();
  roberta();
  addedTokens();
  bertTruncation();
  const cases = [];
  for (const name of ['bert', 'bert_cased', 'gpt2', 'roberta', 'added_tokens']) {
    cases.push(...await encodeAll(`${name}.json`, name));
  }
  // One case per line, so a change reads as a change to the cases it touches.
  const lines = cases.map((c) => '  ' + JSON.stringify(c));
  fs.writeFileSync(path.join(outDir, 'expected_ids.json'), '[\n' + lines.join(',\n') + '\n]\n');
  console.log(`wrote ${cases.length} cases to ${path.join(outDir, 'expected_ids.json')}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
