// UTF-8 helpers shared by the tokenizer: strict validation (for the text to encode),
// lossy repair with U+FFFD (for decoded bytes, as Hugging Face's from_utf8_lossy), and
// GPT-2's byte <-> printable-character table that byte-level BPE vocabularies are written in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qwen35::utf8 {

inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// What sits at the start of some bytes.
struct Step {
  enum Kind : uint8_t { kValid, kInvalid, kTruncated };
  Kind kind;
  // kValid: the character's length. kInvalid: the length of the maximal ill-formed
  // subpart (Unicode 3.9, at least 1). kTruncated: the bytes present, a valid prefix.
  uint32_t length;
};
Step step(std::string_view bytes);

// Offset of the first ill-formed byte, or nullopt when the whole text is valid UTF-8.
std::optional<size_t> first_invalid(std::string_view text);

// Appends text to out with every maximal ill-formed subpart replaced by U+FFFD.
void append_lossy(std::string_view text, std::string& out);

// Decodes one valid character starting at text[0] (the caller has validated text).
char32_t decode_valid(std::string_view text, uint32_t& length);
void append_code_point(char32_t cp, std::string& out);

// GPT-2 bytes_to_unicode: every byte gets a printable code point; vocabularies store
// tokens as strings of these.
class ByteLevelTable {
 public:
  ByteLevelTable();
  char32_t to_char(uint8_t byte) const { return byte_to_char_[byte]; }
  // The byte a character stands for, or -1 when the character is not in the table.
  int to_byte(char32_t c) const { return c < char_to_byte_.size() ? char_to_byte_[c] : -1; }
  // "Ġhi" -> " hi"; nullopt when a character is not in the table.
  std::optional<std::string> decode(std::string_view token) const;
  std::string encode(std::string_view bytes) const;

 private:
  std::array<char32_t, 256> byte_to_char_{};
  std::array<int16_t, 324> char_to_byte_{};  // every table character is below U+0144
};

const ByteLevelTable& byte_level_table();

}  // namespace qwen35::utf8
