// Shared options of the text commands (see text_options.h).
#include "text_options.h"

#include <cstdio>
#include <filesystem>

#include "qwen35/error.h"

namespace qwen35::app {

void SamplingOptions::add_to(CLI::App& command) {
  temperature_option =
      command.add_option("--temp", temperature, "temperature; 0: greedy (with --tokens the default is 0)")
          ->capture_default_str();
  command.add_option("--top-k", top_k, "keep the k most likely tokens; 0: off")->capture_default_str();
  command.add_option("--top-p", top_p, "keep the most likely tokens up to this probability; 1: off")
      ->capture_default_str();
  command.add_option("--min-p", min_p, "drop tokens below min-p times the most likely one's probability; 0: off")
      ->capture_default_str();
  command.add_option("--repeat-penalty", repeat_penalty, "penalise recent tokens (logits > 0 divided by it, < 0 multiplied); 1: off")
      ->capture_default_str();
  command.add_option("--repeat-last-n", repeat_last_n, "how many recent tokens the penalties look at; 0: all")
      ->capture_default_str();
  command.add_option("--presence-penalty", presence_penalty, "subtract this from recent tokens' logits; 0: off")
      ->capture_default_str();
  command.add_option("--frequency-penalty", frequency_penalty,
                     "subtract this per occurrence in the recent tokens; 0: off")
      ->capture_default_str();
}

SamplerParams SamplingOptions::params(uint64_t seed) const {
  return SamplerParams{.temperature = temperature,
                       .top_k = top_k,
                       .top_p = top_p,
                       .min_p = min_p,
                       .repetition_penalty = repeat_penalty,
                       .presence_penalty = presence_penalty,
                       .frequency_penalty = frequency_penalty,
                       .penalty_window = repeat_last_n,
                       .seed = seed};
}

void TextOptions::add_to(CLI::App& command, const std::string& n_predict_help) {
  command.add_option("--tokenizer", tokenizer, "tokenizer.json, or a folder holding one (default: the --model folder's)");
  sampling.add_to(command);
  command.add_option("-n,--n-predict", n_predict, n_predict_help)->capture_default_str();
  command.add_option("--stop", stops, "stop when the text reaches this string (not shown); repeatable")
      ->allow_extra_args(false);
  command.add_option("--system", system, "chat template: the system prompt");
  command.add_flag("--no-think", no_think, "chat template: thinking off (an empty <think></think> block)");
}

GenerationParams TextOptions::generation_params(uint64_t seed) const {
  GenerationParams params;
  params.sampler = sampling.params(seed);
  params.max_tokens = n_predict < 0 ? -1 : n_predict;
  params.stop_strings = stops;
  return params;
}

ChatOptions TextOptions::chat_options(const Tokenizer& tokenizer) const {
  return ChatOptions{.add_generation_prompt = true,
                     .enable_thinking = !no_think,
                     .style = detect_chat_style(tokenizer.chat_template())};
}

Tokenizer load_tokenizer(const std::string& tokenizer_option, const std::string& model_dir,
                         std::string_view needed_for) {
  std::filesystem::path path;
  if (!tokenizer_option.empty()) {
    path = tokenizer_option;
    if (std::filesystem::is_directory(path)) path /= "tokenizer.json";
  } else if (model_dir.empty()) {
    fail("{} needs a tokenizer: give --model DIR (a checkpoint with tokenizer.json) or --tokenizer FILE", needed_for);
  } else {
    if (!std::filesystem::exists(model_dir)) fail("model directory {} does not exist", model_dir);
    path = std::filesystem::path(model_dir) / "tokenizer.json";
    if (std::filesystem::is_directory(model_dir) && !std::filesystem::exists(path)) {
      fail("{} needs a tokenizer, and the model directory {} has no tokenizer.json (give --tokenizer FILE)",
           needed_for, model_dir);
    }
  }
  return Tokenizer(path);
}

void write_text(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

std::string_view reply_opening(const ChatOptions& options) {
  return options.enable_thinking && options.style == ChatStyle::kQwen35 ? "<think>\n" : "";
}

}  // namespace qwen35::app
