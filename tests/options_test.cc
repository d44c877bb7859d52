#include "profiler/views/options.h"

#include <catch2/catch.hpp>

namespace tfprof {
namespace {

TEST_CASE("Option table lists tfprof's 21 options in order, and ours") {
  const auto& t = OptionTable();
  REQUIRE(t.size() == 28);
  CHECK(t[26].name == "rank");
  CHECK(t[18].name == "device_regexes");
  CHECK(t.front().name == "max_depth");
  CHECK(t[11].name == "step");
  CHECK(t.back().name == "output");
  CHECK(t[20].name == "op_group");
  CHECK(t[20].choices == std::vector<std::string>{"framework", "hlo"});
  CHECK(OrderByValues().size() == 11);
  CHECK(SelectValues().size() == 17);
  CHECK(SelectValues()[4] == "tensor_value");
}

TEST_CASE("The option table's defaults are the Options defaults") {
  // Defaults are written twice (the struct's initializers and the table's
  // text for help and flags); this ties them together.
  Options from_table;
  for (const OptionSpec& spec : OptionTable()) {
    if (spec.default_text.empty()) continue;
    INFO(spec.name << " = " << spec.default_text);
    REQUIRE(SetOption(spec.name, spec.default_text, &from_table).ok());
  }
  CHECK(OptionsToString(from_table) == OptionsToString(Options()));
}

TEST_CASE("Shell options parse and apply") {
  Options o;
  std::vector<std::string> toks = {"-max_depth",
                                   "3",
                                   "-select",
                                   "micros,bytes,bytes",
                                   "-order_by",
                                   "micros",
                                   "-account_displayed_op_only",
                                   "-min_micros",
                                   "10"};
  REQUIRE(ParseOptionTokens(toks, 0, &o).ok());
  CHECK(o.max_depth == 3);
  CHECK(o.select == AttrSet{Attr::kBytes, Attr::kMicros});
  CHECK(o.select.names() == std::vector<std::string>{"bytes", "micros"});
  CHECK(o.order_by == Attr::kMicros);
  CHECK(o.account_displayed_op_only);
  CHECK(o.min_micros == 10);
}

TEST_CASE("A bare boolean option followed by an option means true") {
  Options o;
  REQUIRE(ParseOptionTokens({"-account_displayed_op_only"}, 0, &o).ok());
  CHECK(o.account_displayed_op_only);
  REQUIRE(ParseOptionTokens({"-account_displayed_op_only", "no"}, 0, &o).ok());
  CHECK_FALSE(o.account_displayed_op_only);
}

TEST_CASE("Bad option values are reported with the option name") {
  Options o;
  auto s = ParseOptionTokens({"-max_depth", "abc"}, 0, &o);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()).find("-max_depth") != std::string::npos);
  s = ParseOptionTokens({"-order_by", "micro"}, 0, &o);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()).find("did you mean micros") !=
        std::string::npos);
  s = ParseOptionTokens({"-select", "micros,bogus"}, 0, &o);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()).find("bogus") != std::string::npos);
  // Nothing is close to it; a swap of two letters is one edit.
  CHECK(std::string(s.message()).find("did you mean") == std::string::npos);
  s = ParseOptionTokens({"-order_by", "bogus"}, 0, &o);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()).find("did you mean") == std::string::npos);
  s = ParseOptionTokens({"-select", "mciros"}, 0, &o);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()).find("did you mean micros") !=
        std::string::npos);
  s = ParseOptionTokens({"-max_dept", "3"}, 0, &o);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()).find("did you mean -max_depth") !=
        std::string::npos);
  s = ParseOptionTokens({"-step"}, 0, &o);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()).find("needs a value") != std::string::npos);
}

TEST_CASE("Lists are split on commas with quotes stripped") {
  CHECK(SplitList("a,,'b',\"c.*\"") ==
        std::vector<std::string>{"a", "b", "c.*"});
  CHECK(SplitList("").empty());
}

TEST_CASE("Invalid regexes are rejected by validation") {
  Options o;
  o.show_name_regexes = {"a(b"};
  auto s = ValidateOptions(o);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()).find("-show_name_regexes") !=
        std::string::npos);
}

TEST_CASE("Output specs follow tfprof's syntax") {
  OutputKind type = OutputKind::kNone;
  std::map<std::string, std::string> kv;
  REQUIRE(ParseOutput("", &type, &kv).ok());
  CHECK(type == OutputKind::kStdout);
  REQUIRE(ParseOutput("file:outfile=/tmp/a=b", &type, &kv).ok());
  CHECK(type == OutputKind::kFile);
  CHECK(kv.at("outfile") == "/tmp/a=b");
  // Every row of the table parses to its own kind and back to its name.
  for (const OutputTypeSpec& t : OutputTypeTable()) {
    INFO(t.name);
    const std::string spec = t.outfile == OutputTypeSpec::kNeedsFile
                                 ? t.name + ":outfile=x"
                                 : t.name;
    REQUIRE(ParseOutput(spec, &type, &kv).ok());
    CHECK(type == t.kind);
    CHECK(OutputKindName(type) == t.name);
  }
  CHECK_FALSE(ParseOutput("bogus", &type, &kv).ok());
  CHECK_FALSE(ParseOutput("file", &type, &kv).ok());
  CHECK_FALSE(ParseOutput("file:out=x", &type, &kv).ok());
  CHECK_FALSE(ParseOutput("file:outfile", &type, &kv).ok());
  auto s = ParseOutput("bogus", &type, &kv);
  CHECK(
      std::string(s.message())
          .find(
              "csv, file, json, none, pbtxt, pprof, proto, stdout, timeline") !=
      std::string::npos);
}

TEST_CASE("OptionsToString prints one padded line per option") {
  Options o;
  const std::string s = OptionsToString(o);
  CHECK(s.find("-max_depth                  10\n") == 0);
  CHECK(s.find("-trim_name_regexes          \n") != std::string::npos);
  CHECK(s.find("-account_displayed_op_only  false\n") != std::string::npos);
  CHECK(s.find("-output                     stdout:\n") != std::string::npos);
  // tfprof's 21 lines first, in tfprof's order (scripts read the shell's
  // dump by line), then this tool's own options.
  const std::vector<std::string> tfprof = {"max_depth",
                                           "min_bytes",
                                           "min_peak_bytes",
                                           "min_residual_bytes",
                                           "min_output_bytes",
                                           "min_micros",
                                           "min_accelerator_micros",
                                           "min_cpu_micros",
                                           "min_params",
                                           "min_float_ops",
                                           "min_occurrence",
                                           "step",
                                           "order_by",
                                           "account_type_regexes",
                                           "start_name_regexes",
                                           "trim_name_regexes",
                                           "show_name_regexes",
                                           "hide_name_regexes",
                                           "account_displayed_op_only",
                                           "select",
                                           "output"};
  const auto values = OptionValues(o);
  REQUIRE(values.size() > tfprof.size());
  for (size_t i = 0; i < tfprof.size(); ++i) {
    CHECK(values[i].first == tfprof[i]);
  }
}

TEST_CASE("The float-op options: a rule by name, peaks as numbers") {
  Options o;
  CHECK(o.flops_rule == "extended");
  REQUIRE(ParseOptionTokens({"-flops_rule", "pytorch", "-peak_flops",
                             "989.4e12", "-peak_bytes_per_sec=4.8e12",
                             "-select", "accelerator_flop_rate,roofline"},
                            0, &o)
              .ok());
  CHECK(o.flops_rule == "pytorch");
  CHECK(o.peak_flops == 989.4e12);
  CHECK(o.peak_bytes_per_sec == 4.8e12);
  CHECK(o.Selected(Attr::kRoofline));
  for (const auto& bad :
       std::vector<std::vector<std::string>>{{"-flops_rule", "torch"},
                                             {"-peak_flops", "-1"},
                                             {"-peak_flops", "fast"},
                                             {"-peak_bytes_per_sec", "nan"}}) {
    INFO(bad[0] << " " << bad[1]);
    auto s = ParseOptionTokens(bad, 0, &o);
    REQUIRE_FALSE(s.ok());
    CHECK(std::string(s.message()).find(bad[0]) != std::string::npos);
  }
  // Printed and read back the same.
  Options back;
  for (const auto& [name, value] : OptionValues(o)) {
    if (name == "peak_flops" || name == "peak_bytes_per_sec" ||
        name == "flops_rule") {
      REQUIRE(SetOption(name, value, &back).ok());
    }
  }
  CHECK(back.peak_flops == o.peak_flops);
  CHECK(back.peak_bytes_per_sec == o.peak_bytes_per_sec);
  CHECK(back.flops_rule == "pytorch");
}

TEST_CASE("Options round-trip through OptionsProto") {
  Options o;
  o.max_depth = 4;
  o.select = {Attr::kParams, Attr::kBytes};
  o.output_type = OutputKind::kFile;
  o.output_options["outfile"] = "/tmp/x";
  auto back = OptionsFromProto(OptionsToProto(o));
  REQUIRE(back.ok());
  CHECK(back->max_depth == 4);
  CHECK(back->select == o.select);
  CHECK(back->output_type == OutputKind::kFile);
  CHECK(back->output_options.at("outfile") == "/tmp/x");
}

TEST_CASE("op_group takes framework or hlo, and nothing else") {
  Options o;
  REQUIRE(SetOption("op_group", "hlo", &o).ok());
  CHECK(o.op_group == OpGrouping::kHlo);
  CHECK(OptionsToString(o).find("-op_group                   hlo") !=
        std::string::npos);
  REQUIRE(SetOption("op_group", "framework", &o).ok());
  CHECK(o.op_group == OpGrouping::kFramework);
  absl::Status bad = SetOption("op_group", "opcode", &o);
  CHECK_FALSE(bad.ok());
  CHECK(std::string(bad.message()) ==
        "invalid value 'opcode' for option -op_group: expected one of "
        "framework, hlo");
}

}  // namespace
}  // namespace tfprof
