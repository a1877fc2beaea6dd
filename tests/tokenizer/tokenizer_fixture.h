// Shared set-up for the tokenizer tests: the real Qwen tokenizers from the shared test
// data, each loaded once per test process (5 MB of JSON), their encode_cases.json, and
// a writer of tiny synthetic tokenizer.json files for edge cases and bad input.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "qwen35/tokenizer.h"

namespace qwen35::testing {

std::filesystem::path tokenizer_data_dir(const std::string& flavour);  // "qwen3" or "qwen35-regex"
const Tokenizer& shared_tokenizer(const std::string& flavour);
nlohmann::json encode_cases(const std::string& flavour);

// A byte-level BPE tokenizer.json: the 256 byte tokens, then `merges` in rank order
// (each merged token appended to the vocab), and `added` tokens after those.
nlohmann::json synthetic_tokenizer_json(const std::vector<std::pair<std::string, std::string>>& merges,
                                        const std::vector<nlohmann::json>& added = {});
// Writes `json` as dir/tokenizer.json and returns the path.
std::filesystem::path write_tokenizer(const std::filesystem::path& dir, const nlohmann::json& json);

}  // namespace qwen35::testing
