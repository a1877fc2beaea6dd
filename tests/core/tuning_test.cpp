// parse_tuning_settings: the knob lists of `qwen35 bench --ab` and the
// micro-benchmarks' QWEN35_BENCH_AB, parsed and refused alike.
#include "qwen35/tuning.h"

#include <gtest/gtest.h>

#include "qwen35/error.h"

namespace qwen35 {
namespace {

TEST(TuningSettings, ParsesEveryKnobInOrder) {
  const std::vector<TuningSetting> s = parse_tuning_settings("gguf-x16-bands=1,dense-prefetch=-64", "--ab");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].knob, "gguf-x16-bands");
  EXPECT_EQ(s[0].value, 1);
  EXPECT_EQ(s[1].knob, "dense-prefetch");
  EXPECT_EQ(s[1].value, -64);
}

void expect_refused(std::string_view text, std::string_view message) {
  try {
    parse_tuning_settings(text, "SOURCE");
    ADD_FAILURE() << "accepted '" << text << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string_view(e.what()).find(message), std::string_view::npos) << e.what();
  }
}

TEST(TuningSettings, RefusesMalformedTextNamingItsSource) {
  const std::string_view shape = "SOURCE wants KNOB=VALUE[,KNOB=VALUE...], not '";
  expect_refused("gguf-x16-bands", shape);
  expect_refused("=4", shape);
  expect_refused("a=1,", shape);
  expect_refused("", shape);
  expect_refused("a=two", "SOURCE 'a=two': the value 'two' is not a whole number");
  expect_refused("a=12abc", "the value '12abc' is not a whole number");
  expect_refused("a=", "the value '' is not a whole number");
  expect_refused("a=99999999999999999999", "is not a whole number");
}

}  // namespace
}  // namespace qwen35
