#include "keel/tests/ports/free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"

namespace keel::testing {
namespace {

// Ports below this are left to well-known services.
constexpr int kLowestPort = 10000;

// The first port of the kernel's ephemeral range (Linux's default when it
// cannot be read).
int EphemeralStart() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  if (range >> low && low > kLowestPort + 1000) return low;
  return 32768;
}

// Whether a listening socket could bind `port` on loopback now.
bool Bindable(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const int on = 1;
  // Servers set SO_REUSEADDR, so a port whose old connections linger in
  // TIME_WAIT is free to them.
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return ok;
}

class PortPicker {
 public:
  absl::StatusOr<int> Pick() {
    absl::MutexLock lock(&mu_);
    for (int attempt = 0; attempt < 1000; ++attempt) {
      const int port = below_ephemeral_(random_);
      if (handed_out_.contains(port) || !Bindable(port)) continue;
      handed_out_.insert(port);
      return port;
    }
    return absl::UnavailableError("no free loopback port below the ephemeral range");
  }

 private:
  absl::Mutex mu_;
  std::uniform_int_distribution<int> below_ephemeral_ ABSL_GUARDED_BY(mu_){kLowestPort,
                                                                           EphemeralStart() - 1};
  std::mt19937 random_ ABSL_GUARDED_BY(mu_){std::random_device{}()};
  absl::flat_hash_set<int> handed_out_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<int> FreePort() {
  static PortPicker* picker = new PortPicker();
  return picker->Pick();
}

}  // namespace keel::testing
