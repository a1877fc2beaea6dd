// StreamingDecoder: never hands out half a character, whatever the token boundaries, and
// the stream's concatenation equals a one-shot decode.
#include <gtest/gtest.h>

#include "qwen35/error.h"
#include "qwen35/tokenizer.h"
#include "tokenizer_fixture.h"
#include "utf8.h"

namespace qwen35 {
namespace {

using testing::shared_tokenizer;

bool is_valid_utf8(std::string_view s) { return !utf8::first_invalid(s).has_value(); }

TEST(tokenizer_streaming, EveryCaseStreamsToItsDecodedText) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  int held_back = 0;  // feeds that returned nothing because a character was incomplete
  for (const auto& c : testing::encode_cases("qwen3")) {
    const auto ids = c["ids"].get<std::vector<int32_t>>();
    StreamingDecoder stream(tok);
    std::string text;
    for (int32_t id : ids) {
      const std::string piece = stream.feed(id);
      EXPECT_TRUE(is_valid_utf8(piece)) << "id " << id;
      held_back += piece.empty() && !tok.token_bytes(id).empty();
      text += piece;
    }
    text += stream.flush();
    EXPECT_EQ(text, tok.decode(ids));
    EXPECT_EQ(text, c["decoded"].get<std::string>());
  }
  // The emoji and Indic cases split characters across tokens.
  EXPECT_GT(held_back, 0);
}

// The length of the longest prefix of s made of whole characters.
size_t complete_prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto step = utf8::step(s.substr(i));
    if (step.kind != utf8::Step::kValid) break;
    i += step.length;
  }
  return i;
}

TEST(tokenizer_streaming, SplitAtEveryByteBoundary) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  const auto& table = utf8::byte_level_table();
  const std::string text = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80 \xD9\xA3z";  // a é 中 😀 space ٣ z
  const auto full = tok.encode(text);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut));
    // The bytes before the cut arrive one byte token at a time, the rest as real tokens.
    StreamingDecoder stream(tok);
    std::string out;
    for (size_t i = 0; i < cut; ++i) {
      const std::string piece = stream.feed(*tok.token_to_id(table.encode(text.substr(i, 1))));
      ASSERT_TRUE(is_valid_utf8(piece));
      out += piece;
      ASSERT_EQ(out, text.substr(0, complete_prefix(text.substr(0, i + 1))));
    }
    // Then the remaining bytes of a character the cut split, as byte tokens, and the rest
    // of the text as ordinary tokens.
    size_t next = cut;
    while (next < text.size() && (static_cast<uint8_t>(text[next]) & 0xC0) == 0x80) {
      out += stream.feed(*tok.token_to_id(table.encode(text.substr(next, 1))));
      ++next;
    }
    for (int32_t id : tok.encode(text.substr(next))) out += stream.feed(id);
    out += stream.flush();
    EXPECT_EQ(out, text);
  }
  EXPECT_EQ(tok.decode(full), text);
}

TEST(tokenizer_streaming, FlushRepairsADanglingCharacter) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  const auto& table = utf8::byte_level_table();
  StreamingDecoder stream(tok);
  EXPECT_EQ(stream.feed(*tok.token_to_id("a")), "a");
  EXPECT_EQ(stream.feed(*tok.token_to_id(table.encode("\xE4"))), "");
  EXPECT_EQ(stream.feed(*tok.token_to_id(table.encode("\xB8"))), "");
  EXPECT_EQ(stream.flush(), "\xEF\xBF\xBD");
  EXPECT_EQ(stream.flush(), "");
  // A byte that can never start a character is replaced at once.
  EXPECT_EQ(stream.feed(*tok.token_to_id(table.encode("\xFF"))), "\xEF\xBF\xBD");
}

TEST(tokenizer_streaming, SkipsSpecialTokensWhenAsked) {
  const Tokenizer& tok = shared_tokenizer("qwen3");
  StreamingDecoder plain(tok);
  StreamingDecoder skipping(tok, true);
  EXPECT_EQ(plain.feed(151645), "<|im_end|>");
  EXPECT_EQ(skipping.feed(151645), "");
  EXPECT_EQ(skipping.feed(151667), "<think>");  // added but not special
  EXPECT_THROW(skipping.feed(tok.vocab_size()), Error);
}

}  // namespace
}  // namespace qwen35
