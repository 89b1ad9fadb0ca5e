// LinkBuiltinStores: keeps the state stores Keel ships ("memory", "leveldb")
// in a statically linked program.
//
// Stores register themselves from static initialisers in their own object
// files, which a static link drops when nothing references them. Calling
// this function (OpenStore() does) references each store's force-link hook,
// so the objects, and with them the registrations, stay in the binary.
//
// Thread safety: safe to call from any thread, any number of times; it does
// nothing at run time.
#ifndef KEEL_STATESTORE_BUILTIN_STORES_H_
#define KEEL_STATESTORE_BUILTIN_STORES_H_

namespace keel {

void LinkBuiltinStores();

}  // namespace keel

#endif  // KEEL_STATESTORE_BUILTIN_STORES_H_
