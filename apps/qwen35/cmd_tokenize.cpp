// `qwen35 tokenize`: text to token ids and back with a tokenizer.json, for scripts and
// for checking against other tokenizers. With --jsonl each stdin line is one JSON string
// (or, with --decode, one JSON array of ids) and each stdout line one answer.
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "qwen35/error.h"
#include "qwen35/tokenizer.h"

namespace {

struct TokenizeOptions {
  std::string tokenizer;
  bool jsonl = false;
  bool decode = false;
  bool skip_special = false;
};

std::filesystem::path tokenizer_path(const std::string& given) {
  // A checkpoint folder is accepted for its tokenizer.json.
  std::filesystem::path path(given);
  if (std::filesystem::is_directory(path)) path /= "tokenizer.json";
  return path;
}

std::string encode_line(const qwen35::Tokenizer& tok, const std::string& line, size_t line_number) {
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    qwen35::fail("stdin line {}: not valid JSON ({}); expected one JSON string per line", line_number, e.what());
  }
  if (!value.is_string()) qwen35::fail("stdin line {}: expected a JSON string, got {}", line_number, value.type_name());
  try {
    return nlohmann::json(tok.encode(value.get<std::string>())).dump();
  } catch (const qwen35::Error& e) {
    qwen35::fail("stdin line {}: {}", line_number, e.what());
  }
}

std::string decode_ids(const qwen35::Tokenizer& tok, const std::string& text, size_t line_number, bool skip_special) {
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    qwen35::fail("stdin line {}: not valid JSON ({}); expected an array of token ids", line_number, e.what());
  }
  std::vector<int32_t> ids;
  if (!value.is_array()) qwen35::fail("stdin line {}: expected a JSON array of token ids, got {}", line_number, value.type_name());
  for (const auto& id : value) {
    if (!id.is_number_integer() || id.get<int64_t>() < INT32_MIN || id.get<int64_t>() > INT32_MAX) {
      qwen35::fail("stdin line {}: token id {} is not a 32-bit integer", line_number, id.dump());
    }
    ids.push_back(id.get<int32_t>());
  }
  try {
    return tok.decode(ids, skip_special);
  } catch (const qwen35::Error& e) {
    qwen35::fail("stdin line {}: {}", line_number, e.what());
  }
}

void run_tokenize(const TokenizeOptions& options) {
  const qwen35::Tokenizer tok(tokenizer_path(options.tokenizer));
  std::ios::sync_with_stdio(false);
  if (!options.jsonl) {
    // The whole of stdin is one text (or one array of ids).
    std::stringstream buffer;
    buffer << std::cin.rdbuf();
    if (options.decode) {
      std::cout << decode_ids(tok, buffer.str(), 1, options.skip_special);
    } else {
      std::cout << nlohmann::json(tok.encode(buffer.str())).dump() << '\n';
    }
    std::cout.flush();
    return;
  }
  std::string line;
  size_t line_number = 0;
  while (std::getline(std::cin, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (options.decode) {
      std::cout << nlohmann::json(decode_ids(tok, line, line_number, options.skip_special)).dump() << '\n';
    } else {
      std::cout << encode_line(tok, line, line_number) << '\n';
    }
    // One answer per line as soon as it is ready, so another program can talk to us line by line.
    std::cout.flush();
  }
  if (!std::cout) qwen35::fail("writing to stdout failed");
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* command = app.add_subcommand("tokenize", "text to token ids (or ids to text with --decode)");
  command->add_option("--tokenizer", options->tokenizer, "tokenizer.json, or a folder holding one")->required();
  command->add_flag("--jsonl", options->jsonl,
                    "one JSON string per stdin line -> one JSON array of ids per stdout line "
                    "(without it, all of stdin is one text)");
  command->add_flag("--decode", options->decode, "the reverse: JSON arrays of ids in, text out (JSON strings with --jsonl)");
  command->add_flag("--skip-special", options->skip_special, "with --decode: leave out special tokens such as <|im_end|>");
  command->callback([options] { run_tokenize(*options); });
}
