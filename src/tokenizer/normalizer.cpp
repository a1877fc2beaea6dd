// Unicode normalisation through utf8proc. Text whose code points are all below U+0300
// (ASCII, Latin-1, Latin Extended) is already in every normal form it can be in here:
// no combining mark lives below U+0300 and none of those characters decomposes under
// NFC, so it skips the library call.
#include "normalizer.h"

#include <cstdlib>
#include <memory>

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "qwen35/error.h"

namespace qwen35 {

namespace {

void add_forms(const nlohmann::json& spec, std::string_view source, std::vector<Normalizer::Form>& forms) {
  if (spec.is_null()) return;
  if (!spec.is_object() || !spec.contains("type") || !spec["type"].is_string()) {
    fail("{}: normalizer must be null or an object with a \"type\", found {}", source, spec.dump());
  }
  const std::string type = spec["type"].get<std::string>();
  if (type == "NFC") {
    forms.push_back(Normalizer::Form::kNfc);
  } else if (type == "NFD") {
    forms.push_back(Normalizer::Form::kNfd);
  } else if (type == "NFKC") {
    forms.push_back(Normalizer::Form::kNfkc);
  } else if (type == "NFKD") {
    forms.push_back(Normalizer::Form::kNfkd);
  } else if (type == "Sequence") {
    if (!spec.contains("normalizers") || !spec["normalizers"].is_array()) {
      fail("{}: normalizer Sequence without a \"normalizers\" array", source);
    }
    for (const auto& child : spec["normalizers"]) add_forms(child, source, forms);
  } else {
    fail("{}: unsupported normalizer type \"{}\" (expected NFC, NFD, NFKC, NFKD or Sequence)", source, type);
  }
}

bool below_combining_marks(std::string_view text) {
  // U+0300 is 0xCC 0x80 in UTF-8: every lead byte below 0xCC starts a code point below it.
  for (char c : text) {
    if (static_cast<uint8_t>(c) >= 0xCC) return false;
  }
  return true;
}

}  // namespace

Normalizer::Normalizer(const nlohmann::json& spec, std::string_view source) { add_forms(spec, source, forms_); }

std::string_view Normalizer::apply(std::string_view text, std::string& storage) const {
  if (forms_.empty() || below_combining_marks(text)) return text;
  std::string_view current = text;
  for (Form form : forms_) {
    storage = normalize(current, form);
    current = storage;
  }
  return current;
}

std::string normalize(std::string_view text, Normalizer::Form form) {
  int options = UTF8PROC_STABLE;
  switch (form) {
    case Normalizer::Form::kNfc: options |= UTF8PROC_COMPOSE; break;
    case Normalizer::Form::kNfd: options |= UTF8PROC_DECOMPOSE; break;
    case Normalizer::Form::kNfkc: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case Normalizer::Form::kNfkd: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
  }
  utf8proc_uint8_t* mapped = nullptr;
  const utf8proc_ssize_t length =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                   &mapped, static_cast<utf8proc_option_t>(options));
  if (length < 0) fail("Unicode normalisation failed: {}", utf8proc_errmsg(length));
  const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(mapped, &std::free);
  return std::string(reinterpret_cast<const char*>(mapped), static_cast<size_t>(length));
}

}  // namespace qwen35
