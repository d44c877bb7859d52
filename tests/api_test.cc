// The C++ API: ProfileOptionBuilder presets, Profiler, ProfilerHook and
// ProfileContext.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <sstream>

#include "profiler/advise/advisor.h"
#include "profiler/load/loader.h"
#include "profiler/tfprof.h"
#include "profiler/views/options.h"
#include "tests/corpus_util.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

std::vector<std::string> List(
    const google::protobuf::RepeatedPtrField<std::string>& f) {
  return std::vector<std::string>(f.begin(), f.end());
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

TEST_CASE(
    "ProfileOptionBuilder defaults and presets have TensorFlow's values") {
  auto d = ProfileOptionBuilder().Build();
  REQUIRE(d.ok());
  CHECK(d->max_depth() == 100);
  CHECK(d->order_by() == "name");
  CHECK(List(d->account_type_regexes()) == std::vector<std::string>{".*"});
  CHECK(List(d->start_name_regexes()) == std::vector<std::string>{".*"});
  CHECK(List(d->show_name_regexes()) == std::vector<std::string>{".*"});
  CHECK(d->trim_name_regexes().empty());
  CHECK(d->hide_name_regexes().empty());
  CHECK(List(d->select()) == std::vector<std::string>{"micros"});
  CHECK(d->step() == -1);
  CHECK(d->output() == "stdout");

  auto tv = ProfileOptionBuilder::TrainableVariablesParameter();
  CHECK(tv.max_depth() == 10000);
  CHECK(List(tv.account_type_regexes()) ==
        std::vector<std::string>{"_trainable_variables"});
  CHECK(tv.account_displayed_op_only());
  CHECK(List(tv.select()) == std::vector<std::string>{"params"});
  CHECK(tv.order_by() == "name");

  auto fo = ProfileOptionBuilder::FloatOperation();
  CHECK(fo.max_depth() == 10000);
  CHECK(fo.min_float_ops() == 1);
  CHECK(fo.order_by() == "float_ops");
  CHECK(fo.account_displayed_op_only());
  CHECK(List(fo.select()) == std::vector<std::string>{"float_ops"});

  auto tm = ProfileOptionBuilder::TimeAndMemory();
  CHECK(tm.max_depth() == 10000);
  CHECK(tm.min_micros() == 1);
  CHECK(tm.min_bytes() == 1);
  CHECK(tm.min_accelerator_micros() == 0);
  CHECK(tm.order_by() == "micros");
  CHECK(tm.account_displayed_op_only());
  CHECK(List(tm.select()) == std::vector<std::string>{"micros", "bytes"});
  CHECK(ProfileOptionBuilder::TimeAndMemory(5, 6, 7, 8, 9, 10, 11)
            .min_output_bytes() == 11);
}

TEST_CASE("ProfileOptionBuilder methods chain and are validated") {
  auto o = ProfileOptionBuilder()
               .WithMaxDepth(3)
               .WithMinMemory(1, 2, 3, 4)
               .WithMinExecutionTime(5, 6, 7)
               .WithMinParameters(8)
               .WithMinOccurrence(9)
               .WithMinFloatOperations(10)
               .WithAccountedTypes({"MatMul"})
               .WithNodeNames(std::nullopt, std::vector<std::string>{"a.*"})
               .AccountDisplayedOpOnly(true)
               .WithFileOutput("/tmp/x")
               .OrderBy("bytes")
               .Select({"params", "bytes", "params"})
               .WithStep(2)
               .Build();
  REQUIRE(o.ok());
  CHECK(o->max_depth() == 3);
  CHECK(o->min_output_bytes() == 4);
  CHECK(o->min_cpu_micros() == 7);
  CHECK(o->min_float_ops() == 10);
  CHECK(List(o->show_name_regexes()) == std::vector<std::string>{"a.*"});
  CHECK(List(o->start_name_regexes()) == std::vector<std::string>{".*"});
  CHECK(o->output() == "file:outfile=/tmp/x");
  CHECK(List(o->select()) == std::vector<std::string>{"bytes", "params"});
  CHECK_FALSE(ProfileOptionBuilder().OrderBy("nonsense").Build().ok());
  CHECK_FALSE(ProfileOptionBuilder().Select({"nonsense"}).Build().ok());
  CHECK_FALSE(ProfileOptionBuilder()
                  .WithNodeNames(std::vector<std::string>{"a(("})
                  .Build()
                  .ok());
  CHECK(ProfileOptionBuilder().WithPprofOutput("/tmp/p").Build().ok());
  CHECK(ProfileOptionBuilder().WithTimelineOutput("/tmp/t").Build().ok());
}

TEST_CASE("Profiler: graph + steps + op log, the four views, save and load") {
  tfcore::GraphDef graph;
  REQUIRE(ReadProtoFile(testing::CorpusFile("tf-testdata/current/graph.pbtxt"),
                        true, &graph)
              .ok());
  tfpb::OpLogProto op_log;
  REQUIRE(ReadProtoFile(testing::CorpusFile("tf-testdata/current/tfprof_log"),
                        false, &op_log)
              .ok());
  tfcore::RunMetadata run_meta;
  REQUIRE(ReadProtoFile(testing::CorpusFile("tf-testdata/current/run_meta"),
                        false, &run_meta)
              .ok());
  Profiler profiler(graph, &op_log);
  auto coverage = profiler.AddStep(0, run_meta);
  REQUIRE(coverage.ok());
  CHECK(*coverage > 0.1);
  CHECK_FALSE(profiler.AddStep(1, tfcore::RunMetadata()).ok());

  std::ostringstream out;
  profiler.set_output_stream(&out);
  auto params = profiler.ProfileNameScope(
      ProfileOptionBuilder::TrainableVariablesParameter());
  REQUIRE(params.ok());
  CHECK(params->total_parameters() == 451);
  CHECK(params->children_size() == 3);
  CHECK(out.str().find("_TFProfRoot (--/451 params)") != std::string::npos);

  auto quiet = ProfileOptionBuilder().WithEmptyOutput().OrderBy("micros");
  auto ops = profiler.ProfileOperations(*quiet.Build());
  REQUIRE(ops.ok());
  REQUIRE(ops->children_size() == 1);
  CHECK(ops->children(0).name() == "Conv2D");
  auto graph_view = profiler.ProfileGraph(*quiet.Build());
  REQUIRE(graph_view.ok());
  CHECK(graph_view->total_exec_micros() == 4945);
  CHECK_FALSE(profiler.ProfilePython(*quiet.Build()).ok());  // no call stacks

  auto advice = profiler.Advise(DefaultAdvisorOptions());
  REQUIRE(advice.ok());
  CHECK(advice->checkers().size() == 3);

  // A second profiler in the same process is independent.
  Profiler other;
  CHECK(other.model().size() == 0);

  const std::string dir = testing::TempDir();
  REQUIRE(profiler.WriteProfile(dir + "/profile").ok());
  auto loaded = Profiler::FromFile(dir + "/profile");
  REQUIRE(loaded.ok());
  (*loaded)->set_output_stream(&out);
  auto again = (*loaded)->ProfileNameScope(
      ProfileOptionBuilder::TrainableVariablesParameter());
  REQUIRE(again.ok());
  CHECK(again->SerializeAsString() == params->SerializeAsString());
}

TEST_CASE("Profiler::FromTraces loads a PyTorch trace") {
  auto p = Profiler::FromTraces({testing::CorpusFile(
      "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz")});
  REQUIRE(p.ok());
  std::ostringstream out;
  (*p)->set_output_stream(&out);
  ProfileOptionBuilder b;
  b.WithEmptyOutput().OrderBy("micros");
  auto ops = (*p)->ProfileOperations(*b.Build());
  REQUIRE(ops.ok());
  CHECK(ops->total_accelerator_exec_micros() > 0);
  CHECK((*p)->model().steps().size() == 6);
  CHECK_FALSE(Profiler::FromTraces({}).ok());
  CHECK_FALSE(Profiler::FromTraces({"/no/such/trace.json"}).ok());
}

TEST_CASE("Profiler::Diff compares with a base run") {
  const std::string runs = testing::CorpusFile("shiyudian-resnet-tf-dist");
  auto current = Profiler::FromFile(runs + "/profile_100");
  auto base = Profiler::FromFile(runs + "/profile_0");
  REQUIRE(current.ok());
  REQUIRE(base.ok());
  std::ostringstream sink;
  (*current)->set_output_stream(&sink);
  (*base)->set_output_stream(&sink);
  tfpb::OptionsProto o = *ProfileOptionBuilder().WithEmptyOutput().Build();
  CHECK_FALSE((*current)->Diff("scope", o).ok());  // no base yet
  // The totals of each side's own scope view.
  const int64_t base_total = (*base)->ProfileNameScope(o)->total_exec_micros();
  const int64_t current_total =
      (*current)->ProfileNameScope(o)->total_exec_micros();
  (*current)->SetBase(std::move(*base));
  CHECK((*current)->has_base());
  absl::StatusOr<DiffReport> d = (*current)->Diff("scope", o);
  REQUIRE(d.ok());
  CHECK(d->view == "scope");
  CHECK(d->attribute == "micros");
  REQUIRE(d->rows.size() > 10);
  // The root first, with each side's totals.
  CHECK(d->rows[0].depth == 0);
  CHECK(d->rows[0].base_value == base_total);
  CHECK(d->rows[0].current_value == current_total);
  int children = 0;
  for (const DiffRow& r : d->rows) children += r.depth == 1;
  CHECK(children > 10);
  CHECK(d->json.find("\"verdict\"") != std::string::npos);
  CHECK_FALSE((*current)->Diff("nosuch", o).ok());
  // The diff command's own options, as words.
  CHECK((*current)->Diff("scope", o, {"-min_change", "5%,10us"}).ok());
  CHECK_FALSE((*current)->Diff("scope", o, {"-min_change"}).ok());
  CHECK_FALSE((*current)->Diff("scope", o, {"-nosuch", "1"}).ok());
}

TEST_CASE("ProfilerHook: exactly one trigger, first run never traced") {
  CHECK_FALSE(ProfilerHook::Create(std::nullopt, std::nullopt, "/tmp").ok());
  CHECK_FALSE(ProfilerHook::Create(2, 1.0, "/tmp").ok());
  CHECK_FALSE(ProfilerHook::Create(0, std::nullopt, "/tmp").ok());

  tfcore::RunMetadata rm;
  REQUIRE(
      ReadProtoFile(testing::CorpusFile(
                        "yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt"),
                    true, &rm)
          .ok());
  const std::string dir = testing::TempDir();
  auto hook = ProfilerHook::Create(2, std::nullopt, dir);
  REQUIRE(hook.ok());
  std::vector<std::string> written;
  for (int64_t global_step = 0; global_step < 7; ++global_step) {
    const bool trace = hook->BeforeRun();
    auto path = hook->AfterRun(global_step, rm);
    REQUIRE(path.ok());
    CHECK(path->empty() == !trace);
    if (!path->empty()) written.push_back(*path);
  }
  CHECK(written == std::vector<std::string>{dir + "/timeline-2.json",
                                            dir + "/timeline-4.json",
                                            dir + "/timeline-6.json"});
  CHECK(testing::ReadFile(written[0]).find("\"traceEvents\"") !=
        std::string::npos);

  double now = 0;
  auto timed = ProfilerHook::Create(std::nullopt, 10.0, dir, true, false,
                                    [&now] { return now; });
  REQUIRE(timed.ok());
  CHECK_FALSE(timed->BeforeRun());  // first run
  REQUIRE(timed->AfterRun(100, rm).ok());
  now = 5;
  CHECK_FALSE(timed->BeforeRun());
  REQUIRE(timed->AfterRun(101, rm).ok());
  now = 11;
  CHECK(timed->BeforeRun());
  auto p = timed->AfterRun(102, rm);
  REQUIRE(p.ok());
  CHECK(*p == dir + "/timeline-103.json");
}

TEST_CASE("ProfileContext: traced steps, dumps and auto-profiling") {
  tfcore::GraphDef graph;
  REQUIRE(ReadProtoFile(testing::CorpusFile("tf-testdata/current/graph.pbtxt"),
                        true, &graph)
              .ok());
  tfcore::RunMetadata rm;
  REQUIRE(ReadProtoFile(testing::CorpusFile("tf-testdata/current/run_meta"),
                        false, &rm)
              .ok());
  const std::string dir = testing::TempDir();
  ProfileContext ctx(dir, std::set<int64_t>{3, 5}, std::set<int64_t>{5});
  ctx.AddGraph(graph);
  REQUIRE(ctx.AddAutoProfiling(
                 "op", *ProfileOptionBuilder().WithEmptyOutput().Build(), {5})
              .ok());
  CHECK_FALSE(ctx.AddAutoProfiling("bogus", tfpb::OptionsProto(), {1}).ok());
  std::vector<int64_t> traced;
  for (int64_t step = 0; step < 8; ++step) {
    const bool trace = ctx.ShouldTrace(step, {"train_op"});
    if (trace) traced.push_back(step);
    REQUIRE(ctx.AfterRun(step, trace ? &rm : nullptr).ok());
  }
  CHECK(traced == std::vector<int64_t>{3, 5});
  CHECK(ctx.traced_steps() == 2);
  CHECK(Exists(dir + "/profile_5"));
  CHECK_FALSE(Exists(dir + "/profile_3"));
  CHECK(ctx.GetProfiles("op").count(5) == 1);
  // The dumped profile opens with --profile_path.
  InputPaths in;
  in.profile_path = dir + "/profile_5";
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  CHECK((*loaded)->model.steps() == std::set<int64_t>{3, 5});

  // The automatic policy: nothing during warm-up, then new fetch sets.
  ProfileContext automatic(dir);
  automatic.AddGraph(graph);
  int early = 0;
  for (int64_t step = 0; step < ProfileContext::kWarmupSteps; ++step) {
    early += automatic.ShouldTrace(step, {"a"});
  }
  CHECK(early == 0);
  CHECK(automatic.ShouldTrace(10, {"b", "a"}));
  CHECK(automatic.ShouldTrace(11, {"c"}));
  automatic.TraceNextStep();
  CHECK(automatic.ShouldTrace(12, {"c"}));
}

TEST_CASE("Every -output type of the option table writes its output") {
  auto profiler =
      Profiler::FromFile(testing::SourceDir() + "/testdata/sample/profile");
  REQUIRE(profiler.ok());
  const std::string dir = testing::TempDir();
  for (const OutputTypeSpec& type : OutputTypeTable()) {
    INFO(type.name);
    std::ostringstream out;
    (*profiler)->set_output_stream(&out);
    const std::string file = dir + "/out." + type.name;
    tfpb::OptionsProto opts = *ProfileOptionBuilder().Build();
    opts.set_output(type.outfile == OutputTypeSpec::kNoFile
                        ? type.name
                        : type.name + ":outfile=" + file);
    REQUIRE((*profiler)->ProfileNameScope(opts).ok());
    if (type.outfile == OutputTypeSpec::kNoFile) {
      CHECK(out.str().empty() == (type.name == "none"));
    } else {
      // A timeline of a tree view is written per step: <outfile>_<step>.
      const std::string written = type.name == "timeline" ? file + "_-1" : file;
      CHECK(testing::ReadFile(written).size() > 0);
    }
  }
}

}  // namespace
}  // namespace tfprof
