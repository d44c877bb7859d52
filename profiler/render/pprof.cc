#include "profiler/render/pprof.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tfprof {
namespace {

namespace pp = ::perftools::profiles;

class StringTable {
 public:
  StringTable() { Index(""); }
  int64_t Index(const std::string& s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    strings_.push_back(s);
    return ids_[s] = static_cast<int64_t>(strings_.size() - 1);
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::map<std::string, int64_t> ids_;
  std::vector<std::string> strings_;
};

std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class Builder {
 public:
  explicit Builder(Attr attr) : attr_(attr), select_(AttrName(attr)) {}

  // Walks the displayed tree; `caller` is the frame the children are called
  // from (null at the root).
  void Walk(const ResultTree& r, size_t id, const CodeFrame* caller) {
    const ResultNode& n = r.nodes[id];
    if (n.children.empty() && caller != nullptr) AddSamples(n);
    for (size_t c : n.children) {
      const ResultNode& child = r.nodes[c];
      if (caller != nullptr && child.frame != nullptr) {
        stack_.push_back(Location(*caller, *child.frame));
      }
      Walk(r, c, child.frame.get());
      if (caller != nullptr && child.frame != nullptr) stack_.pop_back();
    }
  }

  pp::Profile Finish() {
    pp::Profile p;
    auto* count = p.add_sample_type();
    count->set_type(strings_.Index("count"));
    count->set_unit(strings_.Index("count"));
    auto* value = p.add_sample_type();
    value->set_type(strings_.Index(select_));
    std::string unit = "count", comment;
    if (select_ == "micros") {
      unit = "microseconds";
      comment = "Sum of accelerator execution time and cpu execution time.";
    } else if (select_ == "accelerator_micros") {
      unit = "microseconds";
      comment = "Accelerator execution time.";
    } else if (select_ == "cpu_micros") {
      unit = "microseconds";
      comment = "CPU execution time.";
    } else if (select_ == "bytes") {
      unit = "bytes";
      comment =
          "Sum of operation total memory requests, excluding deallocations.";
    } else if (select_ == "peak_bytes") {
      unit = "bytes";
      comment = "Sum of operation peak memory usage.";
    } else if (select_ == "residual_bytes") {
      unit = "bytes";
      comment = "Sum of operation allocated memory after finish.";
    } else if (select_ == "output_bytes") {
      unit = "bytes";
      comment = "Sum of operation output size.";
    } else if (select_ == "params") {
      comment = "Model parameters.";
    } else if (select_ == "float_ops") {
      comment = "Model float operations (Only available if defined).";
    }
    value->set_unit(strings_.Index(unit));
    p.add_comment(strings_.Index(comment));
    for (const std::string& s : strings_.strings()) p.add_string_table(s);
    for (auto& [name, sample] : samples_) *p.add_sample() = sample;
    for (auto& [key, fn] : functions_) *p.add_function() = fn;
    for (auto& [key, loc] : locations_) *p.add_location() = loc;
    return p;
  }

 private:
  // Line numbers are keyed as unsigned (a -1 "unknown" sorts last) and
  // stored signed, as tfprof does.
  uint64_t Function(const std::string& file, const std::string& function,
                    int32_t start_line) {
    const auto key = std::make_tuple(
        file, function,
        static_cast<uint64_t>(static_cast<int64_t>(start_line)));
    auto it = functions_.find(key);
    if (it != functions_.end()) return it->second.id();
    pp::Function& f = functions_[key];
    f.set_id(functions_.size());
    std::string base = Basename(file);
    base = base.substr(0, base.find_last_of('.'));
    f.set_name(strings_.Index(absl::StrCat(base, ":", function)));
    f.set_filename(strings_.Index(file));
    f.set_start_line(start_line);
    return f.id();
  }

  // The call site in `caller` that calls `callee`'s function.
  uint64_t Location(const CodeFrame& caller, const CodeFrame& callee) {
    const auto key = std::make_tuple(
        caller.file, callee.function,
        static_cast<uint64_t>(static_cast<int64_t>(caller.lineno)));
    auto it = locations_.find(key);
    if (it != locations_.end()) return it->second.id();
    pp::Location& loc = locations_[key];
    loc.set_id(locations_.size());
    pp::Line* line = loc.add_line();
    line->set_function_id(
        Function(callee.file, callee.function, callee.func_start_line));
    line->set_line(caller.lineno);
    return loc.id();
  }

  int64_t Value(const NodeStats& s) const { return tfprof::Value(s, attr_); }

  void AddSamples(const ResultNode& leaf) {
    for (const MemberNode& m : leaf.leaf_members) {
      std::string key = m.name();
      while (samples_.count(key)) key += '@';  // names must stay unique
      pp::Sample& s = samples_[key];
      for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
        s.add_location_id(*it);
      }
      pp::Label* label = s.add_label();
      label->set_key(strings_.Index("graph node:"));
      label->set_str(strings_.Index(m.name()));
      s.add_value(sign_);
      s.add_value(sign_ * Value(m.stats));
    }
  }

 public:
  // -1: the samples that follow are a base run's, subtracted.
  void set_sign(int64_t sign) { sign_ = sign; }

 private:
  const Attr attr_;
  const std::string select_;
  int64_t sign_ = 1;
  StringTable strings_;
  std::map<std::tuple<std::string, std::string, uint64_t>, pp::Function>
      functions_;
  std::map<std::tuple<std::string, std::string, uint64_t>, pp::Location>
      locations_;
  std::map<std::string, pp::Sample> samples_;
  std::vector<uint64_t> stack_;
};

// Scope view: stacks are name scopes. Each displayed node becomes a
// function and a location; each displayed graph node a sample with its own
// value and the stack of its displayed ancestors.
class ScopeBuilder {
 public:
  explicit ScopeBuilder(Attr attr) : attr_(attr), select_(AttrName(attr)) {}

  void Walk(const ResultTree& r, size_t id) {
    const ResultNode& n = r.nodes[id];
    const bool is_root = id == 0;
    if (!is_root) stack_.push_back(Location(n.name));
    if (!is_root && n.graph_node != nullptr) {
      pp::Sample* s = p_.add_sample();
      for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
        s->add_location_id(*it);
      }
      pp::Label* label = s->add_label();
      label->set_key(strings_.Index("graph node:"));
      label->set_str(strings_.Index(n.name));
      s->add_value(sign_);
      s->add_value(sign_ * Value(n.self));
    }
    for (size_t c : n.children) Walk(r, c);
    if (!is_root) stack_.pop_back();
  }

  // -1: the samples that follow are a base run's, subtracted.
  void set_sign(int64_t sign) { sign_ = sign; }

  pp::Profile Finish() {
    auto* count = p_.add_sample_type();
    count->set_type(strings_.Index("count"));
    count->set_unit(strings_.Index("count"));
    auto* value = p_.add_sample_type();
    value->set_type(strings_.Index(select_));
    value->set_unit(strings_.Index(Unit()));
    p_.add_comment(strings_.Index(
        "tfprof scope view: stacks are name scopes, values are each node's "
        "own " +
        select_ + "."));
    for (const std::string& s : strings_.strings()) p_.add_string_table(s);
    return std::move(p_);
  }

 private:
  std::string Unit() const {
    if (absl::StrContains(select_, "micros")) return "microseconds";
    if (absl::StrContains(select_, "bytes")) return "bytes";
    return "count";
  }

  int64_t Value(const NodeStats& s) const { return tfprof::Value(s, attr_); }

  uint64_t Location(const std::string& scope) {
    auto it = locations_.find(scope);
    if (it != locations_.end()) return it->second;
    pp::Function* f = p_.add_function();
    f->set_id(static_cast<uint64_t>(p_.function_size()));
    f->set_name(strings_.Index(scope));
    pp::Location* loc = p_.add_location();
    loc->set_id(static_cast<uint64_t>(p_.location_size()));
    loc->add_line()->set_function_id(f->id());
    locations_[scope] = loc->id();
    return loc->id();
  }

  const Attr attr_;
  const std::string select_;
  int64_t sign_ = 1;
  StringTable strings_;
  pp::Profile p_;
  std::map<std::string, uint64_t> locations_;
  std::vector<uint64_t> stack_;
};

}  // namespace

bool PprofSupports(Attr a) { return IsCount(a) && a != Attr::kOccurrence; }

namespace {

// The attribute a result's pprof carries, or why it cannot have one.
absl::StatusOr<Attr> PprofAttribute(const ResultTree& result) {
  if (result.view != ViewKind::kCode && result.view != ViewKind::kScope) {
    return absl::InvalidArgumentError(
        "pprof output needs the code view (Python call stacks) or the scope "
        "view (name scopes)");
  }
  if (result.options.select.size() != 1) {
    return absl::InvalidArgumentError(
        "pprof output takes exactly one -select attribute");
  }
  const Attr select = result.options.select.members()[0];
  if (!PprofSupports(select)) {
    return absl::InvalidArgumentError(
        absl::StrCat("pprof output cannot carry -select ", AttrName(select),
                     " (use micros, accelerator_micros, cpu_micros, bytes, "
                     "peak_bytes, residual_bytes, output_bytes, params or "
                     "float_ops)"));
  }
  return select;
}

// Walks each result into one profile: `base` (may be null) subtracted.
absl::StatusOr<perftools::profiles::Profile> Build(const ResultTree* base,
                                                   const ResultTree& result) {
  absl::StatusOr<Attr> select = PprofAttribute(result);
  if (!select.ok()) return select.status();
  if (base != nullptr && (base->view != result.view ||
                          base->options.select != result.options.select)) {
    return absl::InvalidArgumentError(
        "a diff pprof needs the same view and -select on both sides");
  }
  if (result.view == ViewKind::kScope) {
    ScopeBuilder b(*select);
    if (base != nullptr && !base->nodes.empty()) {
      b.set_sign(-1);
      b.Walk(*base, 0);
      b.set_sign(1);
    }
    if (!result.nodes.empty()) b.Walk(result, 0);
    return b.Finish();
  }
  Builder b(*select);
  if (base != nullptr && !base->nodes.empty()) {
    b.set_sign(-1);
    b.Walk(*base, 0, nullptr);
    b.set_sign(1);
  }
  if (!result.nodes.empty()) b.Walk(result, 0, nullptr);
  return b.Finish();
}

}  // namespace

absl::StatusOr<perftools::profiles::Profile> BuildPprof(
    const ResultTree& result) {
  return Build(nullptr, result);
}

absl::StatusOr<perftools::profiles::Profile> BuildDiffPprof(
    const ResultTree& base, const ResultTree& current) {
  return Build(&base, current);
}

}  // namespace tfprof
