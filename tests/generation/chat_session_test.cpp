// ChatSession: the first turn is exactly the chat template's tokens; every later turn
// decodes only its own new tokens; and after several turns (ending in different ways) the
// session's state is the same as decoding the whole transcript in one go.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "generation/generation_fixture.h"

namespace qwen35::testing {
namespace {

using ::testing::HasSubstr;

using ChatTest = GenerationTest;

ChatParams chat_params(int32_t max_tokens, bool thinking = true) {
  ChatParams params;
  params.system_prompt = "you are here";
  params.format.enable_thinking = thinking;
  params.generation.sampler = {.temperature = 0.9f, .top_k = 40, .seed = 5};
  params.generation.max_tokens = max_tokens;
  return params;
}

std::vector<int32_t> concat(std::initializer_list<std::vector<int32_t>> parts) {
  std::vector<int32_t> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

TEST_F(ChatTest, FirstTurnIsTheChatTemplate) {
  Session session = new_session(256);
  ChatSession chat(session, tokenizer(), chat_params(6));
  const std::vector<ChatMessage> messages = {{.role = "system", .content = "you are here"},
                                             {.role = "user", .content = "hello world"}};
  const std::vector<int32_t> expected = encode_chat(tokenizer(), messages);
  EXPECT_EQ(chat.next_turn_tokens("hello world"), expected);
  EXPECT_EQ(tokenizer().decode(expected),
            "<|im_start|>system\nyou are here<|im_end|>\n<|im_start|>user\nhello world<|im_end|>\n"
            "<|im_start|>assistant\n<think>\n");

  const GenerationResult reply = chat.send("hello world");
  EXPECT_EQ(reply.stats.prompt_tokens, expected.size());
  ASSERT_EQ(reply.tokens.size(), 6u);
  EXPECT_EQ(chat.tokens(), concat({expected, {reply.tokens.begin(), reply.tokens.end() - 1}}));
  EXPECT_EQ(session.position(), chat.tokens().size());
  ASSERT_EQ(chat.messages().size(), 3u);
  EXPECT_EQ(chat.messages()[2].content, reply.text);
}

TEST_F(ChatTest, ThinkingOffClosesTheThinkBlockInThePrompt) {
  Session session = new_session(256);
  ChatSession chat(session, tokenizer(), chat_params(4, /*thinking=*/false));
  EXPECT_THAT(tokenizer().decode(chat.next_turn_tokens("hi")), ::testing::EndsWith("<think>\n\n</think>\n\n"));
}

TEST_F(ChatTest, LaterTurnsDecodeOnlyTheirOwnTokens) {
  Session session = new_session(512);
  ChatSession chat(session, tokenizer(), chat_params(8));
  const GenerationResult first = chat.send("hello world");
  ASSERT_EQ(first.stop_reason, StopReason::kMaxTokens);
  const uint32_t after_first = session.position();

  // A reply cut by the token limit keeps its last (shown) token, then closes the turn.
  const std::vector<int32_t> turn = chat.next_turn_tokens("you are there");
  const std::vector<int32_t> expected_turn = concat(
      {{first.tokens.back()}, tokenizer().encode("<|im_end|>\n<|im_start|>user\nyou are there<|im_end|>\n"
                                                 "<|im_start|>assistant\n<think>\n")});
  EXPECT_EQ(turn, expected_turn);
  const GenerationResult second = chat.send("you are there");
  EXPECT_EQ(second.stats.prompt_tokens, turn.size()) << "earlier turns are never decoded again";
  EXPECT_EQ(session.position(), after_first + turn.size() + second.tokens.size() - 1);
  EXPECT_EQ(session.position(), chat.tokens().size());
}

TEST_F(ChatTest, AnEndOfSequenceReplyIsClosedByImEnd) {
  // Learn what the model says first, then make its third token the end of the reply.
  std::vector<int32_t> free_reply;
  {
    Session session = new_session(256);
    ChatSession chat(session, tokenizer(), chat_params(8));
    free_reply = chat.send("hello").tokens;
  }
  ChatParams params = chat_params(8);
  params.generation.stop_ids = {free_reply[2]};
  Session session = new_session(256);
  ChatSession chat(session, tokenizer(), params);
  const GenerationResult reply = chat.send("hello");
  ASSERT_EQ(reply.stop_reason, StopReason::kEndOfSequence);
  const std::vector<int32_t> turn = chat.next_turn_tokens("more");
  EXPECT_EQ(turn, tokenizer().encode("<|im_end|>\n<|im_start|>user\nmore<|im_end|>\n<|im_start|>assistant\n<think>\n"))
      << "the sampled end-of-sequence token was never decoded; <|im_end|> takes its place";
}

TEST_F(ChatTest, TheStateAfterSeveralTurnsIsTheWholeTranscriptDecodedAtOnce) {
  ChatParams params = chat_params(10);
  params.generation.stop_strings = {"e"};  // some replies end on a stop string, others at the limit
  Session session = new_session(512);
  ChatSession chat(session, tokenizer(), params);
  for (const char* message : {"hello world", "the answer", "you are there"}) chat.send(message);
  ASSERT_EQ(session.position(), chat.tokens().size());

  // One more token on both: the chat's state and a fresh session fed the transcript.
  const int32_t probe = tokenizer().encode("o")[0];
  const std::span<const float> chat_logits = session.decode(probe);
  const std::vector<float> from_chat(chat_logits.begin(), chat_logits.end());
  Session fresh = new_session(512);
  for (int32_t id : chat.tokens()) fresh.decode(id);
  const std::span<const float> fresh_logits = fresh.decode(probe);
  // The same tokens through the same kernels in the same order: identical up to the
  // thread partition of the CPU backend, which does not depend on the history.
  const Deviation d = deviation(from_chat.data(), fresh_logits.data(), from_chat.size());
  EXPECT_FALSE(d.has_nan);
  EXPECT_LE(d.max_abs_error, 1e-6 * std::max(1.0, d.max_abs_reference)) << "worst index " << d.worst_index;
}

TEST_F(ChatTest, BadTurnsLeaveTheConversationAsItWas) {
  Session session = new_session(64);
  ChatSession chat(session, tokenizer(), chat_params(4));
  chat.send("hello");
  const std::vector<int32_t> before = chat.tokens();
  EXPECT_THAT([&] { chat.send("ab\xff"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("byte 0xff at offset 2 of 3")));
  EXPECT_THAT([&] { chat.send(std::string(200, 'x')); },
              ::testing::ThrowsMessage<Error>(HasSubstr("of the context length of 64 tokens remain")));
  EXPECT_EQ(chat.tokens(), before);
  EXPECT_EQ(session.position(), before.size());
  chat.send("hi");  // still usable
  chat.reset();
  EXPECT_EQ(session.position(), 0u);
  EXPECT_TRUE(chat.tokens().empty());
  EXPECT_EQ(chat.next_turn_tokens("hello")[0], *tokenizer().token_to_id("<|im_start|>"));
}

TEST_F(ChatTest, InvalidSystemPromptIsRefused) {
  Session session = new_session(64);
  ChatParams params = chat_params(4);
  params.system_prompt = "sys\xc3";
  EXPECT_THAT([&] { ChatSession(session, tokenizer(), params); },
              ::testing::ThrowsMessage<Error>(HasSubstr("system prompt: ")));
}

}  // namespace
}  // namespace qwen35::testing
