// StopChecker: stop strings found across any split of the text, held-back text released
// when it turns out not to be a stop, and nothing after a stop.
#include <gtest/gtest.h>

#include "qwen35/error.h"
#include "qwen35/sampling.h"

namespace qwen35 {
namespace {

// Feeds text in the given pieces; returns what was shown and whether it stopped.
std::pair<std::string, bool> run(StopChecker& checker, const std::vector<std::string>& pieces) {
  std::string shown;
  for (const auto& piece : pieces) shown += checker.feed(piece);
  if (!checker.stopped()) shown += checker.flush();
  return {shown, checker.stopped()};
}

TEST(sampling_stop, FoundAcrossEverySplit) {
  const std::string text = "The answer is 42.\nUser: next question";
  for (size_t a = 0; a <= text.size(); ++a) {
    for (size_t b = a; b <= text.size(); b += 3) {
      StopChecker checker({"\nUser:", "<|im_end|>"});
      const auto [shown, stopped] = run(checker, {text.substr(0, a), text.substr(a, b - a), text.substr(b)});
      ASSERT_TRUE(stopped) << a << "," << b;
      ASSERT_EQ(shown, "The answer is 42.") << a << "," << b;
      ASSERT_EQ(checker.matched(), "\nUser:");
    }
  }
}

TEST(sampling_stop, HeldBackTextIsReleasedWhenItIsNotAStop) {
  StopChecker checker({"STOP"});
  EXPECT_EQ(checker.feed("go ST"), "go ");
  EXPECT_EQ(checker.feed("O"), "");
  EXPECT_EQ(checker.feed("P?"), "");
  EXPECT_TRUE(checker.stopped());
  checker.reset();
  EXPECT_EQ(checker.feed("go ST"), "go ");
  EXPECT_EQ(checker.feed("ay"), "STay");
  EXPECT_EQ(checker.feed("S"), "");
  EXPECT_EQ(checker.flush(), "S");
  EXPECT_FALSE(checker.stopped());
}

TEST(sampling_stop, EarliestStopWinsAndNothingFollows) {
  StopChecker checker({"bc", "abcd", "x"});
  EXPECT_EQ(checker.feed("zzabcdx"), "zz");  // "abcd" starts before "bc" and "x"
  EXPECT_EQ(checker.matched(), "abcd");
  EXPECT_EQ(checker.feed("more"), "");
  StopChecker longer({"ab", "abc"});
  EXPECT_EQ(longer.feed("_abc"), "_");
  EXPECT_EQ(longer.matched(), "abc");  // same start: the longer one
}

TEST(sampling_stop, MultiByteStopStrings) {
  const std::string stop = "\xE3\x80\x82\xE7\xBB\x93";  // "。结"
  const std::string text = "\xE5\xA5\xBD" + stop + "\xE6\x9D\x9F";
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    StopChecker checker({stop});
    const auto [shown, stopped] = run(checker, {text.substr(0, cut), text.substr(cut)});
    EXPECT_TRUE(stopped);
    EXPECT_EQ(shown, "\xE5\xA5\xBD");
  }
}

TEST(sampling_stop, NoStopsPassesEverythingAndEmptyStopIsAnError) {
  StopChecker none({});
  EXPECT_EQ(none.feed("abc"), "abc");
  EXPECT_FALSE(none.stopped());
  EXPECT_THROW(StopChecker({"ok", ""}), Error);
}

}  // namespace
}  // namespace qwen35
