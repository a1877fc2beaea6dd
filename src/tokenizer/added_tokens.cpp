// Added-token search: a table from first byte to candidate tokens (longest first) makes
// the scan one table lookup per byte of text, which is all ordinary prompts need.
#include "added_tokens.h"

#include <algorithm>

#include <utf8proc.h>

#include "utf8.h"

namespace qwen35 {

namespace {

bool is_whitespace(char32_t c) {
  // Unicode's White_Space property, which Rust's char::is_whitespace uses.
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_word_char(char32_t c) {
  if (c == '_') return true;
  const utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return (category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_LO) ||
         (category >= UTF8PROC_CATEGORY_ND && category <= UTF8PROC_CATEGORY_NO);
}

// The character that ends just before `pos` (text is valid UTF-8).
char32_t char_before(std::string_view text, size_t pos, size_t& start) {
  start = pos - 1;
  while (start > 0 && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
  uint32_t length = 0;
  return utf8::decode_valid(text.substr(start), length);
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedTokenSpec> tokens) : tokens_(std::move(tokens)) {
  std::erase_if(tokens_, [](const AddedTokenSpec& t) { return t.content.empty(); });
  for (size_t i = 0; i < tokens_.size(); ++i) {
    by_first_byte_[static_cast<uint8_t>(tokens_[i].content[0])].push_back(static_cast<int32_t>(i));
  }
  for (auto& list : by_first_byte_) {
    std::stable_sort(list.begin(), list.end(), [&](int32_t a, int32_t b) {
      return tokens_[static_cast<size_t>(a)].content.size() > tokens_[static_cast<size_t>(b)].content.size();
    });
  }
}

AddedTokenMatcher::Match AddedTokenMatcher::find(std::string_view text, size_t from, size_t floor) const {
  for (size_t pos = from; pos < text.size(); ++pos) {
    const auto& candidates = by_first_byte_[static_cast<uint8_t>(text[pos])];
    for (int32_t index : candidates) {
      const AddedTokenSpec& token = tokens_[static_cast<size_t>(index)];
      if (text.compare(pos, token.content.size(), token.content) != 0) continue;
      size_t end = pos + token.content.size();
      if (token.single_word) {
        size_t unused = 0;
        if (pos > 0 && is_word_char(char_before(text, pos, unused))) continue;
        if (end < text.size()) {
          uint32_t length = 0;
          if (is_word_char(utf8::decode_valid(text.substr(end), length))) continue;
        }
      }
      size_t begin = pos;
      if (token.lstrip) {
        size_t start = 0;
        while (begin > floor && is_whitespace(char_before(text, begin, start))) begin = start;
      }
      if (token.rstrip) {
        uint32_t length = 0;
        while (end < text.size() && is_whitespace(utf8::decode_valid(text.substr(end), length))) end += length;
      }
      return {index, begin, end};
    }
  }
  return {};
}

}  // namespace qwen35
