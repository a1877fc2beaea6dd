// parse_json_object (see json_text.h).
#include "io/json_text.h"

#include "qwen35/error.h"

namespace qwen35 {

nlohmann::json parse_json_object(std::string_view text, std::string_view where) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail("{}: malformed JSON: {}", where, e.what());  // what() carries line and column
  }
  if (!root.is_object()) fail("{}: expected a JSON object at the top level, found {}", where, root.type_name());
  return root;
}

}  // namespace qwen35
