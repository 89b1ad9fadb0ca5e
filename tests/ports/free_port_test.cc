#include "keel/tests/ports/free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace keel::testing {
namespace {

int EphemeralLow() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768;
  range >> low;
  return low;
}

// The kernel's own picks lie in the ephemeral range, where outgoing
// connections of tests beside this one take their local ports.
TEST(FreePortTest, PortsLieBelowTheEphemeralRange) {
  const int low = EphemeralLow();
  for (int i = 0; i < 50; ++i) {
    absl::StatusOr<int> port = FreePort();
    ASSERT_TRUE(port.ok()) << port.status();
    EXPECT_GE(*port, 10000);
    EXPECT_LT(*port, low);
  }
}

// A cluster's nodes bind only after all their ports are picked.
TEST(FreePortTest, NoPortIsHandedOutTwice) {
  absl::flat_hash_set<int> seen;
  for (int i = 0; i < 300; ++i) {
    absl::StatusOr<int> port = FreePort();
    ASSERT_TRUE(port.ok()) << port.status();
    EXPECT_TRUE(seen.insert(*port).second) << "port " << *port << " handed out twice";
  }
}

TEST(FreePortTest, AServerCanListenOnThePort) {
  absl::StatusOr<int> port = FreePort();
  ASSERT_TRUE(port.ok()) << port.status();
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(*port));
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  EXPECT_EQ(listen(fd, 1), 0);
  close(fd);
}

}  // namespace
}  // namespace keel::testing
