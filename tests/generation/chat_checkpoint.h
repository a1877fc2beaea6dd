// A tiny checkpoint that talks: the shared golden/tiny weights (random, vocab 1024) plus a
// small byte-level BPE tokenizer.json (256 byte tokens, a few English merges, the Qwen
// chat markers, all ids below 300) and a tokenizer_config.json naming <|im_end|> as eos.
// The model's output is arbitrary; the mechanics of generation and chat are what it tests.
#pragma once

#include <filesystem>

namespace qwen35::testing {

// Fills `dir` (created if missing) with config.json and model.safetensors from `tiny_dir`
// (linked, or copied where links fail) and the two tokenizer files.
void make_chat_checkpoint(const std::filesystem::path& tiny_dir, const std::filesystem::path& dir);

}  // namespace qwen35::testing
