#include "keel/coldstore/builtin_cold_stores.h"

#include "keel/coldstore/cold_store.h"

KEEL_DECLARE_COLD_STORE_HOOK(fs);
KEEL_DECLARE_COLD_STORE_HOOK(s3);

namespace keel {

void LinkBuiltinColdStores() {
  KEEL_FORCE_LINK_COLD_STORE(fs);
  KEEL_FORCE_LINK_COLD_STORE(s3);
}

}  // namespace keel
