#!/usr/bin/env node
// tiktoken's GPT-2 encoding (OpenAI's Rust encoder compiled to WebAssembly, from npm) on the
// corpus bench/tokenizer_bench.cpp encodes, the same way: one encode_ordinary call per line,
// one untimed pass, then timed passes. Prints the `key: value` lines
// bench/compare_tokenizers.sh reads.
//
//   npm install --prefix bench/node tiktoken@1.0.22     (once; bench/node is not committed)
//   node bench/tokenizer_baselines.js [--corpus FILE] [--passes 2] [--prefix bench/node]
//   node bench/tokenizer_baselines.js --print-ids N    (the ids of the first N lines instead)
//
// encode_ordinary is tiktoken's fastest call for ordinary text, and what heed's
// ByteLevelBpe::encode matches: encode() also scans each text for special tokens.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

function parseArgs(argv) {
  const args = {
    corpus: process.env.HEED_BENCH_CORPUS || 'datasets/pretrain/train.txt',
    passes: 2,
    prefix: path.join(__dirname, 'node'),
    printIds: 0,
  };
  const names = {'--corpus': 'corpus', '--passes': 'passes', '--prefix': 'prefix',
                 '--print-ids': 'printIds'};
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    if (!key || i + 1 >= argv.length) {
      throw new Error(`unknown or incomplete option '${argv[i]}' (options: ` +
                      Object.keys(names).join(', ') + ')');
    }
    args[key] = key === 'corpus' || key === 'prefix' ? argv[i + 1] : Number(argv[i + 1]);
  }
  if (!(Number.isInteger(args.passes) && args.passes >= 1)) {
    throw new Error('--passes must be a whole number of at least 1');
  }
  return args;
}

function loadTiktoken(prefix) {
  const dir = path.join(path.resolve(prefix), 'node_modules', 'tiktoken');
  if (!fs.existsSync(dir)) {
    throw new Error(`tiktoken is not installed in ${prefix}: ` +
                    `npm install --prefix ${prefix} tiktoken@1.0.22`);
  }
  return {tiktoken: require(dir), version: require(path.join(dir, 'package.json')).version};
}

// The lines without their "\n", as std::getline gives them; the corpus must be UTF-8.
function readLines(file) {
  const text = new TextDecoder('utf-8', {fatal: true}).decode(fs.readFileSync(file));
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function encodeAll(encoding, lines) {
  let tokens = 0;
  for (const line of lines) tokens += encoding.encode_ordinary(line).length;
  return tokens;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const {tiktoken, version} = loadTiktoken(args.prefix);
  const encoding = tiktoken.get_encoding('gpt2');
  let lines = readLines(args.corpus);
  if (args.printIds > 0) {
    const out = lines.slice(0, args.printIds).map(l => encoding.encode_ordinary(l).join(' '));
    process.stdout.write(out.join('\n') + '\n');
    return;
  }
  let bytes = 0;
  for (const line of lines) bytes += Buffer.byteLength(line, 'utf8') + 1;

  encodeAll(encoding, lines);  // warm-up: V8 tiers the WebAssembly up on hot functions
  let tokens = 0;
  const start = process.hrtime.bigint();
  for (let p = 0; p < args.passes; ++p) tokens = encodeAll(encoding, lines);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;

  console.log(`implementation: tiktoken ${version} gpt2 encode_ordinary (Node ${process.version})`);
  console.log(`lines: ${lines.length}`);
  console.log(`MB: ${(bytes / 1e6).toFixed(6)}`);
  console.log(`tokens: ${tokens}`);
  console.log(`seconds: ${(seconds / args.passes).toFixed(6)}`);
  console.log(`MB_per_s: ${(bytes * args.passes / seconds / 1e6).toFixed(3)}`);
  encoding.free();
}

try {
  main();
} catch (e) {
  console.error(`tokenizer_baselines.js: ${e.message}`);
  process.exit(2);
}
