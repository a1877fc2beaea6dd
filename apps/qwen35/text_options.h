// Options the text commands (generate --prompt, chat) share: the tokenizer, sampling in
// llama.cpp's spelling and defaults, the token limit and stop strings, and the chat
// template's system prompt and thinking switch; plus writing streamed text and statistics.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "qwen35/generation.h"
#include "qwen35/tokenizer.h"

namespace qwen35::app {

struct SamplingOptions {
  float temperature = 0.8f;
  int32_t top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float repeat_penalty = 1.0f;
  int32_t repeat_last_n = 64;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;

  CLI::Option* temperature_option = nullptr;  // to tell a given --temp from the default

  void add_to(CLI::App& command);
  SamplerParams params(uint64_t seed) const;
};

struct TextOptions {
  std::string tokenizer;  // empty: MODEL_DIR/tokenizer.json
  SamplingOptions sampling;
  int32_t n_predict = -1;
  std::vector<std::string> stops;
  std::string system;  // chat template: system prompt
  bool no_think = false;

  void add_to(CLI::App& command, const std::string& n_predict_help);
  // Sampler, token limit and stop strings; stop ids are left to the caller.
  GenerationParams generation_params(uint64_t seed) const;
  // The chat template's options for this tokenizer (thinking, Qwen3 or Qwen3.5 style).
  ChatOptions chat_options(const Tokenizer& tokenizer) const;
};

// The tokenizer for `model_dir` (or --tokenizer), loaded before the model so that a
// missing one is reported before minutes of loading. `needed_for` names what needs it.
Tokenizer load_tokenizer(const std::string& tokenizer_option, const std::string& model_dir,
                         std::string_view needed_for);

// Writes streamed text to stdout at once (a pipe reader sees each piece as it comes).
void write_text(std::string_view text);

// What the generation prompt opens and the reply continues: "<think>\n" when thinking
// is on with the Qwen3.5 template, empty otherwise. Printed before the reply so the
// output reads as the assistant's whole message.
std::string_view reply_opening(const ChatOptions& options);

}  // namespace qwen35::app
