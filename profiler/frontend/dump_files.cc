#include "profiler/frontend/dump_files.h"

#include <unistd.h>

#include <cerrno>
#include <functional>
#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/chunk_pipeline.h"
#include "base/file.h"
#include "base/status_adapters.h"
#include "base/status_macros.h"
#include "profiler/analysis/analysis_json.h"
#include "profiler/analysis/analysis_sink.h"
#include "profiler/analysis/diagnosis.h"
#include "profiler/analysis/whatif.h"
#include "profiler/dump/collector.h"
#include "profiler/outputs/chrome_trace_sink.h"
#include "profiler/outputs/mosaic_trace.h"
#include "profiler/outputs/perfetto/perfetto_sink.h"
#include "profiler/trace/verify.h"

namespace warptrace {
namespace {

std::string RoleOf(const TraceOutput& output) {
  return output.role.empty() ? TraceFormatRole(output.format) : output.role;
}

// Whether `path`'s directory exists and this process may create files in it: checked for
// every output before anything is written, so that (e.g.) a --report into a missing
// directory fails the dump before the trace is written, not after (issue 55). Later
// failures (a full disk) can still leave the outputs written before them; DumpOutcome says
// which failed.
absl::Status CheckWritable(const std::string& path, absl::string_view role) {
  if (path == "-") return absl::OkStatus();
  if (::access(path.c_str(), F_OK) == 0 && ::access(path.c_str(), W_OK) == 0) {
    return absl::OkStatus();  // an existing file (or device, FIFO) we may write
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::access(dir.c_str(), W_OK | X_OK) == 0) return absl::OkStatus();
  const int err = errno;
  return ToStatus(std::error_code(err, std::generic_category()),
                  absl::StrCat("writing ", role, " '", path, "' (its directory '", dir, "')"));
}

// Refuses, before anything is decoded or written, what cannot be carried out.
absl::Status CheckRequest(const DumpRequest& request) {
  struct Named {
    std::string path;
    std::string role;
  };
  std::vector<Named> paths;
  for (const TraceOutput& t : request.traces) {
    const std::string role = RoleOf(t);
    const int targets = !t.path.empty() + (t.fd >= 0) + (t.stream != nullptr);
    if (targets != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the ", role, " output needs one of a path, an open file descriptor or a stream, not ",
          targets == 0 ? "none" : absl::StrCat(targets)));
    }
    if (!t.path.empty()) paths.push_back({t.path, role});
  }
  if (!request.report_path.empty()) paths.push_back({request.report_path, request.report_role});
  if (!request.analysis_path.empty()) {
    paths.push_back({request.analysis_path, request.analysis_role});
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    RETURN_IF_ERROR(CheckNotAnInput(paths[i].path, paths[i].role));
    RETURN_IF_ERROR(CheckWritable(paths[i].path, paths[i].role));
    for (size_t j = 0; j < i; ++j) {
      if (paths[i].path != paths[j].path) continue;
      return absl::InvalidArgumentError(absl::StrCat(paths[j].role, " and ", paths[i].role,
                                                     " both name ", paths[i].path,
                                                     ": give each output its own path"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckWords(const TraceLayout& layout, absl::Span<const uint32_t> words) {
  const uint64_t expected = BufferBytes(layout);
  if (uint64_t{words.size()} * 4 == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the buffer has ", words.size(), " uint32 words (", uint64_t{words.size()} * 4,
      " bytes) but the layout (kernel '", layout.kernel_name, "', grid ", layout.grid.x, "x",
      layout.grid.y, "x", layout.grid.z, ", capacity ", layout.capacity, ") needs ",
      expected / 4, " words (", expected,
      " bytes): pass the buffer this layout describes, or the layout of this buffer"));
}

// A request's thread count: 0 (or less) is the cores there are.
int ThreadsFor(int requested) { return requested > 0 ? requested : DefaultThreads(); }

std::unique_ptr<TraceSink> MakeWriter(const TraceOutput& output, llvm::raw_ostream& os,
                                      int threads) {
  if (output.format == TraceFormat::kPerfetto) {
    PerfettoWriterOptions options;
    options.threads = threads;
    return std::make_unique<PerfettoTraceSink>(os, options);
  }
  if (output.chrome.events == ChromeEventStyle::kMosaic) {
    return std::make_unique<MosaicTraceSink>(output.chrome.mosaic, os, threads);
  }
  return std::make_unique<ChromeTraceSink>(output.chrome, os, threads);
}

// One dump with the trace writers of traces[next...] opened around it: each path output is a
// WriteLargeFileAtomically shell (committed only when everything inside succeeded), each
// descriptor a buffered stream flushed and checked after the dump.
class WritersAroundDump {
 public:
  WritersAroundDump(const DecodedTrace& decoded, const DumpRequest& request, DumpOutcome& outcome)
      : decoded_(decoded), request_(request), outcome_(outcome) {
    options_.verify = request.verify;
    options_.timeline = request.timeline;
    options_.threads = threads_;
    options_.cancelled = request.cancelled;
    // A Perfetto or Chrome writer streams as units come, on a background thread of its own;
    // Mosaic's formats at End, the other sinks on the calling thread.
    options_.sink_threads = 0;
    for (const TraceOutput& t : request.traces) {
      if (t.format == TraceFormat::kPerfetto || t.chrome.events != ChromeEventStyle::kMosaic) {
        options_.sink_threads = 1;
      }
    }
    if (request.summary) sinks_.push_back(&summary_.emplace());
    if (request.summary || request.analysis || request.causal_profile ||
        !request.analysis_path.empty() || request.tables.has_value()) {
      sinks_.push_back(&analysis_.emplace());
    }
    // A layout that cannot link its units needs no timeline kept for its causal profile.
    if (request.causal_profile) unpredictable_ = CheckHandoffsPossible(*decoded.layout);
    if (request.collect || (request.causal_profile && unpredictable_.ok())) {
      sinks_.push_back(&collector_.emplace());
    }
    if (request.tables.has_value()) sinks_.push_back(&tables_.emplace(*request.tables));
    sinks_.insert(sinks_.end(), request.sinks.begin(), request.sinks.end());
  }

  absl::Status Dump() { return Open(0); }

  void Keep() {
    if (summary_.has_value() && summary_->summary().has_value()) {
      outcome_.summary = *summary_->summary();
    }
    if (analysis_.has_value()) outcome_.analysis = analysis_->result();
    if (request_.causal_profile && outcome_.analysis.has_value() && !unpredictable_.ok()) {
      outcome_.analysis->has_causal_profile = true;
      outcome_.analysis->causal_profile.limitations.push_back(
          absl::StrCat(kNoCausalProfile, unpredictable_.message()));
    } else if (request_.causal_profile && outcome_.analysis.has_value() &&
               collector_.has_value() && collector_->complete()) {
      // A trace the graph cannot predict (no hand-offs) gets the reason as its one
      // limitation, not a failed dump.
      Analysis& a = *outcome_.analysis;
      a.has_causal_profile = true;
      absl::StatusOr<CausalProfile> profile = ComputeCausalProfile(collector_->timeline());
      if (profile.ok()) {
        a.causal_profile = *std::move(profile);
      } else {
        a.causal_profile.limitations.push_back(
            absl::StrCat(kNoCausalProfile, profile.status().message()));
      }
    }
    if (tables_.has_value() && outcome_.analysis.has_value()) {
      tables_->AddAnalysis(*outcome_.analysis);
      outcome_.tables = tables_->Take();
    }
    if (request_.collect && collector_.has_value() && collector_->complete()) {
      outcome_.timeline = std::move(collector_->timeline());
    }
  }

  const std::optional<AnalysisSink>& analysis() const { return analysis_; }

 private:
  absl::Status Open(size_t next) {
    if (next == request_.traces.size()) {
      std::vector<TraceSink*> sinks = writers_;
      sinks.insert(sinks.end(), sinks_.begin(), sinks_.end());
      return DumpDecoded(decoded_, options_, sinks, outcome_.result);
    }
    const TraceOutput& output = request_.traces[next];
    if (output.stream != nullptr) return OpenWith(output, *output.stream, next);
    if (output.fd >= 0) {
      llvm::raw_fd_ostream os(output.fd, /*shouldClose=*/false);
      absl::Status status;
      {
        WritebackOStream stream(os, output.fd);  // Mosaic's file: flushed early, not at close
        status = OpenWith(output, stream, next);
        stream.flush();  // explicitly: its destructor writes nothing
      }
      os.flush();
      if (status.ok() && os.has_error()) {
        status = absl::UnavailableError(absl::StrCat("writing the ", RoleOf(output),
                                                     " to file descriptor ", output.fd, ": ",
                                                     os.error().message()));
        os.clear_error();
      }
      return status;
    }
    return WriteLargeFileAtomically(
        output.path,
        [&](llvm::raw_ostream& os) { return OpenWith(output, os, next); },
        {.role = RoleOf(output)});
  }

  // traces[next]'s writer on `os` around the rest. The writer is a local, owned here and
  // listed in writers_ only while it lives (WriterInList), so whatever ends the dump — a
  // return or an exception (std::bad_alloc) unwinding through here — destroys it before the
  // stream it writes to; writers and streams write nothing in their destructors (a writer
  // destroyed unfinished leaves an unclosed trace, which the file shell discards). With
  // threads, the Chrome writer formats into a PipelinedOStream whose bytes a background
  // thread writes to `os`; Perfetto's writer (deflate) and the Mosaic one (formatting at
  // End) have pipelines of their own.
  absl::Status OpenWith(const TraceOutput& output, llvm::raw_ostream& os, size_t next) {
    std::optional<PipelinedOStream> pipelined;
    if (threads_ > 1 && output.format == TraceFormat::kChromeJson &&
        output.chrome.events != ChromeEventStyle::kMosaic) {
      pipelined.emplace(os);
    }
    absl::Status status;
    {
      const std::unique_ptr<TraceSink> writer =
          MakeWriter(output, pipelined.has_value() ? *pipelined : os, threads_);
      WriterInList listed(writers_, writer.get());
      status = Open(next + 1);
    }
    if (pipelined.has_value()) pipelined->Finish();
    return status;
  }

  // A writer in writers_ for as long as this lives.
  class WriterInList {
   public:
    WriterInList(std::vector<TraceSink*>& list, TraceSink* writer) : list_(list) {
      list_.push_back(writer);
    }
    ~WriterInList() { list_.pop_back(); }
    WriterInList(const WriterInList&) = delete;
    WriterInList& operator=(const WriterInList&) = delete;

   private:
    std::vector<TraceSink*>& list_;
  };

  const DecodedTrace& decoded_;
  const DumpRequest& request_;
  DumpOutcome& outcome_;
  DumpOptions options_;
  const int threads_ = ThreadsFor(request_.threads);
  std::optional<SummarySink> summary_;
  std::optional<AnalysisSink> analysis_;
  std::optional<TraceCollector> collector_;
  absl::Status unpredictable_;  // CheckHandoffsPossible, when a causal profile is asked for
  std::optional<TablesSink> tables_;
  std::vector<TraceSink*> sinks_;  // the non-writer sinks, in order
  std::vector<TraceSink*> writers_;  // traces[0..]'s writers, owned by OpenWith's frames
};

}  // namespace

absl::StatusOr<TraceFormat> ChooseTraceFormat(absl::string_view format, absl::string_view path) {
  const std::string lower_format = absl::AsciiStrToLower(format);
  if (lower_format == "json") return TraceFormat::kChromeJson;
  if (lower_format == "perfetto") return TraceFormat::kPerfetto;
  if (!lower_format.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown format '", format, "': use 'perfetto' (protobuf trace) or 'json' (Chrome trace)"));
  }
  const std::string lower = absl::AsciiStrToLower(path);
  if (absl::EndsWith(lower, ".pftrace") || absl::EndsWith(lower, ".perfetto-trace")) {
    return TraceFormat::kPerfetto;
  }
  return TraceFormat::kChromeJson;
}

const char* TraceFormatRole(TraceFormat format) {
  return format == TraceFormat::kPerfetto ? "Perfetto trace" : "Chrome trace";
}

namespace {

// DumpDecodedToFiles once CheckRequest passed.
DumpOutcome DumpChecked(const DecodedTrace& decoded, const DumpRequest& request) {
  DumpOutcome outcome;
  WritersAroundDump run(decoded, request, outcome);
  outcome.status = run.Dump();
  const TraceLayout& layout = *decoded.layout;
  if (outcome.status.ok()) {
    for (const TraceOutput& t : request.traces) {
      if (!t.path.empty()) outcome.written.push_back(t.path);
    }
  }
  if (absl::IsCancelled(outcome.status)) return outcome;  // nothing more is written
  if (outcome.result.decoded && !request.report_path.empty()) {
    const absl::Status s = WriteVerifyReportFile(outcome.result.report, layout, request.report_path);
    if (!s.ok()) {
      outcome.status = s;
      outcome.failed_output = request.report_role;
      return outcome;
    }
    outcome.written.push_back(request.report_path);
  }
  if (!outcome.status.ok()) return outcome;
  run.Keep();
  if (!request.analysis_path.empty()) {
    const absl::Status s = WriteAnalysisJsonFile(*outcome.analysis, request.analysis_path);
    if (!s.ok()) {
      outcome.status = s;
      outcome.failed_output = request.analysis_role;
      return outcome;
    }
    outcome.written.push_back(request.analysis_path);
  }
  return outcome;
}

}  // namespace

DumpOutcome DumpDecodedToFiles(const DecodedTrace& decoded, const DumpRequest& request) {
  if (absl::Status s = CheckRequest(request); !s.ok()) {
    DumpOutcome outcome;
    outcome.status = s;
    return outcome;
  }
  return DumpChecked(decoded, request);
}

DumpOutcome DumpToFiles(const TraceLayout& layout, absl::Span<const uint32_t> words,
                        const DumpRequest& request) {
  DumpOutcome outcome;
  outcome.status = CheckRequest(request);
  if (outcome.status.ok()) outcome.status = CheckWords(layout, words);
  if (!outcome.status.ok()) return outcome;
  DecodedTrace decoded;
  outcome.status = DecodeInto(layout, words, decoded, ThreadsFor(request.threads));
  if (!outcome.status.ok()) return outcome;
  return DumpChecked(decoded, request);
}

void PrintSummaryAndDiagnosis(const DumpOutcome& outcome, llvm::raw_ostream& os) {
  if (!outcome.summary.has_value()) return;
  PrintSummary(*outcome.summary, os);
  if (outcome.analysis.has_value()) {
    PrintDiagnosis(*outcome.analysis, os);
    if (outcome.analysis->has_causal_profile) PrintCausalProfile(outcome.analysis->causal_profile, os);
  }
}

absl::StatusOr<LoadedDump> LoadForDump(absl::string_view prefix, uint64_t sm_clock_khz,
                                       int threads, bool in_place) {
  LoadedDump loaded;
  LoadOptions load_options;
  load_options.importers[kMosaicSidecarFormat] =
      [&](absl::string_view p, absl::string_view json) -> absl::StatusOr<LoadedTrace> {
    loaded.mosaic = true;
    ASSIGN_OR_RETURN(const MosaicSidecar sidecar, ParseMosaicSidecar(json));
    loaded.mosaic_bounds_check = sidecar.bounds_check;
    MosaicImportOptions options;
    if (sm_clock_khz != 0) options.sm_clock_khz = sm_clock_khz;
    options.threads = ThreadsFor(threads);
    if (in_place) {
      ASSIGN_OR_RETURN(std::unique_ptr<MosaicDecoded> decoded, DecodeMosaicGpu(p, json, options));
      loaded.overflows = decoded->overflows;
      LoadedTrace layout_only{decoded->layout, TraceWords()};
      loaded.in_place = std::move(decoded);
      return layout_only;
    }
    ASSIGN_OR_RETURN(MosaicImport imported, ImportMosaicGpu(p, json, options));
    loaded.overflows = std::move(imported.overflows);
    return std::move(imported.trace);
  };
  ASSIGN_OR_RETURN(loaded.trace, LoadTrace(prefix, load_options));
  if (sm_clock_khz != 0 && !loaded.mosaic) {
    loaded.trace.layout.clock.nominal_sm_clock_khz = sm_clock_khz;
  }
  return loaded;
}

DumpRequest WithMosaicBoundsCheck(DumpRequest request) {
  request.verify.allow_truncated = true;
  for (TraceOutput& t : request.traces) t.chrome.mosaic.close_truncated = true;
  return request;
}

DumpOutcome DumpLoadedToFiles(const LoadedDump& loaded, const DumpRequest& request) {
  if (loaded.mosaic_bounds_check) {
    const DumpRequest bounded = WithMosaicBoundsCheck(request);
    if (loaded.in_place != nullptr) return DumpDecodedToFiles(loaded.in_place->decoded, bounded);
    return DumpToFiles(loaded.trace.layout, loaded.trace.words, bounded);
  }
  if (loaded.in_place != nullptr) return DumpDecodedToFiles(loaded.in_place->decoded, request);
  return DumpToFiles(loaded.trace.layout, loaded.trace.words, request);
}

}  // namespace warptrace
