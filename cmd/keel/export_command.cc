// `keel export`: one pass of a lakehouse export from a running daemon, up
// to each stream's head (rfcs/0011-lakehouse-export.md).
//
//   keel export --stream 'orders.*' --out ./lake [--compression zstd]
//   keel export --stream 'orders.*' --out s3://lake/keel --out-option endpoint=http://minio:9000
//
// Run again, it goes on after its checkpoints (consumer groups
// "export.<name>" on the daemon), so a pass a crash interrupted is finished
// by the next, which writes the same files. Prints what it wrote; exits 1
// when a stream failed (its error on stderr), after exporting the others.
#include <boost/program_options/value_semantic.hpp>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/command.h"
#include "keel/cmd/keel/export/export_pass.h"
#include "keel/cmd/keel/export/export_spec.h"
#include "keel/cmd/keel/export/export_target.h"
#include "keel/cmd/keel/export/http_export_source.h"
#include "keel/core/clock.h"
#include "keel/core/status_macros.h"

namespace keel::cli {
namespace {

absl::StatusOr<lakehouse::ExportSpec> SpecFrom(const po::variables_map& vars) {
  Config settings{{"name", vars["name"].as<std::string>()},
                  {"compression", vars["compression"].as<std::string>()}};
  if (vars.count("out-option")) {
    for (const std::string& option : vars["out-option"].as<std::vector<std::string>>()) {
      KEEL_RETURN_IF_ERROR(settings.SetFromAssignment(option));
    }
  }
  return lakehouse::MakeExportSpec(vars["stream"].as<std::string>(), vars["out"].as<std::string>(),
                                   settings);
}

class ExportCommand : public Command {
 public:
  absl::string_view name() const override { return "export"; }
  absl::string_view summary() const override {
    return "write streams of a running daemon as JSON-lines files by day, once each";
  }
  void AddOptions(po::options_description& options) const override {
    AddServerOption(options);
    options.add_options()("stream", po::value<std::string>(),
                          "streams to export (required): a name, a prefix ('orders.*') or a glob")(
        "out", po::value<std::string>(),
        "where the files go (required): a directory, or s3://BUCKET/PREFIX")(
        "out-option", po::value<std::vector<std::string>>()->composing(),
        "an s3 target's option KEY=VALUE (endpoint=URL, region, ...: the cold_store.* keys "
        "`keel drivers` lists, without the prefix); repeatable")(
        "compression", po::value<std::string>()->default_value("none"),
        "none, or zstd for .jsonl.zst files")(
        "name", po::value<std::string>()->default_value(""),
        "names the export's checkpoints (default: made from the target)")(
        "max-file-events", po::value<size_t>()->default_value(100'000), "events per file at most")(
        "max-file-bytes", po::value<size_t>()->default_value(64 << 20), "bytes per file at most");
  }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    absl::StatusOr<client::ServerAddress> server =
        client::ParseServerAddress(vars["server"].as<std::string>());
    if (!server.ok()) return UsageError(io, "keel export", server.status().message());
    if (!vars.count("stream") || !vars.count("out")) {
      return UsageError(io, "keel export", "give --stream PATTERN and --out DIR");
    }
    absl::StatusOr<lakehouse::ExportSpec> spec = SpecFrom(vars);
    if (!spec.ok()) return UsageError(io, "keel export", spec.status().message());
    lakehouse::ExportOptions options;
    options.name = spec->name;
    options.max_file_events = std::max<size_t>(1, vars["max-file-events"].as<size_t>());
    options.max_file_bytes = vars["max-file-bytes"].as<size_t>();
    options.compression = spec->compression;
    absl::StatusOr<std::unique_ptr<ColdStore>> target = lakehouse::OpenExportTarget(*spec);
    if (!target.ok()) {
      io.err << "keel export: " << target.status().message() << "\n";
      return kExitFailure;
    }
    client::HttpClient http(server->host, server->port, ClientOptionsFrom(vars));
    lakehouse::HttpExportSource source(http);
    absl::StatusOr<lakehouse::ExportPassReport> report =
        lakehouse::RunExportPass(source, **target, spec->pattern, options, *Clock::Real());
    if (!report.ok()) {
      io.err << "keel export: " << client::DescribeError(report.status()) << "\n";
      return kExitFailure;
    }
    for (const lakehouse::StreamFailure& failure : report->failures) {
      io.err << "keel export: stream " << failure.stream << ": "
             << client::DescribeError(failure.status) << "\n";
    }
    const lakehouse::StreamExportReport& sum = report->totals;
    io.out << "export " << spec->name << ": " << report->streams << " streams, " << sum.events
           << " events in " << sum.files_written << " new files (" << sum.files_adopted
           << " found from an interrupted pass), " << sum.bytes << " bytes; " << sum.gaps
           << " retention gaps (" << sum.missed << " events missed)\n";
    return report->failures.empty() ? kExitOk : kExitFailure;
  }
};

}  // namespace

std::unique_ptr<Command> NewExportCommand() { return std::make_unique<ExportCommand>(); }

}  // namespace keel::cli
