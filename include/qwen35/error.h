// The project's one error type. Set-up problems (files, shapes, dtypes, devices,
// memory, bad user input) throw qwen35::Error with a message that says what,
// where, what was expected and what was found; the CLI turns it into a non-zero exit.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace qwen35 {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A backend that is compiled in but finds no device it can run on (no Vulkan
// driver, no GPU, a GPU without a required feature). Tests report it as skipped.
class DeviceUnavailable : public Error {
 public:
  using Error::Error;
};

// Throws Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace qwen35

// Hot-path invariant check: never throws, names file and line, aborts.
#define QWEN35_ASSERT(cond)                                                    \
  do {                                                                         \
    if (!(cond)) ::qwen35::detail::assert_failed(#cond, __FILE__, __LINE__);   \
  } while (0)

namespace qwen35::detail {
[[noreturn]] void assert_failed(const char* expr, const char* file, int line);
}
