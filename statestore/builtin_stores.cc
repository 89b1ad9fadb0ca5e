#include "keel/statestore/builtin_stores.h"

#include "keel/statestore/state_store.h"

KEEL_DECLARE_STORE_HOOK(memory);
KEEL_DECLARE_STORE_HOOK(leveldb);

namespace keel {

void LinkBuiltinStores() {
  KEEL_FORCE_LINK_STORE(memory);
  KEEL_FORCE_LINK_STORE(leveldb);
}

}  // namespace keel
