// The pre-tokenizer of tokenizer.json: cuts normalised text into pieces that BPE then
// encodes one by one. Supports Split (a PCRE2-compiled regex or a literal, every
// SplitDelimiterBehavior, invert), ByteLevel and Sequence, taken from the file as they are:
// Qwen3 and Qwen3.5 differ only in this regex.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace qwen35 {

class PreTokenizer {
 public:
  // `spec` is tokenizer.json's "pre_tokenizer" value; `source` names the file for errors.
  PreTokenizer(const nlohmann::json& spec, std::string_view source);
  PreTokenizer();
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;

  // Appends the pieces of `text` (valid UTF-8) to `pieces`, as views into text.
  // `scratch` is reused between calls to avoid allocations.
  void split(std::string_view text, std::vector<std::string_view>& pieces,
             std::vector<std::string_view>& scratch) const;

  // Whether a ByteLevel step appeared (the vocabulary is then byte-level encoded).
  bool has_byte_level() const { return has_byte_level_; }

 private:
  struct Step;
  std::vector<std::unique_ptr<Step>> steps_;
  bool has_byte_level_ = false;
};

}  // namespace qwen35
