#include "keel/cmd/keel/memory_release.h"

#include <malloc.h>

namespace keel::cli {

void ReleaseFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace keel::cli
