// Parsing a JSON document that must be an object (config.json, the shard index),
// with errors that name the file and the parser's line and column. Internal to
// src/io: nlohmann_json is a private dependency of qwen35_io.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace qwen35 {

nlohmann::json parse_json_object(std::string_view text, std::string_view where);

}  // namespace qwen35
