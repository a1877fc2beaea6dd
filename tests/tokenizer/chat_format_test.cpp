// The Qwen chat format: exact strings for the template's branches, and token sequences
// built from the pieces (special markers as single ids, the text between encoded alone).
#include <gtest/gtest.h>

#include "qwen35/error.h"
#include "qwen35/tokenizer.h"
#include "tokenizer_fixture.h"

namespace qwen35 {
namespace {

using testing::shared_tokenizer;

std::vector<ChatMessage> conversation(std::initializer_list<std::pair<const char*, const char*>> turns) {
  std::vector<ChatMessage> out;
  for (const auto& [role, content] : turns) out.push_back({role, content, std::nullopt});
  return out;
}

TEST(tokenizer_chat, GenerationPromptPerStyleAndThinking) {
  const auto msgs = conversation({{"user", "Hi"}});
  const std::string base = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(format_chat(msgs, {.style = ChatStyle::kQwen3}), base);
  EXPECT_EQ(format_chat(msgs, {.style = ChatStyle::kQwen35}), base + "<think>\n");
  EXPECT_EQ(format_chat(msgs, {.enable_thinking = false, .style = ChatStyle::kQwen3}),
            base + "<think>\n\n</think>\n\n");
  EXPECT_EQ(format_chat(msgs, {.enable_thinking = false, .style = ChatStyle::kQwen35}),
            base + "<think>\n\n</think>\n\n");
  EXPECT_EQ(format_chat(msgs, {.add_generation_prompt = false}), "<|im_start|>user\nHi<|im_end|>\n");
  // The built-in default is Qwen3.5 with thinking on.
  EXPECT_EQ(format_chat(msgs), base + "<think>\n");
}

TEST(tokenizer_chat, SystemPromptAndMultiTurnDropOldReasoning) {
  std::vector<ChatMessage> msgs = conversation({{"system", "You are terse."},
                                                {"user", "2+2?"},
                                                {"assistant", "<think>\nadd them\n</think>\n\n4"},
                                                {"user", "and 3+3?"}});
  EXPECT_EQ(format_chat(msgs, {.style = ChatStyle::kQwen3}),
            "<|im_start|>system\nYou are terse.<|im_end|>\n"
            "<|im_start|>user\n2+2?<|im_end|>\n"
            "<|im_start|>assistant\n4<|im_end|>\n"
            "<|im_start|>user\nand 3+3?<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(tokenizer_chat, AssistantTurnsAfterTheLastQueryKeepReasoning) {
  std::vector<ChatMessage> msgs = conversation({{"user", "weather?"}, {"assistant", "calling"}, {"tool", "sunny"},
                                                {"tool", "22C"}});
  msgs[1].reasoning_content = "need the tool";
  EXPECT_EQ(format_chat(msgs, {.add_generation_prompt = false}),
            "<|im_start|>user\nweather?<|im_end|>\n"
            "<|im_start|>assistant\n<think>\nneed the tool\n</think>\n\ncalling<|im_end|>\n"
            "<|im_start|>user\n<tool_response>\nsunny\n</tool_response>\n<tool_response>\n22C\n</tool_response>"
            "<|im_end|>\n");
}

TEST(tokenizer_chat, UnknownRoleIsAnError) {
  EXPECT_THROW(format_chat(conversation({{"robot", "beep"}})), Error);
}

TEST(tokenizer_chat, StyleDetectedFromTheTemplate) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  EXPECT_EQ(detect_chat_style(tok.chat_template()), ChatStyle::kQwen3);
  EXPECT_EQ(detect_chat_style(R"({%- else %}{{- '<think>\n' }}{%- endif %})"), ChatStyle::kQwen35);
  EXPECT_EQ(detect_chat_style(""), ChatStyle::kQwen35);
}

std::vector<int32_t> concat(std::initializer_list<std::vector<int32_t>> parts) {
  std::vector<int32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(tokenizer_chat, TokensBuiltFromThePieces) {
  const Tokenizer& tok = shared_tokenizer("qwen35-regex");
  const std::vector<int32_t> start{*tok.token_to_id("<|im_start|>")};
  const std::vector<int32_t> end{*tok.token_to_id("<|im_end|>")};
  const std::vector<int32_t> think{*tok.token_to_id("<think>")};
  const std::vector<int32_t> unthink{*tok.token_to_id("</think>")};
  const auto msgs = conversation({{"system", "Be brief."}, {"user", "What is 2+2?"}});
  const auto ids = encode_chat(tok, msgs, {.enable_thinking = false});
  const auto expected = concat({start, tok.encode("system\nBe brief."), end, tok.encode("\n"), start,
                                tok.encode("user\nWhat is 2+2?"), end, tok.encode("\n"), start,
                                tok.encode("assistant\n"), think, tok.encode("\n\n"), unthink, tok.encode("\n\n")});
  EXPECT_EQ(ids, expected);
  // And the same prompt's Qwen3 form against the shared case's ids.
  EXPECT_EQ(encode_chat(tok, conversation({{"user", "What is 2+2?"}}), {.style = ChatStyle::kQwen3}),
            (std::vector<int32_t>{151644, 872, 198, 3838, 374, 220, 17, 10, 17, 30, 151645, 198, 151644, 77091, 198}));
}

}  // namespace
}  // namespace qwen35
