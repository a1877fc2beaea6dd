// UTF-8 validation and repair following the Unicode standard's Table 3-7 (well-formed
// byte sequences) and its "maximal subpart" rule for U+FFFD, which is also what Rust's
// String::from_utf8_lossy (and so Hugging Face's decode) does.
#include "utf8.h"

#include <cstring>

namespace qwen35::utf8 {

namespace {

// The allowed range of the second byte for each lead byte (Table 3-7); later bytes are 80..BF.
struct LeadInfo {
  uint8_t length;  // 0: not a lead byte
  uint8_t second_lo;
  uint8_t second_hi;
};

constexpr LeadInfo lead_info(uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

}  // namespace

Step step(std::string_view bytes) {
  const auto b0 = static_cast<uint8_t>(bytes[0]);
  const LeadInfo info = lead_info(b0);
  if (info.length == 0) return {Step::kInvalid, 1};
  if (info.length == 1) return {Step::kValid, 1};
  for (uint32_t i = 1; i < info.length; ++i) {
    if (i >= bytes.size()) return {Step::kTruncated, i};
    const auto b = static_cast<uint8_t>(bytes[i]);
    const uint8_t lo = i == 1 ? info.second_lo : 0x80;
    const uint8_t hi = i == 1 ? info.second_hi : 0xBF;
    if (b < lo || b > hi) return {Step::kInvalid, i};
  }
  return {Step::kValid, info.length};
}

std::optional<size_t> first_invalid(std::string_view text) {
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    // Eight ASCII bytes at a time: the common case for prompts and code.
    if (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, text.data() + i, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    if (static_cast<uint8_t>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const Step s = step(text.substr(i));
    if (s.kind != Step::kValid) return i;
    i += s.length;
  }
  return std::nullopt;
}

void append_lossy(std::string_view text, std::string& out) {
  size_t i = 0;
  while (i < text.size()) {
    const Step s = step(text.substr(i));
    if (s.kind == Step::kValid) {
      out.append(text.substr(i, s.length));
    } else {
      out.append(kReplacement);
    }
    i += s.length;
  }
}

char32_t decode_valid(std::string_view text, uint32_t& length) {
  const auto b0 = static_cast<uint8_t>(text[0]);
  if (b0 < 0x80) {
    length = 1;
    return b0;
  }
  length = lead_info(b0).length;
  char32_t cp = b0 & (0x7F >> length);
  for (uint32_t i = 1; i < length; ++i) cp = (cp << 6) | (static_cast<uint8_t>(text[i]) & 0x3F);
  return cp;
}

void append_code_point(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

ByteLevelTable::ByteLevelTable() {
  char_to_byte_.fill(-1);
  // Printable Latin-1 bytes stand for themselves; the rest (controls, space, DEL,
  // NBSP, soft hyphen) are moved up to 256, 257, ... in byte order (GPT-2's encoder.py).
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    byte_to_char_[b] = printable ? static_cast<char32_t>(b) : next++;
    char_to_byte_[byte_to_char_[b]] = static_cast<int16_t>(b);
  }
}

std::optional<std::string> ByteLevelTable::decode(std::string_view token) const {
  std::string out;
  out.reserve(token.size());
  size_t i = 0;
  while (i < token.size()) {
    const Step s = step(token.substr(i));
    if (s.kind != Step::kValid) return std::nullopt;
    uint32_t length = 0;
    const int byte = to_byte(decode_valid(token.substr(i), length));
    if (byte < 0) return std::nullopt;
    out.push_back(static_cast<char>(byte));
    i += length;
  }
  return out;
}

std::string ByteLevelTable::encode(std::string_view bytes) const {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) append_code_point(to_char(static_cast<uint8_t>(c)), out);
  return out;
}

const ByteLevelTable& byte_level_table() {
  static const ByteLevelTable table;
  return table;
}

}  // namespace qwen35::utf8
