// make_chat_checkpoint TINY_DIR OUT_DIR: the tiny talking checkpoint for the CLI tests.
#include <cstdio>
#include <exception>

#include "generation/chat_checkpoint.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_chat_checkpoint TINY_DIR OUT_DIR\n");
    return 2;
  }
  try {
    qwen35::testing::make_chat_checkpoint(argv[1], argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_chat_checkpoint: %s\n", e.what());
    return 1;
  }
  return 0;
}
