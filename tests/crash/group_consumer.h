// GroupConsumer: one thread consuming every stream of the crash loop with
// one consumer group: fetch a leased page, handle it (record its events),
// commit its last cursor. A commit whose answer a kill took is sent again
// with the same token and cursor after the restart (a repeat of an applied
// commit is a no-op, rfcs/0005 rule 6), so the group goes on where it was.
//
// Checked as it runs: each page starts right after the committed position
// the group last reported (no event skipped, the cursor never moved back),
// each commit reports the page's last sequence, and after every restart the
// group's committed sequence is at least the last one a commit reported.
#ifndef KEEL_TESTS_CRASH_GROUP_CONSUMER_H_
#define KEEL_TESTS_CRASH_GROUP_CONSUMER_H_

#include <atomic>
#include <boost/json.hpp>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "keel/tests/crash/endpoint.h"
#include "keel/tests/crash/event_identity.h"
#include "keel/tests/crash/failures.h"
#include "keel/tests/crash/final_heads.h"

namespace keel::crash_test {

struct GroupCounts {
  uint64_t pages = 0;             // Leased pages with events.
  uint64_t handled = 0;           // Events handled, repeats included.
  uint64_t commits = 0;           // Commits acknowledged.
  uint64_t unknown_outcomes = 0;  // Consumes and commits without an answer (daemon killed or down).
  uint64_t busy = 0;              // Consumes that found the lease of a lost answer still live.
  uint64_t restarts_seen = 0;     // Restarts after which the committed positions were read.
};

// What the group did on one stream.
struct GroupStream {
  std::vector<EventIdentity> handled;  // In handling order, repeats included.
  // The committed sequence as each commit answered it and as read after
  // each restart, in order: it must never decrease.
  std::vector<uint64_t> committed;
  uint64_t last_committed = 0;
};

class GroupConsumer {
 public:
  GroupConsumer(std::vector<std::string> streams, std::string group, const Endpoint& endpoint,
                Failures& failures, const FinalHeads& heads, uint64_t seed);

  // Consumes until the group committed every stream's final head,
  // `abandon` is set, or no progress for daemon_test::kWait (a failure).
  void Run(const std::atomic<bool>& abandon);

  const std::string& group() const { return group_; }
  // After Run.
  const std::map<std::string, GroupStream>& streams() const { return streams_; }
  const GroupCounts& counts() const { return counts_; }

 private:
  enum class Step {
    kAdvanced,  // A page handled and committed, or the positions read.
    kCaughtUp,  // Nothing to consume now.
    kWaiting,   // The daemon is down, or the lease of a lost answer is live.
    kFailed,    // A failure was recorded: consuming stops.
  };

  bool CommittedFinalHeads() const;
  // One page of `stream`: consume, handle, commit.
  Step ConsumeOnce(const std::string& stream);
  // Commits until the daemon answers.
  Step CommitUntilAnswered(const std::string& stream, const std::string& cursor, uint64_t token,
                           uint64_t last_sequence);
  // After a restart: the committed position of each stream must not have moved back.
  Step CheckCommittedPositions();
  // Records a committed sequence the daemon reported (a failure when it
  // went back).
  void RecordCommitted(const std::string& stream, uint64_t sequence, const std::string& how);
  std::string Target(const std::string& stream, const std::string& action) const;

  const std::vector<std::string> stream_names_;
  const std::string group_;
  const Endpoint& endpoint_;
  EndpointClient client_;
  Failures& failures_;
  const FinalHeads& heads_;
  std::mt19937_64 rng_;
  std::map<std::string, GroupStream> streams_;
  GroupCounts counts_;
  int starts_seen_ = 0;
};

}  // namespace keel::crash_test

#endif  // KEEL_TESTS_CRASH_GROUP_CONSUMER_H_
