// Generator on the tiny talking checkpoint: the streamed text is the decode of the sampled
// tokens, only tokenizer ids are sampled, greedy matches a hand-written argmax loop, a seed
// reproduces a run, and each stop (end-of-sequence id, stop string, token limit, full
// context) ends the run where it should, the last token undecoded. Bad prompts are refused
// before the session changes.
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "generation/generation_fixture.h"

namespace qwen35::testing {
namespace {

using ::testing::HasSubstr;

GenerationParams greedy(int32_t max_tokens) {
  GenerationParams params;
  params.sampler.temperature = 0.0f;
  params.max_tokens = max_tokens;
  return params;
}

TEST_F(GenerationTest, StreamedTextIsTheDecodeOfTheSampledTokens) {
  Session session = new_session(64);
  Generator generator(session, tokenizer(), greedy(24));
  const std::vector<int32_t> prompt = tokenizer().encode("hello world");
  std::string streamed;
  size_t pieces = 0;
  const GenerationResult result = generator.generate(prompt, [&](std::string_view text) {
    EXPECT_FALSE(text.empty());
    streamed += text;
    ++pieces;
  });
  EXPECT_EQ(result.stop_reason, StopReason::kMaxTokens);
  ASSERT_EQ(result.tokens.size(), 24u);
  EXPECT_GT(pieces, 0u);
  EXPECT_EQ(streamed, result.text);
  EXPECT_EQ(result.text, tokenizer().decode(result.tokens));
  for (int32_t id : result.tokens) EXPECT_LT(id, tokenizer().vocab_size()) << "the model's vocab is 1024";
  // The prompt and every sampled token but the last are in the state.
  EXPECT_EQ(session.position(), prompt.size() + result.tokens.size() - 1);
  EXPECT_EQ(result.stats.prompt_tokens, prompt.size());
  EXPECT_EQ(result.stats.generated_tokens, 24u);
  EXPECT_EQ(result.stats.generated_decodes, 23u);
}

TEST_F(GenerationTest, GreedyIsTheArgmaxOverTheTokenizersIds) {
  const std::vector<int32_t> prompt = tokenizer().encode("the world");
  Session session = new_session(64);
  Generator generator(session, tokenizer(), greedy(12));
  const GenerationResult result = generator.generate(prompt);

  Session manual = new_session(64);
  std::span<const float> logits;
  for (int32_t id : prompt) logits = manual.decode(id);
  std::vector<int32_t> expected;
  for (int i = 0; i < 12; ++i) {
    const auto usable = logits.first(static_cast<size_t>(tokenizer().vocab_size()));
    expected.push_back(static_cast<int32_t>(std::max_element(usable.begin(), usable.end()) - usable.begin()));
    if (i + 1 < 12) logits = manual.decode(expected.back());
  }
  EXPECT_EQ(result.tokens, expected);
}

TEST_F(GenerationTest, ASeedReproducesARun) {
  auto run = [&](uint64_t seed) {
    GenerationParams params;
    params.sampler = {.temperature = 1.0f, .top_k = 0, .top_p = 0.95f, .seed = seed};
    params.max_tokens = 32;
    Session session = new_session(64);
    Generator generator(session, tokenizer(), params);
    return generator.generate(tokenizer().encode("hello")).tokens;
  };
  const std::vector<int32_t> first = run(7);
  EXPECT_EQ(run(7), first);
  EXPECT_NE(run(8), first) << "32 draws at temperature 1 from ~290 ids coincide by chance with negligible probability";
}

TEST_F(GenerationTest, EndOfSequenceIdStopsAndIsNotShown) {
  const std::vector<int32_t> prompt = tokenizer().encode("hello");
  Session free_session = new_session(64);
  const std::vector<int32_t> free_run = Generator(free_session, tokenizer(), greedy(16)).generate(prompt).tokens;
  // Make the 6th token of the free run an end-of-sequence id; the run must stop at its first occurrence.
  const int32_t eos = free_run[5];
  const size_t first = static_cast<size_t>(std::find(free_run.begin(), free_run.end(), eos) - free_run.begin());

  GenerationParams params = greedy(16);
  params.stop_ids = {eos};
  Session session = new_session(64);
  std::string streamed;
  const GenerationResult result =
      Generator(session, tokenizer(), params).generate(prompt, [&](std::string_view t) { streamed += t; });
  EXPECT_EQ(result.stop_reason, StopReason::kEndOfSequence);
  EXPECT_EQ(result.tokens, std::vector<int32_t>(free_run.begin(), free_run.begin() + static_cast<ptrdiff_t>(first) + 1));
  const std::vector<int32_t> shown(result.tokens.begin(), result.tokens.end() - 1);
  EXPECT_EQ(streamed, tokenizer().decode(shown));
  EXPECT_EQ(session.position(), prompt.size() + first);
}

TEST_F(GenerationTest, StopStringCutsTheTextBeforeIt) {
  const std::vector<int32_t> prompt = tokenizer().encode("hello you");
  Session free_session = new_session(64);
  const std::string free_text = Generator(free_session, tokenizer(), greedy(24)).generate(prompt).text;
  ASSERT_GT(free_text.size(), 12u);
  // A stop string from the middle of the free run, on character boundaries.
  auto boundary = [&](size_t i) {
    while (i < free_text.size() && (static_cast<unsigned char>(free_text[i]) & 0xC0) == 0x80) ++i;
    return i;
  };
  const size_t begin = boundary(free_text.size() / 2);
  const size_t end = boundary(begin + 1);
  ASSERT_LT(begin, end);
  const std::string stop = free_text.substr(begin, end - begin);
  const std::string expected = free_text.substr(0, free_text.find(stop));

  GenerationParams params = greedy(24);
  params.stop_strings = {stop};
  Session session = new_session(64);
  std::string streamed;
  const GenerationResult result =
      Generator(session, tokenizer(), params).generate(prompt, [&](std::string_view t) { streamed += t; });
  EXPECT_EQ(result.stop_reason, StopReason::kStopString);
  EXPECT_EQ(result.stop_string, stop);
  EXPECT_EQ(streamed, expected);
  EXPECT_EQ(result.text, expected);
}

TEST_F(GenerationTest, FullContextStopsWithoutError) {
  const std::vector<int32_t> prompt = tokenizer().encode("hello");
  const uint32_t capacity = static_cast<uint32_t>(prompt.size()) + 3;
  Session session = new_session(capacity);
  const GenerationResult result = Generator(session, tokenizer(), greedy(-1)).generate(prompt);
  EXPECT_EQ(result.stop_reason, StopReason::kContextFull);
  EXPECT_EQ(result.tokens.size(), 4u) << "three decodes fill the context, the fourth sample needs none";
  EXPECT_EQ(session.position(), capacity);
}

TEST_F(GenerationTest, ZeroTokensDecodesOnlyThePrompt) {
  const std::vector<int32_t> prompt = tokenizer().encode("hello");
  Session session = new_session(16);
  const GenerationResult result = Generator(session, tokenizer(), greedy(0)).generate(prompt);
  EXPECT_TRUE(result.tokens.empty());
  EXPECT_EQ(result.stop_reason, StopReason::kMaxTokens);
  EXPECT_EQ(session.position(), prompt.size());
}

TEST_F(GenerationTest, BadPromptsAreRefusedBeforeDecoding) {
  Session session = new_session(4);
  Generator generator(session, tokenizer(), greedy(4));
  const std::vector<int32_t> long_prompt(5, 40);
  EXPECT_THAT([&] { generator.generate(long_prompt); },
              ::testing::ThrowsMessage<Error>(HasSubstr("the prompt is 5 tokens, longer than the context length of 4")));
  EXPECT_THAT([&] { generator.generate(std::vector<int32_t>{}); }, ::testing::ThrowsMessage<Error>(HasSubstr("empty")));
  const std::vector<int32_t> beyond_tokenizer = {40, 900};
  EXPECT_THAT([&] { generator.generate(beyond_tokenizer); },
              ::testing::ThrowsMessage<Error>(HasSubstr("prompt token 1 (id 900) is outside the tokenizer's ids")));
  EXPECT_EQ(session.position(), 0u);
  EXPECT_THAT([&] { (void)tokenizer().encode("ab\xff"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("offset 2")));
}

TEST_F(GenerationTest, EmptyStopStringIsRefused) {
  Session session = new_session(4);
  GenerationParams params;
  params.stop_strings = {""};
  EXPECT_THROW(Generator(session, tokenizer(), params), Error);
}

TEST_F(GenerationTest, DefaultStopIds) {
  const int32_t endoftext = *tokenizer().token_to_id("<|endoftext|>");
  const int32_t im_end = *tokenizer().token_to_id("<|im_end|>");
  // tokenizer_config.json: eos <|im_end|>, pad <|endoftext|>.
  EXPECT_THAT(default_stop_ids(tokenizer(), false), ::testing::UnorderedElementsAre(im_end, endoftext));
  EXPECT_THAT(default_stop_ids(tokenizer(), true), ::testing::UnorderedElementsAre(im_end, endoftext));
}

TEST_F(GenerationTest, TokenizerMustFitTheModel) {
  EXPECT_NO_THROW(check_tokenizer_fits(model(), tokenizer()));
  const Tokenizer big(shared_dir() / "testdata" / "tokenizer" / "qwen3" / "tokenizer.json");
  EXPECT_THAT([&] { check_tokenizer_fits(model(), big); },
              ::testing::ThrowsMessage<Error>(HasSubstr("the model's vocabulary has only 1024 ids")));
}

}  // namespace
}  // namespace qwen35::testing
