// Reading trace files (gzip undone), detecting their format, and handing
// each to its format's importer (kineto/, tf_timeline/, xspace/).
#include "profiler/importers/trace_import.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "profiler/base/file.h"
#include "profiler/base/gzip.h"
#include "profiler/importers/common/json_reader.h"
#include "profiler/importers/common/trace_builder.h"
#include "profiler/importers/kineto/kineto.h"
#include "profiler/importers/tf_timeline/tf_timeline.h"
#include "profiler/importers/xspace/xspace.h"
#include "proto/xplane.pb.h"

namespace tfprof {

namespace {

using trace_internal::JsonReader;
using trace_internal::JsonTraceScan;
using trace_internal::PaddedBytes;
using trace_internal::TraceBuilder;

constexpr size_t kMaxDecompressedBytes = size_t{1} << 31;  // 2 GiB

absl::Status OutOfMemory(const std::string& name) {
  return absl::ResourceExhaustedError(
      absl::StrCat(name, ": out of memory reading the trace"));
}

// Gzip data (several members allowed) decompressed straight into padded
// memory, and checked not to be gzip again.
absl::StatusOr<PaddedBytes> GunzipTrace(const std::string& name,
                                        absl::string_view data) {
  PaddedBytes out;
  absl::Status s =
      GunzipInto(data, name, kMaxDecompressedBytes,
                 GunzipSink{[&out](size_t n) { return out.Reserve(n); },
                            [&out](size_t n) { out.Commit(n); }});
  if (!s.ok()) return s;
  out.ZeroPadding();
  if (IsGzip(out.view())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": gzip inside gzip; not a trace"));
  }
  return out;
}

absl::StatusOr<PaddedBytes> FromContents(const std::string& name,
                                         absl::string_view contents) {
  if (IsGzip(contents)) return GunzipTrace(name, contents);
  PaddedBytes bytes;
  char* p = bytes.Reserve(contents.size());
  if (p == nullptr) return OutOfMemory(name);
  if (!contents.empty()) std::memcpy(p, contents.data(), contents.size());
  bytes.Commit(contents.size());
  bytes.ZeroPadding();
  return bytes;
}

// Reads a file straight into padded memory (errors as ReadFileToString's).
absl::StatusOr<PaddedBytes> ReadTraceFile(const std::string& path) {
  absl::StatusOr<InputFile> file = InputFile::Open(path);
  if (!file.ok()) return file.status();
  PaddedBytes bytes;
  // The whole of a regular file in one piece (plus one byte to see the end).
  size_t chunk = file->size() >= 0 ? static_cast<size_t>(file->size()) + 1
                                   : size_t{1} << 20;
  for (;;) {
    char* p = bytes.Reserve(chunk);
    if (p == nullptr) return OutOfMemory(path);
    absl::StatusOr<size_t> n = file->Read(p, chunk);
    if (!n.ok()) return n.status();
    bytes.Commit(*n);
    if (*n < chunk) break;  // Read() stops short only at the end
    chunk = size_t{1} << 20;
  }
  bytes.ZeroPadding();
  return bytes;
}

absl::StatusOr<PaddedBytes> FromFile(const std::string& path) {
  absl::StatusOr<PaddedBytes> raw = ReadTraceFile(path);
  if (!raw.ok()) return raw.status();
  if (IsGzip(raw->view())) return GunzipTrace(path, raw->view());
  return raw;
}

bool LooksLikeJson(absl::string_view data) {
  absl::ConsumePrefix(&data, "\xEF\xBB\xBF");  // a UTF-8 byte order mark
  for (char c : data) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{' || c == '[';
  }
  return false;
}

// 1-based line and column of a byte offset.
std::string Where(absl::string_view data, size_t offset) {
  offset = std::min(offset, data.size());
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (data[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return absl::StrCat("line ", line, ", column ", col, " (byte ", offset, ")");
}

// How many arrays and objects are still open at the end of `data` (outside
// strings): more than none means the file was cut short. -1 when a bracket
// closes what it did not open (an error somewhere inside).
int OpenAtEnd(absl::string_view data) {
  std::string open;  // the brackets still open, innermost last
  bool in_string = false;
  for (size_t i = 0; i < data.size(); ++i) {
    const char c = data[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      open.push_back(c);
    } else if (c == ']' || c == '}') {
      if (open.empty() || open.back() != (c == ']' ? '[' : '{')) return -1;
      open.pop_back();
    }
  }
  return static_cast<int>(open.size());
}

// Where a document stops being valid JSON (the DOM parser reports what, not
// where): the reader reads it again from the start, checking every value as
// the first pass does, and says where it stopped. A file cut short (the
// reader stops at its end, or names no place, with arrays or objects still
// open) says so instead.
std::string LocateJsonError(JsonReader* reader) {
  const absl::string_view data = reader->bytes().view();
  // Within this many bytes of the end, a stop is the end of a cut file.
  constexpr size_t kNearEnd = 64;
  size_t stopped = data.size();  // where the reader stopped, if it says
  std::string where;
  reader->set_validating(true);
  if (reader->Start()) {
    JsonReader::Value root;
    bool failed = reader->document().get_value().get(root) != simdjson::SUCCESS;
    if (!failed) {
      reader->set_depth(1);
      failed = !reader->Skip(root);
    }
    const char* loc = nullptr;
    if (reader->document().current_location().get(loc) != simdjson::SUCCESS ||
        loc == nullptr) {
      where = failed ? "" : "at the end of the document";
    } else if (loc >= data.data() && loc <= data.data() + data.size()) {
      stopped = static_cast<size_t>(loc - data.data());
      where = "near " + Where(data, stopped);
    }
  }
  // (A file that ends in a closing bracket was written to its end: its
  // brackets are off by an error inside, a stray quote say.)
  const size_t last = data.find_last_not_of(" \t\r\n");
  const bool closed = last != absl::string_view::npos &&
                      (data[last] == '}' || data[last] == ']');
  if (!closed && stopped + kNearEnd >= data.size()) {
    if (const int open = OpenAtEnd(data); open > 0) {
      return absl::StrCat(
          "at the end of the file (", Where(data, data.size()), "): ", open,
          open == 1 ? " array or object is" : " arrays or objects are",
          " still open (is the file cut short?)");
    }
  }
  return where;
}

absl::Status ImportOne(const std::string& name, PaddedBytes data,
                       int64_t file_index, std::optional<TraceFormat>* format,
                       TraceBuilder* builder) {
  if (data.size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        name,
        ": empty file; expected a trace (TensorFlow timeline JSON, "
        "PyTorch profiler JSON or XSpace .xplane.pb)"));
  }

  if (!LooksLikeJson(data.view())) {
    if (format->has_value() && **format != TraceFormat::kXSpace) {
      absl::StatusOr<TraceFormat> f =
          DetectTraceFormat(name, std::string(data.view()));
      if (!f.ok()) return f.status();
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": is an ", TraceFormatName(*f),
          " trace but earlier files are ", TraceFormatName(**format),
          "; all traces must have one format"));
    }
    *format = TraceFormat::kXSpace;
    // Checks that it is an XSpace.
    return trace_internal::ImportXSpace(data.view(), name, file_index, builder);
  }

  // The padded bytes and the On-Demand parser's index are all the reader
  // holds; both are freed as soon as the file is converted.
  data.BlankByteOrderMark();
  JsonReader reader(std::move(data));
  JsonTraceScan scan;
  const simdjson::error_code err =
      trace_internal::ScanJsonTrace(&reader, &scan);
  if (err != simdjson::SUCCESS) {
    const std::string where = LocateJsonError(&reader);
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": malformed JSON: ", simdjson::error_message(err),
                     where.empty() ? "" : " ", where));
  }
  if (!scan.format.has_value()) {
    // The TF2 profiler's trace viewer file is drawn from the capture's
    // XSpace, which is saved beside it.
    const bool xprof_export =
        scan.has_events && (absl::EndsWith(name, ".trace.json.gz") ||
                            absl::EndsWith(name, ".trace.json"));
    return absl::InvalidArgumentError(absl::StrCat(
        name,
        scan.has_events
            ? ": a Chrome trace, but neither a TensorFlow timeline (no "
              "\"<device> Compute\" processes, no Op events with "
              "args.name/args.op) nor a PyTorch profiler trace"
            : ": JSON without a traceEvents array",
        trace_internal::kExpectedFormats,
        xprof_export ? " (a TF2 profiler's <host>.trace.json.gz is drawn "
                       "from the <host>.xplane.pb beside it: load that)"
                     : ""));
  }
  const TraceFormat f = *scan.format;
  if (format->has_value() && **format != f) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": is a ", TraceFormatName(f), " trace but earlier files are ",
        TraceFormatName(**format), "; all traces must have one format"));
  }
  *format = f;
  if (f == TraceFormat::kTfTimeline) {
    return trace_internal::ImportTfTimeline(&reader, scan, name, file_index,
                                            builder);
  }
  return trace_internal::ImportKineto(&reader, name, file_index, builder);
}

}  // namespace

bool MayBeTrace(const std::string& name, absl::string_view head) {
  return IsGzip(head) || LooksLikeJson(head) ||
         absl::EndsWith(name, ".xplane.pb");
}

const std::string& JsonKernelName() {
  return simdjson::get_active_implementation()->name();
}

absl::StatusOr<TraceFormat> DetectTraceFormat(const std::string& name,
                                              const std::string& contents) {
  if (IsGzip(contents)) {
    absl::StatusOr<PaddedBytes> data = GunzipTrace(name, contents);
    if (!data.ok()) return data.status();
    return DetectTraceFormat(name, std::string(data->view()));
  }
  const char* const kExpected = trace_internal::kExpectedFormats;
  if (LooksLikeJson(contents)) {
    absl::StatusOr<PaddedBytes> bytes = FromContents(name, contents);
    if (!bytes.ok()) return bytes.status();
    bytes->BlankByteOrderMark();
    JsonReader reader(std::move(*bytes));
    JsonTraceScan scan;
    const simdjson::error_code err =
        trace_internal::ScanJsonTrace(&reader, &scan);
    if (err != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": malformed JSON: ", simdjson::error_message(err), kExpected));
    }
    if (!scan.format.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": JSON of an unknown kind", kExpected));
    }
    return *scan.format;
  }
  tensorflow::profiler::XSpace space;
  const bool parsed = space.ParseFromString(contents);
  if (parsed) {
    for (const auto& plane : space.planes()) {
      if (absl::StartsWith(plane.name(), "/host:") ||
          absl::StartsWith(plane.name(), "/device:")) {
        return TraceFormat::kXSpace;
      }
    }
  }
  return trace_internal::NotAKnownTrace(name, parsed);
}

namespace {

// Which file first gave each step executions, per run: a later file of the
// same run that adds to one of those steps is an error.
class StepOwners {
 public:
  StepOwners(const std::vector<std::string>& names,
             const std::vector<size_t>& run_of_file)
      : names_(names), run_of_file_(run_of_file) {}

  // Call after file i is imported (TraceBuilder::BeginFile(i) before).
  absl::Status After(size_t i, const TraceBuilder& b) {
    if (run_of_file_.empty()) return absl::OkStatus();
    for (int64_t step : b.touched()) {
      auto [it, added] =
          owner_.emplace(std::make_pair(run_of_file_[i], step), i);
      if (!added && it->second != i) {
        return absl::InvalidArgumentError(absl::StrCat(
            names_[i], ": its step ", step, " is also a step of ",
            names_[it->second],
            " (a file's steps are its own markers', else its place in the "
            "list): two captures are not one run (each has its own clock "
            "and step numbers); load one, or compare them "
            "(--base_trace_path, diff)"));
      }
    }
    return absl::OkStatus();
  }

 private:
  const std::vector<std::string>& names_;
  const std::vector<size_t>& run_of_file_;
  absl::flat_hash_map<std::pair<size_t, int64_t>, size_t> owner_;
};

// Imports the files one at a time; `read(i)` returns the bytes of file i
// (gzip undone).
template <typename ReadFn>
absl::StatusOr<std::unique_ptr<TraceBuilder>> ImportAll(
    const std::vector<std::string>& names, ReadFn read,
    const std::vector<size_t>& run_of_file = {}) {
  if (names.empty()) {
    return absl::InvalidArgumentError("no trace files given");
  }
  if (!run_of_file.empty() && run_of_file.size() != names.size()) {
    return absl::InvalidArgumentError(
        "trace files and their runs differ in number");
  }
  auto builder = std::make_unique<TraceBuilder>();
  std::optional<TraceFormat> format;
  StepOwners owners(names, run_of_file);
  for (size_t i = 0; i < names.size(); ++i) {
    absl::StatusOr<PaddedBytes> data = read(i);
    if (!data.ok()) return data.status();
    builder->BeginFile(static_cast<int64_t>(i));
    absl::Status s = ImportOne(names[i], std::move(*data),
                               static_cast<int64_t>(i), &format, builder.get());
    if (!s.ok()) return s;
    s = owners.After(i, *builder);
    if (!s.ok()) return s;
  }
  if (builder->num_execs() == 0) {
    const std::string skipped = builder->CountsText();
    return absl::InvalidArgumentError(absl::StrCat(
        names.size() == 1 ? names[0] : "the trace files",
        ": no executions found (no timed events that map to nodes)",
        skipped.empty() ? "" : "; ", skipped));
  }
  builder->Finish(*format);
  return builder;
}

// The TF1 export of an imported trace.
ImportedTrace Collect(TraceBuilder* trace) {
  ImportedTrace out;
  out.format = trace->format();
  out.notes = trace->notes();
  out.graph = trace->TakeGraph();
  out.op_log = trace->TakeOpLog();
  out.activity = trace->TakeActivity();
  int64_t step;
  tfcore::RunMetadata run_meta;
  while (trace->NextStep(&step, &run_meta)) {
    out.steps.emplace_back(step, tfcore::RunMetadata());
    out.steps.back().second.Swap(&run_meta);
  }
  return out;
}

}  // namespace

StreamedTrace::StreamedTrace(std::unique_ptr<TraceBuilder> b)
    : builder_(std::move(b)) {}
StreamedTrace::StreamedTrace(StreamedTrace&&) noexcept = default;
StreamedTrace& StreamedTrace::operator=(StreamedTrace&&) noexcept = default;
StreamedTrace::~StreamedTrace() = default;

TraceFormat StreamedTrace::format() const { return builder_->format(); }

const std::vector<std::string>& StreamedTrace::notes() const {
  return builder_->notes();
}

void StreamedTrace::WriteNodes(ModelBuilder* builder) {
  builder_->WriteNodes(builder);
}

void StreamedTrace::WriteSteps(ModelBuilder* builder) {
  builder_->WriteSteps(builder);
}

absl::StatusOr<StreamedTrace> ImportTraceStreamed(
    const std::vector<std::string>& paths,
    const std::vector<size_t>& run_of_file) {
  absl::StatusOr<std::unique_ptr<TraceBuilder>> builder = ImportAll(
      paths, [&paths](size_t i) { return FromFile(paths[i]); }, run_of_file);
  if (!builder.ok()) return builder.status();
  return StreamedTrace(std::move(*builder));
}

absl::StatusOr<ImportedTrace> ImportTraceContents(
    const std::vector<std::string>& names,
    const std::vector<std::string>& contents) {
  if (names.size() != contents.size()) {
    return absl::InvalidArgumentError(
        "trace names and contents differ in size");
  }
  absl::StatusOr<std::unique_ptr<TraceBuilder>> builder = ImportAll(
      names, [&](size_t i) { return FromContents(names[i], contents[i]); });
  if (!builder.ok()) return builder.status();
  return Collect(builder->get());
}

absl::StatusOr<ImportedTrace> ImportTrace(
    const std::vector<std::string>& paths) {
  absl::StatusOr<std::unique_ptr<TraceBuilder>> builder =
      ImportAll(paths, [&paths](size_t i) { return FromFile(paths[i]); });
  if (!builder.ok()) return builder.status();
  return Collect(builder->get());
}

}  // namespace tfprof
