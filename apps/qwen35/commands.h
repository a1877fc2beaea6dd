// The qwen35 command's subcommands, one file each; main.cpp registers them.
#pragma once

#include <CLI/CLI.hpp>

void add_logits_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_chat_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_compare_command(CLI::App& app);
