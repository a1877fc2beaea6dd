// Loads each shared tokenizer once per process and builds synthetic tokenizer files.
#include "tokenizer_fixture.h"

#include <fstream>
#include <map>
#include <memory>

#include "support/test_support.h"
#include "utf8.h"

namespace qwen35::testing {

std::filesystem::path tokenizer_data_dir(const std::string& flavour) {
  return shared_dir() / "testdata" / "tokenizer" / flavour;
}

const Tokenizer& shared_tokenizer(const std::string& flavour) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> loaded;
  auto& slot = loaded[flavour];
  if (!slot) slot = std::make_unique<Tokenizer>(tokenizer_data_dir(flavour) / "tokenizer.json");
  return *slot;
}

nlohmann::json encode_cases(const std::string& flavour) {
  std::ifstream in(tokenizer_data_dir(flavour) / "encode_cases.json");
  return nlohmann::json::parse(in);
}

nlohmann::json synthetic_tokenizer_json(const std::vector<std::pair<std::string, std::string>>& merges,
                                        const std::vector<nlohmann::json>& added) {
  const auto& table = utf8::byte_level_table();
  nlohmann::json vocab = nlohmann::json::object();
  int id = 0;
  for (int b = 0; b < 256; ++b) vocab[table.encode(std::string(1, static_cast<char>(b)))] = id++;
  nlohmann::json merge_list = nlohmann::json::array();
  for (const auto& [left, right] : merges) {
    merge_list.push_back(nlohmann::json::array({table.encode(left), table.encode(right)}));
    const std::string merged = table.encode(left + right);
    if (!vocab.contains(merged)) vocab[merged] = id++;
  }
  nlohmann::json added_list = nlohmann::json::array();
  for (nlohmann::json token : added) {
    if (!token.contains("id")) token["id"] = id++;
    added_list.push_back(token);
  }
  return {
      {"version", "1.0"},
      {"added_tokens", added_list},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         nlohmann::json::array(
             {{{"type", "Split"}, {"pattern", {{"Regex", R"(\p{L}+|\p{N}|\s+|[^\s\p{L}\p{N}]+)"}}},
               {"behavior", "Isolated"}, {"invert", false}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}})}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merge_list}}},
  };
}

std::filesystem::path write_tokenizer(const std::filesystem::path& dir, const nlohmann::json& json) {
  const auto path = dir / "tokenizer.json";
  std::ofstream(path) << json.dump();
  return path;
}

}  // namespace qwen35::testing
