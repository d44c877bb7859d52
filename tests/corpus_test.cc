// Every corpus file of a format tfprof claims loads, answers every view, and
// survives a ProfileProto round trip.
#include <catch2/catch.hpp>

#include "google/protobuf/util/message_differencer.h"
#include "profiler/load/loader.h"
#include "profiler/load/profile_reader.h"
#include "profiler/render/render_text.h"
#include "profiler/views/views.h"
#include "tests/corpus_util.h"

namespace tfprof {
namespace {

using testing::CorpusCases;

TEST_CASE("Every corpus input loads and answers every view") {
  for (const auto& c : CorpusCases()) {
    INFO(c.name);
    auto loaded = LoadProfile(c.paths);
    REQUIRE(loaded.ok());
    const Model& m = (*loaded)->model;
    CHECK((m.size() > 0 || !m.steps().empty()));
    Views views(&m, (*loaded)->checkpoint.get());
    for (ViewKind v :
         {ViewKind::kScope, ViewKind::kGraph, ViewKind::kOp, ViewKind::kCode}) {
      INFO(ViewName(v));
      Options o;
      o.select = {Attr::kMicros, Attr::kBytes, Attr::kParams, Attr::kFloatOps,
                  Attr::kOccurrence};
      auto r = views.Query(v, o);
      if (v == ViewKind::kCode && !m.has_code_traces()) {
        CHECK_FALSE(r.ok());
        continue;
      }
      REQUIRE(r.ok());
      CHECK(r->nodes.size() >= 1);
      CHECK(r->root().name == "_TFProfRoot");
      const std::string text = RenderText(*r);
      CHECK(text.rfind("node name | ", 0) == 0);
    }
  }
}

TEST_CASE("Corpus models round-trip through ProfileProto") {
  for (const auto& c : CorpusCases()) {
    INFO(c.name);
    auto loaded = LoadProfile(c.paths);
    REQUIRE(loaded.ok());
    const tfpb::ProfileProto p = (*loaded)->model.ToProfileProto();
    auto back = ModelFromProfileProto(p);
    REQUIRE(back.ok());
    CHECK(back->size() == (*loaded)->model.size());
    CHECK(google::protobuf::util::MessageDifferencer::Equals(
        back->ToProfileProto(), p));
    // A ProfileProto reads with tfprof's -step -1 rule (the mean over the
    // steps a node ran in); a trace's loader makes it the mean over all
    // steps. The data round-trips: with the trace's rule, the same answers.
    if (!c.paths.trace_path.empty()) back->MeanOverAllSteps();
    // And the reloaded model answers queries identically.
    Views a(&(*loaded)->model, nullptr), b(&*back, nullptr);
    Options o;
    o.select = {Attr::kMicros,   Attr::kBytes,      Attr::kParams,
                Attr::kFloatOps, Attr::kOccurrence, Attr::kDevice,
                Attr::kOpTypes,  Attr::kInputShapes};
    // A ProfileProto refers to inputs by node id, so inputs that are not
    // nodes (traces name inputs that did not run) cannot be saved; their
    // shapes, all unknown, are not compared.
    // Nor the trace's activity record, which names the streams a node's
    // kernels ran on beside its placement (-select device).
    if (!c.paths.trace_path.empty()) {
      o.select.erase(Attr::kInputShapes);
      o.select.erase(Attr::kDevice);
    }
    for (ViewKind v : {ViewKind::kScope, ViewKind::kGraph, ViewKind::kOp}) {
      auto ra = a.Query(v, o);
      auto rb = b.Query(v, o);
      REQUIRE(ra.ok());
      REQUIRE(rb.ok());
      CHECK(RenderText(*ra) == RenderText(*rb));
    }
  }
}

TEST_CASE("A ProfileProto as written by TensorFlow reloads to the same bytes") {
  // profile_0_tiny was written by TensorFlow's own serializer; reading and
  // writing it again keeps every field.
  InputPaths p;
  p.profile_path =
      testing::CorpusCases()[0].paths.profile_path;  // profile_0_tiny
  auto loaded = LoadProfile(p);
  REQUIRE(loaded.ok());
  tfpb::ProfileProto original;
  REQUIRE(ReadProtoFile(p.profile_path, false, &original).ok());
  CHECK(google::protobuf::util::MessageDifferencer::Equivalent(
      (*loaded)->model.ToProfileProto(), original));
}

}  // namespace
}  // namespace tfprof
