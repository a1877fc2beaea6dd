// The normalizer step of tokenizer.json ("NFC", "NFD", "NFKC", "NFKD", a "Sequence" of
// them, or null), done with utf8proc. Qwen declares NFC, which mostly merges a letter
// and a following combining mark into one precomposed character.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace qwen35 {

class Normalizer {
 public:
  enum class Form { kNfc, kNfd, kNfkc, kNfkd };

  // `spec` is tokenizer.json's "normalizer" value; `source` names the file for errors.
  Normalizer(const nlohmann::json& spec, std::string_view source);
  Normalizer() = default;

  bool empty() const { return forms_.empty(); }
  // Returns text itself when no step changes it, else the normalised copy in `storage`.
  // text must be valid UTF-8.
  std::string_view apply(std::string_view text, std::string& storage) const;

 private:
  std::vector<Form> forms_;
};

// One normalisation form applied to valid UTF-8 (also used by the tests' round trip).
std::string normalize(std::string_view text, Normalizer::Form form);

}  // namespace qwen35
