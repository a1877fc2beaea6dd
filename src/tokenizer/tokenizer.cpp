// Tokenizer: reads tokenizer.json (+ tokenizer_config.json) and runs Hugging Face's
// pipeline for byte-level BPE: added tokens split out first, then per segment the
// normalizer, the pre-tokenizer and BPE. Decoding concatenates token bytes.
#include "qwen35/tokenizer.h"

#include <fstream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "added_tokens.h"
#include "bpe.h"
#include "normalizer.h"
#include "pre_tokenizer.h"
#include "tokenizer_json.h"
#include "qwen35/error.h"
#include "utf8.h"

namespace qwen35 {

namespace {

enum class TokenKind : uint8_t { kNone, kVocab, kAdded, kSpecial };

// tokenizer_config.json spells a token either "<|im_end|>" or {"content": "<|im_end|>", ...}.
std::optional<std::string> config_token(const nlohmann::json& config, const char* key) {
  if (!config.contains(key)) return std::nullopt;
  const auto& value = config[key];
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string()) {
    return value["content"].get<std::string>();
  }
  return std::nullopt;
}

}  // namespace

struct Tokenizer::Impl {
  std::string source;  // the tokenizer.json path, for messages
  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
  std::unique_ptr<BpeModel> bpe;
  AddedTokenMatcher raw_matcher;         // added tokens with normalized = false
  AddedTokenMatcher normalized_matcher;  // added tokens with normalized = true
  std::vector<AddedToken> added;
  StringIdMap added_ids;                 // content -> id
  std::vector<std::string> decode_bytes;  // [vocab_size] what each id decodes to
  std::vector<TokenKind> kinds;           // [vocab_size]
  std::optional<int32_t> eos;
  std::optional<int32_t> bos;
  std::optional<int32_t> pad;
  std::string chat_template;

  // encode() shares the BPE cache and these buffers; one encode runs at a time.
  std::mutex mutex;
  std::vector<std::string_view> pieces;
  std::vector<std::string_view> piece_scratch;
  std::string normalized;

  void encode_segment(std::string_view text, std::vector<int32_t>& out) {
    // Either `text` itself or a view of `normalized`, which nothing below overwrites.
    const std::string_view normal = normalizer.apply(text, normalized);
    normalized_matcher.split(
        normal,
        [&](std::string_view segment) {
          pieces.clear();
          pre_tokenizer.split(segment, pieces, piece_scratch);
          for (std::string_view piece : pieces) bpe->encode(piece, out);
        },
        [&](int32_t id) { out.push_back(id); });
  }

  void check_id(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= kinds.size() || kinds[static_cast<size_t>(id)] == TokenKind::kNone) {
      fail("token id {} is not in the tokenizer {} (vocab_size {})", id, source, kinds.size());
    }
  }
};

Tokenizer::Tokenizer(const std::filesystem::path& tokenizer_json, TokenizerOptions options) try
    : impl_(std::make_unique<Impl>()) {
  Impl& t = *impl_;
  t.source = tokenizer_json.string();
  TokenizerJson file = read_tokenizer_json(tokenizer_json);
  const nlohmann::json& json = file.rest;
  if (!json.is_object()) fail("{}: expected a JSON object at the top level", t.source);
  if (!json.contains("model") || !json["model"].is_object()) fail("{}: no \"model\" object", t.source);

  t.normalizer = Normalizer(json.value("normalizer", nlohmann::json()), t.source);
  t.pre_tokenizer = PreTokenizer(json.value("pre_tokenizer", nlohmann::json()), t.source);
  if (!t.pre_tokenizer.has_byte_level()) {
    fail("{}: the pre_tokenizer has no ByteLevel step; only byte-level BPE (GPT-2 / Qwen style) is supported",
         t.source);
  }
  const auto& decoder = json.value("decoder", nlohmann::json());
  if (!decoder.is_null() && decoder.value("type", std::string()) != "ByteLevel") {
    fail("{}: decoder type {} is not supported (expected ByteLevel)", t.source, decoder.value("type", nlohmann::json()).dump());
  }
  t.bpe = std::make_unique<BpeModel>(json["model"], std::move(file.bpe), t.source, options.bpe_cache_entries);

  // Added tokens may reuse vocab ids or extend past them.
  std::vector<AddedTokenSpec> raw_specs;
  std::vector<AddedTokenSpec> normalized_specs;
  int32_t max_id = t.bpe->max_id();
  if (json.contains("added_tokens")) {
    if (!json["added_tokens"].is_array()) fail("{}: \"added_tokens\" is not an array", t.source);
    for (const auto& entry : json["added_tokens"]) {
      if (!entry.is_object() || !entry.contains("id") || !entry["id"].is_number_integer() || entry["id"].get<int64_t>() < 0 ||
          entry["id"].get<int64_t>() > INT32_MAX || !entry.contains("content") || !entry["content"].is_string()) {
        fail("{}: added token {} needs a non-negative integer \"id\" and a string \"content\"", t.source,
             entry.dump().substr(0, 200));
      }
      AddedToken token{entry["id"].get<int32_t>(), entry["content"].get<std::string>(), entry.value("special", false)};
      if (utf8::first_invalid(token.content)) fail("{}: added token id {} is not valid UTF-8", t.source, token.id);
      AddedTokenSpec spec{token.id, token.content, entry.value("lstrip", false), entry.value("rstrip", false),
                          entry.value("single_word", false)};
      // "normalized": false tokens are found in the raw text, the others after normalisation.
      (entry.value("normalized", !token.special) ? normalized_specs : raw_specs).push_back(spec);
      t.added_ids[token.content] = token.id;
      max_id = std::max(max_id, token.id);
      t.added.push_back(std::move(token));
    }
  }
  t.raw_matcher = AddedTokenMatcher(std::move(raw_specs));
  t.normalized_matcher = AddedTokenMatcher(std::move(normalized_specs));

  const auto size = static_cast<size_t>(max_id + 1);
  t.decode_bytes.assign(size, std::string());
  t.kinds.assign(size, TokenKind::kNone);
  for (const auto& [bytes, id] : t.bpe->vocab()) {
    t.decode_bytes[static_cast<size_t>(id)] = bytes;
    t.kinds[static_cast<size_t>(id)] = TokenKind::kVocab;
  }
  for (const AddedToken& token : t.added) {
    // The ByteLevel decoder maps an added token's characters through the byte table when
    // all of them are in it (true for ASCII markers), and keeps its UTF-8 otherwise.
    auto bytes = utf8::byte_level_table().decode(token.content);
    t.decode_bytes[static_cast<size_t>(token.id)] = bytes ? *std::move(bytes) : token.content;
    t.kinds[static_cast<size_t>(token.id)] = token.special ? TokenKind::kSpecial : TokenKind::kAdded;
  }

  const std::filesystem::path config_path = tokenizer_json.parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(config_path)) {
    const nlohmann::json config = read_json_file(config_path);
    auto lookup = [&](const char* key) -> std::optional<int32_t> {
      const auto name = config_token(config, key);
      if (!name) return std::nullopt;
      const auto id = token_to_id(*name);
      if (!id) fail("{}: {} \"{}\" is not a token of {}", config_path.string(), key, *name, t.source);
      return id;
    };
    t.eos = lookup("eos_token");
    t.bos = lookup("bos_token");
    t.pad = lookup("pad_token");
    if (config.contains("chat_template")) {
      const auto& tmpl = config["chat_template"];
      if (tmpl.is_string()) {
        t.chat_template = tmpl.get<std::string>();
      } else if (tmpl.is_array()) {
        // Some configs carry named templates; the one called "default" is the chat one.
        for (const auto& named : tmpl) {
          if (named.value("name", std::string()) == "default") t.chat_template = named.value("template", std::string());
        }
      }
    }
  }
  const std::filesystem::path jinja_path = tokenizer_json.parent_path() / "chat_template.jinja";
  if (t.chat_template.empty() && std::filesystem::exists(jinja_path)) {
    std::ifstream in(jinja_path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    t.chat_template = buffer.str();
  }
} catch (const nlohmann::json::exception& e) {
  // A value of the wrong JSON type somewhere the checks above do not look (e.g. a string
  // where a flag belongs): still a bad file, reported as one.
  fail("{} (or the tokenizer_config.json beside it) has a value of an unexpected type: {}", tokenizer_json.string(),
       e.what());
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  if (const auto offset = utf8::first_invalid(text)) {
    fail("text to encode is not valid UTF-8: byte 0x{:02x} at offset {} of {}", static_cast<uint8_t>(text[*offset]),
         *offset, text.size());
  }
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  Impl& t = *impl_;
  const std::lock_guard lock(t.mutex);
  t.raw_matcher.split(
      text, [&](std::string_view segment) { t.encode_segment(segment, out); },
      [&](int32_t id) { out.push_back(id); });
  return out;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  const Impl& t = *impl_;
  std::string bytes;
  for (int32_t id : ids) {
    t.check_id(id);
    if (skip_special && t.kinds[static_cast<size_t>(id)] == TokenKind::kSpecial) continue;
    bytes += t.decode_bytes[static_cast<size_t>(id)];
  }
  if (!utf8::first_invalid(bytes)) return bytes;
  std::string out;
  utf8::append_lossy(bytes, out);
  return out;
}

int32_t Tokenizer::vocab_size() const { return static_cast<int32_t>(impl_->kinds.size()); }

std::optional<int32_t> Tokenizer::token_to_id(std::string_view name) const {
  if (const auto it = impl_->added_ids.find(name); it != impl_->added_ids.end()) return it->second;
  const auto bytes = utf8::byte_level_table().decode(name);
  if (!bytes) return std::nullopt;
  const auto& vocab = impl_->bpe->vocab();
  if (const auto it = vocab.find(*bytes); it != vocab.end()) return it->second;
  return std::nullopt;
}

std::string Tokenizer::id_to_token(int32_t id) const {
  impl_->check_id(id);
  const auto index = static_cast<size_t>(id);
  if (impl_->kinds[index] == TokenKind::kVocab) return utf8::byte_level_table().encode(impl_->decode_bytes[index]);
  for (const AddedToken& token : impl_->added) {
    if (token.id == id) return token.content;
  }
  return {};
}

std::string_view Tokenizer::token_bytes(int32_t id) const {
  impl_->check_id(id);
  return impl_->decode_bytes[static_cast<size_t>(id)];
}

bool Tokenizer::is_special(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < impl_->kinds.size() &&
         impl_->kinds[static_cast<size_t>(id)] == TokenKind::kSpecial;
}

const std::vector<AddedToken>& Tokenizer::added_tokens() const { return impl_->added; }
std::optional<int32_t> Tokenizer::eos_id() const { return impl_->eos; }
std::optional<int32_t> Tokenizer::bos_id() const { return impl_->bos; }
std::optional<int32_t> Tokenizer::pad_id() const { return impl_->pad; }
const std::string& Tokenizer::chat_template() const { return impl_->chat_template; }

StreamingDecoder::StreamingDecoder(const Tokenizer& tokenizer, bool skip_special)
    : tokenizer_(&tokenizer), skip_special_(skip_special) {}

std::string StreamingDecoder::feed(int32_t id) {
  const std::string_view bytes = tokenizer_->token_bytes(id);
  if (skip_special_ && tokenizer_->is_special(id)) return {};
  pending_ += bytes;
  std::string out;
  size_t i = 0;
  while (i < pending_.size()) {
    const utf8::Step s = utf8::step(std::string_view(pending_).substr(i));
    if (s.kind == utf8::Step::kTruncated) break;  // the rest of this character comes with a later token
    if (s.kind == utf8::Step::kValid) {
      out.append(pending_, i, s.length);
    } else {
      out.append(utf8::kReplacement);
    }
    i += s.length;
  }
  pending_.erase(0, i);
  return out;
}

std::string StreamingDecoder::flush() {
  std::string out;
  utf8::append_lossy(pending_, out);
  pending_.clear();
  return out;
}

void StreamingDecoder::reset() { pending_.clear(); }

}  // namespace qwen35
