#include "keel/core/stream_deletion.h"

#include <algorithm>

#include "absl/algorithm/container.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "keel/core/errors.h"
#include "keel/core/group_record.h"
#include "keel/core/status_macros.h"
#include "keel/core/topic.h"

namespace keel {
namespace {

constexpr absl::string_view kTombstonePrefix = "deleting/";

std::string TombstoneKey(absl::string_view stream) {
  return absl::StrCat(kTombstonePrefix, stream);
}

}  // namespace

std::string EncodeTombstone(const std::vector<DeletionTarget>& targets) {
  std::string text;
  for (const DeletionTarget& target : targets) {
    absl::StrAppend(&text, target.stream, " ", target.incarnation_start, "\n");
  }
  return text;
}

absl::StatusOr<std::vector<DeletionTarget>> DecodeTombstone(absl::string_view key,
                                                            absl::string_view text) {
  std::vector<DeletionTarget> targets;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    DeletionTarget target;
    if (fields.size() != 2 || fields[0].empty() ||
        !absl::SimpleAtoi(fields[1], &target.incarnation_start)) {
      return absl::DataLossError(
          absl::StrCat("metadata record '", key, "': not a deletion tombstone: '", line, "'"));
    }
    target.stream = std::string(fields[0]);
    targets.push_back(std::move(target));
  }
  if (targets.empty()) {
    return absl::DataLossError(absl::StrCat("metadata record '", key, "': an empty tombstone"));
  }
  return targets;
}

absl::StatusOr<std::vector<DeletionTarget>> StreamDeleter::TargetsOf(
    absl::string_view stream, std::vector<StreamInfo>& infos) {
  std::vector<std::string> streams = {std::string(stream)};
  const StreamPolicy policy = policies_.PolicyOf(stream);
  for (uint32_t p = 0; p < policy.partitions; ++p) streams.push_back(PartitionStream(stream, p));
  const size_t sources = streams.size();
  for (size_t i = 0; i < sources; ++i) streams.push_back(DeadLetterStream(streams[i]));
  std::vector<DeletionTarget> targets;
  for (const std::string& name : streams) {
    KEEL_ASSIGN_OR_RETURN(StreamInfo info, hooks_.bounds(name));
    targets.push_back(DeletionTarget{name, info.incarnation_start});
    infos.push_back(std::move(info));
  }
  return targets;
}

absl::StatusOr<bool> StreamDeleter::Exists(const StreamInfo& info) {
  if (info.last_sequence > info.incarnation_start) return true;  // Events in this incarnation.
  if (policies_.Declared(info.stream)) return true;
  KEEL_ASSIGN_OR_RETURN(std::vector<MetadataStore::Record> groups,
                        store_.List(GroupKey(info.stream, "")));
  return !groups.empty();
}

absl::StatusOr<DeletionReport> StreamDeleter::Delete(absl::string_view stream) {
  MutexLock lock(&mu_);
  DeletionReport report;
  KEEL_ASSIGN_OR_RETURN(std::optional<std::string> recorded, store_.Get(TombstoneKey(stream)));
  if (recorded) {  // A deletion that failed halfway: finish it.
    KEEL_RETURN_IF_ERROR(FinishRecorded(TombstoneKey(stream), *recorded, report));
    return report;
  }
  std::vector<StreamInfo> infos;
  KEEL_ASSIGN_OR_RETURN(std::vector<DeletionTarget> targets, TargetsOf(stream, infos));
  for (const StreamInfo& info : infos) {
    KEEL_ASSIGN_OR_RETURN(bool exists, Exists(info));
    if (!exists) continue;
    report.streams.push_back(info.stream);
    if (info.last_sequence > info.incarnation_start) report.events += info.count;
  }
  std::sort(report.streams.begin(), report.streams.end());
  if (report.streams.empty()) return NotFound(absl::StrCat("stream '", stream, "' does not exist"));
  KEEL_RETURN_IF_ERROR(store_.Put(TombstoneKey(stream), EncodeTombstone(targets)));
  SetUnfinished(stream, targets);
  KEEL_RETURN_IF_ERROR(Finish(stream, targets, report));
  return report;
}

absl::Status StreamDeleter::FinishRecorded(absl::string_view key, absl::string_view text,
                                           DeletionReport& report) {
  KEEL_ASSIGN_OR_RETURN(std::vector<DeletionTarget> targets, DecodeTombstone(key, text));
  const absl::string_view stream = key.substr(kTombstonePrefix.size());
  SetUnfinished(stream, targets);
  for (const DeletionTarget& target : targets) report.streams.push_back(target.stream);
  std::sort(report.streams.begin(), report.streams.end());
  return Finish(stream, targets, report);
}

void StreamDeleter::SetUnfinished(absl::string_view stream,
                                  const std::vector<DeletionTarget>& targets) {
  std::vector<std::string> streams;
  for (const DeletionTarget& target : targets) streams.push_back(target.stream);
  MutexLock lock(&unfinished_mu_);
  unfinished_.insert_or_assign(std::string(stream), std::move(streams));
  any_unfinished_.store(true);
}

void StreamDeleter::SetFinished(absl::string_view stream) {
  MutexLock lock(&unfinished_mu_);
  unfinished_.erase(std::string(stream));
  any_unfinished_.store(!unfinished_.empty());
}

bool StreamDeleter::Deleting(absl::string_view stream) const {
  if (!any_unfinished_.load(std::memory_order_relaxed)) return false;
  MutexLock lock(&unfinished_mu_);
  for (const auto& [deletion, streams] : unfinished_) {
    if (absl::c_linear_search(streams, stream)) return true;
  }
  return false;
}

absl::Status StreamDeleter::ResumeAll() {
  MutexLock lock(&mu_);
  KEEL_ASSIGN_OR_RETURN(std::vector<MetadataStore::Record> tombstones,
                        store_.List(kTombstonePrefix));
  for (const auto& [key, text] : tombstones) {
    DeletionReport report;
    KEEL_RETURN_IF_ERROR(FinishRecorded(key, text, report));
  }
  return absl::OkStatus();
}

absl::Status StreamDeleter::Finish(absl::string_view stream,
                                   const std::vector<DeletionTarget>& targets,
                                   DeletionReport& report) {
  for (const DeletionTarget& target : targets) {
    KEEL_ASSIGN_OR_RETURN(uint64_t groups, DeleteGroups(target.stream));
    report.groups += groups;
    if (target.stream != stream) KEEL_RETURN_IF_ERROR(policies_.Forget(target.stream));
    KEEL_RETURN_IF_ERROR(hooks_.delete_events(target.stream, target.incarnation_start));
  }
  // The topic's declaration last: until then it names the partitions.
  KEEL_RETURN_IF_ERROR(policies_.Forget(stream));
  KEEL_RETURN_IF_ERROR(store_.Delete(TombstoneKey(stream)));
  SetFinished(stream);
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> StreamDeleter::DeleteGroups(absl::string_view stream) {
  KEEL_ASSIGN_OR_RETURN(std::vector<MetadataStore::Record> groups,
                        store_.List(GroupKey(stream, "")));
  for (const auto& [key, value] : groups) KEEL_RETURN_IF_ERROR(store_.Delete(key));
  return groups.size();
}

}  // namespace keel
