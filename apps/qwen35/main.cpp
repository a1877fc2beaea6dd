// qwen35: run Qwen3.5 checkpoints from the command line. Every error a user can
// cause ends here as one line on stderr and a non-zero exit status.
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "commands.h"
#include "qwen35/error.h"

int main(int argc, char** argv) {
  CLI::App app{"qwen35: single-stream Qwen3.5 decoding"};
  app.require_subcommand(1);
  add_logits_command(app);
  add_generate_command(app);
  add_chat_command(app);
  add_tokenize_command(app);
  add_bench_command(app);
  add_quantize_command(app);
  add_compare_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const qwen35::Error& e) {
    fmt::print(stderr, "qwen35: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "qwen35: unexpected error: {}\n", e.what());
    return 2;
  }
  return 0;
}
