// Checked reads of JSON fields (io/json_fields.h): what a damaged trainer_state.json or
// config.json gives instead of nlohmann's exceptions or undefined behaviour.
#include "io/json_fields.h"

#include <gtest/gtest.h>

#include <functional>

#include "base/error.h"

namespace heed::io {
namespace {

std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(JsonFields, ReadsWellTypedFields) {
  const nlohmann::json j = {{"step", 12},      {"big", 18446744073709551615ull},
                            {"whole", 3e2},    {"rate", 0.5},
                            {"on", true},      {"name", "loss"},
                            {"lrs", {1, 0.5}}, {"loader", {{"epoch", 2}}}};
  const JsonFields f(j, "t.json");
  EXPECT_EQ(f.int64("step"), 12);
  EXPECT_EQ(f.uint64("big"), 18446744073709551615ull);
  EXPECT_EQ(f.int64("whole"), 300);  // Python's json may write a whole number as a float
  EXPECT_EQ(f.number("rate"), 0.5);
  EXPECT_EQ(f.number("step"), 12.0);
  EXPECT_TRUE(f.boolean("on"));
  EXPECT_EQ(f.string("name"), "loss");
  EXPECT_EQ(f.numbers("lrs"), (std::vector<double>{1.0, 0.5}));
  EXPECT_EQ(f.object("loader").uint64("epoch"), 2u);
  EXPECT_EQ(f.int64_or("absent", 7), 7);
  EXPECT_EQ(f.number_or("absent", 1.5), 1.5);
  EXPECT_FALSE(f.has("absent"));
}

TEST(JsonFields, ABadFieldIsAnErrorNamingTheFileAndTheField) {
  const nlohmann::json j = {
      {"step", 1e300},  {"neg", -1},         {"frac", 2.5},     {"huge", 18446744073709551615ull},
      {"text", "7"},    {"flag", 1},         {"lrs", {1, "x"}}, {"loader", {{"batch", -3}}},
      {"list", {1, 2}}, {"nothing", nullptr}};
  const JsonFields f(j, "ckpt/trainer_state.json");
  EXPECT_EQ(error_of([&] { f.int64("step"); }),
            "ckpt/trainer_state.json: field 'step' must be an integer, not 1e+300");
  EXPECT_EQ(error_of([&] { f.int64("frac"); }),
            "ckpt/trainer_state.json: field 'frac' must be an integer, not 2.5");
  EXPECT_EQ(error_of([&] { f.int64("huge"); }),
            "ckpt/trainer_state.json: field 'huge' must be a 64-bit integer, not "
            "18446744073709551615");
  EXPECT_EQ(error_of([&] { f.uint64("neg"); }),
            "ckpt/trainer_state.json: field 'neg' must be a non-negative integer, not -1");
  EXPECT_EQ(error_of([&] { f.int64("text"); }),
            "ckpt/trainer_state.json: field 'text' must be an integer, not \"7\"");
  EXPECT_EQ(error_of([&] { f.boolean("flag"); }),
            "ckpt/trainer_state.json: field 'flag' must be true or false, not 1");
  EXPECT_EQ(error_of([&] { f.number("text"); }),
            "ckpt/trainer_state.json: field 'text' must be a number, not \"7\"");
  EXPECT_EQ(error_of([&] { f.numbers("lrs"); }),
            "ckpt/trainer_state.json: field 'lrs' must be a list of numbers, not [1,\"x\"]");
  EXPECT_EQ(error_of([&] { f.object("loader").uint64("batch"); }),
            "ckpt/trainer_state.json: field 'loader.batch' must be a non-negative integer, not -3");
  EXPECT_EQ(error_of([&] { f.object("loader").uint64("epoch"); }),
            "ckpt/trainer_state.json: field 'loader.epoch' is missing");
  EXPECT_EQ(error_of([&] { f.object("list"); }),
            "ckpt/trainer_state.json: field 'list' must be a JSON object, not [1,2]");
  EXPECT_EQ(error_of([&] { f.string("nothing"); }),
            "ckpt/trainer_state.json: field 'nothing' is missing");
  EXPECT_EQ(error_of([&] { f.int64_or("frac", 0); }),
            "ckpt/trainer_state.json: field 'frac' must be an integer, not 2.5");
  const nlohmann::json array = nlohmann::json::array();
  EXPECT_EQ(error_of([&] { JsonFields(array, "t.json"); }),
            "t.json: the file must be a JSON object, not []");
}

}  // namespace
}  // namespace heed::io
