// Pre-tokenizer steps run with PCRE2 (JIT-compiled, UTF + UCP so that \s, \p{L} and
// friends use Unicode properties like Hugging Face's Oniguruma). A split step turns each
// piece into matched and unmatched spans and then applies its delimiter behaviour,
// mirroring tokenizers' Split and SplitDelimiterBehavior.
#include "pre_tokenizer.h"

#include <algorithm>

#include <pcre2.h>  // PCRE2_CODE_UNIT_WIDTH=8 comes from CMakeLists.txt

#include <nlohmann/json.hpp>

#include "qwen35/error.h"

namespace qwen35 {

namespace {

// GPT-2's pattern, used by a ByteLevel step with use_regex = true.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

Behavior parse_behavior(const std::string& name, std::string_view source) {
  if (name == "Removed") return Behavior::kRemoved;
  if (name == "Isolated") return Behavior::kIsolated;
  if (name == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return Behavior::kMergedWithNext;
  if (name == "Contiguous") return Behavior::kContiguous;
  fail("{}: unknown Split behavior \"{}\"", source, name);
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof(buffer));
  return reinterpret_cast<const char*>(buffer);
}

// Escapes a literal so PCRE2 matches it verbatim (\Q...\E cannot hold "\E").
std::string quote_literal(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\^$.|?*+()[]{}-/#").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

}  // namespace

struct PreTokenizer::Step {
  pcre2_code* code = nullptr;
  bool jit = false;
  Behavior behavior = Behavior::kIsolated;
  bool invert = false;

  Step(std::string_view pattern, Behavior behavior_in, bool invert_in, std::string_view source)
      : behavior(behavior_in), invert(invert_in) {
    int error = 0;
    PCRE2_SIZE error_offset = 0;
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP,
                         &error, &error_offset, nullptr);
    if (code == nullptr) {
      fail("{}: pre-tokenizer regex does not compile at offset {}: {} (pattern {})", source, error_offset,
           pcre2_message(error), pattern);
    }
    // Without JIT (e.g. an unsupported CPU) the interpreter still gives the same pieces.
    jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  }
  ~Step() { pcre2_code_free(code); }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

  // Appends to out the pieces of `text` after this step.
  void apply(std::string_view text, pcre2_match_data* match, std::vector<std::string_view>& out) const {
    if (behavior == Behavior::kIsolated) {
      // Every span is its own piece whatever invert says: the common case, without copies.
      size_t last = 0;
      for_each_match(text, match, [&](size_t begin, size_t end) {
        if (begin > last) out.push_back(text.substr(last, begin - last));
        out.push_back(text.substr(begin, end - begin));
        last = end;
      });
      if (last < text.size()) out.push_back(text.substr(last));
      return;
    }
    struct Span {
      size_t begin;
      size_t end;
      bool is_match;
    };
    std::vector<Span> spans;
    size_t last = 0;
    for_each_match(text, match, [&](size_t begin, size_t end) {
      if (begin > last) spans.push_back({last, begin, invert});
      spans.push_back({begin, end, !invert});
      last = end;
    });
    if (last < text.size()) spans.push_back({last, text.size(), invert});

    // The folds of tokenizers' SplitDelimiterBehavior, span by span.
    std::vector<Span> pieces;
    bool previous_match = false;
    switch (behavior) {
      case Behavior::kIsolated:
        break;
      case Behavior::kRemoved:
        for (const Span& span : spans) {
          if (!span.is_match) pieces.push_back(span);
        }
        break;
      case Behavior::kMergedWithPrevious:
        for (const Span& span : spans) {
          if (span.is_match && !previous_match && !pieces.empty()) {
            pieces.back().end = span.end;
          } else {
            pieces.push_back(span);
          }
          previous_match = span.is_match;
        }
        break;
      case Behavior::kMergedWithNext:
        for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
          if (it->is_match && !previous_match && !pieces.empty()) {
            pieces.back().begin = it->begin;
          } else {
            pieces.push_back(*it);
          }
          previous_match = it->is_match;
        }
        std::reverse(pieces.begin(), pieces.end());
        break;
      case Behavior::kContiguous:
        for (const Span& span : spans) {
          if (span.is_match == previous_match && !pieces.empty()) {
            pieces.back().end = span.end;
          } else {
            pieces.push_back(span);
          }
          previous_match = span.is_match;
        }
        break;
    }
    for (const Span& piece : pieces) out.push_back(text.substr(piece.begin, piece.end - piece.begin));
  }

  // Calls on_match(begin, end) for each non-empty match, left to right.
  template <typename OnMatch>
  void for_each_match(std::string_view text, pcre2_match_data* match, OnMatch&& on_match) const {
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
    size_t offset = 0;
    while (offset < text.size()) {
      int rc = jit ? pcre2_jit_match(code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK, match, nullptr)
                   : PCRE2_ERROR_JIT_BADOPTION;
      if (rc == PCRE2_ERROR_JIT_STACKLIMIT || rc == PCRE2_ERROR_JIT_BADOPTION) {
        // The interpreter keeps its backtracking state on the heap, so very long runs
        // that overflow the JIT's stack still split correctly.
        rc = pcre2_match(code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, match, nullptr);
      }
      if (rc == PCRE2_ERROR_NOMATCH) return;
      if (rc < 0) fail("pre-tokenizer regex failed at byte {}: {}", offset, pcre2_message(rc));
      const size_t begin = ovector[0];
      const size_t end = ovector[1];
      if (begin == end) {
        // An empty match carries no text; step over one character and search again.
        offset = end + 1;
        while (offset < text.size() && (static_cast<uint8_t>(text[offset]) & 0xC0) == 0x80) ++offset;
        continue;
      }
      on_match(begin, end);
      offset = end;
    }
  }
};

PreTokenizer::PreTokenizer() = default;
PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

PreTokenizer::PreTokenizer(const nlohmann::json& spec, std::string_view source) {
  // Flatten nested Sequences into one list of steps, each applied to every piece of the last.
  std::vector<const nlohmann::json*> flat;
  auto flatten = [&](auto&& self, const nlohmann::json& node) -> void {
    if (node.is_null()) return;
    if (!node.is_object() || !node.contains("type") || !node["type"].is_string()) {
      fail("{}: pre_tokenizer must be null or an object with a \"type\", found {}", source, node.dump().substr(0, 200));
    }
    if (node["type"] == "Sequence") {
      if (!node.contains("pretokenizers") || !node["pretokenizers"].is_array()) {
        fail("{}: pre_tokenizer Sequence without a \"pretokenizers\" array", source);
      }
      for (const auto& child : node["pretokenizers"]) self(self, child);
    } else {
      flat.push_back(&node);
    }
  };
  flatten(flatten, spec);

  for (const nlohmann::json* node : flat) {
    const std::string type = (*node)["type"].get<std::string>();
    if (type == "Split") {
      const auto& pattern = node->value("pattern", nlohmann::json());
      std::string regex;
      if (pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string()) {
        regex = pattern["Regex"].get<std::string>();
      } else if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string()) {
        regex = quote_literal(pattern["String"].get<std::string>());
      } else {
        fail("{}: Split pre-tokenizer needs a pattern {{\"Regex\": ...}} or {{\"String\": ...}}, found {}", source,
             pattern.dump());
      }
      const Behavior behavior = parse_behavior(node->value("behavior", std::string("Isolated")), source);
      steps_.push_back(std::make_unique<Step>(regex, behavior, node->value("invert", false), source));
    } else if (type == "ByteLevel") {
      has_byte_level_ = true;
      if (node->value("add_prefix_space", false)) {
        fail("{}: ByteLevel pre-tokenizer with add_prefix_space = true is not supported", source);
      }
      if (node->value("use_regex", true)) {
        steps_.push_back(std::make_unique<Step>(kGpt2Pattern, Behavior::kIsolated, false, source));
      }
    } else {
      fail("{}: unsupported pre-tokenizer type \"{}\" (expected Split, ByteLevel or Sequence)", source, type);
    }
  }
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& pieces,
                         std::vector<std::string_view>& scratch) const {
  if (text.empty()) return;
  if (steps_.empty()) {
    pieces.push_back(text);
    return;
  }
  pcre2_match_data* match = pcre2_match_data_create(1, nullptr);
  if (match == nullptr) fail("out of memory creating PCRE2 match data");
  const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> owner(match, &pcre2_match_data_free);
  if (steps_.size() == 1) {
    steps_[0]->apply(text, match, pieces);
    return;
  }
  scratch.clear();
  scratch.push_back(text);
  std::vector<std::string_view> next;
  for (size_t s = 0; s < steps_.size(); ++s) {
    std::vector<std::string_view>& target = s + 1 == steps_.size() ? pieces : next;
    if (&target == &next) next.clear();
    for (std::string_view piece : scratch) steps_[s]->apply(piece, match, target);
    if (&target == &next) scratch.swap(next);
  }
}

}  // namespace qwen35
