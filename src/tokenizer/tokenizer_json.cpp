// A SAX handler that builds a json tree like nlohmann's own DOM parser, except inside
// model.vocab (object of token -> id) and model.merges (array of "a b" or ["a", "b"]),
// whose entries it appends to BpeTables instead.
#include "tokenizer_json.h"

#include <fstream>
#include <sstream>

#include "qwen35/error.h"

namespace qwen35 {

namespace {

std::string read_file(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) fail("tokenizer file {} does not exist", path.string());
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open {}", path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

class Handler : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit Handler(TokenizerJson& out) : out_(out) {}

  bool null() override { return value(nullptr); }
  bool boolean(bool v) override { return value(v); }
  bool number_integer(number_integer_t v) override {
    if (mode_ == Mode::kVocab) {
      out_.bpe.vocab.emplace_back(std::move(key_), v);
      return true;
    }
    return value(v);
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (mode_ == Mode::kVocab) {
      out_.bpe.vocab.emplace_back(std::move(key_), v > INT64_MAX ? -1 : static_cast<int64_t>(v));
      return true;
    }
    return value(v);
  }
  bool number_float(number_float_t v, const string_t&) override { return value(v); }
  bool string(string_t& v) override {
    if (mode_ == Mode::kMerges) {
      const size_t space = v.find(' ');
      if (space == std::string::npos || v.find(' ', space + 1) != std::string::npos) {
        bad_merge("\"" + v + "\"");
      } else {
        out_.bpe.merges.push_back({v.substr(0, space), v.substr(space + 1)});
      }
      return true;
    }
    if (mode_ == Mode::kMergePair) {
      pair_.push_back(std::move(v));
      return true;
    }
    return value(std::move(v));
  }
  bool binary(binary_t& v) override { return value(nlohmann::json::binary(v)); }

  bool start_object(std::size_t) override {
    if (capturing()) return capture_other("an object");
    if (at_model_key("vocab")) {
      out_.bpe.has_vocab = true;
      mode_ = Mode::kVocab;
      (*stack_.back())[key_] = nlohmann::json::object();  // keeps "vocab" visible as present
      return true;
    }
    push(nlohmann::json::object());
    return true;
  }
  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }
  bool end_object() override {
    if (mode_ == Mode::kVocab) {
      mode_ = Mode::kNone;
      return true;
    }
    if (capturing()) return capture_end();
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    if (mode_ == Mode::kMerges) {
      mode_ = Mode::kMergePair;
      pair_.clear();
      return true;
    }
    if (capturing()) return capture_other("an array");
    if (at_model_key("merges")) {
      out_.bpe.has_merges = true;
      mode_ = Mode::kMerges;
      (*stack_.back())[key_] = nlohmann::json::array();
      return true;
    }
    push(nlohmann::json::array());
    return true;
  }
  bool end_array() override {
    if (mode_ == Mode::kMergePair) {
      mode_ = Mode::kMerges;
      if (pair_.size() == 2) {
        out_.bpe.merges.push_back({std::move(pair_[0]), std::move(pair_[1])});
      } else {
        bad_merge(fmt::format("an array of {} strings", pair_.size()));
      }
      return true;
    }
    if (mode_ == Mode::kMerges) {
      mode_ = Mode::kNone;
      return true;
    }
    if (capturing()) return capture_end();
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error_ = e.what();
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  enum class Mode { kNone, kVocab, kMerges, kMergePair, kSkip };

  bool capturing() const { return mode_ != Mode::kNone; }

  // Anything unexpected inside the vocab or merges is skipped (nesting counted) and noted.
  bool capture_other(const char* what) {
    if (mode_ == Mode::kVocab) {
      out_.bpe.vocab.emplace_back(std::move(key_), -1);
    } else if (mode_ == Mode::kMerges || mode_ == Mode::kMergePair) {
      bad_merge(what);
    }
    if (mode_ != Mode::kSkip) resume_ = mode_;
    mode_ = Mode::kSkip;
    ++skip_depth_;
    return true;
  }
  bool capture_end() {
    if (--skip_depth_ == 0) mode_ = resume_;
    return true;
  }
  void bad_merge(std::string text) {
    if (out_.bpe.bad_merge < 0) {
      out_.bpe.bad_merge = static_cast<int64_t>(out_.bpe.merges.size());
      out_.bpe.bad_merge_text = std::move(text);
    }
  }

  // True when the next value is model.<name> (stack: root object, model object).
  bool at_model_key(const char* name) const {
    return stack_.size() == 2 && stack_.back() == model_ && key_ == name;
  }

  template <typename Value>
  bool value(Value&& v) {
    if (mode_ == Mode::kSkip) return true;
    if (mode_ == Mode::kVocab) {
      out_.bpe.vocab.emplace_back(std::move(key_), -1);  // not an integer id: rejected at load
      return true;
    }
    if (mode_ == Mode::kMerges || mode_ == Mode::kMergePair) {
      bad_merge(nlohmann::json(std::forward<Value>(v)).dump());
      return true;
    }
    if (stack_.empty()) {
      out_.rest = nlohmann::json(std::forward<Value>(v));
    } else if (stack_.back()->is_array()) {
      stack_.back()->push_back(nlohmann::json(std::forward<Value>(v)));
    } else {
      (*stack_.back())[key_] = nlohmann::json(std::forward<Value>(v));
    }
    return true;
  }

  void push(nlohmann::json container) {
    nlohmann::json* slot = nullptr;
    if (stack_.empty()) {
      out_.rest = std::move(container);
      slot = &out_.rest;
    } else if (stack_.back()->is_array()) {
      stack_.back()->push_back(std::move(container));
      slot = &stack_.back()->back();
    } else {
      slot = &((*stack_.back())[key_] = std::move(container));
    }
    if (stack_.size() == 1 && stack_[0]->is_object() && key_ == "model") model_ = slot;
    stack_.push_back(slot);
  }

  TokenizerJson& out_;
  std::vector<nlohmann::json*> stack_;  // open containers; a parent never grows while a child is open
  std::string key_;
  Mode mode_ = Mode::kNone;
  Mode resume_ = Mode::kNone;
  int skip_depth_ = 0;
  const nlohmann::json* model_ = nullptr;  // the top-level "model" object once opened
  std::vector<std::string> pair_;
  std::string error_;
};

}  // namespace

TokenizerJson read_tokenizer_json(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  TokenizerJson out;
  Handler handler(out);
  if (!nlohmann::json::sax_parse(text, &handler) || !handler.error().empty()) {
    fail("{} is not valid JSON: {}", path.string(), handler.error());
  }
  return out;
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("{} is not valid JSON: {}", path.string(), e.what());
  }
}

}  // namespace qwen35
