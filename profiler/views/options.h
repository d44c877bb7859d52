// Query options of the four views, the table that describes them (used for
// flags, the shell, help texts and docs), parsing and printing.
#ifndef TFPROF_PROFILER_VIEWS_OPTIONS_H_
#define TFPROF_PROFILER_VIEWS_OPTIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "profiler/base/protos.h"
#include "profiler/model/attribute.h"

namespace tfprof {

// The values -flops_rule accepts.
const std::vector<std::string>& FlopsRules();
// The values -order_by accepts, in tfprof's order.
const std::vector<std::string>& OrderByValues();
// The attributes -select accepts, in tfprof's order (index = tfprof's id).
const std::vector<std::string>& SelectValues();
// An -output type: where a query's result goes, parsed once from its name.
enum class OutputKind {
  kStdout,
  kNone,
  kFile,
  kJson,
  kCsv,
  kPbtxt,
  kProto,
  kTimeline,
  kPprof,
};
struct OutputTypeSpec {
  std::string name;
  enum Outfile { kNoFile, kOptionalFile, kNeedsFile } outfile;
  OutputKind kind;
};
// Every -output type, in the order help texts list them.
const std::vector<OutputTypeSpec>& OutputTypeTable();
// Their names, sorted.
const std::vector<std::string>& OutputTypes();
// An output kind's name as -output spells it.
const std::string& OutputKindName(OutputKind kind);

// How the op view groups nodes: by their framework op type (TensorFlow op,
// PyTorch op, the last level of a JAX name stack), or, for nodes of XLA
// programs, by HLO category (opcode, fusion kind, custom-call target).
enum class OpGrouping { kFramework, kHlo };

struct Options {
  int64_t max_depth = 10;
  int64_t min_bytes = 0;
  int64_t min_peak_bytes = 0;
  int64_t min_residual_bytes = 0;
  int64_t min_output_bytes = 0;
  int64_t min_micros = 0;
  int64_t min_accelerator_micros = 0;
  int64_t min_cpu_micros = 0;
  int64_t min_params = 0;
  int64_t min_float_ops = 0;
  int64_t min_occurrence = 0;
  int64_t step = -1;
  // Multi-rank inputs: the rank whose files the command reads (-1: all).
  int64_t rank = -1;
  Attr order_by = Attr::kName;  // one of OrderByAttrs()
  std::vector<std::string> account_type_regexes = {".*"};
  std::vector<std::string> start_name_regexes = {".*"};
  std::vector<std::string> trim_name_regexes;
  std::vector<std::string> show_name_regexes = {".*"};
  std::vector<std::string> hide_name_regexes;
  std::vector<std::string> device_regexes = {".*"};  // not in tfprof today
  bool show_kernels = false;                         // not in tfprof
  OpGrouping op_group = OpGrouping::kFramework;      // not in tfprof
  // Which float ops nodes carry: "extended" (each computation once, plus
  // the ops PyTorch's with_flops leaves out) or "pytorch" (PyTorch's
  // with_flops set exactly, nested duplicates included). Not in tfprof.
  std::string flops_rule = "extended";
  // Peaks per device overriding the peak table (0: the table's).
  double peak_flops = 0;
  double peak_bytes_per_sec = 0;
  bool account_displayed_op_only = false;
  AttrSet select = {Attr::kMicros};
  OutputKind output_type = OutputKind::kStdout;
  std::map<std::string, std::string> output_options;

  bool Selected(Attr attr) const { return select.contains(attr); }
};

enum class OptionKind {
  kInt,
  kList,
  kBool,
  kOrderBy,
  kSelect,
  kOutput,
  kChoice,  // one word of `choices`
  kNumber,  // a number >= 0, e.g. 989.4e12
};

struct OptionSpec {
  std::string name;  // without the leading dash
  OptionKind kind;
  std::string default_text;  // the command line default, as text
  std::string help;
  std::vector<std::string> choices = {};  // kChoice: the accepted words
};

// Every option, in tfprof's order.
const std::vector<OptionSpec>& OptionTable();
const OptionSpec* FindOption(const std::string& name);
// The candidate closest to `word` by edit distance, if within
// `max_distance` ("" otherwise); for "did you mean" hints.
std::string ClosestWord(const std::string& word,
                        const std::vector<std::string>& candidates,
                        size_t max_distance);
// The closest option name to a misspelt one ("" if none is close).
std::string SuggestOption(const std::string& name);

// Sets one option from its text value; the error names the option.
absl::Status SetOption(const std::string& name, const std::string& value,
                       Options* opts);

// Parses shell-style options ("-max_depth 3 -select micros,bytes ...") from
// tokens[begin..] into opts.
absl::Status ParseOptionTokens(const std::vector<std::string>& tokens,
                               size_t begin, Options* opts);

// Parses "type" or "type:key=value,key=value".
absl::Status ParseOutput(const std::string& spec, OutputKind* type,
                         std::map<std::string, std::string>* options);

// Checks what cannot be checked one option at a time (regexes compile, ...).
absl::Status ValidateOptions(const Options& opts);

// Every option's name (no dash) and value as text, in OptionsToString's
// order; lists are comma-joined, -output is "type:key=value,...".
std::vector<std::pair<std::string, std::string>> OptionValues(
    const Options& opts);
// One line per option, as tfprof prints the current options.
std::string OptionsToString(const Options& opts);

tfpb::OptionsProto OptionsToProto(const Options& opts);
absl::StatusOr<Options> OptionsFromProto(const tfpb::OptionsProto& proto);

// A comma that was inside quotes on a command line; list options do not
// split on it (so a regex like 'a{1,3}' works). Tokenizers write it.
inline constexpr char kQuotedComma = '\x1f';

// Splits a comma-separated list, dropping empty items and quotes.
std::vector<std::string> SplitList(const std::string& value);
// Turns kQuotedComma back into ','.
std::string RestoreQuotedCommas(std::string s);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_OPTIONS_H_
