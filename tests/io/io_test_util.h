// Helpers for the io tests: writing raw bytes, hand-assembling safetensors files
// (including broken ones), a small valid config, and catching qwen35::Error.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "qwen35/error.h"

namespace qwen35::testing {

void write_file(const std::filesystem::path& path, std::string_view bytes);

// The 8-byte little-endian length, `header` verbatim, then `data_bytes` bytes of data.
std::string safetensors_bytes(std::string_view header, size_t data_bytes);
// As above, with the length field set to `declared_length` whatever the header's size.
std::string safetensors_bytes_with_length(uint64_t declared_length, std::string_view header, size_t data_bytes);

// A flat (text-only) config for a 4-layer decoder with hidden size 8: small
// enough to edit field by field in tests, valid as it stands.
nlohmann::json small_text_config();

// Runs `action`, which must throw qwen35::Error, and returns the message
// (an empty string, and a test failure, when nothing is thrown).
template <typename Action>
std::string error_message(Action&& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected qwen35::Error, but nothing was thrown";
  return "";
}

}  // namespace qwen35::testing
