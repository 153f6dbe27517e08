// Decoding: greedy against score's distributions, seeded sampling, top-k / top-p /
// temperature, stopping rules, and beam search against greedy and exhaustive search.
#include "decode/generation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "support/test_util.h"
#include "support/tiny_models.h"

namespace heed::decode {
namespace {

using testing::tiny_bart;
using testing::tiny_gpt;

GenerationOptions greedy_options(int64_t max_new_tokens) {
  GenerationOptions o;
  o.greedy = true;
  o.max_new_tokens = max_new_tokens;
  return o;
}

GenerationOptions sampling_options(uint64_t seed, int64_t max_new_tokens) {
  GenerationOptions o;
  o.seed = seed;
  o.max_new_tokens = max_new_tokens;
  return o;
}

// Logits whose softmax is exactly `probs` (up to rounding).
std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> logits;
  for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

std::vector<bool> kept(const std::vector<float>& logits) {
  std::vector<bool> k;
  for (float x : logits) k.push_back(std::isfinite(x));
  return k;
}

const std::vector<int32_t> kPrompt = {1, 5, 3, 8};

TEST(Generation, GreedyEqualsArgmaxOfScoreDistributionsStepByStep) {
  auto gpt = tiny_gpt();
  const GenerationResult r = generate(*gpt, kPrompt, greedy_options(12));
  ASSERT_EQ(r.tokens.size(), 12u);  // no eos given: runs to max_new_tokens
  EXPECT_EQ(r.stop_reason, StopReason::max_new_tokens);

  std::vector<int32_t> full = kPrompt;
  full.insert(full.end(), r.tokens.begin(), r.tokens.end());
  const Tensor log_probs = next_token_log_probs(*gpt, full);  // row t: p(. | full[0..t])
  ASSERT_EQ(log_probs.shape(), Shape({static_cast<int64_t>(full.size()), 12}));
  const Tensor predicted = heed::argmax(log_probs, 1);
  const std::vector<int64_t> best = predicted.to_vector<int64_t>();
  const ScoreResult s = score(*gpt, full);
  for (size_t i = 0; i < r.tokens.size(); ++i) {
    const size_t t = kPrompt.size() - 1 + i;  // the row that predicts token i
    EXPECT_EQ(best[t], r.tokens[i]) << "step " << i;
    EXPECT_NEAR(r.log_probs[i], s.log_probs[t], 1e-4) << "step " << i;
  }
}

TEST(Generation, ScoreAgreesWithTheModelsLoss) {
  auto gpt = tiny_gpt();
  const std::vector<int32_t> ids = {1, 4, 4, 9, 2, 7, 3};
  const ScoreResult s = score(*gpt, ids);
  ASSERT_EQ(s.log_probs.size(), ids.size() - 1);
  double sum = 0.0;
  for (double x : s.log_probs) {
    EXPECT_LT(x, 0.0);
    sum += x;
  }
  EXPECT_NEAR(s.total_log_prob, sum, 1e-9);
  // GPT's own loss with labels[t] = ids[t + 1] (the collator's shift) is the mean
  // next-token cross-entropy.
  NoGradGuard no_grad;
  nn::ModelInputs in;
  const int64_t T = static_cast<int64_t>(ids.size());
  in.input_ids = from_vector(std::vector<int64_t>(ids.begin(), ids.end()), {1, T});
  std::vector<int64_t> next(ids.begin() + 1, ids.end());
  next.push_back(-100);
  in.labels = from_vector(next, {1, T});
  const double loss = gpt->forward(in).loss.item();
  EXPECT_NEAR(-s.total_log_prob / s.log_probs.size(), loss, 1e-5);
  EXPECT_NEAR(s.perplexity, std::exp(loss), 1e-4 * std::exp(loss));
  // Each row of the distributions sums to one.
  const std::vector<float> lp = next_token_log_probs(*gpt, ids).to_vector<float>();
  for (size_t t = 0; t < ids.size(); ++t) {
    double mass = 0.0;
    for (size_t v = 0; v < 12; ++v) mass += std::exp(lp[t * 12 + v]);
    EXPECT_NEAR(mass, 1.0, 1e-5);
  }
  EXPECT_THROW(score(*gpt, std::vector<int32_t>{1}), Error);
}

TEST(Generation, SamplingWithASeedIsReproducibleAndSeedsDiffer) {
  auto gpt = tiny_gpt();
  GenerationOptions o = sampling_options(42, 16);
  o.temperature = 3.0;  // flat enough that two seeds cannot agree by chance on 16 tokens
  const GenerationResult a = generate(*gpt, kPrompt, o);
  const GenerationResult b = generate(*gpt, kPrompt, o);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.log_probs, b.log_probs);
  o.seed = 43;
  const GenerationResult c = generate(*gpt, kPrompt, o);
  EXPECT_EQ(c.tokens.size(), 16u);
  EXPECT_NE(a.tokens, c.tokens);
}

TEST(Generation, TopKOfOneIsGreedy) {
  auto gpt = tiny_gpt();
  const GenerationResult greedy = generate(*gpt, kPrompt, greedy_options(10));
  for (uint64_t seed : {1, 2, 3}) {
    GenerationOptions o = sampling_options(seed, 10);
    o.top_k = 1;
    o.temperature = 2.0;
    EXPECT_EQ(generate(*gpt, kPrompt, o).tokens, greedy.tokens) << "seed " << seed;
  }
}

TEST(Generation, TemperatureTowardsZeroIsGreedy) {
  auto gpt = tiny_gpt();
  const GenerationResult greedy = generate(*gpt, kPrompt, greedy_options(10));
  GenerationOptions o = sampling_options(5, 10);
  o.temperature = 1e-3;
  EXPECT_EQ(generate(*gpt, kPrompt, o).tokens, greedy.tokens);
  o.temperature = 0.0;  // the limit itself: greedy, no draws
  const GenerationResult zero = generate(*gpt, kPrompt, o);
  EXPECT_EQ(zero.tokens, greedy.tokens);
  EXPECT_EQ(zero.log_probs, greedy.log_probs);
}

TEST(Generation, TopPKeepsTheSmallestSetReachingP) {
  // Probabilities by id: the order by probability is 3, 0, 4, 1, 2.
  const std::vector<double> probs = {0.2, 0.1, 0.05, 0.5, 0.15};
  auto run = [&](double p) {
    std::vector<float> logits = logits_of(probs);
    apply_top_p(logits, p);
    return kept(logits);
  };
  EXPECT_EQ(run(0.3), (std::vector<bool>{false, false, false, true, false}));  // 0.5 >= 0.3
  EXPECT_EQ(run(0.5 - 1e-6), (std::vector<bool>{false, false, false, true, false}));
  EXPECT_EQ(run(0.6), (std::vector<bool>{true, false, false, true, false}));  // 0.7 >= 0.6
  EXPECT_EQ(run(0.8), (std::vector<bool>{true, false, false, true, true}));   // 0.85
  EXPECT_EQ(run(0.9), (std::vector<bool>{true, true, false, true, true}));    // 0.95
  EXPECT_EQ(run(0.99), (std::vector<bool>{true, true, true, true, true}));
  EXPECT_EQ(run(1.0), (std::vector<bool>{true, true, true, true, true}));
  EXPECT_EQ(run(1e-9), (std::vector<bool>{false, false, false, true, false}));  // at least one
  // Kept logits are unchanged; sampling never picks a removed token.
  std::vector<float> logits = logits_of(probs);
  apply_top_p(logits, 0.6);
  EXPECT_EQ(logits[3], static_cast<float>(std::log(0.5)));
  Generator g(3);
  for (int i = 0; i < 2000; ++i) {
    const int32_t t = sample(logits, g);
    EXPECT_TRUE(t == 0 || t == 3) << t;
  }
}

TEST(Generation, TopKKeepsTheKLargest) {
  std::vector<float> logits = {0.5f, 3.0f, -1.0f, 2.0f, 2.5f};
  apply_top_k(logits, 2);
  EXPECT_EQ(kept(logits), (std::vector<bool>{false, true, false, false, true}));
  std::vector<float> all = {0.5f, 3.0f, -1.0f};
  apply_top_k(all, 0);  // off
  EXPECT_EQ(kept(all), (std::vector<bool>{true, true, true}));
  apply_top_k(all, 10);  // more than the vocabulary
  EXPECT_EQ(kept(all), (std::vector<bool>{true, true, true}));
}

TEST(Generation, SampleFollowsTheDistribution) {
  const std::vector<double> probs = {0.5, 0.3, 0.2};
  const std::vector<float> logits = logits_of(probs);
  Generator g(123);
  std::vector<int> counts(3, 0);
  const int n = 40000;
  for (int i = 0; i < n; ++i) ++counts[sample(logits, g)];
  // Standard error of each share is under 0.0025; 4 of them is far out of chance.
  for (size_t i = 0; i < probs.size(); ++i) EXPECT_NEAR(counts[i] / double(n), probs[i], 0.01);
  // Temperature 2 flattens: p_i^(1/2) normalised.
  std::vector<float> warm = logits;
  apply_temperature(warm, 2.0);
  std::fill(counts.begin(), counts.end(), 0);
  for (int i = 0; i < n; ++i) ++counts[sample(warm, g)];
  double z = 0.0;
  for (double p : probs) z += std::sqrt(p);
  for (size_t i = 0; i < probs.size(); ++i) {
    EXPECT_NEAR(counts[i] / double(n), std::sqrt(probs[i]) / z, 0.01);
  }
}

TEST(Generation, StopsAfterTheEosToken) {
  auto gpt = tiny_gpt();
  const GenerationResult free_run = generate(*gpt, kPrompt, greedy_options(12));
  // Declare the third generated token the end token: generation must stop right there.
  const int32_t eos = free_run.tokens[2];
  const size_t first =
      std::find(free_run.tokens.begin(), free_run.tokens.end(), eos) - free_run.tokens.begin();
  GenerationOptions o = greedy_options(12);
  o.eos_token_id = eos;
  const GenerationResult r = generate(*gpt, kPrompt, o);
  EXPECT_EQ(r.stop_reason, StopReason::eos);
  EXPECT_EQ(r.tokens,
            std::vector<int32_t>(free_run.tokens.begin(), free_run.tokens.begin() + first + 1));
}

TEST(Generation, StopsWhenTheModelsPositionsAreFull) {
  auto gpt = tiny_gpt(12, 10);
  const GenerationResult r = generate(*gpt, kPrompt, greedy_options(50));
  EXPECT_EQ(r.tokens.size(), 6u);
  EXPECT_EQ(r.stop_reason, StopReason::max_length);
  EXPECT_TRUE(generate(*gpt, kPrompt, greedy_options(0)).tokens.empty());
}

TEST(Generation, RejectsBadOptions) {
  auto gpt = tiny_gpt();
  GenerationOptions o = sampling_options(0, 4);
  o.top_p = 0.0;
  EXPECT_THROW(generate(*gpt, kPrompt, o), Error);
  o = sampling_options(0, 4);
  o.temperature = -1.0;
  EXPECT_THROW(generate(*gpt, kPrompt, o), Error);
  EXPECT_THROW(generate(*gpt, std::vector<int32_t>{}, greedy_options(3)), Error);
  gpt->train();  // dropout on would make generation random
  EXPECT_THROW(generate(*gpt, kPrompt, greedy_options(3)), Error);
}

TEST(Generation, Seq2SeqGreedyStartsFromTheDecoderStartAndStopsAtEos) {
  auto bart = tiny_bart();
  const std::vector<int32_t> source = {5, 6, 7, 3};
  const GenerationResult r = generate(*bart, source, greedy_options(20));
  ASSERT_FALSE(r.tokens.empty());
  // Same tokens as stepping the decoder by hand from [start], the whole prefix each time.
  Seq2SeqNextToken next(*bart, source, /*use_cache=*/false);
  std::vector<int32_t> prefix = {1};
  for (size_t i = 0; i < r.tokens.size(); ++i) {
    const std::vector<float> logits = next.next_logits({prefix}).to_vector<float>();
    EXPECT_EQ(argmax(logits), r.tokens[i]) << "step " << i;
    prefix.push_back(r.tokens[i]);
  }
  if (r.stop_reason == StopReason::eos) {
    EXPECT_EQ(r.tokens.back(), 2);
  } else {
    EXPECT_EQ(std::count(r.tokens.begin(), r.tokens.end(), 2), 0);
  }
}

TEST(Generation, BatchedGreedyDecodingEqualsDecodingEachSourceAlone) {
  auto bart = tiny_bart();
  // Different lengths, so the batch pads and masks its shorter sources.
  const std::vector<std::vector<int32_t>> sources = {
      {5, 6, 7, 3}, {4}, {9, 9, 8, 7, 6, 5, 4}, {3, 10}, {11, 4, 5}};
  // Random weights rarely pick the configured eos, so make the eos a token that one output
  // holds and another lacks: some rows then finish early while others run on.
  const auto unstopped = greedy_decode_batch(*bart, sources, 12);
  const auto holds = [](const std::vector<int32_t>& v, int32_t t) {
    return std::find(v.begin(), v.end(), t) != v.end();
  };
  std::optional<int32_t> eos;
  for (const auto& output : unstopped)
    for (int32_t t : output)
      for (const auto& other : unstopped)
        if (!eos && !holds(other, t)) eos = t;
  ASSERT_TRUE(eos.has_value());
  bart->config.eos_token_id = *eos;
  const auto outputs = greedy_decode_batch(*bart, sources, 12);
  ASSERT_EQ(outputs.size(), sources.size());
  int reached_eos = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    const GenerationResult alone = generate(*bart, sources[i], greedy_options(12));
    EXPECT_EQ(outputs[i], alone.tokens) << "source " << i;
    // ... and what decoding without the cache gives (the batch drops finished rows).
    Seq2SeqNextToken plain(*bart, sources[i], /*use_cache=*/false);
    GenerationOptions o = greedy_options(12);
    o.eos_token_id = *eos;
    EXPECT_EQ(outputs[i], generate(plain, {1}, o).tokens) << "source " << i;
    reached_eos += alone.stop_reason == StopReason::eos;
  }
  // Both kinds of row are covered: some stop at the eos while others run on.
  EXPECT_GT(reached_eos, 0);
  EXPECT_LT(reached_eos, static_cast<int>(sources.size()));
  EXPECT_TRUE(greedy_decode_batch(*bart, {}, 12).empty());
  EXPECT_THROW(greedy_decode_batch(*bart, {{}}, 12), Error);
}

// The models' KV cache runs only the new token of each prefix; its logits must be those of
// the whole prefix run again, through extensions, beam-like reorderings (rows repeated and
// dropped) and a call that extends nothing (the cache starts again).
TEST(Generation, CachedNextTokenLogitsEqualRecomputingThePrefix) {
  const std::vector<std::vector<std::vector<int32_t>>> calls = {
      {{1, 4}},
      {{1, 4, 5}},
      {{1, 4, 5, 6}, {1, 4, 5, 7}, {1, 4, 5, 6}},
      {{1, 4, 5, 7, 3}, {1, 4, 5, 6, 2}},
      {{1, 9}},
      {{1, 9, 9}, {1, 9, 8}}};
  auto check = [&](NextTokenModel& cached, NextTokenModel& plain, const char* what) {
    for (size_t i = 0; i < calls.size(); ++i) {
      const Tensor a = cached.next_logits(calls[i]), b = plain.next_logits(calls[i]);
      ASSERT_EQ(a.shape(), b.shape()) << what << " call " << i;
      EXPECT_LT(testing::max_relative_error(a, b), 2e-5) << what << " call " << i;
    }
  };
  auto gpt = tiny_gpt();
  GptNextToken gpt_cached(*gpt), gpt_plain(*gpt, /*use_cache=*/false);
  check(gpt_cached, gpt_plain, "gpt");
  auto bart = tiny_bart();
  const std::vector<int32_t> source{5, 6, 7, 3};
  Seq2SeqNextToken bart_cached(*bart, source), bart_plain(*bart, source, /*use_cache=*/false);
  check(bart_cached, bart_plain, "bart");
}

TEST(Generation, CachedGreedySamplingAndBeamSearchEqualRecomputing) {
  auto gpt = tiny_gpt();
  auto bart = tiny_bart();
  const std::vector<int32_t> source{9, 3, 3, 4, 10};
  const auto start =
      std::vector<int32_t>{static_cast<int32_t>(bart->config.decoder_start_token_id)};
  BeamSearchOptions beams;
  beams.num_beams = 3;
  beams.max_new_tokens = 10;
  for (bool gpt_model : {true, false}) {
    auto make = [&](bool use_cache) -> std::unique_ptr<NextTokenModel> {
      if (gpt_model) return std::make_unique<GptNextToken>(*gpt, use_cache);
      return std::make_unique<Seq2SeqNextToken>(*bart, source, use_cache);
    };
    const std::vector<int32_t> prefix = gpt_model ? kPrompt : start;
    auto cached = make(true), plain = make(false);
    for (const GenerationOptions& o :
         {greedy_options(12), sampling_options(3, 12), sampling_options(4, 12)}) {
      const GenerationResult a = generate(*cached, prefix, o), b = generate(*plain, prefix, o);
      EXPECT_EQ(a.tokens, b.tokens) << (gpt_model ? "gpt" : "bart");
      EXPECT_NEAR(a.total_log_prob, b.total_log_prob, 1e-4);
    }
    const BeamSearchResult a = beam_search(*cached, prefix, beams);
    const BeamSearchResult b = beam_search(*plain, prefix, beams);
    EXPECT_EQ(a.best.tokens, b.best.tokens) << (gpt_model ? "gpt" : "bart");
    EXPECT_NEAR(a.score, b.score, 1e-4);
  }
}

// T5 decodes over its KV cache with the relative bias of the new position alone: greedy,
// sampling and beam search give the tokens that recomputing every prefix gives, and the batched
// greedy decoder what decoding each source alone gives.
TEST(Generation, T5CachedDecodingEqualsRecomputing) {
  auto t5 = testing::tiny_t5();
  const std::vector<int32_t> source{9, 3, 3, 4, 10, 2};
  const std::vector<int32_t> start{0};
  Seq2SeqNextToken cached(*t5, source), plain(*t5, source, /*use_cache=*/false);
  for (const GenerationOptions& o :
       {greedy_options(14), sampling_options(3, 14), sampling_options(4, 14)}) {
    const GenerationResult a = generate(cached, start, o), b = generate(plain, start, o);
    EXPECT_EQ(a.tokens, b.tokens);
    EXPECT_NEAR(a.total_log_prob, b.total_log_prob, 1e-4);
  }
  BeamSearchOptions beams;
  beams.num_beams = 3;
  beams.max_new_tokens = 14;
  const BeamSearchResult a = beam_search(cached, start, beams),
                         b = beam_search(plain, start, beams);
  EXPECT_EQ(a.best.tokens, b.best.tokens);
  EXPECT_NEAR(a.score, b.score, 1e-4);
  const std::vector<std::vector<int32_t>> sources = {source, {4}, {11, 4, 5, 2}};
  const auto batched = greedy_decode_batch(*t5, sources, 14);
  for (size_t i = 0; i < sources.size(); ++i)
    EXPECT_EQ(batched[i], generate(*t5, sources[i], greedy_options(14)).tokens) << i;
}

// Scoring a decoded output under an encoder-decoder gives back the log-probabilities decoding
// reported for it, token for token, and its mean is the model's teacher-forced loss.
TEST(Generation, Seq2SeqScoreAgreesWithDecodingAndTheLoss) {
  for (const bool t5_model : {false, true}) {
    SCOPED_TRACE(t5_model ? "t5" : "bart");
    std::shared_ptr<nn::Seq2SeqModel> model;
    if (t5_model) {
      model = testing::tiny_t5();
    } else {
      model = tiny_bart();
    }
    const std::vector<int32_t> source{9, 3, 3, 4, 10, 2};
    const GenerationResult r = generate(*model, source, sampling_options(5, 10));
    ASSERT_FALSE(r.tokens.empty());
    const ScoreResult s = score(*model, source, r.tokens);
    ASSERT_EQ(s.log_probs.size(), r.tokens.size());
    for (size_t i = 0; i < r.tokens.size(); ++i)
      EXPECT_NEAR(s.log_probs[i], r.log_probs[i], 1e-4) << "token " << i;
    EXPECT_NEAR(s.total_log_prob, r.total_log_prob, 1e-3);

    NoGradGuard no_grad;
    nn::ModelInputs in;
    in.input_ids = from_vector(std::vector<int64_t>(source.begin(), source.end()),
                               {1, static_cast<int64_t>(source.size())});
    in.labels = from_vector(std::vector<int64_t>(r.tokens.begin(), r.tokens.end()),
                            {1, static_cast<int64_t>(r.tokens.size())});
    const double loss = model->forward(in).loss.item();
    EXPECT_NEAR(-s.total_log_prob / static_cast<double>(s.log_probs.size()), loss, 1e-5);
    EXPECT_NEAR(s.perplexity, std::exp(loss), 1e-4 * std::exp(loss));
  }
}

TEST(Generation, BeamSearchWithOneBeamIsGreedy) {
  auto bart = tiny_bart();
  for (const std::vector<int32_t>& source :
       {std::vector<int32_t>{5, 6, 7}, std::vector<int32_t>{9, 3, 3, 4, 10}}) {
    const GenerationResult greedy = generate(*bart, source, greedy_options(15));
    BeamSearchOptions o;
    o.num_beams = 1;
    o.max_new_tokens = 15;
    const BeamSearchResult beam = beam_search(*bart, source, o);
    EXPECT_EQ(beam.best.tokens, greedy.tokens);
    EXPECT_EQ(beam.best.stop_reason, greedy.stop_reason);
    EXPECT_NEAR(beam.best.total_log_prob, greedy.total_log_prob, 1e-9);
  }
  // The same through a GPT.
  auto gpt = tiny_gpt();
  GptNextToken next(*gpt);
  BeamSearchOptions o;
  o.num_beams = 1;
  o.max_new_tokens = 8;
  EXPECT_EQ(beam_search(next, kPrompt, o).best.tokens,
            generate(*gpt, kPrompt, greedy_options(8)).tokens);
}

// Log-probability of every continuation of length 3 from [start], by scoring each whole
// sequence in one batch: an oracle independent of the search.
std::map<std::vector<int32_t>, double> all_continuations(const nn::EncoderDecoder& bart,
                                                         const std::vector<int32_t>& source,
                                                         int32_t vocab) {
  std::vector<std::vector<int32_t>> sequences;
  for (int32_t a = 0; a < vocab; ++a)
    for (int32_t b = 0; b < vocab; ++b)
      for (int32_t c = 0; c < vocab; ++c) sequences.push_back({a, b, c});
  std::vector<int64_t> flat;
  for (const auto& s : sequences) flat.insert(flat.end(), {1, s[0], s[1], s[2]});
  NoGradGuard no_grad;
  const int64_t N = static_cast<int64_t>(sequences.size());
  const Tensor memory = bart.encode(from_vector(std::vector<int64_t>(source.begin(), source.end()),
                                                {1, static_cast<int64_t>(source.size())}));
  const Tensor logits = bart.decode(
      from_vector(flat, {N, 4}), expand(memory, {N, memory.size(1), memory.size(2)}).contiguous());
  const std::vector<float> lp = log_softmax(logits, 2).to_vector<float>();
  std::map<std::vector<int32_t>, double> result;
  for (int64_t n = 0; n < N; ++n) {
    double sum = 0.0;
    for (int64_t t = 0; t < 3; ++t) sum += lp[(n * 4 + t) * vocab + sequences[n][t]];
    result[sequences[n]] = sum;
  }
  return result;
}

TEST(Generation, BeamSearchWideEnoughFindsTheMostProbableSequenceAndBeatsGreedy) {
  // With no end token every hypothesis has the same length, so the beam objective is the
  // log-probability; with num_beams >= V^2 no prefix is ever pruned before the last step, so
  // the search is exhaustive and its answer is the true optimum, which greedy cannot beat.
  // (With fewer beams neither claim is a theorem: the greedy path can fall out of the beam.)
  const int32_t V = 6;
  auto bart = tiny_bart(V);
  const std::vector<int32_t> source = {3, 4, 5, 3};
  const auto oracle = all_continuations(*bart, source, V);
  auto best = std::max_element(oracle.begin(), oracle.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });

  Seq2SeqNextToken next(*bart, source);
  BeamSearchOptions o;
  o.num_beams = V * V;
  o.max_new_tokens = 3;
  const BeamSearchResult beam = beam_search(next, {1}, o);
  EXPECT_EQ(beam.best.tokens, best->first);
  EXPECT_NEAR(beam.best.total_log_prob, best->second, 1e-4);
  // Length penalty 1: divided by the 4 tokens [start, a, b, c].
  EXPECT_NEAR(beam.score, beam.best.total_log_prob / 4.0, 1e-9);

  GenerationOptions g = greedy_options(3);
  const GenerationResult greedy = generate(next, {1}, g);
  EXPECT_NEAR(greedy.total_log_prob, oracle.at(greedy.tokens), 1e-4);
  // Compared under one scoring (the oracle's), with no tolerance: beam's and greedy's own
  // float32 sums of the same sequence can differ in the last bits on another CPU's kernels.
  EXPECT_GE(oracle.at(beam.best.tokens), oracle.at(greedy.tokens));
}

// A hand-made model over {0: a, 1: b, 2: eos}: the next-token distribution depends only on
// the last token (the first step on the start token alone).
class TableModel : public NextTokenModel {
 public:
  Tensor next_logits(const std::vector<std::vector<int32_t>>& prefixes) override {
    std::vector<float> flat;
    for (const auto& p : prefixes) {
      const std::vector<double>& probs =
          p.size() == 1 ? first_ : (p.back() == 0 ? after_a_ : after_b_);
      for (float x : logits_of(probs)) flat.push_back(x);
    }
    return from_vector(flat, {static_cast<int64_t>(prefixes.size()), 3});
  }
  int64_t max_length() const override { return 32; }

 private:
  std::vector<double> first_ = {0.5, 0.4, 0.1};
  std::vector<double> after_a_ = {0.34, 0.33, 0.33};
  std::vector<double> after_b_ = {0.05, 0.05, 0.9};
};

TEST(Generation, BeamSearchFindsTheLikelierSequenceThatGreedyMisses) {
  TableModel model;
  GenerationOptions g = greedy_options(4);
  g.eos_token_id = 2;
  const GenerationResult greedy = generate(model, {2}, g);  // a a a a
  EXPECT_EQ(greedy.tokens, (std::vector<int32_t>{0, 0, 0, 0}));

  BeamSearchOptions o;
  o.num_beams = 2;
  o.max_new_tokens = 4;
  o.eos_token_id = 2;
  const BeamSearchResult beam = beam_search(model, {2}, o);
  EXPECT_EQ(beam.best.tokens, (std::vector<int32_t>{1, 2}));  // b eos
  EXPECT_EQ(beam.best.stop_reason, StopReason::eos);
  EXPECT_NEAR(beam.best.total_log_prob, std::log(0.4 * 0.9), 1e-6);
  EXPECT_NEAR(beam.score, std::log(0.4 * 0.9) / 2.0, 1e-6);  // [start, b]
  EXPECT_GT(beam.best.total_log_prob, greedy.total_log_prob);
}

TEST(Generation, BeamSearchScoresFinishedHypothesesByLength) {
  auto bart = tiny_bart();
  const std::vector<int32_t> source = {4, 8, 6};
  BeamSearchOptions o;
  o.num_beams = 4;
  o.max_new_tokens = 12;
  const BeamSearchResult r = beam_search(*bart, source, o);
  ASSERT_FALSE(r.best.tokens.empty());
  const size_t n = r.best.tokens.size();
  ASSERT_EQ(r.best.log_probs.size(), n);
  double sum = 0.0;
  for (double x : r.best.log_probs) sum += x;
  EXPECT_NEAR(r.best.total_log_prob, sum, 1e-9);
  // HF's length: the sequence with its start token, without a final eos.
  const bool ended = r.best.tokens.back() == 2;
  EXPECT_EQ(r.best.stop_reason == StopReason::eos, ended);
  EXPECT_NEAR(r.score, sum / static_cast<double>(ended ? n : n + 1), 1e-9);
  // The reported log-probabilities are the model's, token by token.
  Seq2SeqNextToken next(*bart, source);
  std::vector<int32_t> prefix = {1};
  for (size_t i = 0; i < n; ++i) {
    const std::vector<float> logits = next.next_logits({prefix}).to_vector<float>();
    EXPECT_NEAR(r.best.log_probs[i], log_prob_of(logits, r.best.tokens[i]), 1e-5);
    prefix.push_back(r.best.tokens[i]);
  }
}

}  // namespace
}  // namespace heed::decode
