// Loading: formats are detected, and every kind of bad input gets a clear
// one-line error that names the file.
#include "profiler/load/loader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "profiler/base/file.h"
#include "tests/corpus_util.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

using testing::CorpusFile;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

std::string ErrorOf(const InputPaths& p) {
  auto r = LoadProfile(p);
  REQUIRE_FALSE(r.ok());
  const std::string msg(r.status().message());
  CHECK(msg.find('\n') == std::string::npos);  // one line
  return msg;
}

TEST_CASE("tf-testdata loads: graph, run_meta, op log and checkpoint") {
  auto r = LoadProfile(testing::TfTestData());
  REQUIRE(r.ok());
  const Model& m = (*r)->model;
  CHECK(m.steps() == std::set<int64_t>{0});
  CHECK_FALSE(m.has_code_traces());  // this op log has no call stacks
  REQUIRE(m.Find("DW") != nullptr);
  CHECK(m.Find("DW")->Parameters() == 162);
  CHECK(m.Find("DW")->op_types.count("_trainable_variables") == 1);
  CHECK(m.Find("DW")->op_types.count("_checkpoint_variables") == 1);
  CHECK(m.Find("Conv2D")->float_ops == 5832);
  REQUIRE((*r)->notes.size() == 1);
  CHECK((*r)->notes[0].rfind("run graph coverage: ", 0) == 0);
  REQUIRE((*r)->checkpoint != nullptr);
}

TEST_CASE("Missing files are named") {
  InputPaths p;
  p.profile_path = "/nonexistent/profile";
  CHECK(ErrorOf(p).find("/nonexistent/profile") != std::string::npos);
  p = testing::TfTestData();
  p.op_log_path = "/nonexistent/log";
  CHECK(ErrorOf(p).find("/nonexistent/log") != std::string::npos);
  p = testing::TfTestData();
  p.run_meta_path = p.run_meta_path + ",/nonexistent/rm";
  CHECK(ErrorOf(p).find("/nonexistent/rm") != std::string::npos);
}

TEST_CASE("Directories and empty files are rejected") {
  const std::string dir = TempDir();
  InputPaths p;
  p.profile_path = dir;
  CHECK(ErrorOf(p).find("is a directory") != std::string::npos);
  WriteFile(dir + "/empty", "");
  p.profile_path = dir + "/empty";
  CHECK(ErrorOf(p).find("empty file") != std::string::npos);
}

TEST_CASE("Truncated and corrupt profiles are rejected") {
  const std::string dir = TempDir();
  const std::string data =
      ReadFile(CorpusFile("shiyudian-resnet-tf-dist/profile_0_tiny"));
  WriteFile(dir + "/cut", data.substr(0, data.size() / 2));
  InputPaths p;
  p.profile_path = dir + "/cut";
  CHECK(ErrorOf(p).find(dir + "/cut") != std::string::npos);
}

TEST_CASE("A file of another format is rejected with its type named") {
  InputPaths p;
  p.profile_path = CorpusFile("tf-testdata/current/graph.pbtxt");
  const std::string msg = ErrorOf(p);
  CHECK(msg.find("ProfileProto") != std::string::npos);
  p = InputPaths();
  p.graph_path = CorpusFile("shiyudian-resnet-tf-dist/profile_0_tiny");
  CHECK(ErrorOf(p).find("GraphDef") != std::string::npos);
}

TEST_CASE("Conflicting or missing inputs are usage errors") {
  InputPaths p;
  CHECK(ErrorOf(p).find("no input") != std::string::npos);
  p.profile_path = "a";
  p.graph_path = "b";
  CHECK(ErrorOf(p).find("--profile_path") != std::string::npos);
}

TEST_CASE("A RunMetadata file listed twice is an error") {
  InputPaths p = testing::TfTestData();
  p.run_meta_path = p.run_meta_path + "," + p.run_meta_path;
  CHECK(ErrorOf(p).find("listed twice") != std::string::npos);
}

TEST_CASE("Several RunMetadata files become steps 0, 1, ...") {
  InputPaths p = testing::TfTestData();
  const std::string dir = TempDir();
  WriteFile(dir + "/rm1", ReadFile(p.run_meta_path));
  p.run_meta_path = p.run_meta_path + "," + dir + "/rm1";
  auto r = LoadProfile(p);
  REQUIRE(r.ok());
  CHECK((*r)->model.steps() == std::set<int64_t>{0, 1});
}

TEST_CASE("Text and binary protos are both accepted") {
  const std::string dir = TempDir();
  // The text RunMetadata of the corpus, and the binary one.
  InputPaths p;
  p.run_meta_path = CorpusFile("yaroslavvb-stuff/feed_dict.pbtxt");
  REQUIRE(LoadProfile(p).ok());
  tfcore::GraphDef g;
  REQUIRE(ReadProtoFile(CorpusFile("tf-testdata/current/graph.pbtxt"), true, &g)
              .ok());
  WriteFile(dir + "/graph.pb", g.SerializeAsString());
  p = InputPaths();
  p.graph_path = dir + "/graph.pb";
  auto r = LoadProfile(p);
  REQUIRE(r.ok());
  CHECK((*r)->model.size() == static_cast<size_t>(g.node_size()));
}

// Other TensorFlow messages decode as a ProfileProto of garbage (protobuf
// skips what does not fit): a RunMetadata, an OpLog and a MetaGraphDef given
// as --profile_path are errors that say where they go.
TEST_CASE("Another message given as a ProfileProto is refused") {
  const std::string dir = "tf-testdata/current/";
  for (const char* name : {"run_meta", "tfprof_log", "ckpt.meta"}) {
    InputPaths p;
    p.profile_path = testing::CorpusFile(dir + name);
    INFO(name);
    auto r = LoadProfile(p);
    REQUIRE_FALSE(r.ok());
    const std::string message(r.status().message());
    CHECK(message.find(std::string(name) +
                       ": not a tensorflow.tfprof.ProfileProto (") !=
          std::string::npos);
    CHECK(message.find("a RunMetadata goes to --run_meta_path") !=
          std::string::npos);
  }
  InputPaths real;
  real.profile_path = testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0");
  CHECK(LoadProfile(real).ok());
}

// And as a GraphDef, an OpLog or a RunMetadata: a field the message declares
// met with another wire type gives it away.
TEST_CASE("Another message given as a GraphDef or an OpLog is refused") {
  const std::string dir = "tf-testdata/current/";
  const std::string graph = CorpusFile(dir + "graph.pbtxt");
  const std::string profile = CorpusFile("shiyudian-resnet-tf-dist/profile_0");
  struct Case {
    InputPaths paths;
    const char* file;
    const char* type;
  };
  InputPaths oplog_as_graph, profile_as_oplog, meta_as_oplog;
  oplog_as_graph.graph_path = CorpusFile(dir + "tfprof_log");
  profile_as_oplog.graph_path = graph;
  profile_as_oplog.op_log_path = profile;
  meta_as_oplog.graph_path = graph;
  meta_as_oplog.op_log_path = CorpusFile(dir + "ckpt.meta");
  for (const Case& c :
       {Case{oplog_as_graph, "tfprof_log", "tensorflow.GraphDef"},
        Case{profile_as_oplog, "profile_0", "tensorflow.tfprof.OpLogProto"},
        Case{meta_as_oplog, "ckpt.meta", "tensorflow.tfprof.OpLogProto"}}) {
    INFO(c.file);
    const std::string msg = ErrorOf(c.paths);
    CHECK(msg.find(std::string(c.file) + ": not a binary " + c.type + " (") !=
          std::string::npos);
    CHECK(msg.find("has the wrong wire type") != std::string::npos);
    CHECK(msg.find("an OpLog to --op_log_path") != std::string::npos);
  }
  // The right files still load.
  InputPaths right = testing::TfTestData();
  CHECK(LoadProfile(right).ok());
}

// The list of a directory's entries (but . and ..).
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(d);
  }
  return names;
}

// What tfprof's SIGINT handler calls: the temporary file of a write under
// way is taken away (the write then fails, leaving nothing behind).
TEST_CASE("The temporary file of a write under way can be removed") {
  const std::string dir = TempDir() + "/pending";
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  const std::string contents(size_t{64} << 20, 'x');
  bool removed = false;
  // (The write may end before the temporary file is seen: then again.)
  for (int attempt = 0; attempt < 5 && !removed; ++attempt) {
    std::atomic<bool> done{false};
    absl::Status status;
    std::thread writer([&] {
      status = WriteFileAtomic(dir + "/out", contents);
      done = true;
    });
    bool seen = false;
    while (!done && !seen) {
      for (const std::string& name : Entries(dir)) {
        if (name.rfind("out.tmp.", 0) == 0) seen = true;
      }
      if (seen) RemovePendingTemporaryFile();
    }
    writer.join();
    removed = seen && !status.ok();
    if (removed) {
      CHECK(Entries(dir).empty());
    } else {
      ::unlink((dir + "/out").c_str());
    }
  }
  CHECK(removed);
  RemovePendingTemporaryFile();  // with none pending: nothing happens
  REQUIRE(WriteFileAtomic(dir + "/out", "one").ok());
  RemovePendingTemporaryFile();
  CHECK(ReadFile(dir + "/out") == "one");
}

TEST_CASE("Output files are written atomically and never over inputs") {
  const std::string dir = TempDir();
  const std::string out = dir + "/report.txt";
  REQUIRE(WriteFileAtomic(out, "one").ok());
  REQUIRE(WriteFileAtomic(out, "two").ok());
  CHECK(ReadFile(out) == "two");
  WriteFile(dir + "/input", "precious");
  auto s = WriteFileAtomic(dir + "/input", "x", {dir + "/input"});
  CHECK_FALSE(s.ok());
  CHECK(ReadFile(dir + "/input") == "precious");
  CHECK_FALSE(WriteFileAtomic(dir + "/no/such/dir/f", "x").ok());
  // A full disk: a clear error, and the device stays a device.
  auto full = WriteFileAtomic("/dev/full", "some report");
  REQUIRE_FALSE(full.ok());
  CHECK(std::string(full.message()).find("/dev/full") != std::string::npos);
  struct stat st;
  REQUIRE(::stat("/dev/full", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // Nothing partial is left next to a file whose write failed.
  WriteFile(dir + "/keep", "old");
  ::chmod(dir.c_str(), 0500);
  const bool as_root = ::geteuid() == 0;  // root ignores the permission
  if (!as_root) CHECK_FALSE(WriteFileAtomic(dir + "/keep", "new").ok());
  ::chmod(dir.c_str(), 0700);
  CHECK(ReadFile(dir + "/keep") == (as_root ? ReadFile(dir + "/keep") : "old"));
  CHECK_FALSE(WriteFileAtomic(dir, "x").ok());
}

bool IsLink(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

TEST_CASE("Output through a link writes its target; a file keeps its mode") {
  const std::string dir = TempDir();
  // A link to a file: the file gets the bytes, the link stays a link.
  WriteFile(dir + "/target.txt", "old");
  ::chmod((dir + "/target.txt").c_str(), 0600);
  REQUIRE(::symlink("target.txt", (dir + "/link.txt").c_str()) == 0);
  REQUIRE(WriteFileAtomic(dir + "/link.txt", "new").ok());
  CHECK(IsLink(dir + "/link.txt"));
  CHECK(ReadFile(dir + "/target.txt") == "new");
  struct stat st;
  REQUIRE(::stat((dir + "/target.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);  // a private report stays private
  // A link to no file yet: written through, creating it.
  REQUIRE(::symlink("later.txt", (dir + "/dangling").c_str()) == 0);
  REQUIRE(WriteFileAtomic(dir + "/dangling", "made").ok());
  CHECK(IsLink(dir + "/dangling"));
  CHECK(ReadFile(dir + "/later.txt") == "made");
  // A descriptor of this process (/dev/stdout is one): its own file gets
  // the bytes, not a new file of the same name that the descriptor misses;
  // a link to it likewise.
  const std::string held = dir + "/held.txt";
  WriteFile(held, "");
  const int fd = ::open(held.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  const std::string by_fd = absl::StrCat("/proc/self/fd/", fd);
  REQUIRE(::symlink(by_fd.c_str(), (dir + "/to_fd").c_str()) == 0);
  // Chains of links, relative ones among them, and a directory link into
  // /proc lead there too.
  REQUIRE(::symlink("to_fd", (dir + "/chain").c_str()) == 0);
  REQUIRE(::symlink("/proc/self/fd", (dir + "/fds").c_str()) == 0);
  const std::string in_fds = absl::StrCat(dir, "/fds/", fd);
  for (const std::string& path :
       {by_fd, dir + "/to_fd", dir + "/chain", in_fds}) {
    INFO(path);
    REQUIRE(::ftruncate(fd, 0) == 0);
    REQUIRE(WriteFileAtomic(path, "via fd").ok());
    char buf[16] = {0};
    CHECK(::pread(fd, buf, sizeof(buf) - 1, 0) == 6);
    CHECK(std::string(buf) == "via fd");
    CHECK(ReadFile(held) == "via fd");
  }
  // Written through a descriptor to a file, the bytes follow what the file
  // holds (standard output sent to a file holds what was printed before).
  REQUIRE(::ftruncate(fd, 0) == 0);
  REQUIRE(::pwrite(fd, "printed;", 8, 0) == 8);
  REQUIRE(WriteFileAtomic(by_fd, "report").ok());
  CHECK(ReadFile(held) == "printed;report");
  ::close(fd);
  // A chain of relative links to a file: the last target is written.
  REQUIRE(::mkdir((dir + "/sub").c_str(), 0700) == 0);
  REQUIRE(::symlink("../target.txt", (dir + "/sub/up").c_str()) == 0);
  REQUIRE(::symlink("sub/up", (dir + "/two_hops").c_str()) == 0);
  REQUIRE(WriteFileAtomic(dir + "/two_hops", "hopped").ok());
  CHECK(IsLink(dir + "/two_hops"));
  CHECK(IsLink(dir + "/sub/up"));
  CHECK(ReadFile(dir + "/target.txt") == "hopped");
}

}  // namespace
}  // namespace tfprof
