#include "keel/core/registry.h"

#include <cstdio>
#include <cstdlib>

namespace keel {

void FailRegistration(const absl::Status& status) {
  std::fprintf(stderr, "keel: registration failed: %s\n", status.ToString().c_str());
  std::abort();
}

}  // namespace keel
