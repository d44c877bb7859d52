#include "profiler/views/options.h"

#include <algorithm>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

template <typename T>
bool Contains(const std::vector<T>& v, const T& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string Closest(const std::string& word,
                    const std::vector<std::string>& candidates) {
  // A third of the word's letters at most (one for short words): "bogus"
  // is not a misspelt "bytes".
  return ClosestWord(word, candidates, std::max<size_t>(1, word.size() / 3));
}

absl::Status BadValue(const std::string& name, const std::string& value,
                      const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid value '", value, "' for option -", name, ": ", why));
}

int64_t* IntField(const std::string& name, Options* o) {
  if (name == "max_depth") return &o->max_depth;
  if (name == "min_bytes") return &o->min_bytes;
  if (name == "min_peak_bytes") return &o->min_peak_bytes;
  if (name == "min_residual_bytes") return &o->min_residual_bytes;
  if (name == "min_output_bytes") return &o->min_output_bytes;
  if (name == "min_micros") return &o->min_micros;
  if (name == "min_accelerator_micros") return &o->min_accelerator_micros;
  if (name == "min_cpu_micros") return &o->min_cpu_micros;
  if (name == "min_params") return &o->min_params;
  if (name == "min_float_ops") return &o->min_float_ops;
  if (name == "min_occurrence") return &o->min_occurrence;
  if (name == "step") return &o->step;
  if (name == "rank") return &o->rank;
  return nullptr;
}

std::vector<std::string>* ListField(const std::string& name, Options* o) {
  if (name == "account_type_regexes") return &o->account_type_regexes;
  if (name == "start_name_regexes") return &o->start_name_regexes;
  if (name == "trim_name_regexes") return &o->trim_name_regexes;
  if (name == "show_name_regexes") return &o->show_name_regexes;
  if (name == "hide_name_regexes") return &o->hide_name_regexes;
  if (name == "device_regexes") return &o->device_regexes;
  return nullptr;
}

const OutputTypeSpec* FindOutputType(const std::string& name) {
  for (const OutputTypeSpec& t : OutputTypeTable()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// "Where the result goes: stdout, none, file:outfile=PATH, json[:outfile=
// PATH], ..." from the table.
std::string OutputHelp() {
  std::vector<std::string> forms;
  for (const OutputTypeSpec& t : OutputTypeTable()) {
    forms.push_back(t.outfile == OutputTypeSpec::kNoFile ? t.name
                    : t.outfile == OutputTypeSpec::kOptionalFile
                        ? t.name + "[:outfile=PATH]"
                        : t.name + ":outfile=PATH");
  }
  return absl::StrCat("Where the result goes: ", absl::StrJoin(forms, ", "),
                      ".");
}

}  // namespace

std::string ClosestWord(const std::string& word,
                        const std::vector<std::string>& candidates,
                        size_t max_distance) {
  std::string best;
  size_t best_d = max_distance + 1;
  // Rows i-2, i-1 and i of the distance table.
  std::vector<size_t> before, prev, cur;
  for (const std::string& c : candidates) {
    // Edit distance between word and c, two neighbours swapped counting
    // as one edit.
    before.assign(c.size() + 1, 0);
    prev.resize(c.size() + 1);
    cur.resize(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1,
                           prev[j - 1] + (word[i - 1] == c[j - 1] ? 0 : 1)});
        if (i > 1 && j > 1 && word[i - 1] == c[j - 2] &&
            word[i - 2] == c[j - 1]) {
          cur[j] = std::min(cur[j], before[j - 2] + 1);
        }
      }
      std::swap(before, prev);
      std::swap(prev, cur);
    }
    if (prev[c.size()] < best_d) {
      best_d = prev[c.size()];
      best = c;
    }
  }
  return best;
}

const std::vector<std::string>& FlopsRules() {
  static const std::vector<std::string> v = {"extended", "pytorch"};
  return v;
}

const std::vector<std::string>& OrderByValues() {
  static const std::vector<std::string> v = AttrNames(OrderByAttrs());
  return v;
}

const std::vector<std::string>& SelectValues() {
  static const std::vector<std::string> v = AttrNames(SelectAttrs());
  return v;
}

const std::vector<OutputTypeSpec>& OutputTypeTable() {
  using T = OutputTypeSpec;
  static const std::vector<OutputTypeSpec> table = {
      {"stdout", T::kNoFile, OutputKind::kStdout},
      {"none", T::kNoFile, OutputKind::kNone},
      {"file", T::kNeedsFile, OutputKind::kFile},
      {"json", T::kOptionalFile, OutputKind::kJson},
      {"csv", T::kOptionalFile, OutputKind::kCsv},
      {"pbtxt", T::kOptionalFile, OutputKind::kPbtxt},
      {"proto", T::kNeedsFile, OutputKind::kProto},
      {"timeline", T::kNeedsFile, OutputKind::kTimeline},
      {"pprof", T::kNeedsFile, OutputKind::kPprof},
  };
  return table;
}

const std::string& OutputKindName(OutputKind kind) {
  for (const OutputTypeSpec& t : OutputTypeTable()) {
    if (t.kind == kind) return t.name;
  }
  return OutputTypeTable().front().name;  // every kind has a row
}

const std::vector<std::string>& OutputTypes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const OutputTypeSpec& t : OutputTypeTable()) v.push_back(t.name);
    std::sort(v.begin(), v.end());
    return v;
  }();
  return names;
}

const std::vector<OptionSpec>& OptionTable() {
  using K = OptionKind;
  static const std::vector<OptionSpec> table = {
      {"max_depth", K::kInt, "10",
       "Deepest level shown. Tree views count the root as depth 1; the op "
       "view shows at most max_depth+1 rows."},
      {"min_bytes", K::kInt, "0",
       "Hide nodes whose total requested bytes are below this."},
      {"min_peak_bytes", K::kInt, "0",
       "Hide nodes whose total peak bytes are below this."},
      {"min_residual_bytes", K::kInt, "0",
       "Hide nodes whose total residual (not freed) bytes are below this."},
      {"min_output_bytes", K::kInt, "0",
       "Hide nodes whose total output bytes are below this."},
      {"min_micros", K::kInt, "0",
       "Hide nodes whose total time (accelerator + cpu) is below this, in "
       "microseconds."},
      {"min_accelerator_micros", K::kInt, "0",
       "Hide nodes whose total accelerator time is below this."},
      {"min_cpu_micros", K::kInt, "0",
       "Hide nodes whose total cpu time is below this."},
      {"min_params", K::kInt, "0",
       "Hide nodes with fewer parameters (own count in scope/graph, total in "
       "op/code)."},
      {"min_float_ops", K::kInt, "0",
       "Hide nodes with fewer float operations (own count in scope/graph, "
       "total in op/code)."},
      {"min_occurrence", K::kInt, "0",
       "Hide nodes that ran fewer times (scope/graph) or op types with fewer "
       "graph nodes (op view)."},
      {"step", K::kInt, "-1",
       "Which step's statistics to use; -1 averages over the steps each node "
       "ran in (for a trace, over all of its steps)."},
      {"order_by", K::kOrderBy, "name",
       "Sibling order: name (ascending) or a statistic (descending): " +
           absl::StrJoin(OrderByValues(), ", ") + "."},
      {"account_type_regexes", K::kList, ".*",
       "Comma-separated regexes; nodes with an op type matching one are "
       "accounted (their stats add up into their parents)."},
      {"start_name_regexes", K::kList, ".*",
       "Comma-separated regexes; the display starts at the first nodes whose "
       "name matches one."},
      {"trim_name_regexes", K::kList, "",
       "Comma-separated regexes; nodes matching one are not descended into."},
      {"show_name_regexes", K::kList, ".*",
       "Comma-separated regexes; only nodes whose name matches one are "
       "shown."},
      {"hide_name_regexes", K::kList, "",
       "Comma-separated regexes; nodes whose name matches one are hidden."},
      {"device_regexes", K::kList, ".*",
       "Comma-separated regexes; only executions on a device (lower case, "
       "e.g. .*gpu:3.*) matching one count: time, runs, and memory of nodes "
       "placed there. Time counts on placements (.../gpu:0: CPU time) and a "
       "GPU's .../stream:all (accelerator time); a note says when the "
       "regexes match only devices that count none (single streams, copy "
       "lanes: the kernel view lists a stream's kernels) or no device."},
      {"show_kernels", K::kBool, "false",
       "Scope, graph and code views: list under each op the accelerator "
       "kernels it launched (name, launches, time) where the input records "
       "them."},
      {"op_group",
       K::kChoice,
       "framework",
       "Op view: group nodes by framework op type (framework) or, for nodes "
       "of XLA programs, by HLO category: opcode, fusion kind or custom-call "
       "target (hlo).",
       {"framework", "hlo"}},
      {"flops_rule",
       K::kChoice,
       "extended",
       "Which float ops nodes carry (PyTorch traces): extended (each "
       "computation counted once, on its innermost record, plus attention, "
       "convolution backward, linear and matmul) or pytorch (PyTorch's "
       "with_flops set exactly, nested autocast records counted twice, as "
       "key_averages() does). Run figures (flops_per_step, MFU) always use "
       "extended.",
       {"extended", "pytorch"}},
      {"peak_flops", K::kNumber, "0",
       "One accelerator's peak FLOP/s for MFU and rooflines (e.g. 989.4e12), "
       "instead of the peak table's row for the GPU; 0: the table's."},
      {"peak_bytes_per_sec", K::kNumber, "0",
       "One accelerator's memory bandwidth in bytes/s for rooflines (e.g. "
       "4.8e12), instead of the peak table's; 0: the table's."},
      {"account_displayed_op_only", K::kBool, "false",
       "If true, totals count only the nodes that are displayed."},
      {"select", K::kSelect, "micros",
       "Comma-separated attributes to show: " +
           absl::StrJoin(SelectValues(), ", ") + "."},
      {"rank", K::kInt, "-1",
       "With the traces of several ranks: read rank N's files only (-1: "
       "every rank, views show the mean per rank, steps combined)."},
      {"output", K::kOutput, "stdout", OutputHelp()},
  };
  return table;
}

const OptionSpec* FindOption(const std::string& name) {
  for (const OptionSpec& s : OptionTable()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string SuggestOption(const std::string& name) {
  std::vector<std::string> names;
  for (const OptionSpec& s : OptionTable()) names.push_back(s.name);
  return Closest(name, names);
}

std::string RestoreQuotedCommas(std::string s) {
  std::replace(s.begin(), s.end(), kQuotedComma, ',');
  return s;
}

std::vector<std::string> SplitList(const std::string& value) {
  std::vector<std::string> out;
  for (absl::string_view piece :
       absl::StrSplit(value, ',', absl::SkipEmpty())) {
    std::string s = RestoreQuotedCommas(std::string(piece));
    // Quotes around items are dropped, as tfprof does.
    while (!s.empty() && (s.front() == '\'' || s.front() == '"')) s.erase(0, 1);
    while (!s.empty() && (s.back() == '\'' || s.back() == '"')) s.pop_back();
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

absl::Status ParseOutput(const std::string& spec, OutputKind* type,
                         std::map<std::string, std::string>* options) {
  options->clear();
  if (spec.empty()) {
    *type = OutputKind::kStdout;
    return absl::OkStatus();
  }
  const size_t colon = spec.find(':');
  std::string t = spec.substr(0, colon);
  const OutputTypeSpec* type_spec = FindOutputType(t);
  if (type_spec == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("-output: unknown type '", t,
                     "' (valid: ", absl::StrJoin(OutputTypes(), ", "), ")"));
  }
  static const std::vector<std::string> kOutfile = {"outfile"};
  static const std::vector<std::string> kNone;
  const std::vector<std::string>& keys =
      type_spec->outfile == OutputTypeSpec::kNoFile ? kNone : kOutfile;
  if (colon != std::string::npos) {
    for (absl::string_view kv :
         absl::StrSplit(spec.substr(colon + 1), ',', absl::SkipEmpty())) {
      const size_t eq = kv.find('=');
      if (eq == absl::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("-output: expected key=value after '", t, ":', got '",
                         std::string(kv), "'"));
      }
      std::string key(kv.substr(0, eq));
      if (!Contains(keys, key)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "-output: unknown option '", key, "' for type '", t, "' (valid: ",
            keys.empty() ? "none" : absl::StrJoin(keys, ", "), ")"));
      }
      (*options)[key] = RestoreQuotedCommas(std::string(kv.substr(eq + 1)));
    }
  }
  for (const std::string& key : keys) {
    if (type_spec->outfile != OutputTypeSpec::kNeedsFile) break;
    auto it = options->find(key);
    if (it == options->end() || it->second.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("-output: type '", t, "' needs ", key,
                       "=PATH, e.g. -output ", t, ":", key, "=/tmp/out"));
    }
  }
  *type = type_spec->kind;
  return absl::OkStatus();
}

absl::Status SetOption(const std::string& name, const std::string& raw_value,
                       Options* opts) {
  const OptionSpec* spec = FindOption(name);
  // Commas that were quoted on the command line separate nothing.
  const std::string value =
      spec != nullptr && (spec->kind == OptionKind::kList ||
                          spec->kind == OptionKind::kOutput)
          ? raw_value
          : RestoreQuotedCommas(raw_value);
  if (spec == nullptr) {
    std::string hint = SuggestOption(name);
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown option -", name,
        hint.empty() ? "" : absl::StrCat(" (did you mean -", hint, "?)")));
  }
  switch (spec->kind) {
    case OptionKind::kInt: {
      int64_t v;
      if (!absl::SimpleAtoi(value, &v)) {
        return BadValue(name, value, "expected an integer");
      }
      if (name == "max_depth" && v < 0) {
        return BadValue(name, value, "must be >= 0");
      }
      if (name == "step" && v < -1) {
        return BadValue(name, value, "must be -1 (average) or a step number");
      }
      if (name == "rank" && v < -1) {
        return BadValue(name, value, "must be -1 (every rank) or a rank");
      }
      *IntField(name, opts) = v;
      return absl::OkStatus();
    }
    case OptionKind::kList:
      *ListField(name, opts) = SplitList(value);
      return absl::OkStatus();
    case OptionKind::kBool: {
      bool* field = name == "show_kernels" ? &opts->show_kernels
                                           : &opts->account_displayed_op_only;
      std::string v = absl::AsciiStrToLower(value);
      if (v == "true" || v == "t" || v == "yes" || v == "y" || v == "1") {
        *field = true;
      } else if (v == "false" || v == "f" || v == "no" || v == "n" ||
                 v == "0") {
        *field = false;
      } else {
        return BadValue(name, value, "expected true or false");
      }
      return absl::OkStatus();
    }
    case OptionKind::kOrderBy:
      if (!Contains(OrderByValues(), value)) {
        std::string hint = Closest(value, OrderByValues());
        return BadValue(
            name, value,
            absl::StrCat("expected one of ",
                         absl::StrJoin(OrderByValues(), ", "),
                         hint.empty() ? "" : " (did you mean " + hint + "?)"));
      }
      opts->order_by = *ParseAttr(value);
      return absl::OkStatus();
    case OptionKind::kSelect: {
      AttrSet sel;
      for (const std::string& s : SplitList(value)) {
        if (!Contains(SelectValues(), s)) {
          std::string hint = Closest(s, SelectValues());
          return BadValue(
              name, value,
              absl::StrCat("unknown attribute '", s, "'",
                           hint.empty() ? "" : " (did you mean " + hint + "?)",
                           "; valid: ", absl::StrJoin(SelectValues(), ", ")));
        }
        sel.insert(*ParseAttr(s));
      }
      opts->select = sel;
      return absl::OkStatus();
    }
    case OptionKind::kOutput:
      return ParseOutput(value, &opts->output_type, &opts->output_options);
    case OptionKind::kChoice:
      if (!Contains(spec->choices, value)) {
        return BadValue(name, value,
                        absl::StrCat("expected one of ",
                                     absl::StrJoin(spec->choices, ", ")));
      }
      if (name == "op_group") {
        opts->op_group =
            value == "hlo" ? OpGrouping::kHlo : OpGrouping::kFramework;
      } else {
        opts->flops_rule = value;
      }
      return absl::OkStatus();
    case OptionKind::kNumber: {
      double v;
      if (!absl::SimpleAtod(value, &v) || !(v >= 0) || !(v < 1e30)) {
        return BadValue(name, value, "expected a number >= 0");
      }
      (name == "peak_flops" ? opts->peak_flops : opts->peak_bytes_per_sec) = v;
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::Status ParseOptionTokens(const std::vector<std::string>& tokens,
                               size_t begin, Options* opts) {
  for (size_t i = begin; i < tokens.size(); ++i) {
    const std::string& tok = tokens[i];
    if (tok.size() < 2 || tok[0] != '-') {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected an option such as -max_depth, got '", tok, "'"));
    }
    std::string name = tok.substr(tok[1] == '-' ? 2 : 1);
    std::string value;
    bool has_inline = false;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {  // also accept -name=value
      value = name.substr(eq + 1);
      name.resize(eq);
      has_inline = true;
    }
    const OptionSpec* spec = FindOption(name);
    if (spec == nullptr) return SetOption(name, "", opts);  // error + hint
    if (!has_inline) {
      if (spec->kind == OptionKind::kBool &&
          (i + 1 >= tokens.size() || absl::StartsWith(tokens[i + 1], "-"))) {
        value = "true";  // a bare flag means true
      } else if (i + 1 >= tokens.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("option -", name, " needs a value"));
      } else {
        value = tokens[++i];
      }
    }
    absl::Status s = SetOption(name, value, opts);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ValidateOptions(const Options& opts) {
  const std::pair<const char*, const std::vector<std::string>*> lists[] = {
      {"account_type_regexes", &opts.account_type_regexes},
      {"start_name_regexes", &opts.start_name_regexes},
      {"trim_name_regexes", &opts.trim_name_regexes},
      {"show_name_regexes", &opts.show_name_regexes},
      {"hide_name_regexes", &opts.hide_name_regexes},
      {"device_regexes", &opts.device_regexes},
  };
  for (const auto& [name, list] : lists) {
    for (const std::string& re : *list) {
      RE2 compiled(re, RE2::Quiet);
      if (!compiled.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "invalid regex '", re, "' in -", name, ": ", compiled.error()));
      }
    }
  }
  if (!Contains(OrderByAttrs(), opts.order_by)) {
    return BadValue("order_by", AttrName(opts.order_by), "unknown order");
  }
  if (!Contains(FlopsRules(), opts.flops_rule)) {
    return BadValue("flops_rule", opts.flops_rule, "unknown rule");
  }
  if (opts.select.contains(Attr::kName)) {
    return BadValue("select", "name", "unknown attribute");
  }
  return absl::OkStatus();
}

std::vector<std::pair<std::string, std::string>> OptionValues(
    const Options& o) {
  std::vector<std::pair<std::string, std::string>> v;
  auto num = [&v](const char* name, int64_t value) {
    v.emplace_back(name, absl::StrCat(value));
  };
  auto list = [&v](const char* name, const auto& values) {
    v.emplace_back(name, absl::StrJoin(values, ","));
  };
  auto flag = [&v](const char* name, bool value) {
    v.emplace_back(name, value ? "true" : "false");
  };
  num("max_depth", o.max_depth);
  num("min_bytes", o.min_bytes);
  num("min_peak_bytes", o.min_peak_bytes);
  num("min_residual_bytes", o.min_residual_bytes);
  num("min_output_bytes", o.min_output_bytes);
  num("min_micros", o.min_micros);
  num("min_accelerator_micros", o.min_accelerator_micros);
  num("min_cpu_micros", o.min_cpu_micros);
  num("min_params", o.min_params);
  num("min_float_ops", o.min_float_ops);
  num("min_occurrence", o.min_occurrence);
  num("step", o.step);
  v.emplace_back("order_by", AttrName(o.order_by));
  list("account_type_regexes", o.account_type_regexes);
  list("start_name_regexes", o.start_name_regexes);
  list("trim_name_regexes", o.trim_name_regexes);
  list("show_name_regexes", o.show_name_regexes);
  list("hide_name_regexes", o.hide_name_regexes);
  flag("account_displayed_op_only", o.account_displayed_op_only);
  list("select", o.select.names());
  std::vector<std::string> kvs;
  for (const auto& [k, value] : o.output_options)
    kvs.push_back(k + "=" + value);
  v.emplace_back("output", absl::StrCat(OutputKindName(o.output_type), ":",
                                        absl::StrJoin(kvs, ",")));
  // (tfprof's 21 lines above keep their places; ours follow.)
  list("device_regexes", o.device_regexes);
  flag("show_kernels", o.show_kernels);
  v.emplace_back("op_group",
                 o.op_group == OpGrouping::kHlo ? "hlo" : "framework");
  v.emplace_back("flops_rule", o.flops_rule);
  v.emplace_back("peak_flops", absl::StrCat(o.peak_flops));
  v.emplace_back("peak_bytes_per_sec", absl::StrCat(o.peak_bytes_per_sec));
  return v;
}

std::string OptionsToString(const Options& o) {
  std::string s;
  for (const auto& [name, value] : OptionValues(o)) {
    absl::StrAppendFormat(&s, "%-28s%s\n", "-" + name, value);
  }
  return s;
}

tfpb::OptionsProto OptionsToProto(const Options& o) {
  tfpb::OptionsProto p;
  p.set_max_depth(o.max_depth);
  p.set_min_bytes(o.min_bytes);
  p.set_min_peak_bytes(o.min_peak_bytes);
  p.set_min_residual_bytes(o.min_residual_bytes);
  p.set_min_output_bytes(o.min_output_bytes);
  p.set_min_micros(o.min_micros);
  p.set_min_accelerator_micros(o.min_accelerator_micros);
  p.set_min_cpu_micros(o.min_cpu_micros);
  p.set_min_params(o.min_params);
  p.set_min_float_ops(o.min_float_ops);
  p.set_min_occurrence(o.min_occurrence);
  p.set_step(o.step);
  p.set_order_by(AttrName(o.order_by));
  for (const auto& r : o.account_type_regexes) p.add_account_type_regexes(r);
  for (const auto& r : o.start_name_regexes) p.add_start_name_regexes(r);
  for (const auto& r : o.trim_name_regexes) p.add_trim_name_regexes(r);
  for (const auto& r : o.show_name_regexes) p.add_show_name_regexes(r);
  for (const auto& r : o.hide_name_regexes) p.add_hide_name_regexes(r);
  for (const auto& r : o.device_regexes) p.add_device_regexes(r);
  p.set_account_displayed_op_only(o.account_displayed_op_only);
  for (const std::string& s : o.select.names()) p.add_select(s);
  std::string out = OutputKindName(o.output_type);
  std::vector<std::string> kvs;
  for (const auto& [k, v] : o.output_options) kvs.push_back(k + "=" + v);
  if (!kvs.empty()) out += ":" + absl::StrJoin(kvs, ",");
  p.set_output(out);
  return p;
}

absl::StatusOr<Options> OptionsFromProto(const tfpb::OptionsProto& p) {
  Options o;
  o.max_depth = p.max_depth();
  o.min_bytes = p.min_bytes();
  o.min_peak_bytes = p.min_peak_bytes();
  o.min_residual_bytes = p.min_residual_bytes();
  o.min_output_bytes = p.min_output_bytes();
  o.min_micros = p.min_micros();
  o.min_accelerator_micros = p.min_accelerator_micros();
  o.min_cpu_micros = p.min_cpu_micros();
  o.min_params = p.min_params();
  o.min_float_ops = p.min_float_ops();
  o.min_occurrence = p.min_occurrence();
  o.step = p.step();
  if (!p.order_by().empty()) {
    absl::Status order = SetOption("order_by", p.order_by(), &o);
    if (!order.ok()) return order;
  }
  o.account_type_regexes.assign(p.account_type_regexes().begin(),
                                p.account_type_regexes().end());
  o.start_name_regexes.assign(p.start_name_regexes().begin(),
                              p.start_name_regexes().end());
  o.trim_name_regexes.assign(p.trim_name_regexes().begin(),
                             p.trim_name_regexes().end());
  o.show_name_regexes.assign(p.show_name_regexes().begin(),
                             p.show_name_regexes().end());
  o.hide_name_regexes.assign(p.hide_name_regexes().begin(),
                             p.hide_name_regexes().end());
  if (p.device_regexes_size() > 0) {
    o.device_regexes.assign(p.device_regexes().begin(),
                            p.device_regexes().end());
  }
  o.account_displayed_op_only = p.account_displayed_op_only();
  o.select.clear();
  for (const std::string& name : p.select()) {
    std::optional<Attr> a = ParseAttr(name);
    if (!a.has_value() || *a == Attr::kName) {
      return BadValue("select", name, "unknown attribute");
    }
    o.select.insert(*a);
  }
  absl::Status s = ParseOutput(p.output(), &o.output_type, &o.output_options);
  if (!s.ok()) return s;
  s = ValidateOptions(o);
  if (!s.ok()) return s;
  return o;
}

}  // namespace tfprof
