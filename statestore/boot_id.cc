#include "keel/statestore/boot_id.h"

#include <fstream>

#include "absl/strings/ascii.h"

namespace keel {

std::string KernelBootId() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!std::getline(file, id)) return "";
  return std::string(absl::StripAsciiWhitespace(id));
}

}  // namespace keel
