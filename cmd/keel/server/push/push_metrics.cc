#include "keel/cmd/keel/server/push/push_metrics.h"

#include <functional>

#include "absl/strings/str_cat.h"

namespace keel::push {
namespace {

struct Family {
  const char* name;
  const char* type;
  const char* help;
  std::function<double(const SubscriptionStatus&)> value;
};

double Count(uint64_t n) { return static_cast<double>(n); }

void AppendHeader(std::string& out, const char* name, const char* type, const char* help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

// Subscription names are [A-Za-z0-9._:-]: nothing to escape in labels.
void AppendSample(std::string& out, absl::string_view name, const SubscriptionStatus& s,
                  absl::string_view extra_label, double value) {
  absl::StrAppend(&out, name, "{subscription=\"", s.subscription.name, "\"", extra_label, "} ",
                  value, "\n");
}

void AppendLatencyHistogram(std::string& out, const std::vector<SubscriptionStatus>& all) {
  constexpr char kName[] = "keel_push_endpoint_latency_seconds";
  const std::string bucket = absl::StrCat(kName, "_bucket");
  std::vector<std::string> le;  // The bounds' labels, +Inf last.
  for (absl::Duration bound : kLatencyBounds) {
    le.push_back(absl::StrCat(",le=\"", absl::ToDoubleSeconds(bound), "\""));
  }
  le.push_back(",le=\"+Inf\"");
  AppendHeader(out, kName, "histogram", "Time answered POSTs took.");
  for (const SubscriptionStatus& s : all) {
    const DeliveryCounts& c = s.counts;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < le.size(); ++i) {
      cumulative += c.latency_buckets[i];
      AppendSample(out, bucket, s, le[i], Count(cumulative));
    }
    AppendSample(out, absl::StrCat(kName, "_sum"), s, "", absl::ToDoubleSeconds(c.latency_sum));
    AppendSample(out, absl::StrCat(kName, "_count"), s, "", Count(cumulative));
  }
}

}  // namespace

std::string PushMetricsText(const std::vector<SubscriptionStatus>& all) {
  const Family families[] = {
      {"keel_push_lag", "gauge", "Events of matching streams not yet delivered.",
       [](const SubscriptionStatus& s) { return Count(s.lag); }},
      {"keel_push_deliveries_total", "counter", "Batches the endpoint acknowledged.",
       [](const SubscriptionStatus& s) { return Count(s.counts.deliveries); }},
      {"keel_push_events_delivered_total", "counter", "Events in acknowledged batches.",
       [](const SubscriptionStatus& s) { return Count(s.counts.events_delivered); }},
      {"keel_push_failures_total", "counter", "POSTs that failed.",
       [](const SubscriptionStatus& s) { return Count(s.counts.failures); }},
      {"keel_push_retries_total", "counter", "POSTs repeated after a failure.",
       [](const SubscriptionStatus& s) { return Count(s.counts.retries); }},
      {"keel_push_dead_letters_total", "counter", "Events moved to the dead-letter stream.",
       [](const SubscriptionStatus& s) { return Count(s.counts.dead_lettered); }},
      {"keel_push_redriven_total", "counter", "Dead letters the endpoint acknowledged on redrive.",
       [](const SubscriptionStatus& s) { return Count(s.counts.redriven); }},
      {"keel_push_circuit_open", "gauge",
       "1 while the circuit holds POSTs back (open, or probing), else 0.",
       [](const SubscriptionStatus& s) {
         return s.counts.circuit == CircuitState::kClosed ? 0.0 : 1.0;
       }},
      {"keel_push_circuit_opens_total", "counter", "Times the circuit opened.",
       [](const SubscriptionStatus& s) { return Count(s.counts.circuit_opens); }},
  };
  std::string out;
  for (const Family& family : families) {
    AppendHeader(out, family.name, family.type, family.help);
    for (const SubscriptionStatus& s : all) AppendSample(out, family.name, s, "", family.value(s));
  }
  AppendLatencyHistogram(out, all);
  return out;
}

}  // namespace keel::push
