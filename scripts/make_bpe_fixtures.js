#!/usr/bin/env node
// Writes tests/data/gpt2/expected_ids.json: GPT-2's token ids for a set of messy texts, from two
// independent encoders that must agree, so heed's byte-level BPE (data/byte_level_bpe.cpp) is
// checked against OpenAI's encoder rather than against itself.
//
//   gpt-3-encoder 1.1.4: OpenAI's encoder.py ported to JavaScript, with OpenAI's encoder.json
//                        and vocab.bpe (committed as tests/data/gpt2/vocab.json, merges.txt).
//   tiktoken:            OpenAI's Rust encoder as WebAssembly, get_encoding("gpt2").
//
// Where they disagree, tiktoken is the truth (it is OpenAI's own code; gpt-3-encoder runs the
// pattern through JavaScript's regex, whose \s is not Python's): each such text is listed in
// KNOWN_DISAGREEMENTS with the reason, and the script fails on any other disagreement.
//
// Usage (from the repository root; the npm prefix is any scratch directory outside the repo):
//   npm install --prefix /tmp/bpe-ref gpt-3-encoder@1.1.4 tiktoken@1.0.22
//   node scripts/make_bpe_fixtures.js /tmp/bpe-ref
'use strict';

const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');

const prefix = process.argv[2];
if (!prefix) {
  console.error(
      'usage: node scripts/make_bpe_fixtures.js <npm prefix with gpt-3-encoder and tiktoken>');
  process.exit(2);
}
const modules = path.resolve(prefix, 'node_modules');
const gpt3 = require(path.join(modules, 'gpt-3-encoder'));
const tiktoken = require(path.join(modules, 'tiktoken'));
const outDir = path.join(__dirname, '..', 'tests', 'data', 'gpt2');

// The committed vocabulary and merges must be the ones gpt-3-encoder encodes with, or the
// fixture would test other files than the C++ test loads.
for (const [pkgFile, repoFile] of [['encoder.json', 'vocab.json'], ['vocab.bpe', 'merges.txt']]) {
  const a = fs.readFileSync(path.join(modules, 'gpt-3-encoder', pkgFile));
  const b = fs.readFileSync(path.join(outDir, repoFile));
  assert(a.equals(b), `${repoFile} differs from gpt-3-encoder's ${pkgFile}`);
}

// [name, text]. Each probes a part of the pattern or of the byte table.
const TEXTS = [
  ['empty', ''],
  ['single space', ' '],
  ['hello world', 'Hello world'],
  ['contractions', `I'm sure they'll say it's fine; we've done what you'd've done, haven't we?`],
  ['upper-case contractions', `DON'T SHOUT, IT'S RUDE. HE'S HERE; WE'LL SEE, I'M TOLD.`],
  ['bare apostrophes', `'s 's's ''s 'tis rock'n'roll 'S'T'RE'VE'M'LL'D`],
  ['typographic apostrophes', 'It\u2019s John\u2019s book, isn\u2019t it? \u2018quoted\u2019'],
  ['number separators', `1,234,567.89 and 1 000 000 and 1'000'000 and 1_000_000 and 3.14159`],
  [
    'other numbers',
    'Call +1 (555) 123-4567; \u00be cup; x\u00b2\u00b3; \u0663\u0664\u0665; \u216b; \u2460'
  ],
  ['long digits', '3141592653589793238462643383279502884197169399375105820974944592307816406286'],
  ['letters and digits', 'abc123def 4you COVID-19 H2O mp3 1st 2nd 3rd 100%'],
  ['runs of spaces', 'a  b   c    d     e'],
  ['tabs', 'col1\tcol2\t\tcol3 \t mixed\t'],
  ['trailing spaces', 'trailing spaces   '],
  ['leading spaces', '   leading'],
  ['spaces before newline', 'hello  \n  world'],
  ['newlines', 'line one\nline two\n\nline four\n'],
  ['windows newlines', 'windows\r\nline\r\n\r\nend\r\n'],
  ['only whitespace', '\n\n\t  \r\n '],
  ['indented code', 'def f(x):\n    return x ** 2  # square\n\n\tif x:\n\t\tpass\n'],
  [
    'composed accents',
    'caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00c5ngstr\u00f6m \u00fcber se\u00f1or'
  ],
  ['decomposed accents', 'cafe\u0301 nai\u0308ve re\u0301sume\u0301 A\u030angstro\u0308m'],
  ['combining mark after space', 'a \u0301 b \u0308\u0308'],
  [
    'Chinese and Japanese',
    '\u6211\u7231\u81ea\u7136\u8bed\u8a00\u5904\u7406\u3002\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002'
  ],
  [
    'Korean',
    '\uc548\ub155\ud558\uc138\uc694, \uc138\uacc4! \ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8\uc785\ub2c8\ub2e4. \u1100\u1161\u11a8'
  ],
  [
    'Arabic',
    '\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645! \u0647\u0630\u0627 \u0646\u0635 \u0639\u0631\u0628\u064a\u064c \u200f\u0645\u0631\u062d\u0628\u0627\u200e'
  ],
  [
    'Devanagari and Thai',
    '\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e \u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e04\u0e23\u0e31\u0e1a'
  ],
  [
    'Cyrillic and Greek',
    '\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5 \u039a\u03cc\u03c3\u03bc\u03b5'
  ],
  ['emoji', 'I love \ud83c\udf55 and \ud83c\udf89\ud83c\udf89! \ud83d\udc4d\ud83c\udffd'],
  [
    'ZWJ sequences',
    '\ud83d\udc69\u200d\ud83d\udcbb \ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67\u200d\ud83d\udc66 \ud83c\udff3\ufe0f\u200d\ud83c\udf08'
  ],
  ['flags', '\ud83c\uddeb\ud83c\uddf7\ud83c\udde9\ud83c\uddea\ud83c\uddef\ud83c\uddf5 flags'],
  [
    'four-byte letters',
    '\ud800\udf48 Gothic \ud835\udc9c\ud835\udcc1 \ud835\udfd9\ud835\udfda \ud80c\udc00'
  ],
  ['control characters', 'nul\u0000bel\u0007esc\u001b[31mred\u001b[0m del\u007f \u0001\u0002'],
  ['unusual whitespace', 'a\u000bb\u000cc\u001cd \u00a0e\u2028f\u3000g\u2003h\u200bi'],
  ['next line', 'a\u0085b \u0085c'],
  ['byte order mark', '\ufeffbom at start; \ufeff!\ufeff? \ufeff\ufeff.'],
  ['endoftext as text', '<|endoftext|>'],
  ['endoftext inside text', 'Hello<|endoftext|>World <|endoftext|> again'],
  ['very long word', 'a'.repeat(300)],
  ['long repeated word', 'supercalifragilisticexpialidocious'.repeat(12)],
  ['punctuation runs', 'Wait...what?!?! ---- ***** ,,,,,, ;;; ::: !!!'],
  [
    'quotes and symbols',
    '"quoted" \u00abguillemets\u00bb \u201eGerman\u201c \u2211 x\u00b2 \u2264 \u221e \u2192 \u221a2 \u2248 1.414'
  ],
  ['url', 'https://www.wikipedia.org/wiki/Byte_pair_encoding?a=1&b=two#History'],
  ['private use', '\ue000\uf8ff \udbff\udffd'],
  [
    'mixed paragraph',
    'The quick brown fox\u2014it\u2019s 3:45pm!\u2014jumps over 2 lazy dogs.\r\n\r\n\tNext\u00a0paragraph\u2026 '
  ],
];

const KNOWN_DISAGREEMENTS = {
  // JavaScript's \s matches U+FEFF and not U+0085; Python's (and tiktoken's) the reverse.
  'next line': `gpt-3-encoder's \\s (JavaScript) does not match U+0085, Python's and tiktoken's do`,
  'byte order mark':
      `gpt-3-encoder's \\s (JavaScript) matches U+FEFF, Python's and tiktoken's do not`,
};

const enc = tiktoken.get_encoding('gpt2');
const utf8 = new TextDecoder('utf-8', {fatal: true, ignoreBOM: true});
const cases = [];
const seen = new Set();
for (const [name, text] of TEXTS) {
  assert(!seen.has(name), `two texts are named ${name}`);
  seen.add(name);
  assert(text.isWellFormed(), `${name}: not valid Unicode`);
  const truth = Array.from(enc.encode_ordinary(text));
  const other = gpt3.encode(text);
  const agree = JSON.stringify(truth) === JSON.stringify(other);
  if (name in KNOWN_DISAGREEMENTS) {
    assert(!agree, `${name}: listed as a disagreement, but the encoders agree`);
    console.log(`${name}: disagree as expected (${KNOWN_DISAGREEMENTS[name]})`);
  } else {
    assert(
        agree,
        `${name}: tiktoken ${JSON.stringify(truth)} != gpt-3-encoder ${JSON.stringify(other)}`);
  }
  // The ids must give the text back (ignoreBOM: keep a leading U+FEFF, which is text here).
  assert.strictEqual(
      utf8.decode(enc.decode(new Uint32Array(truth))), text, `${name}: no round trip`);
  cases.push({name, text, ids: truth});
}
enc.free();

// One text per line, so a change to the fixture reads as a change to the texts it touches.
const lines = cases.map((c) => '  ' + JSON.stringify(c));
fs.writeFileSync(path.join(outDir, 'expected_ids.json'), '[\n' + lines.join(',\n') + '\n]\n');
console.log(`wrote ${cases.length} texts to ${path.join(outDir, 'expected_ids.json')}`);
