// Reads tokenizer.json in one streaming pass. The BPE vocabulary and merges (300,000
// entries, almost all of the file) go straight into flat vectors; everything else becomes
// an ordinary nlohmann::json tree. Building a tree for the vocabulary too costs more
// than everything else the tokenizer does at load.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace qwen35 {

struct BpeTables {
  bool has_vocab = false;   // "model": {"vocab": {...}} was an object
  bool has_merges = false;  // "model": {"merges": [...]} was an array
  std::vector<std::pair<std::string, int64_t>> vocab;  // byte-level token, id
  // Each merge as its two tokens; "a b" strings are split at load. A merge that was
  // neither form sets bad_merge to its index and bad_merge_text to what it was.
  std::vector<std::array<std::string, 2>> merges;
  int64_t bad_merge = -1;
  std::string bad_merge_text;
};

struct TokenizerJson {
  nlohmann::json rest;  // the file without model.vocab and model.merges
  BpeTables bpe;
};

// Throws qwen35::Error naming the path when the file is missing or not valid JSON.
TokenizerJson read_tokenizer_json(const std::filesystem::path& path);

// The whole file as a tree (for small files such as tokenizer_config.json).
nlohmann::json read_json_file(const std::filesystem::path& path);

}  // namespace qwen35
