// Keel's conformance suite, run on the host program's own driver.
#include <string>

#include "core/config.h"
#include "tests/conformance/conformance.h"

namespace {

keel::conformance::Target HostJournal() {
  keel::conformance::Target target;
  target.label = "HostJournal";
  target.driver = "host-journal";
  target.config = [](const std::string& /*dir*/) { return keel::Config{}; };
  // No retention_config and no retention policies: the journal never evicts,
  // so it has no retention gap.
  target.retention_policies = false;
  return target;
}

}  // namespace

KEEL_INSTANTIATE_CONFORMANCE(Host, HostJournal());
