// Tokenizer against the shared reference cases (Qwen3 and the Qwen3.5 regex), random
// Unicode round trips, vocabulary look-ups, added tokens, long inputs and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>

#include "normalizer.h"
#include "pre_tokenizer.h"
#include "qwen35/error.h"
#include "qwen35/tokenizer.h"
#include "support/test_support.h"
#include "tokenizer_fixture.h"
#include "utf8.h"

namespace qwen35 {
namespace {

using testing::encode_cases;
using testing::shared_tokenizer;

std::string nfc(std::string_view s) { return normalize(s, Normalizer::Form::kNfc); }

void check_cases(const std::string& tokenizer_flavour, const std::string& cases_flavour, int& mismatches,
                 bool expect_match) {
  const Tokenizer& tok = shared_tokenizer(tokenizer_flavour);
  const nlohmann::json cases = encode_cases(cases_flavour);
  ASSERT_GT(cases.size(), 0u);
  mismatches = 0;
  for (const auto& c : cases) {
    const std::string text = c["text"].get<std::string>();
    const std::vector<int32_t> expected = c["ids"].get<std::vector<int32_t>>();
    const std::vector<int32_t> ids = tok.encode(text);
    if (ids != expected) ++mismatches;
    if (!expect_match) continue;
    SCOPED_TRACE("text: " + text);
    EXPECT_EQ(ids, expected);
    // Every case decodes to its NFC form; the Qwen3 file also spells the decoded text out.
    const std::string decoded = c.contains("decoded") ? c["decoded"].get<std::string>() : nfc(text);
    EXPECT_EQ(tok.decode(expected), decoded);
  }
}

TEST(tokenizer_cases, Qwen3EveryCaseMatches) {
  int mismatches = 0;
  check_cases("qwen3", "qwen3", mismatches, true);
  EXPECT_EQ(mismatches, 0);
}

TEST(tokenizer_cases, Qwen35RegexEveryCaseMatches) {
  int mismatches = 0;
  check_cases("qwen35-regex", "qwen35-regex", mismatches, true);
  EXPECT_EQ(mismatches, 0);
}

TEST(tokenizer_cases, Qwen35CasesDifferUnderTheQwen3Pattern) {
  // The two files differ only in the split regex, so this shows the pattern is taken from
  // the file: the Qwen3 pattern must get some of the combining-mark cases wrong.
  int mismatches = 0;
  check_cases("qwen3", "qwen35-regex", mismatches, false);
  EXPECT_GT(mismatches, 0);
}

TEST(tokenizer_cases, Qwen3CasesAgreeUnderBothPatternsWithoutCombiningMarks) {
  const Tokenizer& tok = shared_tokenizer("qwen35-regex");
  const std::vector<int32_t> ids = tok.encode("The quick brown fox jumps over the lazy dog.");
  EXPECT_EQ(ids, (std::vector<int32_t>{785, 3974, 13876, 38835, 34208, 916, 279, 15678, 5562, 13}));
}

// Random strings drawn from scripts with combining marks, Hangul jamo, emoji and odd
// whitespace; a round trip gives back the NFC form.
std::string random_unicode(std::mt19937& rng, size_t max_chars) {
  static const std::vector<std::pair<char32_t, char32_t>> kRanges = {
      {0x20, 0x7E},       {0x20, 0x7E},       {0x20, 0x7E},      {0x09, 0x0D},   {0xA0, 0xFF},
      {0x100, 0x24F},     {0x300, 0x36F},     {0x370, 0x4FF},    {0x590, 0x6FF}, {0x900, 0x97F},
      {0xE00, 0xE7F},     {0x1100, 0x11FF},   {0x2000, 0x200F},  {0x3000, 0x30FF}, {0x4E00, 0x9FFF},
      {0xAC00, 0xD7A3},   {0xFE00, 0xFE0F},   {0x1F300, 0x1FAFF}, {0x10000, 0x10FFFF}};
  std::string out;
  const size_t n = rng() % (max_chars + 1);
  for (size_t i = 0; i < n; ++i) {
    const auto& [lo, hi] = kRanges[rng() % kRanges.size()];
    char32_t cp = lo + static_cast<char32_t>(rng() % (hi - lo + 1));
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 'x';  // surrogates are not characters
    utf8::append_code_point(cp, out);
  }
  return out;
}

TEST(tokenizer_round_trip, RandomUnicodeDecodesToItsNfcForm) {
  const Tokenizer& tok = shared_tokenizer("qwen35-regex");
  constexpr uint32_t kSeed = 20240531;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  std::mt19937 rng(kSeed);
  int changed_by_nfc = 0;
  for (int i = 0; i < 400; ++i) {
    const std::string text = random_unicode(rng, 48);
    const std::string expected = nfc(text);
    changed_by_nfc += expected != text;
    const std::vector<int32_t> ids = tok.encode(text);
    ASSERT_EQ(tok.decode(ids), expected) << "string " << i;
  }
  // The generator must exercise normalisation, or the test would not check it.
  EXPECT_GT(changed_by_nfc, 10);
}

TEST(tokenizer_round_trip, NormalizerFastPathBelowCombiningMarksIsExact) {
  // normalizer.cpp skips utf8proc for text below U+0300; check that no such character and
  // no adjacent pair of them changes under NFC.
  std::string all_pairs;
  for (char32_t a = 0x01; a < 0x300; ++a) {
    for (char32_t b = 0x01; b < 0x300; b += 1) {
      utf8::append_code_point(a, all_pairs);
      utf8::append_code_point(b, all_pairs);
    }
  }
  EXPECT_TRUE(nfc(all_pairs) == all_pairs);
  // And the path that does call utf8proc composes: e + U+0301 -> U+00E9.
  EXPECT_EQ(nfc("e\xCC\x81"), "\xC3\xA9");
}

std::vector<std::string> pre_split(const nlohmann::json& spec, std::string_view text) {
  const PreTokenizer pre(spec, "test");
  std::vector<std::string_view> pieces;
  std::vector<std::string_view> scratch;
  pre.split(text, pieces, scratch);
  return {pieces.begin(), pieces.end()};
}

TEST(tokenizer_pre, SplitBehavioursFollowHuggingFace) {
  // The examples of tokenizers' SplitDelimiterBehavior documentation.
  const std::map<std::string, std::vector<std::string>> expected = {
      {"Removed", {"the", "final", "countdown"}},
      {"Isolated", {"the", "-", "final", "-", "-", "countdown"}},
      {"MergedWithPrevious", {"the-", "final-", "-", "countdown"}},
      {"MergedWithNext", {"the", "-final", "-", "-countdown"}},
      {"Contiguous", {"the", "-", "final", "--", "countdown"}},
  };
  for (const auto& [behavior, pieces] : expected) {
    const nlohmann::json spec = {{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}};
    EXPECT_EQ(pre_split(spec, "the-final--countdown"), pieces) << behavior;
  }
  const nlohmann::json inverted = {
      {"type", "Split"}, {"pattern", {{"Regex", "-"}}}, {"behavior", "Removed"}, {"invert", true}};
  EXPECT_EQ(pre_split(inverted, "the-final--countdown"), (std::vector<std::string>{"-", "-", "-"}));
}

TEST(tokenizer_pre, QwenPatternPiecesFromTheFile) {
  const nlohmann::json file = nlohmann::json::parse(
      std::ifstream(testing::tokenizer_data_dir("qwen35-regex") / "tokenizer.json"));
  EXPECT_EQ(pre_split(file["pre_tokenizer"], "Hello, world!  I'm 42\n\n"),
            (std::vector<std::string>{"Hello", ",", " world", "!", " ", " I", "'m", " ", "4", "2", "\n\n"}));
  // Qwen3.5's pattern keeps a combining mark with its letters (Qwen3's splits it off).
  EXPECT_EQ(pre_split(file["pre_tokenizer"], "z\xCC\x80\xCC\x81 x"), (std::vector<std::string>{"z\xCC\x80\xCC\x81", " x"}));
}

TEST(tokenizer_vocab, SizesAndLookups) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  EXPECT_EQ(tok.vocab_size(), 151669);
  EXPECT_EQ(tok.token_to_id("<|im_start|>"), 151644);
  EXPECT_EQ(tok.token_to_id("<|endoftext|>"), 151643);
  EXPECT_EQ(tok.token_to_id("</think>"), 151668);
  EXPECT_EQ(tok.token_to_id("Hello"), 9707);
  EXPECT_EQ(tok.token_to_id("\xC4\xA0world"), 1879);  // "Ġworld"
  EXPECT_EQ(tok.token_to_id("no-such-token-xyz"), std::nullopt);
  EXPECT_EQ(tok.id_to_token(1879), "\xC4\xA0world");
  EXPECT_EQ(tok.id_to_token(151667), "<think>");
  EXPECT_EQ(tok.token_bytes(1879), " world");
  EXPECT_EQ(tok.added_tokens().size(), 26u);
  EXPECT_TRUE(tok.is_special(151645));
  EXPECT_FALSE(tok.is_special(151667));  // <think> is added but not special
  EXPECT_FALSE(tok.is_special(9707));
}

TEST(tokenizer_vocab, EveryIdRoundTripsThroughItsName) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  int checked = 0;
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    ASSERT_EQ(tok.token_to_id(tok.id_to_token(id)), id) << "id " << id;
    ++checked;
  }
  EXPECT_EQ(checked, 151669);
}

TEST(tokenizer_vocab, ConfigGivesSpecialIdsAndTemplate) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  EXPECT_EQ(tok.eos_id(), 151645);  // <|im_end|>
  EXPECT_EQ(tok.pad_id(), 151643);  // <|endoftext|>
  EXPECT_EQ(tok.bos_id(), std::nullopt);
  EXPECT_NE(tok.chat_template().find("<|im_start|>"), std::string::npos);
}

TEST(tokenizer_special, AddedTokensSplitTextWithoutSpaces) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  const auto a = tok.encode("a");
  const auto b = tok.encode("b");
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(tok.encode("a<|im_end|>b"), (std::vector<int32_t>{a[0], 151645, b[0]}));
  EXPECT_EQ(tok.encode("<|im_end|><|im_end|>"), (std::vector<int32_t>{151645, 151645}));
  // An unfinished marker is ordinary text.
  const auto partial = tok.encode("<|im_end|");
  EXPECT_EQ(std::count(partial.begin(), partial.end(), 151645), 0);
  EXPECT_EQ(tok.decode(partial), "<|im_end|");
}

TEST(tokenizer_special, DecodeCanSkipSpecialTokensOnly) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  const auto ids = tok.encode("<|im_start|>assistant\n<think>\nx</think>ok<|im_end|>");
  EXPECT_EQ(tok.decode(ids), "<|im_start|>assistant\n<think>\nx</think>ok<|im_end|>");
  EXPECT_EQ(tok.decode(ids, true), "assistant\n<think>\nx</think>ok");
}

TEST(tokenizer_special, LongestAddedTokenWinsAndFlagsAreHonoured) {
  testing::TempDir dir;
  const auto json = testing::synthetic_tokenizer_json(
      {{"a", "b"}}, {{{"content", "<x>"}, {"special", true}, {"normalized", false}},
                     {{"content", "<x><y>"}, {"special", true}, {"normalized", false}},
                     {{"content", "[R]"}, {"special", false}, {"rstrip", true}, {"normalized", false}},
                     {{"content", "[L]"}, {"special", false}, {"lstrip", true}, {"normalized", false}}});
  const Tokenizer tok(testing::write_tokenizer(dir.path(), json));
  const int32_t x = *tok.token_to_id("<x>");
  const int32_t xy = *tok.token_to_id("<x><y>");
  const int32_t r = *tok.token_to_id("[R]");
  const int32_t l = *tok.token_to_id("[L]");
  const int32_t ab = *tok.token_to_id("ab");
  EXPECT_EQ(tok.encode("<x><y><x>"), (std::vector<int32_t>{xy, x}));
  EXPECT_EQ(tok.encode("[R]  ab"), (std::vector<int32_t>{r, ab}));
  EXPECT_EQ(tok.encode("ab  [L]"), (std::vector<int32_t>{ab, l}));
}

TEST(tokenizer_bpe, MergesFollowRankNotLength) {
  // With "bc" ranked before "ab", "abc" must become a + bc even though "ab" comes first.
  testing::TempDir dir;
  const Tokenizer tok(testing::write_tokenizer(dir.path(), testing::synthetic_tokenizer_json({{"b", "c"}, {"a", "b"}})));
  EXPECT_EQ(tok.encode("abc"), (std::vector<int32_t>{'a', *tok.token_to_id("bc")}));
  EXPECT_EQ(tok.encode("abab"), (std::vector<int32_t>{*tok.token_to_id("ab"), *tok.token_to_id("ab")}));
  // Equal ranks merge leftmost first: "aaa" with a+a -> aa, a.
  const Tokenizer tok2(testing::write_tokenizer(dir.path(), testing::synthetic_tokenizer_json({{"a", "a"}})));
  EXPECT_EQ(tok2.encode("aaa"), (std::vector<int32_t>{*tok2.token_to_id("aa"), 'a'}));
}

TEST(tokenizer_bpe, CacheDoesNotChangeResults) {
  const Tokenizer uncached(testing::tokenizer_data_dir("qwen3") / "tokenizer.json", TokenizerOptions{0});
  const Tokenizer& cached = shared_tokenizer("qwen3");
  for (const auto& c : encode_cases("qwen3")) {
    const std::string text = c["text"].get<std::string>();
    EXPECT_EQ(cached.encode(text), uncached.encode(text)) << text;
    EXPECT_EQ(cached.encode(text), uncached.encode(text)) << text;  // second time from the cache
  }
}

TEST(tokenizer_bpe, LongUnsplitRunsEncodeAndRoundTrip) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  for (const std::string& text : {std::string(200000, 'a'), std::string(200000, ' '), std::string(100000, '\n'),
                                  std::string(50000, '.') + std::string(50000, '7')}) {
    const auto ids = tok.encode(text);
    EXPECT_LT(ids.size(), text.size());
    EXPECT_EQ(tok.decode(ids), text);
  }
}

TEST(tokenizer_errors, InvalidUtf8NamesTheOffset) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"abc\xFF", "offset 3"},          {"ab\xE4\xBD", "offset 2"},          // stray byte, truncated
      {"\xC0\x80", "offset 0"},         {"x\xED\xA0\x80", "offset 1"},       // overlong, surrogate
      {"ok \xF4\x90\x80\x80", "offset 3"}};                                   // above U+10FFFF
  for (const auto& [text, where] : bad) {
    try {
      tok.encode(text);
      ADD_FAILURE() << "no error for " << ::testing::PrintToString(text);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("UTF-8"), std::string::npos) << e.what();
    }
  }
}

TEST(tokenizer_errors, DecodeRejectsIdsOutOfRange) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  EXPECT_THROW(tok.decode(std::vector<int32_t>{1, -1}), Error);
  EXPECT_THROW(tok.decode(std::vector<int32_t>{tok.vocab_size()}), Error);
  EXPECT_THROW(tok.id_to_token(tok.vocab_size()), Error);
  EXPECT_NO_THROW(tok.decode(std::vector<int32_t>{tok.vocab_size() - 1}));
}

TEST(tokenizer_errors, DecodeRepairsPartialCharacters) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  // Byte tokens for 0xE4 0xBD (the first two bytes of a three-byte character) then 'a'.
  const auto& table = utf8::byte_level_table();
  const int32_t e4 = *tok.token_to_id(table.encode("\xE4"));
  const int32_t bd = *tok.token_to_id(table.encode("\xBD"));
  const int32_t a = *tok.token_to_id("a");
  EXPECT_EQ(tok.decode(std::vector<int32_t>{e4, bd, a}), "\xEF\xBF\xBD" "a");
}

void expect_load_error(const nlohmann::json& json, const std::string& fragment) {
  testing::TempDir dir;
  const auto path = testing::write_tokenizer(dir.path(), json);
  try {
    Tokenizer tok(path);
    ADD_FAILURE() << "no error, expected one mentioning " << fragment;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST(tokenizer_errors, BadFilesAreRejectedWithTheirPath) {
  const auto good = testing::synthetic_tokenizer_json({{"a", "b"}});
  {
    testing::TempDir dir;
    EXPECT_NO_THROW(Tokenizer(testing::write_tokenizer(dir.path(), good)));
  }
  auto no_model = good;
  no_model.erase("model");
  expect_load_error(no_model, "\"model\"");
  auto no_vocab = good;
  no_vocab["model"].erase("vocab");
  expect_load_error(no_vocab, "\"vocab\"");
  auto no_merges = good;
  no_merges["model"].erase("merges");
  expect_load_error(no_merges, "\"merges\"");
  auto bad_merge = good;
  bad_merge["model"]["merges"].push_back(nlohmann::json::array({"zz", "q"}));
  expect_load_error(bad_merge, "merge 1");
  auto odd_merge = good;
  odd_merge["model"]["merges"].push_back(42);
  expect_load_error(odd_merge, "merge 1 is 42");
  auto text_id = good;
  text_id["model"]["vocab"]["\xC4\xA0x"] = "seven";
  expect_load_error(text_id, "vocab entry");
  auto bad_regex = good;
  bad_regex["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(unclosed";
  expect_load_error(bad_regex, "regex");
  auto wordpiece = good;
  wordpiece["model"]["type"] = "WordPiece";
  expect_load_error(wordpiece, "BPE");
}

TEST(tokenizer_errors, MutatedFilesLoadOrThrowErrorNeverAnythingElse) {
  // A small fuzz pass over the loader: truncations and structural-character swaps of a
  // valid file must either load or throw qwen35::Error, never crash or throw another type.
  const std::string good =
      testing::synthetic_tokenizer_json({{"a", "b"}, {"ab", "c"}}, {{{"content", "<s>"}, {"special", true}}}).dump();
  constexpr uint32_t kSeed = 77;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  std::mt19937 rng(kSeed);
  const std::string alphabet = "{}[]\",:0a -";
  testing::TempDir dir;
  const auto path = dir.path() / "tokenizer.json";
  int loaded = 0;
  for (int i = 0; i < 300; ++i) {
    std::string text = good;
    if (i % 3 == 0) {
      text.resize(rng() % text.size());
    } else {
      for (int k = 0; k < 1 + i % 2; ++k) text[rng() % text.size()] = alphabet[rng() % alphabet.size()];
    }
    std::ofstream(path, std::ios::trunc) << text;
    try {
      const Tokenizer tok(path);
      tok.decode(tok.encode("abc <s> abc"));
      ++loaded;
    } catch (const Error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "mutation " << i << " threw a non-qwen35 error: " << e.what();
    }
  }
  EXPECT_GT(loaded, 0);  // some mutations land in harmless places
}

TEST(tokenizer_errors, MissingAndMalformedFiles) {
  testing::TempDir dir;
  const auto missing = dir.path() / "nope" / "tokenizer.json";
  try {
    Tokenizer tok(missing);
    ADD_FAILURE() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
  }
  const auto garbage = dir.path() / "tokenizer.json";
  std::ofstream(garbage) << "{\"model\": [1, 2,";
  EXPECT_THROW(Tokenizer tok(garbage), Error);
}

}  // namespace
}  // namespace qwen35
