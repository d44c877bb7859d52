// The query vocabulary (profiler/model/attribute.h): names, sets, values,
// and the options that hold them.
#include "profiler/model/attribute.h"

#include <catch2/catch.hpp>

#include "profiler/model/model.h"
#include "profiler/views/options.h"
#include "profiler/views/result.h"

namespace tfprof {
namespace {

TEST_CASE("Every attribute's name parses back to it") {
  for (int i = 0; i < kAttrCount; ++i) {
    const Attr a = static_cast<Attr>(i);
    INFO(AttrName(a));
    REQUIRE(ParseAttr(AttrName(a)).has_value());
    CHECK(*ParseAttr(AttrName(a)) == a);
  }
  CHECK_FALSE(ParseAttr("micro").has_value());
  CHECK_FALSE(ParseAttr("").has_value());
  CHECK_FALSE(ParseAttr("Micros").has_value());
}

TEST_CASE("The select and order attribute lists follow tfprof") {
  // tfprof's select ids (reference section on options), then ours.
  CHECK(AttrNames(SelectAttrs()) ==
        std::vector<std::string>{
            "bytes", "micros", "params", "float_ops", "tensor_value", "device",
            "op_types", "occurrence", "input_shapes", "accelerator_micros",
            "cpu_micros", "peak_bytes", "residual_bytes", "output_bytes",
            "accelerator_flop_rate", "arithmetic_intensity", "roofline"});
  CHECK(AttrNames(OrderByAttrs()) ==
        std::vector<std::string>{"name", "bytes", "peak_bytes",
                                 "residual_bytes", "output_bytes", "micros",
                                 "accelerator_micros", "cpu_micros", "params",
                                 "float_ops", "occurrence"});
  // Every order but the name is a count a node adds up.
  for (Attr a : OrderByAttrs()) CHECK(IsCount(a) == (a != Attr::kName));
  CHECK_FALSE(IsCount(Attr::kDevice));
  CHECK_FALSE(IsCount(Attr::kRoofline));
}

TEST_CASE("Value reads the field each count names") {
  NodeStats s;
  s.run_count = 2;
  s.exec_micros = 3;
  s.accelerator_exec_micros = 5;
  s.cpu_exec_micros = 7;
  s.requested_bytes = 11;
  s.peak_bytes = 13;
  s.residual_bytes = 17;
  s.output_bytes = 19;
  s.parameters = 23;
  s.float_ops = 29;
  const std::vector<std::pair<const char*, int64_t>> want = {
      {"occurrence", 2},      {"micros", 3},        {"accelerator_micros", 5},
      {"cpu_micros", 7},      {"bytes", 11},        {"peak_bytes", 13},
      {"residual_bytes", 17}, {"output_bytes", 19}, {"params", 23},
      {"float_ops", 29}};
  for (const auto& [name, value] : want) {
    INFO(name);
    CHECK(Value(s, *ParseAttr(name)) == value);
  }
  // A view's Totals has the same fields.
  Totals t;
  t.AddSelf(s);
  for (const auto& [name, value] : want)
    CHECK(Value(t, *ParseAttr(name)) == value);
  CHECK(Value(s, Attr::kDevice) == 0);
  CHECK(Value(s, Attr::kName) == 0);
  CHECK(UnitOf(Attr::kCpuMicros) == StatUnit::kTime);
  CHECK(UnitOf(Attr::kPeakBytes) == StatUnit::kBytes);
  CHECK(UnitOf(Attr::kFloatOps) == StatUnit::kCount);
  // The enum's units agree with the units the names read as (as a check
  // term or -min_change value spells them).
  for (int i = 0; i < kAttrCount; ++i) {
    const Attr a = static_cast<Attr>(i);
    CHECK(UnitOf(a) == UnitOfStat(AttrName(a)));
  }
}

TEST_CASE("An attribute set lists its members by name") {
  AttrSet s = {Attr::kOccurrence, Attr::kMicros, Attr::kBytes};
  CHECK(s.size() == 3);
  CHECK(s.names() == std::vector<std::string>{"bytes", "micros", "occurrence"});
  CHECK(s.contains(Attr::kMicros));
  CHECK_FALSE(s.contains(Attr::kParams));
  s.erase(Attr::kMicros);
  s.insert(Attr::kAcceleratorMicros);
  s.insert(Attr::kAcceleratorMicros);
  CHECK(s.names() ==
        std::vector<std::string>{"accelerator_micros", "bytes", "occurrence"});
  CHECK(s != AttrSet{Attr::kBytes});
  s.clear();
  CHECK(s.empty());
  CHECK(s.size() == 0);
}

TEST_CASE("Options read from a proto are checked attribute by attribute") {
  Options o;
  o.order_by = Attr::kPeakBytes;
  o.select = {Attr::kDevice, Attr::kMicros};
  tfpb::OptionsProto p = OptionsToProto(o);
  CHECK(p.order_by() == "peak_bytes");
  REQUIRE(p.select_size() == 2);
  CHECK(p.select(0) == "device");
  absl::StatusOr<Options> back = OptionsFromProto(p);
  REQUIRE(back.ok());
  CHECK(back->order_by == Attr::kPeakBytes);
  CHECK(back->select == o.select);

  p.set_order_by("device");  // a -select attribute, not an order
  CHECK_FALSE(OptionsFromProto(p).ok());
  p.set_order_by("");
  absl::StatusOr<Options> by_name = OptionsFromProto(p);
  REQUIRE(by_name.ok());
  CHECK(by_name->order_by == Attr::kName);
  p.add_select("name");  // an order, not a -select attribute
  absl::StatusOr<Options> bad = OptionsFromProto(p);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("select") !=
        std::string::npos);
}

}  // namespace
}  // namespace tfprof
