// Runs the conformance suite against Keel's built-in drivers: one
// DriverTarget per driver configuration.
#include "keel/tests/conformance/conformance.h"

using ::keel::conformance::DriverTarget;

// One target per line.
// clang-format off
KEEL_INSTANTIATE_CONFORMANCE(
    Builtin,
    DriverTarget("memory", "memory", {}, /*dir_option=*/"",
                 /*retention_option=*/"max_events_per_stream"),
    DriverTarget("durable_leveldb", "durable", {{"store", "leveldb"}}, "store.path"),
    DriverTarget("durable_memstore", "durable", {{"store", "memory"}}),
    // No store: the durable driver's loud degraded mode on the memory ring.
    DriverTarget("durable_degraded", "durable", {}, "",
                 /*retention_option=*/"max_events_per_stream")
);
// clang-format on
