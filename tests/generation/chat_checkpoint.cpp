// Writes the tiny talking checkpoint (see chat_checkpoint.h). The byte-level alphabet is
// GPT-2's bytes_to_unicode, written out here so the test data owes nothing to the code
// under test.
#include "generation/chat_checkpoint.h"

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "qwen35/error.h"

namespace qwen35::testing {

namespace {

std::string utf8_of(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else {  // every byte-level character is below U+0800
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the rest
// become U+0100 onwards in byte order.
std::vector<std::string> byte_level_alphabet() {
  std::vector<std::string> table(256);
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    table[b] = utf8_of(printable ? b : next++);
  }
  return table;
}

std::string byte_level(const std::string& bytes) {
  static const std::vector<std::string> table = byte_level_alphabet();
  std::string out;
  for (unsigned char c : bytes) out += table[c];
  return out;
}

nlohmann::json tokenizer_json() {
  nlohmann::json vocab = nlohmann::json::object();
  int id = 0;
  for (int b = 0; b < 256; ++b) vocab[byte_level(std::string(1, static_cast<char>(b)))] = id++;
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"h", "e"},  {"l", "l"},   {"he", "ll"}, {"hell", "o"}, {" ", "w"},  {"o", "r"},  {" w", "or"}, {"l", "d"},
      {" wor", "ld"}, {"t", "h"}, {" ", "t"},  {" t", "h"},  {" th", "e"}, {"i", "n"},  {" ", "a"},  {"e", "r"},
      {"o", "u"},  {"a", "n"},   {" ", "s"},   {"y", "ou"},  {" ", "you"}, {"a", "re"}, {"r", "e"},  {"\n", "\n"},
  };
  nlohmann::json merge_list = nlohmann::json::array();
  for (const auto& [left, right] : merges) {
    merge_list.push_back(nlohmann::json::array({byte_level(left), byte_level(right)}));
    const std::string merged = byte_level(left + right);
    if (!vocab.contains(merged)) vocab[merged] = id++;
  }
  nlohmann::json added = nlohmann::json::array();
  for (const auto& [content, special] : std::vector<std::pair<std::string, bool>>{
           {"<|endoftext|>", true}, {"<|im_start|>", true}, {"<|im_end|>", true}, {"<think>", false}, {"</think>", false}}) {
    added.push_back({{"id", id++}, {"content", content}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                     {"normalized", false}, {"special", special}});
  }
  return {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         nlohmann::json::array(
             {{{"type", "Split"},
               {"pattern",
                {{"Regex", R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}}},
               {"behavior", "Isolated"},
               {"invert", false}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}})}}},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merge_list}}},
  };
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) fail("cannot write {}", path.string());
}

}  // namespace

void make_chat_checkpoint(const std::filesystem::path& tiny_dir, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  for (const char* name : {"config.json", "model.safetensors"}) {
    const std::filesystem::path from = std::filesystem::absolute(tiny_dir / name);
    const std::filesystem::path to = dir / name;
    if (!std::filesystem::exists(from)) fail("{} does not exist", from.string());
    std::filesystem::remove(to);
    std::error_code ec;
    std::filesystem::create_symlink(from, to, ec);
    if (ec) std::filesystem::copy_file(from, to);
  }
  write_file(dir / "tokenizer.json", tokenizer_json().dump(1));
  const nlohmann::json config = {
      {"add_bos_token", false},
      {"bos_token", nullptr},
      {"eos_token", "<|im_end|>"},
      {"pad_token", "<|endoftext|>"},
      // Enough of Qwen3.5's template for detect_chat_style to find the thinking opener.
      {"chat_template", "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{{- '<think>\\n' }}{%- endif %}"},
  };
  write_file(dir / "tokenizer_config.json", config.dump(1));
}

}  // namespace qwen35::testing
