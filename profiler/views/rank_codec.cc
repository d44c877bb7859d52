#include "profiler/views/rank_codec.h"

#include <simdjson.h>

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profiler/base/json_writer.h"

namespace tfprof {
namespace {

constexpr char kFormat[] = "tfprof.rank_profile";
constexpr int64_t kVersion = 2;  // 2: the ranks' devices

std::string Quoted(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? "," : "", JsonQuote(v[i]));
  }
  return out + "]";
}

std::string RowJson(const StepRow& r) {
  // mfu with every digit a double has, so that it comes back equal.
  return absl::StrCat("[", r.step, ",", r.start_ns, ",", r.wall_ns, ",",
                      r.from_markers ? 1 : 0, ",", r.accelerator_ns, ",",
                      r.compute_ns, ",", r.memcpy_ns, ",", r.communication_ns,
                      ",", r.exposed_communication_ns, ",", r.idle_ns, ",",
                      r.kernels, ",", r.device_span_ns, ",", r.peak_bytes, ",",
                      JsonQuote(r.peak_allocator), ",", r.flops, ",",
                      absl::StrFormat("%.17g", r.mfu), "]");
}

// [name, nodes, busy_ns, [[allocator, peak], ...], [[lane, busy_ns,
// thread], ...]]
std::string DeviceJson(const DeviceSummary& d) {
  std::string out =
      absl::StrCat("[", JsonQuote(d.name), ",", d.nodes, ",", d.busy_ns, ",[");
  for (size_t i = 0; i < d.allocators.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? "," : "", "[",
                    JsonQuote(d.allocators[i].first), ",",
                    d.allocators[i].second, "]");
  }
  out += "],[";
  for (size_t i = 0; i < d.lanes.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? "," : "", "[", JsonQuote(d.lanes[i].name),
                    ",", d.lanes[i].busy_ns, ",", d.lanes[i].thread ? 1 : 0,
                    "]");
  }
  return out + "]]";
}

std::string CollectiveJson(const RankCollective& c) {
  return absl::StrCat("[", c.start_ns, ",", c.end_ns, ",", c.step, ",",
                      JsonQuote(c.name), ",", JsonQuote(c.op), ",",
                      JsonQuote(c.group), ",", c.seq, ",", c.window, "]");
}

// --- Decoding: every accessor checks its type; the first error wins.
class Decoder {
 public:
  explicit Decoder(std::string what) : what_(std::move(what)) {
    // A valid empty array stands in for what is missing or of the wrong
    // type, so that decoding goes on safely to the end (the error stays).
    if (fallback_parser_.parse("[]", 2).get(empty_) != simdjson::SUCCESS) {
      Fail("a parser");
    }
  }

  int64_t Int(simdjson::dom::element e) {
    int64_t v = 0;
    if (e.get_int64().get(v) != simdjson::SUCCESS) Fail("an integer");
    return v;
  }
  double Double(simdjson::dom::element e) {
    double v = 0;
    if (e.get_double().get(v) != simdjson::SUCCESS) Fail("a number");
    return v;
  }
  std::string String(simdjson::dom::element e) {
    std::string_view v;
    if (e.get_string().get(v) != simdjson::SUCCESS) Fail("a string");
    return std::string(v);
  }
  simdjson::dom::array Array(simdjson::dom::element e, size_t min_size = 0) {
    simdjson::dom::array a;
    if (e.get_array().get(a) != simdjson::SUCCESS || a.size() < min_size) {
      Fail("an array");
      return empty_.get_array().value_unsafe();
    }
    return a;
  }
  simdjson::dom::element Field(simdjson::dom::object o, const char* key) {
    simdjson::dom::element e;
    if (o[key].get(e) != simdjson::SUCCESS) {
      Fail(key);
      return empty_;
    }
    return e;
  }
  void Fail(const std::string& expected) {
    if (error_.ok()) {
      error_ = absl::InvalidArgumentError(absl::StrCat(
          what_, ": not a tfprof rank summary (expected ", expected, ")"));
    }
  }
  const absl::Status& error() const { return error_; }

 private:
  std::string what_;
  absl::Status error_ = absl::OkStatus();
  simdjson::dom::parser fallback_parser_;
  simdjson::dom::element empty_;
};

StepRow DecodeRow(Decoder& d, simdjson::dom::element e) {
  StepRow r;
  std::vector<simdjson::dom::element> f;
  for (simdjson::dom::element x : d.Array(e, 16)) f.push_back(x);
  if (f.size() < 16) return r;
  int64_t* ints[] = {&r.step, &r.start_ns, &r.wall_ns};
  for (int i = 0; i < 3; ++i) *ints[i] = d.Int(f[i]);
  r.from_markers = d.Int(f[3]) != 0;
  int64_t* more[] = {&r.accelerator_ns,
                     &r.compute_ns,
                     &r.memcpy_ns,
                     &r.communication_ns,
                     &r.exposed_communication_ns,
                     &r.idle_ns,
                     &r.kernels,
                     &r.device_span_ns,
                     &r.peak_bytes};
  for (int i = 0; i < 9; ++i) *more[i] = d.Int(f[4 + i]);
  r.peak_allocator = d.String(f[13]);
  r.flops = d.Int(f[14]);
  r.mfu = d.Double(f[15]);
  return r;
}

DeviceSummary DecodeDevice(Decoder& d, simdjson::dom::element e) {
  DeviceSummary s;
  simdjson::dom::array f = d.Array(e, 5);
  if (f.size() < 5) return s;
  s.name = d.String(f.at(0));
  s.nodes = d.Int(f.at(1));
  s.busy_ns = d.Int(f.at(2));
  for (simdjson::dom::element a : d.Array(f.at(3))) {
    simdjson::dom::array pair = d.Array(a, 2);
    if (pair.size() < 2) break;
    s.allocators.emplace_back(d.String(pair.at(0)), d.Int(pair.at(1)));
  }
  for (simdjson::dom::element l : d.Array(f.at(4))) {
    simdjson::dom::array lane = d.Array(l, 3);
    if (lane.size() < 3) break;
    s.lanes.push_back(LaneSummary{d.String(lane.at(0)), d.Int(lane.at(1)),
                                  d.Int(lane.at(2)) != 0});
  }
  return s;
}

RankCollective DecodeCollective(Decoder& d, simdjson::dom::element e) {
  RankCollective c;
  std::vector<simdjson::dom::element> f;
  for (simdjson::dom::element x : d.Array(e, 8)) f.push_back(x);
  if (f.size() < 8) return c;
  c.start_ns = d.Int(f[0]);
  c.end_ns = d.Int(f[1]);
  c.step = d.Int(f[2]);
  c.name = d.String(f[3]);
  c.op = d.String(f[4]);
  c.group = d.String(f[5]);
  c.seq = d.Int(f[6]);
  c.window = static_cast<int32_t>(d.Int(f[7]));
  return c;
}

}  // namespace

std::string EncodeRankProfile(const RankProfile& p) {
  std::string out = absl::StrCat(
      "{\"format\": \"", kFormat, "\", \"version\": ", kVersion,
      ", \"rank\": ", p.rank, ", \"world_size\": ", p.world_size,
      ", \"backend\": ", JsonQuote(p.backend),
      ", \"host\": ", JsonQuote(p.host), ", \"files\": ", Quoted(p.files),
      ", \"base_ns\": ", p.base_ns, ", \"enqueue_only\": ", p.enqueue_only,
      ", \"kernels\": ", p.kernels,
      ", \"wall_source\": ", JsonQuote(p.steps.wall_source),
      ", \"mfu_text\": ", JsonQuote(p.steps.mfu_text), ", \"steps\": [");
  for (size_t i = 0; i < p.steps.rows.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? ",\n" : "", RowJson(p.steps.rows[i]));
  }
  out += "], \"collectives\": [";
  for (size_t i = 0; i < p.collectives.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? ",\n" : "", CollectiveJson(p.collectives[i]));
  }
  out += "], \"windows\": [";
  for (size_t i = 0; i < p.windows.size(); ++i) {
    out += i > 0 ? ",\n[" : "[";
    for (size_t k = 0; k < p.windows[i].size(); ++k) {
      absl::StrAppend(&out, k > 0 ? "," : "", "[",
                      JsonQuote(p.windows[i][k].name), ",", p.windows[i][k].ns,
                      "]");
    }
    out += "]";
  }
  out += "], \"devices\": [";
  for (size_t i = 0; i < p.devices.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? ",\n" : "", DeviceJson(p.devices[i]));
  }
  return out + "]}\n";
}

absl::StatusOr<RankProfile> DecodeRankProfile(const std::string& bytes,
                                              const std::string& what) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  simdjson::dom::object o;
  Decoder d(what);
  if (parser.parse(bytes).get(root) != simdjson::SUCCESS ||
      root.get_object().get(o) != simdjson::SUCCESS) {
    d.Fail("a JSON object");
    return d.error();
  }
  if (d.String(d.Field(o, "format")) != kFormat ||
      d.Int(d.Field(o, "version")) != kVersion) {
    d.Fail(absl::StrCat(kFormat, " version ", kVersion));
    return d.error();
  }
  RankProfile p;
  p.rank = d.Int(d.Field(o, "rank"));
  p.world_size = d.Int(d.Field(o, "world_size"));
  p.backend = d.String(d.Field(o, "backend"));
  p.host = d.String(d.Field(o, "host"));
  for (simdjson::dom::element f : d.Array(d.Field(o, "files"))) {
    p.files.push_back(d.String(f));
  }
  p.base_ns = d.Int(d.Field(o, "base_ns"));
  p.enqueue_only = d.Int(d.Field(o, "enqueue_only"));
  p.kernels = d.Int(d.Field(o, "kernels"));
  p.steps.wall_source = d.String(d.Field(o, "wall_source"));
  p.steps.mfu_text = d.String(d.Field(o, "mfu_text"));
  for (simdjson::dom::element r : d.Array(d.Field(o, "steps"))) {
    p.steps.rows.push_back(DecodeRow(d, r));
  }
  for (simdjson::dom::element c : d.Array(d.Field(o, "collectives"))) {
    p.collectives.push_back(DecodeCollective(d, c));
  }
  for (simdjson::dom::element w : d.Array(d.Field(o, "windows"))) {
    std::vector<OpTime>& ops = p.windows.emplace_back();
    for (simdjson::dom::element t : d.Array(w)) {
      simdjson::dom::array pair = d.Array(t, 2);
      if (pair.size() < 2) break;
      ops.push_back(OpTime{d.String(pair.at(0)), d.Int(pair.at(1))});
    }
  }
  for (simdjson::dom::element v : d.Array(d.Field(o, "devices"))) {
    p.devices.push_back(DecodeDevice(d, v));
  }
  for (const RankCollective& c : p.collectives) {
    if (c.window < -1 || c.window >= static_cast<int32_t>(p.windows.size())) {
      d.Fail("collective windows within the list");
    }
  }
  if (!d.error().ok()) return d.error();
  return p;
}

}  // namespace tfprof
