// The caller's side of text: a byte-level BPE tokenizer read from a Hugging Face
// tokenizer.json (Qwen3 / Qwen3.5), a streaming decoder that only ever hands out
// whole UTF-8 characters, and the Qwen chat format (<|im_start|>role ... <|im_end|>).
// Set-up problems and bad input (files, JSON, invalid UTF-8, unknown ids) throw qwen35::Error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace qwen35 {

struct TokenizerOptions {
  // Words (pre-tokenizer pieces) whose BPE result is remembered; 0 turns the cache off.
  size_t bpe_cache_entries = 1 << 16;
};

// One entry of tokenizer.json's "added_tokens" (special and non-special alike).
struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;
};

class Tokenizer {
 public:
  // Reads tokenizer.json and, when it exists beside it, tokenizer_config.json
  // (eos / bos / pad tokens and the chat template).
  explicit Tokenizer(const std::filesystem::path& tokenizer_json, TokenizerOptions options = {});
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Text to ids, no BOS/EOS added. Added-token strings in the text (e.g. "<|im_start|>")
  // become their ids, as Hugging Face does with split_special_tokens = false.
  // Throws on invalid UTF-8, naming the byte offset. Safe to call from several threads.
  std::vector<int32_t> encode(std::string_view text) const;

  // Ids to text. Bytes that do not form valid UTF-8 become U+FFFD, as Hugging Face's
  // decode does. Throws on an id outside [0, vocab_size()) or one no token has. A model
  // whose embedding has more rows than the tokenizer has ids (Qwen3.5 pads to 248,320)
  // should sample from logits.first(vocab_size()).
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;

  // One past the largest id in the vocabulary or the added tokens.
  int32_t vocab_size() const;
  // Token names as tokenizer.json spells them: byte-level form ("Ġhello") for the
  // BPE vocabulary, the literal content for added tokens.
  std::optional<int32_t> token_to_id(std::string_view name) const;
  std::string id_to_token(int32_t id) const;  // throws on an unknown id
  // The raw bytes a token stands for (not necessarily valid UTF-8 on its own).
  std::string_view token_bytes(int32_t id) const;  // throws on an unknown id
  bool is_special(int32_t id) const;

  const std::vector<AddedToken>& added_tokens() const;
  // From tokenizer_config.json when present (eos_token / bos_token / pad_token).
  std::optional<int32_t> eos_id() const;
  std::optional<int32_t> bos_id() const;
  std::optional<int32_t> pad_id() const;
  // The Jinja chat template from tokenizer_config.json; empty when absent.
  const std::string& chat_template() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Turns ids into text one id at a time during generation. Returns only complete UTF-8
// characters: bytes of a character split across tokens wait for the rest. The
// concatenation of every feed() and the final flush() equals Tokenizer::decode.
class StreamingDecoder {
 public:
  explicit StreamingDecoder(const Tokenizer& tokenizer, bool skip_special = false);
  std::string feed(int32_t id);  // throws on an id the tokenizer does not have
  // Ends the stream: any incomplete character left over becomes U+FFFD.
  std::string flush();
  void reset();

 private:
  const Tokenizer* tokenizer_;
  bool skip_special_;
  std::string pending_;  // at most 3 bytes: the start of a character still incomplete
};

// ---- Chat format -------------------------------------------------------------------

struct ChatMessage {
  std::string role;  // "system", "user", "assistant" or "tool"
  std::string content;
  // For assistant turns: the thinking text. When absent it is taken out of
  // "<think>...</think>" in content, as the Qwen template does.
  std::optional<std::string> reasoning_content;
};

enum class ChatStyle {
  kQwen3,   // thinking on: the generation prompt is "<|im_start|>assistant\n"
  kQwen35,  // thinking on: the generation prompt also opens "<think>\n"
};

struct ChatOptions {
  bool add_generation_prompt = true;
  bool enable_thinking = true;  // off: the prompt ends "<think>\n\n</think>\n\n"
  ChatStyle style = ChatStyle::kQwen35;
};

// Renders messages the way Qwen's tokenizer_config.json chat template does (without
// tools): "<|im_start|>role\ncontent<|im_end|>\n" per turn, the reasoning of assistant
// turns before the last user query dropped. Throws on an unknown role.
std::string format_chat(std::span<const ChatMessage> messages, const ChatOptions& options = {});

// Which built-in style a Jinja chat template corresponds to (kQwen35 when it opens
// "<think>\n" in the generation prompt, kQwen3 otherwise; kQwen35 when empty).
ChatStyle detect_chat_style(std::string_view chat_template);

// format_chat then encode: special markers in the rendered text become their ids.
std::vector<int32_t> encode_chat(const Tokenizer& tokenizer, std::span<const ChatMessage> messages,
                                 const ChatOptions& options = {});

}  // namespace qwen35
