#include "profiler/load/loader.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/unknown_field_set.h"
#include "profiler/base/file.h"
#include "profiler/importers/trace_import.h"
#include "profiler/load/profile_reader.h"
#include "profiler/load/trace_files.h"
#include "profiler/model/model_builder.h"

namespace tfprof {
namespace {

// Keeps the first error of a text-format parse instead of logging them all.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (error_.empty()) {
      error_ = absl::StrFormat("line %d column %d: %s", line + 1, column + 1,
                               message);
    }
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber,
                  const std::string&) override {}
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

void DropLog(google::protobuf::LogLevel, const char*, int, const std::string&) {
}

class ScopedSilentProtobufLog {
 public:
  ScopedSilentProtobufLog()
      : previous_(google::protobuf::SetLogHandler(&DropLog)) {}
  ~ScopedSilentProtobufLog() { google::protobuf::SetLogHandler(previous_); }

 private:
  google::protobuf::LogHandler* previous_;
};

// The first bytes of a file (fewer if it is shorter; empty on an error).
std::string ReadHead(const std::string& path, size_t n) {
  absl::StatusOr<InputFile> file = InputFile::Open(path);
  if (!file.ok()) return "";
  std::string head(n, '\0');
  absl::StatusOr<size_t> got = file->Read(head.data(), n);
  head.resize(got.ok() ? *got : 0);
  return head;
}

}  // namespace

absl::StatusOr<TraceFormat> TraceFormatOfFile(const std::string& path) {
  if (!MayBeTrace(path, ReadHead(path, 4096))) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a trace"));
  }
  absl::StatusOr<std::string> contents = ReadFileToString(path);
  if (!contents.ok()) return contents.status();
  return DetectTraceFormat(path, *contents);
}

namespace {

// A ProfileProto load failed: when the file is a trace tfprof can import,
// the error says so and names --trace_path. (A file that cannot be a trace
// is not read again.)
absl::Status WithTraceHint(const std::string& path, absl::Status error) {
  absl::StatusOr<TraceFormat> format = TraceFormatOfFile(path);
  if (!format.ok()) return error;
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": is a ", TraceFormatName(*format),
                   " trace, not a ProfileProto: load it with --trace_path"));
}

absl::Status ParseText(const std::string& path, const std::string& contents,
                       google::protobuf::Message* msg) {
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  // Files from newer TensorFlow versions carry fields our protos do not
  // declare (e.g. inside function libraries); they are skipped.
  parser.AllowUnknownField(true);
  parser.AllowUnknownExtension(true);
  msg->Clear();
  if (!parser.ParseFromString(contents, msg)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a text ", msg->GetTypeName(), " (", errors.error(), ")"));
  }
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  msg->GetReflection()->ListFields(*msg, &fields);
  if (fields.empty() &&
      contents.find_first_not_of(" \t\r\n") != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a text ", msg->GetTypeName(),
                     " (none of its fields are present)"));
  }
  return absl::OkStatus();
}

// A field the message (or a message it holds directly; maps aside) declares,
// met with another wire type: protobuf keeps such a field as unknown, and
// it is the mark of another kind of message read as this one. "field N of
// TYPE" or empty.
std::string MistypedField(const google::protobuf::Message& msg, int depth) {
  const google::protobuf::Reflection* refl = msg.GetReflection();
  const google::protobuf::UnknownFieldSet& unknown =
      refl->GetUnknownFields(msg);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const int number = unknown.field(i).number();
    if (msg.GetDescriptor()->FindFieldByNumber(number) != nullptr) {
      return absl::StrCat("field ", number, " of ", msg.GetTypeName());
    }
  }
  if (depth == 0) return "";
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  refl->ListFields(msg, &fields);
  for (const google::protobuf::FieldDescriptor* f : fields) {
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE ||
        f->is_map()) {
      continue;
    }
    const int n = f->is_repeated() ? refl->FieldSize(msg, f) : 1;
    for (int i = 0; i < n; ++i) {
      const google::protobuf::Message& sub =
          f->is_repeated() ? refl->GetRepeatedMessage(msg, f, i)
                           : refl->GetMessage(msg, f);
      std::string found = MistypedField(sub, depth - 1);
      if (!found.empty()) return found;
    }
  }
  return "";
}

absl::Status ParseBinary(const std::string& path, const std::string& contents,
                         google::protobuf::Message* msg) {
  msg->Clear();
  if (!msg->ParseFromString(contents)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a binary ",
                                                   msg->GetTypeName(),
                                                   " (corrupt or truncated)"));
  }
  // Bytes that parse but fill none of the message's fields are another kind
  // of file.
  if (!contents.empty() && msg->ByteSizeLong() > 0) {
    const auto& unknown = msg->GetReflection()->GetUnknownFields(*msg);
    bool any_known = false;
    std::vector<const google::protobuf::FieldDescriptor*> fields;
    msg->GetReflection()->ListFields(*msg, &fields);
    any_known = !fields.empty();
    if (!any_known && !unknown.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": not a ", msg->GetTypeName(),
                       " (none of its fields are present)"));
    }
  }
  if (const std::string mistyped = MistypedField(*msg, 1); !mistyped.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a binary ", msg->GetTypeName(), " (", mistyped,
        " has the wrong wire type); a ProfileProto goes to --profile_path, "
        "a GraphDef to --graph_path, a RunMetadata to --run_meta_path, an "
        "OpLog to --op_log_path"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ProtoFormat> ParseProto(const std::string& path,
                                       const std::string& contents,
                                       bool text_first,
                                       google::protobuf::Message* msg) {
  // libprotobuf logs parse problems to stderr itself; the status returned
  // here says what is wrong, once.
  ScopedSilentProtobufLog silence;
  // A file that is clearly binary is never parsed as text (and the other way
  // round), so that the error message speaks of the right format.
  const bool text = LooksLikeProtoText(contents);
  if (text_first || text) {
    absl::Status ts = ParseText(path, contents, msg);
    if (ts.ok()) return ProtoFormat::kText;
    if (text) {
      // Text that does not parse as text may still be valid binary (rare).
      if (ParseBinary(path, contents, msg).ok() && !contents.empty()) {
        return ProtoFormat::kBinary;
      }
      return ts;
    }
  }
  absl::Status bs = ParseBinary(path, contents, msg);
  if (bs.ok()) return ProtoFormat::kBinary;
  return bs;
}

absl::Status ReadProtoFile(const std::string& path, bool text_first,
                           google::protobuf::Message* msg) {
  absl::StatusOr<std::string> contents = ReadFileToString(path);
  if (!contents.ok()) return contents.status();
  absl::StatusOr<ProtoFormat> fmt =
      ParseProto(path, *contents, text_first, msg);
  return fmt.status();
}

absl::Status CheckInputCombination(const InputPaths& paths) {
  if (!paths.trace_path.empty() &&
      (!paths.profile_path.empty() || !paths.graph_path.empty() ||
       !paths.run_meta_path.empty())) {
    return absl::InvalidArgumentError(
        "--trace_path is set: do not also set --profile_path, --graph_path or "
        "--run_meta_path");
  }
  if (!paths.profile_path.empty() &&
      (!paths.graph_path.empty() || !paths.run_meta_path.empty())) {
    return absl::InvalidArgumentError(
        "--profile_path is set: do not also set --graph_path or "
        "--run_meta_path");
  }
  return absl::OkStatus();
}

namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// Reads and parses a whole input file (counted in out->bytes_read).
template <typename Message>
absl::Status ReadInput(const std::string& path, bool text_first, Message* msg,
                       LoadedProfile* out) {
  absl::StatusOr<std::string> contents = ReadFileToString(path);
  if (!contents.ok()) return contents.status();
  out->bytes_read += static_cast<int64_t>(contents->size());
  return ParseProto(path, *contents, text_first, msg).status();
}

// Traces, written into the model directly, each step's records freed once
// the model has them.
absl::Status LoadTraces(const std::string& trace_path,
                        const std::optional<tfpb::OpLogProto>& op_log,
                        LoadedProfile* out) {
  absl::StatusOr<std::vector<std::string>> expanded =
      ExpandTracePath(trace_path);
  if (!expanded.ok()) return expanded.status();
  const std::vector<std::string>& files = *expanded;
  // Files of one rank are one run: none may repeat another's steps.
  out->rank_groups = GroupByRank(files);
  absl::flat_hash_map<std::string, size_t> group_of;
  for (size_t g = 0; g < out->rank_groups.size(); ++g) {
    for (const std::string& f : out->rank_groups[g].files) group_of[f] = g;
  }
  std::vector<size_t> run_of_file;
  run_of_file.reserve(files.size());
  for (const std::string& f : files) run_of_file.push_back(group_of[f]);
  absl::StatusOr<StreamedTrace> trace = ImportTraceStreamed(files, run_of_file);
  if (!trace.ok()) return trace.status();
  for (const std::string& f : files) {
    absl::StatusOr<uint64_t> size = RegularFileSize(f);
    if (size.ok()) out->bytes_read += static_cast<int64_t>(*size);
  }
  out->model.set_source(SourceOf(trace->format()));
  ModelBuilder builder(&out->model);
  trace->WriteNodes(&builder);
  if (op_log.has_value()) out->model.AddOpLog(*op_log);
  if (out->checkpoint != nullptr) {
    out->model.AddCheckpointVariables(out->checkpoint->names());
  }
  trace->WriteSteps(&builder);
  // A trace's per-step figures are means over all of its steps (as the
  // framework's own per-step figures are): a node that ran in some steps
  // counts zero in the others.
  out->model.MeanOverAllSteps();
  out->notes.push_back(absl::StrFormat(
      "%s: %s trace, %d nodes, %d step%s", trace_path,
      TraceFormatName(trace->format()), out->model.size(),
      out->model.steps().size(), out->model.steps().size() == 1 ? "" : "s"));
  const size_t ranks = out->rank_groups.size();
  if (ranks >= 2) {
    out->model.set_ranks(static_cast<int64_t>(ranks));
    out->notes.push_back(absl::StrFormat(
        "note: %d ranks: the views show the mean per rank (the sum over the "
        "ranks divided by %d); -rank N shows one rank",
        ranks, ranks));
  }
  for (const std::string& n : trace->notes()) {
    out->notes.push_back("note: " + n);
  }
  return absl::OkStatus();
}

// A ProfileProto: binary ones streamed, text ones parsed whole and decoded
// the same way.
absl::Status LoadProfileProto(const std::string& path, LoadedProfile* out) {
  absl::StatusOr<ProfileFileResult> streamed = ReadProfileProtoFile(path);
  if (streamed.ok()) {
    out->bytes_read += streamed->bytes_read;
    out->model = std::move(streamed->model);
    return absl::OkStatus();
  }
  if (streamed.status().code() == absl::StatusCode::kNotFound) {
    return streamed.status();
  }
  if (streamed.status().code() != absl::StatusCode::kFailedPrecondition) {
    return WithTraceHint(path, streamed.status());
  }
  tfpb::ProfileProto profile;
  absl::Status parsed = ReadInput(path, false, &profile, out);
  if (!parsed.ok()) return WithTraceHint(path, parsed);
  absl::StatusOr<Model> model = ModelFromProfileProto(profile);
  if (!model.ok()) return model.status();
  out->model = std::move(*model);
  return absl::OkStatus();
}

// RunMetadata files, the n-th one step n.
absl::Status LoadRunMetas(const std::string& run_meta_path,
                          const LoadProgress& tell, LoadedProfile* out) {
  std::vector<std::string> files =
      absl::StrSplit(run_meta_path, ',', absl::SkipEmpty());
  std::set<std::string> seen;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!seen.insert(files[i]).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(files[i],
                       ": listed twice in --run_meta_path (each file is one "
                       "step)"));
    }
    tell(files[i]);
    tfcore::RunMetadata run_meta;
    absl::Status parsed = ReadInput(files[i], false, &run_meta, out);
    if (!parsed.ok()) return parsed;
    absl::Status s = out->model.AddRunMeta(static_cast<int64_t>(i), run_meta);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(files[i], ": ", s.message()));
    }
    out->run_meta_files[static_cast<int64_t>(i)] = files[i];
    out->notes.push_back(
        absl::StrFormat("run graph coverage: %.2f", out->model.run_coverage()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<LoadedProfile>> LoadProfile(
    const InputPaths& paths, const LoadProgress& progress) {
  const LoadProgress tell = [&progress](const std::string& file) {
    if (progress) progress(file);
  };
  const auto start = std::chrono::steady_clock::now();
  absl::Status valid = CheckInputCombination(paths);
  if (!valid.ok()) return valid;
  if (paths.profile_path.empty() && paths.graph_path.empty() &&
      paths.run_meta_path.empty() && paths.trace_path.empty()) {
    return absl::InvalidArgumentError(
        "no input: give --profile_path, --graph_path and/or --run_meta_path, "
        "or --trace_path");
  }
  auto out = std::make_unique<LoadedProfile>();
  if (!paths.checkpoint_path.empty()) {
    absl::StatusOr<Checkpoint> ckpt = Checkpoint::Open(paths.checkpoint_path);
    if (!ckpt.ok()) return ckpt.status();
    out->checkpoint = std::make_unique<Checkpoint>(std::move(*ckpt));
  }
  std::optional<tfpb::OpLogProto> op_log;
  if (!paths.op_log_path.empty()) {
    tell(paths.op_log_path);
    op_log.emplace();
    absl::Status s = ReadInput(paths.op_log_path, false, &*op_log, out.get());
    if (!s.ok()) return s;
  }
  if (!paths.trace_path.empty()) {
    tell(paths.trace_path);
    absl::Status s = LoadTraces(paths.trace_path, op_log, out.get());
    if (!s.ok()) return s;
    out->seconds = SecondsSince(start);
    return out;
  }
  if (!paths.profile_path.empty()) {
    tell(paths.profile_path);
    absl::Status s = LoadProfileProto(paths.profile_path, out.get());
    if (!s.ok()) return s;
  } else if (!paths.graph_path.empty()) {
    tell(paths.graph_path);
    tfcore::GraphDef graph;
    absl::Status s = ReadInput(paths.graph_path, true, &graph, out.get());
    if (!s.ok()) return s;
    out->model.AddGraph(graph);
  }
  // Same order as tfprof: op log and checkpoint apply to the graph's nodes,
  // then the steps are added.
  if (op_log.has_value()) out->model.AddOpLog(*op_log);
  if (out->checkpoint != nullptr) {
    out->model.AddCheckpointVariables(out->checkpoint->names());
  }
  if (!paths.run_meta_path.empty()) {
    absl::Status s = LoadRunMetas(paths.run_meta_path, tell, out.get());
    if (!s.ok()) return s;
  }
  out->seconds = SecondsSince(start);
  return out;
}

}  // namespace tfprof
