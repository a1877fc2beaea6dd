// Finds added tokens (<|im_start|>, <think>, ...) in text before any normalisation or
// pre-tokenisation, leftmost first and longest on ties, as Hugging Face's
// AddedVocabulary does, honouring each token's lstrip / rstrip / single_word flags.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qwen35 {

struct AddedTokenSpec {
  int32_t id = -1;
  std::string content;
  bool lstrip = false;       // swallow whitespace on the left
  bool rstrip = false;       // swallow whitespace on the right
  bool single_word = false;  // only match when not inside a word
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(std::vector<AddedTokenSpec> tokens);

  bool empty() const { return tokens_.empty(); }

  // Calls on_text(span) for the text between tokens and on_token(id) for each token, in order.
  template <typename OnText, typename OnToken>
  void split(std::string_view text, OnText&& on_text, OnToken&& on_token) const {
    if (tokens_.empty()) {
      on_text(text);
      return;
    }
    size_t done = 0;
    size_t from = 0;
    while (true) {
      const Match m = find(text, from, done);
      if (m.token < 0) break;
      if (m.begin > done) on_text(text.substr(done, m.begin - done));
      on_token(tokens_[static_cast<size_t>(m.token)].id);
      done = m.end;
      from = m.end;
    }
    if (done < text.size()) on_text(text.substr(done));
  }

 private:
  struct Match {
    int32_t token = -1;  // index into tokens_
    size_t begin = 0;    // including whitespace swallowed by lstrip
    size_t end = 0;      // including whitespace swallowed by rstrip
  };
  // The leftmost token at or after `from`; lstrip never reaches before `floor`.
  Match find(std::string_view text, size_t from, size_t floor) const;

  std::vector<AddedTokenSpec> tokens_;
  std::array<std::vector<int32_t>, 256> by_first_byte_;  // token indices, longest first
};

}  // namespace qwen35
