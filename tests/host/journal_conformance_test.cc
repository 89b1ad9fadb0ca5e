// Keel's conformance suite, run on the host program's own driver.
#include <string>

#include "keel/core/config.h"
#include "keel/tests/conformance/conformance.h"

namespace {

keel::conformance::Target HostJournal() {
  keel::conformance::Target target;
  target.label = "HostJournal";
  target.driver = "host-journal";
  target.config = [](const std::string& /*dir*/) { return keel::Config{}; };
  // Declared retention is the engine's (through TrimPrefix); no
  // retention_config: the journal has no size bound of its own.
  return target;
}

}  // namespace

KEEL_INSTANTIATE_CONFORMANCE(Host, HostJournal());
