// The hot-path assertion handler: invariants, not user errors, end here.
#include "qwen35/error.h"

#include <cstdio>
#include <cstdlib>

namespace qwen35::detail {

void assert_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "qwen35: internal invariant failed: %s at %s:%d\n", expr, file, line);
  std::abort();
}

}  // namespace qwen35::detail
