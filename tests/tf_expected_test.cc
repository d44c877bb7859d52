// TensorFlow's own tfprof tests, replayed: every testdata/tf_expected/
// <testfile>__<TestName>.txt holds the command a TensorFlow C++ test ran on
// tf-testdata and the answer it expects (a text report, a GraphNodeProto, a
// list of assertions or the hash of a timeline file). We run the same query
// on the same inputs and compare.
#include <dirent.h>

#include <catch2/catch.hpp>
#include <cinttypes>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "cli/shell.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "profiler/render/render_proto.h"
#include "profiler/render/render_text.h"
#include "profiler/render/view_timeline.h"
#include "profiler/views/views.h"
#include "tests/corpus_util.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

struct Expected {
  std::string path;
  std::string test_file;  // e.g. "tfprof_show_test"
  std::string test_name;  // e.g. "DumpOpMode"
  std::string command;
  std::string body;  // everything after "# ---\n"
};

std::vector<Expected> ExpectedFiles() {
  std::vector<Expected> out;
  const std::string dir = testing::SourceDir() + "/testdata/tf_expected";
  DIR* d = ::opendir(dir.c_str());
  REQUIRE(d != nullptr);
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    const size_t sep = n.find("__");
    if (sep == std::string::npos || n.size() < 4 ||
        n.substr(n.size() - 4) != ".txt") {
      continue;
    }
    Expected x;
    x.path = dir + "/" + n;
    x.test_file = n.substr(0, sep);
    x.test_name = n.substr(sep + 2, n.size() - sep - 6);
    const std::string text = testing::ReadFile(x.path);
    const size_t body = text.find("\n# ---\n");
    REQUIRE(body != std::string::npos);
    x.body = text.substr(body + 7);
    const size_t at = text.find("# command: ");
    REQUIRE(at != std::string::npos);
    x.command = text.substr(at + 11, text.find('\n', at) - at - 11);
    out.push_back(std::move(x));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const Expected& a, const Expected& b) {
    return a.path < b.path;
  });
  return out;
}

// TensorFlow's Hash64 (seed 0xDECAFCAFFE), the MurmurHash64A construction,
// which its timeline tests apply to the bytes of the written file.
uint64_t Hash64(const std::string& s) {
  const uint64_t m = 0xc6a4a7935bd1e995ULL;
  const int r = 47;
  size_t n = s.size();
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
  uint64_t h = 0xDECAFCAFFEULL ^ (n * m);
  while (n >= 8) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; --i) k = (k << 8) | p[i];  // little-endian
    p += 8;
    n -= 8;
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  if (n > 0) {
    for (size_t i = n; i-- > 0;) h ^= static_cast<uint64_t>(p[i]) << (8 * i);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

std::string WithoutSpaces(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  return s;
}

// The inputs each TensorFlow test builds its TFStats from.
InputPaths InputsFor(const Expected& x) {
  InputPaths p = testing::TfTestData();
  if (x.test_file == "tfprof_tensor_test") {
    p.run_meta_path.clear();  // graph + checkpoint only
    p.op_log_path.clear();
  } else if (x.test_file == "tfprof_timeline_test") {
    p.op_log_path.clear();  // graph + run_meta only
    p.checkpoint_path.clear();
  }
  return p;
}

ViewKind KindOf(const std::string& word) {
  if (word == "graph") return ViewKind::kGraph;
  if (word == "op") return ViewKind::kOp;
  if (word == "code") return ViewKind::kCode;
  return ViewKind::kScope;
}

void CheckProto(const std::string& expected_text,
                const tfpb::GraphNodeProto& actual) {
  tfpb::GraphNodeProto expected;
  REQUIRE(
      google::protobuf::TextFormat::ParseFromString(expected_text, &expected));
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  const bool same = d.Compare(expected, actual);
  INFO(diff);
  CHECK(same);
}

// tfprof_tensor_test asserts facts, one per line, of these two forms:
//   root.children(I).name() == "NAME"
//   root.children(I).tensor_value().value_double_size() (> | ==) N
void CheckAssertions(const std::string& body,
                     const tfpb::GraphNodeProto& root) {
  std::istringstream in(body);
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    INFO(line);
    int child = -1;
    char name[256] = {0};
    char cmp[3] = {0};
    long long n = 0;
    if (std::sscanf(line.c_str(), "root.children(%d).name() == \"%255[^\"]\"",
                    &child, name) == 2) {
      REQUIRE(child < root.children_size());
      CHECK(root.children(child).name() == name);
    } else if (std::sscanf(line.c_str(),
                           "root.children(%d).tensor_value().value_double_"
                           "size() %2s %lld",
                           &child, cmp, &n) == 3) {
      REQUIRE(child < root.children_size());
      const int size = root.children(child).tensor_value().value_double_size();
      if (std::strcmp(cmp, ">") == 0) {
        CHECK(size > n);
      } else {
        CHECK(size == n);
      }
    } else {
      FAIL("assertion not understood");
    }
    ++checked;
  }
  CHECK(checked > 0);
}

void Check(const LoadedProfile& loaded, const Expected& x) {
  INFO(x.path << "\ncommand: " << x.command);
  auto words = cli::Tokenize(x.command);
  REQUIRE(words.ok());
  REQUIRE_FALSE(words->empty());
  Options o;
  REQUIRE(ParseOptionTokens(*words, 1, &o).ok());
  const ViewKind kind = KindOf((*words)[0]);
  Views views(&loaded.model, loaded.checkpoint.get());
  auto r = views.Query(kind, o);
  REQUIRE(r.ok());
  if (x.test_file == "tfprof_show_test") {
    const std::string actual = RenderText(*r);
    if (x.test_name == "DumpOpMode") {
      // TensorFlow's test removes every space before comparing.
      CHECK(WithoutSpaces(actual) == x.body);
    } else {
      CHECK(actual == x.body);
    }
  } else if (x.test_file == "tfprof_stats_test") {
    CheckProto(x.body, ToGraphNodeProto(*r));
  } else if (x.test_file == "tfprof_tensor_test") {
    CheckAssertions(x.body, ToGraphNodeProto(*r));
  } else if (x.test_file == "tfprof_timeline_test") {
    const Timeline t = kind == ViewKind::kGraph
                           ? GraphTimeline(*r, loaded.model, o.step)
                           : TreeTimeline(*r);
    uint64_t expected = 0;
    REQUIRE(std::sscanf(x.body.c_str(), "%" SCNu64, &expected) == 1);
    CHECK(Hash64(t.json) == expected);
  } else {
    FAIL("unknown test file " << x.test_file);
  }
}

TEST_CASE("TensorFlow's expected answers for its test inputs") {
  const std::vector<Expected> files = ExpectedFiles();
  // 3 show + 6 stats + 1 tensor + 2 timeline tests.
  REQUIRE(files.size() >= 12);
  for (const Expected& x : files) {
    auto loaded = LoadProfile(InputsFor(x));
    REQUIRE(loaded.ok());
    Check(**loaded, x);
  }
}

TEST_CASE("The same answers after a ProfileProto round trip") {
  // TensorFlow's tests also check this: write the profile, read it back.
  for (const Expected& x : ExpectedFiles()) {
    const InputPaths in = InputsFor(x);
    auto loaded = LoadProfile(in);
    REQUIRE(loaded.ok());
    const std::string dir = testing::TempDir();
    testing::WriteFile(dir + "/profile",
                       (*loaded)->model.ToProfileProto().SerializeAsString());
    InputPaths p;
    p.profile_path = dir + "/profile";
    p.checkpoint_path = in.checkpoint_path;
    auto reloaded = LoadProfile(p);
    REQUIRE(reloaded.ok());
    Check(**reloaded, x);
  }
}

TEST_CASE("Checkpoint values as TensorFlow's TestShowTensorValue has them") {
  auto loaded = LoadProfile(testing::TfTestData());
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, (*loaded)->checkpoint.get());
  Options o;
  REQUIRE(ParseOptionTokens(
              {"-show_name_regexes", "DW", "-select", "tensor_value"}, 0, &o)
              .ok());
  auto r = views.Query(ViewKind::kScope, o);
  REQUIRE(r.ok());
  const tfpb::GraphNodeProto root = ToGraphNodeProto(*r);
  REQUIRE(root.children_size() == 1);
  const tfpb::GraphNodeProto& dw = root.children(0);
  // Definition counts include scope-view placeholders (see the README).
  CHECK(dw.total_definition_count() == 10);
  CHECK(root.total_definition_count() == 35);
  REQUIRE(dw.tensor_value().value_double_size() == 162);
  CHECK(dw.tensor_value().dtype() == tfcore::DT_FLOAT);
}

}  // namespace
}  // namespace tfprof
