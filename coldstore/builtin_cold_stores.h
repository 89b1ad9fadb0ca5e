// LinkBuiltinColdStores: keeps the cold stores Keel ships ("fs", "s3") in a
// statically linked program.
//
// Cold stores register themselves from static initialisers in their own
// object files, which a static link drops when nothing references them.
// Calling this function (OpenColdStore() does) references each store's
// force-link hook, so the objects, and with them the registrations, stay in
// the binary.
//
// Thread safety: safe to call from any thread; it does nothing at run time.
#ifndef KEEL_COLDSTORE_BUILTIN_COLD_STORES_H_
#define KEEL_COLDSTORE_BUILTIN_COLD_STORES_H_

namespace keel {

void LinkBuiltinColdStores();

}  // namespace keel

#endif  // KEEL_COLDSTORE_BUILTIN_COLD_STORES_H_
