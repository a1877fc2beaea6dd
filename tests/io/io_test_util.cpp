// Helpers for the io tests (see io_test_util.h).
#include "io_test_util.h"

#include <fstream>

namespace qwen35::testing {

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) ADD_FAILURE() << "cannot write " << path;
}

std::string safetensors_bytes_with_length(uint64_t declared_length, std::string_view header, size_t data_bytes) {
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((declared_length >> (8 * i)) & 0xff));
  bytes.append(header);
  bytes.append(data_bytes, '\x5a');
  return bytes;
}

std::string safetensors_bytes(std::string_view header, size_t data_bytes) {
  return safetensors_bytes_with_length(header.size(), header, data_bytes);
}

nlohmann::json small_text_config() {
  return {
      {"architectures", {"Qwen3_5ForCausalLM"}},
      {"model_type", "qwen3_5_text"},
      {"hidden_size", 8},
      {"intermediate_size", 16},
      {"num_hidden_layers", 4},
      {"num_attention_heads", 2},
      {"num_key_value_heads", 1},
      {"head_dim", 8},
      {"linear_num_key_heads", 1},
      {"linear_num_value_heads", 2},
      {"linear_key_head_dim", 4},
      {"linear_value_head_dim", 4},
      {"linear_conv_kernel_dim", 4},
      {"layer_types", {"linear_attention", "linear_attention", "linear_attention", "full_attention"}},
      {"rms_norm_eps", 1e-6},
      {"vocab_size", 32},
      {"tie_word_embeddings", false},
      {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000000}, {"partial_rotary_factor", 0.25}}},
  };
}

}  // namespace qwen35::testing
