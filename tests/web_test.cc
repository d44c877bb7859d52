// The web UI's JSON API and HTTP server: every number the paged API returns
// equals the whole -output json tree of the same query; bad requests get a
// JSON error and the server goes on answering; hostile requests (traversal,
// other methods, other hosts, huge and slow requests, bursts) are refused or
// outlived.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/app.h"
#include "cli/shell.h"
#include "profiler/base/gzip.h"
#include "profiler/load/loader.h"
#include "profiler/render/render_json_csv.h"
#include "profiler/render/render_steps.h"
#include "profiler/views/views.h"
#include "profiler/web/api.h"
#include "profiler/web/assets.h"
#include "profiler/web/server.h"
#include "tests/json_parse.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

using testing::JsonValue;

std::unique_ptr<Session> LoadRun(const std::string& rel) {
  InputPaths in;
  in.profile_path = testing::CorpusFile(rel);
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Load(in);
  REQUIRE(s.ok());
  return std::move(*s);
}

// A run and its web API (no base run).
struct RunApi {
  explicit RunApi(const std::string& rel)
      : run(LoadRun(rel)),
        api(run.get(), WebInputFlags{"--profile_path=p", ""}, Options()) {}
  std::unique_ptr<Session> run;
  WebApi api;
};

JsonValue Parse(const std::string& text) {
  JsonValue v;
  std::string error;
  INFO(text.substr(0, 300));
  REQUIRE(testing::ParseJson(text, &v, &error));
  return v;
}

WebReply Get(WebApi& api, const std::string& path, const WebParams& params) {
  return api.Get(path, params);
}

// Walks the tree a level at a time through the API, as the page does, and
// checks each node against the same node of the whole tree.
void CompareLevels(WebApi& api, const WebParams& query, const JsonValue& whole,
                   int64_t id, int* visited) {
  WebParams q = query;
  q.push_back({"node", std::to_string(id)});
  q.push_back({"levels", "1"});
  q.push_back({"limit", "7"});  // several pages for wide nodes
  std::vector<JsonValue> children;
  int64_t child_count = -1;
  for (size_t offset = 0;; offset += 7) {
    WebParams page = q;
    page.push_back({"offset", std::to_string(offset)});
    WebReply r = Get(api, "/api/view", page);
    REQUIRE(r.status == 200);
    const JsonValue node = Parse(r.body).at("node");
    CHECK(node.at("name").string == whole.at("name").string);
    for (const char* attr : {"micros", "bytes", "params", "float_ops"}) {
      if (!whole.Has(attr)) continue;
      CHECK(node.at(attr).at("self").number ==
            whole.at(attr).at("self").number);
      CHECK(node.at(attr).at("total").number ==
            whole.at(attr).at("total").number);
    }
    child_count = static_cast<int64_t>(node.at("child_count").number);
    for (const JsonValue& c : node.at("children").array) children.push_back(c);
    if (node.at("children").array.size() < 7) break;
  }
  ++*visited;
  REQUIRE(child_count ==
          static_cast<int64_t>(whole.at("children").array.size()));
  REQUIRE(children.size() == whole.at("children").array.size());
  for (size_t i = 0; i < children.size(); ++i) {
    CHECK(children[i].at("name").string ==
          whole.at("children").array[i].at("name").string);
    if (children[i].at("child_count").number > 0) {
      CompareLevels(api, query, whole.at("children").array[i],
                    static_cast<int64_t>(children[i].at("id").number), visited);
    }
  }
}

TEST_CASE("web API: the tree a level at a time equals the whole -output json") {
  RunApi served("shiyudian-resnet-tf-dist/profile_0_tiny");
  WebApi& api = served.api;
  for (const char* view : {"scope", "graph", "op"}) {
    INFO(view);
    const WebParams query = {{"view", view},
                             {"max_depth", "4"},
                             {"select", "micros,bytes,params,float_ops"},
                             {"order_by", "micros"}};
    // The whole tree, as the command line's -output json prints it.
    Options opts;
    opts.max_depth = 4;
    opts.select = {Attr::kMicros, Attr::kBytes, Attr::kParams, Attr::kFloatOps};
    opts.order_by = Attr::kMicros;
    absl::StatusOr<ResultTree> tree = served.run->Query(*ViewNamed(view), opts);
    REQUIRE(tree.ok());
    WebParams all = query;
    all.push_back({"levels", "all"});
    WebReply whole = Get(api, "/api/view", all);
    REQUIRE(whole.status == 200);
    CHECK(whole.body == RenderJson(*tree));
    int visited = 0;
    CompareLevels(api, query, Parse(whole.body).at("root"), 0, &visited);
    // Tree views open nodes below the root; the op view pages its rows.
    CHECK(visited > (std::string(view) == "op" ? 0 : 1));
  }
}

// Whole-tree nodes whose total micros reach `min`, by path, from the root
// down through kept nodes only.
void KeptPaths(const JsonValue& n, double min, const std::string& path,
               std::vector<std::string>* out) {
  out->push_back(path + "/" + n.at("name").string);
  for (const JsonValue& c : n.at("children").array) {
    if (c.at("micros").at("total").number >= min) {
      KeptPaths(c, min, path + "/" + n.at("name").string, out);
    }
  }
}

TEST_CASE("web API: a flame graph's tree leaves out the small subtrees") {
  RunApi served("shiyudian-resnet-tf-dist/profile_100");
  WebApi& api = served.api;
  const WebParams query = {
      {"view", "scope"}, {"max_depth", "100"}, {"order_by", "micros"}};
  WebParams all = query;
  all.push_back({"levels", "all"});
  const JsonValue whole = Parse(Get(api, "/api/view", all).body).at("root");
  all.push_back({"min_share", "0.01"});
  const WebReply r = Get(api, "/api/view", all);
  INFO(r.body);
  REQUIRE(r.status == 200);
  const JsonValue pruned = Parse(r.body).at("node");
  const double min = 0.01 * whole.at("micros").at("total").number;
  std::vector<std::string> want, got;
  KeptPaths(whole, min, "", &want);
  // Every node returned reaches the share; hidden_children counts the rest.
  std::function<void(const JsonValue&, const std::string&)> walk =
      [&](const JsonValue& n, const std::string& path) {
        got.push_back(path + "/" + n.at("name").string);
        int64_t hidden =
            n.Has("hidden_children")
                ? static_cast<int64_t>(n.at("hidden_children").number)
                : 0;
        CHECK(static_cast<int64_t>(n.at("children").array.size()) + hidden ==
              static_cast<int64_t>(n.at("child_count").number));
        for (const JsonValue& c : n.at("children").array) {
          CHECK(c.at("micros").at("total").number >= min);
          walk(c, path + "/" + n.at("name").string);
        }
      };
  walk(pruned, "");
  CHECK(got == want);
  CHECK(got.size() > 5);
  CHECK(got.size() < 100);
  CHECK(Get(api, "/api/view", {{"min_share", "0.5"}}).status == 400);
  CHECK(Get(api, "/api/view", {{"levels", "all"}, {"min_share", "2"}}).status ==
        400);
}

TEST_CASE("web API: the command shown runs the same query") {
  Options opts;
  opts.max_depth = 3;
  opts.order_by = Attr::kMicros;
  opts.show_name_regexes = {"conv.*", "a b"};
  const std::string cmd = EquivalentCommand("--profile_path=p", "scope", opts);
  CHECK(cmd ==
        "tfprof --profile_path=p scope -max_depth 3 -order_by micros "
        "-show_name_regexes 'conv.*,a b'");
  absl::StatusOr<std::vector<std::string>> words = cli::Tokenize(cmd);
  REQUIRE(words.ok());
  Options parsed;
  REQUIRE(ParseOptionTokens(*words, 3, &parsed).ok());
  CHECK(OptionsToString(parsed) == OptionsToString(opts));
  CHECK(ShellQuote("it's") == "'it'\\''s'");
}

TEST_CASE("web API: bad requests answer a JSON error naming the problem") {
  RunApi served("shiyudian-resnet-tf-dist/profile_0_tiny");
  WebApi& api = served.api;
  struct Case {
    std::string path;
    WebParams params;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"/api/view", {{"max_dept", "3"}}, 400, "did you mean"},
      {"/api/view", {{"view", "nope"}}, 400, "unknown view"},
      {"/api/view",
       {{"max_depth", "99999999999999999999999"}},
       400,
       "max_depth"},
      {"/api/view", {{"show_name_regexes", "("}}, 400, "regex"},
      {"/api/view", {{"output", "file:outfile=/tmp/x"}}, 400, "output"},
      {"/api/view", {{"levels", "100000"}}, 400, "levels"},
      {"/api/view", {{"limit", "1000000000"}}, 400, "limit"},
      {"/api/view", {{"node", "123456789"}}, 404, "no node"},
      {"/api/view", {{"node", "-1"}}, 400, "node"},
      {"/api/view", {{"step", "12345"}}, 400, "step"},
      {"/api/view", {{"select", std::string(10000, 'a')}}, 400, "too long"},
      {"/api/diff", {}, 400, "no base run"},
      {"/api/advise", {{"checker", "nope"}}, 400, "no checker"},
      {"/api/timeline", {{"step", "x"}}, 400, "step=N"},
      {"/api/timeline", {{"steps", "5-3"}}, 400, "steps=A-B"},
      {"/api/timeline", {{"steps", "3"}}, 400, "steps=A-B"},
      {"/api/timeline", {{"steps", "1-2-3"}}, 400, "steps=A-B"},
      // A ProfileProto's timeline is the graph view's: one step.
      {"/api/timeline", {{"steps", "0-1"}}, 400, "range of steps"},
      // A step that is not there is refused with the steps there are.
      {"/api/steps", {{"step", "99"}}, 400, "is not a step of this profile"},
      {"/api/steps", {{"step", "x"}}, 400, "step=N"},
      {"/api/steps", {{"steps", "1"}}, 400, "step=N"},
      // The whole-run endpoints take no parameters: a step asked of them
      // is refused, not answered with every step.
      {"/api/summary", {{"bogus", "1"}}, 400, "summary takes none"},
      {"/api/memory", {{"step", "0"}}, 400, "memory takes none"},
      {"/api/info", {{"x", ""}}, 400, "info takes none"},
      {"/api/../etc/passwd", {}, 404, "no such endpoint"},
      {"/api/nothing", {}, 404, "no such endpoint"},
  };
  for (const Case& c : cases) {
    INFO(c.path << " " << (c.params.empty() ? "" : c.params[0].first));
    WebReply r = Get(api, c.path, c.params);
    CHECK(r.status == c.status);
    const JsonValue body = Parse(r.body);
    REQUIRE(body.Has("error"));
    CHECK_THAT(body.at("error").string, Catch::Contains(c.says));
  }
  WebParams many;
  for (int i = 0; i < 100; ++i) many.push_back({"max_depth", "1"});
  CHECK(Get(api, "/api/view", many).status == 400);
  // And it goes on answering.
  CHECK(Get(api, "/api/view", {{"view", "scope"}}).status == 200);
}

TEST_CASE("web API: info, steps, summary, advise, timeline and diff answer") {
  std::unique_ptr<Session> current =
      LoadRun("shiyudian-resnet-tf-dist/profile_100");
  current->SetBase(LoadRun("shiyudian-resnet-tf-dist/profile_0"));
  WebApi api(current.get(),
             WebInputFlags{"--profile_path=c", "--base_profile_path=b"},
             Options());
  const JsonValue info = Parse(Get(api, "/api/info", {}).body);
  CHECK(info.at("base_input_flags").string == "--base_profile_path=b");
  CHECK(info.at("options").array.size() + 1 == OptionTable().size());
  const JsonValue steps = Parse(Get(api, "/api/steps", {}).body);
  CHECK(steps.at("steps").array.size() == info.at("steps").array.size());
  // step=N: the one row `steps -step N` gives, the same bytes; -1: all.
  REQUIRE(!steps.at("steps").array.empty());
  const int64_t last =
      static_cast<int64_t>(steps.at("steps").array.back().at("step").number);
  const WebReply one = Get(api, "/api/steps", {{"step", absl::StrCat(last)}});
  REQUIRE(one.status == 200);
  absl::StatusOr<StepTable> row = current->Steps(last, PeakOverride());
  REQUIRE(row.ok());
  CHECK(one.body == RenderStepsJson(*row));
  const JsonValue one_json = Parse(one.body);
  REQUIRE(one_json.at("steps").array.size() == 1);
  CHECK(one_json.at("steps").array[0].at("step").number == last);
  CHECK(Get(api, "/api/steps", {{"step", "-1"}}).body ==
        Get(api, "/api/steps", {}).body);
  CHECK(Parse(Get(api, "/api/summary", {}).body).at("nodes").number ==
        current->model().nodes().size());
  CHECK(Parse(Get(api, "/api/advise", {{"checker", "all"}}).body)
            .at("checkers")
            .array.size() > 3);
  // A ProfileProto keeps no RunMetadata: the graph view's timeline.
  const WebReply t = Get(api, "/api/timeline", {});
  REQUIRE(t.status == 200);
  const JsonValue tl = Parse(t.body);
  CHECK(tl.at("source").string == "graph view");
  CHECK(tl.at("trace").at("traceEvents").array.size() > 10);
  const WebReply d =
      Get(api, "/api/diff",
          {{"view", "scope"}, {"max_depth", "2"}, {"map", "^a=>b"}});
  REQUIRE(d.status == 200);
  const JsonValue diff = Parse(d.body);
  CHECK_THAT(diff.at("command").string,
             Catch::Contains("diff scope -map '^a=>b'"));
  CHECK_THAT(diff.at("command").string,
             Catch::Contains("--base_profile_path=b"));
  CHECK(diff.at("diff").at("root").at("children").array.size() > 0);
  // profile_0 has one step: every row inconclusive, with the steps to add.
  const JsonValue& root = diff.at("diff").at("root");
  CHECK(root.at("verdict").string == "inconclusive");
  CHECK(root.at("more_steps_needed").number == 2);
  CHECK(root.at("ci_low").kind == JsonValue::kNull);
  CHECK(diff.at("diff").at("min_change").string == "2%,2us");
  const WebReply s = Get(api, "/api/diff", {{"view", "steps"}});
  REQUIRE(s.status == 200);
  CHECK(Parse(s.body).at("measures").array.size() == 7);
  const WebReply top =
      Get(api, "/api/diff", {{"view", "top"}, {"min_change", "5%,10us"}});
  REQUIRE(top.status == 200);
  CHECK(Parse(top.body).at("changes").kind == JsonValue::kArray);
  const WebReply bad = Get(api, "/api/diff", {{"alpha", "2"}});
  CHECK(bad.status == 400);
  CHECK_THAT(bad.body, Catch::Contains("parameter alpha wants"));
  const WebReply floor = Get(api, "/api/diff", {{"min_change", "lots"}});
  CHECK(floor.status == 400);
  CHECK_THAT(floor.body, Catch::Contains("parameter min_change 'lots'"));
}

// ---------------------------------------------------------------- server

// A server on a free loopback port, stopped at the end of the test.
class TestServer {
 public:
  explicit TestServer(WebApi* api, const std::string& host = "127.0.0.1") {
    ServeOptions o;
    o.address.host = host;
    o.threads = 4;
    std::atomic<int> port{0};
    o.on_listening = [&port](const std::string& url) {
      port = std::stoi(url.substr(url.rfind(':') + 1));
    };
    thread_ =
        std::thread([this, api, o] { status_ = ServeHttp(api, o, &stop_); });
    for (int i = 0; i < 500 && port == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    port_ = port;
  }
  ~TestServer() {
    stop_ = true;
    thread_.join();
  }
  int port() const { return port_; }
  const absl::Status& status() const { return status_; }

 private:
  std::atomic<bool> stop_{false};
  absl::Status status_;
  int port_ = 0;
  std::thread thread_;
};

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `request` as is and reads the reply until the server closes.
std::string Raw(int port, const std::string& request) {
  const int fd = Connect(port);
  if (fd < 0) return "";
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n =
        send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string reply;
  char buf[65536];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) reply.append(buf, n);
  close(fd);
  return reply;
}

std::string GetPath(int port, const std::string& target,
                    const std::string& host = "127.0.0.1") {
  return Raw(port, "GET " + target + " HTTP/1.1\r\nHost: " + host +
                       "\r\nConnection: close\r\n\r\n");
}

int StatusOf(const std::string& reply) {
  if (reply.size() < 12 || reply.compare(0, 5, "HTTP/") != 0) return 0;
  return std::stoi(reply.substr(9, 3));
}

// The body of a raw reply (after its headers).
std::string BodyOf(const std::string& reply) {
  const size_t at = reply.find("\r\n\r\n");
  return at == std::string::npos ? "" : reply.substr(at + 4);
}

std::string HeadersOf(const std::string& reply) {
  return reply.substr(0, reply.find("\r\n\r\n"));
}

TEST_CASE("web server: no Brotli; gzip at level 1 off loopback, none on it") {
  RunApi served("shiyudian-resnet-tf-dist/profile_0_tiny");
  const std::string target = "/api/view?view=scope&max_depth=100";
  const WebReply direct =
      served.api.Get("/api/view", {{"view", "scope"}, {"max_depth", "100"}});
  REQUIRE(direct.body.size() > 1024);
  const std::string ask =
      "GET " + target +
      " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: br, gzip, "
      "deflate\r\nConnection: close\r\n\r\n";
  {
    // On loopback: the bytes as made, however the client asks.
    TestServer loopback(&served.api);
    REQUIRE(loopback.port() > 0);
    const std::string reply = Raw(loopback.port(), ask);
    CHECK(StatusOf(reply) == 200);
    CHECK_THAT(HeadersOf(reply),
               !Catch::Contains("Content-Encoding", Catch::CaseSensitive::No));
    CHECK(BodyOf(reply) == direct.body);
  }
  // Off loopback (all addresses): gzip for clients that take it, never br.
  TestServer open(&served.api, "0.0.0.0");
  REQUIRE(open.port() > 0);
  const std::string reply = Raw(open.port(), ask);
  CHECK(StatusOf(reply) == 200);
  CHECK_THAT(HeadersOf(reply), Catch::Contains("Content-Encoding: gzip"));
  absl::StatusOr<std::string> body = Gunzip(BodyOf(reply));
  REQUIRE(body.ok());
  CHECK(*body == direct.body);
  const std::string plain =
      Raw(open.port(), "GET " + target +
                           " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: "
                           "br\r\nConnection: close\r\n\r\n");
  CHECK_THAT(HeadersOf(plain),
             !Catch::Contains("Content-Encoding", Catch::CaseSensitive::No));
  CHECK(BodyOf(plain) == direct.body);
  CHECK(StatusOf(GetPath(open.port(), "/favicon.ico")) == 200);
}

TEST_CASE("web API: queries from several threads at once answer as alone") {
  // Each thread asks its own mix of queries; every answer must equal the
  // same query asked with no other running (the first, serial pass).
  RunApi served("shiyudian-resnet-tf-dist/profile_0_tiny");
  std::vector<WebParams> queries;
  for (const char* view : {"scope", "graph", "op", "code"}) {
    for (const char* order : {"micros", "bytes", "name"}) {
      queries.push_back({{"view", view},
                         {"order_by", order},
                         {"max_depth", "4"},
                         {"select", "micros,bytes,occurrence"}});
    }
  }
  std::vector<std::string> alone;
  for (const WebParams& q : queries) {
    const WebReply r = served.api.Get("/api/view", q);
    REQUIRE(r.status == 200);
    alone.push_back(r.body);
  }
  // A fresh API (no cached answers) asked by 6 threads at once.
  WebApi fresh(served.run.get(), WebInputFlags{"--profile_path=p", ""},
               Options());
  served.run->ResetViews();
  std::atomic<int> same{0}, asked{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < queries.size(); ++i) {
        const size_t k = (i * 5 + static_cast<size_t>(t) * 7) % queries.size();
        const WebReply r = fresh.Get("/api/view", queries[k]);
        ++asked;
        if (r.status == 200 && r.body == alone[k]) ++same;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(asked == static_cast<int>(6 * queries.size()));
  CHECK(same == asked);
}

TEST_CASE("web API: a query runs while others hold views; past the pool's") {
  // Three queries under way (their views leased) leave room for a fourth:
  // it answers. With all four leased a query waits for one to come back.
  RunApi served("shiyudian-resnet-tf-dist/profile_0_tiny");
  const WebParams q = {{"view", "scope"}, {"max_depth", "3"}};
  const std::string alone = served.api.Get("/api/view", q).body;
  WebApi fresh(served.run.get(), WebInputFlags{"--profile_path=p", ""},
               Options());
  std::vector<ViewsPool::Lease> held;
  for (int i = 0; i < 3; ++i) held.push_back(served.run->LeaseViews());
  auto answer = std::async(std::launch::async,
                           [&] { return fresh.Get("/api/view", q).body; });
  // A guard against a hang, not a timing: the query needs no one else.
  REQUIRE(answer.wait_for(std::chrono::seconds(120)) ==
          std::future_status::ready);
  CHECK(answer.get() == alone);
  held.push_back(served.run->LeaseViews());  // all four leased
  std::atomic<bool> done{false};
  auto waiting = std::async(std::launch::async, [&] {
    std::string body = fresh.Get("/api/view", {{"view", "op"}}).body;
    done = true;
    return body;
  });
  CHECK_FALSE(done.load());  // it cannot have a views yet
  held.pop_back();           // one comes back
  REQUIRE(waiting.wait_for(std::chrono::seconds(120)) ==
          std::future_status::ready);
  CHECK(waiting.get() == served.api.Get("/api/view", {{"view", "op"}}).body);
}

// The command line's stdout for `args` (the test fails on a non-zero exit).
std::string CliOut(const std::vector<std::string>& args) {
  std::istringstream in;
  std::ostringstream out, err;
  cli::AppIo io{&in, &out, &err, false};
  INFO(err.str());
  REQUIRE(cli::RunApp(args, io) == 0);
  return out.str();
}

// The bundled two DDP ranks (rank 1 held 30 ms before steps 3 and 5).
const char kDdpGloo[] = "testdata/ranks/ddp-gloo";

std::unique_ptr<Session> LoadTraces(const std::string& trace_path) {
  InputPaths in;
  in.trace_path = trace_path;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Load(in);
  REQUIRE(s.ok());
  return std::move(*s);
}

TEST_CASE("web API: /api/ranks is ranks -output json; ranks_timeline's") {
  std::unique_ptr<Session> run = LoadTraces(kDdpGloo);
  WebApi api(run.get(), WebInputFlags{"--trace_path=d", ""}, Options());
  CHECK(Parse(Get(api, "/api/info", {}).body).at("ranks").number == 2);
  const WebReply r = Get(api, "/api/ranks", {});
  REQUIRE(r.status == 200);
  const std::string flag = std::string("--trace_path=") + kDdpGloo;
  CHECK(r.body == CliOut({flag, "ranks", "-output", "json"}));
  // What it says, against the run's own record (ddp2_ref.json): the
  // straggling rank and steps, each rank's step walls within 0.1 ms.
  const JsonValue got = Parse(r.body);
  JsonValue ref;
  std::string error;
  REQUIRE(testing::ParseJsonFile(std::string(kDdpGloo) + "/ddp2_ref.json", &ref,
                                 &error));
  std::set<double> steps, want;
  for (const JsonValue& s : got.at("stragglers").array) {
    CHECK(s.at("rank").number == ref.at("straggler_rank").number);
    steps.insert(s.at("step").number);
  }
  for (const JsonValue& s : ref.at("straggler_steps").array) {
    want.insert(s.number);
  }
  CHECK(steps == want);
  int compared = 0;
  for (const JsonValue& rank : ref.at("ranks").array) {
    const JsonValue& mine =
        got.at("ranks").array.at(static_cast<size_t>(rank.at("rank").number));
    for (const JsonValue& w : rank.at("walls").array) {
      for (const JsonValue& s : mine.at("steps").array) {
        if (s.at("step").number != w.at("step").number) continue;
        CHECK(std::abs(s.at("wall_micros").number / 1e6 -
                       w.at("wall_s").number) < 1e-4);
        ++compared;
      }
    }
  }
  CHECK(compared == 10);
  // A step of every rank on the aligned clock: the trace `ranks -output
  // timeline -step 3` writes; without step=, the first step's.
  const std::string file = testing::TempDir() + "/ranks3.json";
  CliOut({flag, "ranks", "-step", "3", "-output", "timeline:outfile=" + file});
  const WebReply t = Get(api, "/api/ranks_timeline", {{"step", "3"}});
  REQUIRE(t.status == 200);
  CHECK(t.body ==
        "{\"step\": 3,\n\"trace\": " + testing::ReadFile(file) + "}\n");
  const JsonValue first = Parse(Get(api, "/api/ranks_timeline", {}).body);
  CHECK(first.at("step").number ==
        got.at("steps").array.at(0).at("step").number);
  CHECK(first.at("trace").at("traceEvents").array.size() > 100);
  // Bad requests: a clean JSON error naming the problem.
  const std::vector<std::tuple<std::string, WebParams, std::string>> bad = {
      {"/api/ranks_timeline", {{"step", "99"}}, "no rank has step 99"},
      {"/api/ranks_timeline", {{"step", "x"}}, "step=N"},
      {"/api/ranks_timeline", {{"step", "-3"}}, "step=N"},
      {"/api/ranks_timeline", {{"rank", "1"}}, "step=N"},
      {"/api/ranks", {{"step", "3"}}, "unknown parameter 'step'"},
  };
  for (const auto& [path, params, says] : bad) {
    INFO(path << " " << params[0].first << "=" << params[0].second);
    const WebReply e = Get(api, path, params);
    CHECK(e.status == 400);
    const JsonValue body = Parse(e.body);
    REQUIRE(body.Has("error"));
    CHECK_THAT(body.at("error").string, Catch::Contains(says));
  }
  CHECK(Get(api, "/api/ranks", {}).body == r.body);  // and it goes on
}

TEST_CASE("web API: one rank's /api/ranks says it has one") {
  RunApi served("shiyudian-resnet-tf-dist/profile_0_tiny");
  CHECK(Parse(Get(served.api, "/api/info", {}).body).at("ranks").number == 1);
  const WebReply r = Get(served.api, "/api/ranks", {});
  REQUIRE(r.status == 200);
  CHECK(r.body == CliOut({"--profile_path=" +
                              testing::CorpusFile(
                                  "shiyudian-resnet-tf-dist/profile_0_tiny"),
                          "ranks", "-output", "json"}));
  const JsonValue v = Parse(r.body);
  CHECK(v.at("ranks").array.size() == 1);
  REQUIRE_FALSE(v.at("notes").array.empty());
  CHECK_THAT(v.at("notes").array[0].string, Catch::StartsWith("one rank"));
}

TEST_CASE("web API: a trace's timeline of a range of steps") {
  const std::string path =
      std::string(kDdpGloo) + "/ddp2_rank0.pt.trace.json.gz";
  std::unique_ptr<Session> run = LoadTraces(path);
  WebApi api(run.get(), WebInputFlags{"--trace_path=r", ""}, Options());
  const WebReply r = Get(api, "/api/timeline", {{"steps", "3-4"}});
  REQUIRE(r.status == 200);
  const JsonValue v = Parse(r.body);
  CHECK(v.at("step").number == 3);
  CHECK(v.at("last_step").number == 4);
  CHECK(v.at("source").string == "trace");
  // Both steps' events and GPU annotations (trace_timeline_test checks
  // them against the raw trace).
  std::set<double> steps;
  int annotations = 0;
  for (const JsonValue& e : v.at("trace").at("traceEvents").array) {
    if (e.at("ph").string != "X") continue;
    steps.insert(e.at("args").at("step").number);
    annotations += e.at("cat").string == "Annotation";
  }
  CHECK(steps == std::set<double>{3, 4});
  CHECK(annotations > 2);
  // The trace `timeline -steps 3-4` writes.
  const std::string file = testing::TempDir() + "/steps3-4.json";
  CliOut(
      {"--trace_path=" + path, "timeline", "-steps", "3-4", "-outfile", file});
  CHECK(r.body ==
        "{\"step\": 3, \"last_step\": 4, \"source\": \"trace\",\n\"trace\": " +
            testing::ReadFile(file) + "}\n");
  const JsonValue one = Parse(Get(api, "/api/timeline", {{"step", "3"}}).body);
  CHECK(one.at("last_step").number == 3);
  const WebReply none = Get(api, "/api/timeline", {{"steps", "900-901"}});
  CHECK(none.status == 400);
  CHECK_THAT(Parse(none.body).at("error").string,
             Catch::Contains("-steps 900-901 starts at step 900, which is "
                             "not a step of this profile"));
  // A range must end at a step of the run (3-999 was answered as 3-6).
  const WebReply past = Get(api, "/api/timeline", {{"steps", "3-999"}});
  CHECK(past.status == 400);
  CHECK_THAT(Parse(past.body).at("error").string,
             Catch::Contains("-steps 3-999 ends at step 999, which is not a "
                             "step of this profile (steps: 2 3 4 5 6)"));
}

TEST_CASE("web API: ranks requests from several threads answer as alone") {
  // The session's ranks methods lock their caches: requests for the ranks,
  // an aligned step, the (combined) steps and a view, all at once on a
  // fresh session, answer as they do one at a time.
  std::unique_ptr<Session> serial = LoadTraces(kDdpGloo);
  WebApi alone_api(serial.get(), WebInputFlags{"--trace_path=d", ""},
                   Options());
  const std::vector<std::pair<std::string, WebParams>> asks = {
      {"/api/ranks", {}},
      {"/api/ranks_timeline", {{"step", "3"}}},
      {"/api/ranks_timeline", {{"step", "5"}}},
      {"/api/steps", {}},
      {"/api/view", {{"view", "op"}, {"max_depth", "5"}}},
  };
  std::vector<std::string> alone;
  for (const auto& [path, params] : asks) {
    const WebReply r = alone_api.Get(path, params);
    REQUIRE(r.status == 200);
    alone.push_back(r.body);
  }
  std::unique_ptr<Session> run = LoadTraces(kDdpGloo);
  WebApi api(run.get(), WebInputFlags{"--trace_path=d", ""}, Options());
  std::atomic<int> same{0}, asked{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < asks.size(); ++i) {
        const size_t k = (i + static_cast<size_t>(t)) % asks.size();
        const WebReply r = api.Get(asks[k].first, asks[k].second);
        ++asked;
        if (r.status == 200 && r.body == alone[k]) ++same;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(asked == static_cast<int>(4 * asks.size()));
  CHECK(same == asked);
}

TEST_CASE("web server: serves its page and API, refuses the rest, stays up") {
  RunApi served("shiyudian-resnet-tf-dist/profile_0_tiny");
  WebApi& api = served.api;
  TestServer server(&api);
  const int port = server.port();
  REQUIRE(port > 0);
  const std::string page = GetPath(port, "/");
  CHECK(StatusOf(page) == 200);
  CHECK_THAT(page, Catch::Contains("Content-Security-Policy"));
  CHECK_THAT(page, Catch::Contains("/static/app.js"));
  for (const Asset& a : Assets()) {
    CHECK(StatusOf(GetPath(port, "/static/" + std::string(a.name))) == 200);
  }
  CHECK(StatusOf(GetPath(port, "/api/view?view=scope&max_depth=2")) == 200);
  // Traversal and unknown files: only the embedded files exist.
  for (const char* bad :
       {"/static/../../etc/passwd", "/static/%2e%2e/%2e%2e/etc/passwd",
        "/../../etc/passwd", "/static/", "/static/nope.js", "/etc/passwd",
        "/static/app.js/..", "//etc/passwd"}) {
    INFO(bad);
    const int status = StatusOf(GetPath(port, bad));
    CHECK((status == 404 || status == 400));
  }
  CHECK(StatusOf(GetPath(port, "/api/view?max_depth=x")) == 400);
  // A value holding '=' is all of it after the first '=' (it was cut at the
  // last one: "a=b" became "b"), encoded or not.
  for (const char* q :
       {"show_name_regexes=gradients=x", "show_name_regexes=gradients%3Dx"}) {
    INFO(q);
    const std::string reply =
        GetPath(port, std::string("/api/view?view=scope&") + q);
    CHECK(StatusOf(reply) == 200);
    CHECK_THAT(reply, Catch::Contains("-show_name_regexes gradients=x"));
  }
  CHECK(StatusOf(Raw(port,
                     "POST /api/view HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Content-Length: 2\r\nConnection: close\r\n\r\n{}")) ==
        405);
  CHECK(StatusOf(Raw(port,
                     "DELETE / HTTP/1.1\r\nHost: localhost\r\n"
                     "Connection: close\r\n\r\n")) == 405);
  // A page elsewhere reaching us through a rebound name is refused.
  CHECK(StatusOf(GetPath(port, "/api/info", "evil.example:80")) == 403);
  CHECK(StatusOf(GetPath(port, "/api/info", "localhost:1")) == 200);
  // Huge requests: a 100 KB target, 100 KB of headers, garbage.
  CHECK(StatusOf(GetPath(
            port, "/api/view?select=" + std::string(100000, 'a'))) != 200);
  Raw(port, "GET / HTTP/1.1\r\nX: " + std::string(100000, 'b') + "\r\n\r\n");
  Raw(port, std::string(5000, '\x01') + "\r\n\r\n");
  CHECK(StatusOf(GetPath(port, "/api/info")) == 200);
}

TEST_CASE("web server: slow clients and a burst of 1,000 requests") {
  RunApi served("shiyudian-resnet-tf-dist/profile_0_tiny");
  WebApi& api = served.api;
  TestServer server(&api);
  const int port = server.port();
  REQUIRE(port > 0);
  // Three clients that send half a request and wait: the server (4
  // threads) still answers others.
  std::vector<int> slow;
  for (int i = 0; i < 3; ++i) {
    const int fd = Connect(port);
    REQUIRE(fd >= 0);
    send(fd, "GET /api/info HTTP/1.1\r\nHo", 26, MSG_NOSIGNAL);
    slow.push_back(fd);
  }
  CHECK(StatusOf(GetPath(port, "/api/info")) == 200);
  // 1,000 requests from 4 threads at once.
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&ok, port, t] {
      for (int i = 0; i < 250; ++i) {
        const std::string target =
            i % 2 ? "/api/view?view=op&limit=5" : "/static/app.js";
        if (StatusOf(GetPath(port, target)) == 200) ++ok;
        (void)t;
      }
    });
  }
  for (std::thread& c : clients) c.join();
  CHECK(ok == 1000);
  for (int fd : slow) close(fd);
  CHECK(StatusOf(GetPath(port, "/api/info")) == 200);
}

TEST_CASE("web server: listen addresses") {
  CHECK(ParseListenAddress("8080")->port == 8080);
  CHECK(ParseListenAddress("8080")->host == "127.0.0.1");
  CHECK(ParseListenAddress(":0")->port == 0);
  CHECK(ParseListenAddress("0.0.0.0:81")->host == "0.0.0.0");
  CHECK(ParseListenAddress("[::1]:81")->host == "::1");
  CHECK_FALSE(ParseListenAddress("host").ok());
  CHECK_FALSE(ParseListenAddress("1:99999").ok());
  CHECK(std::string(ParseListenAddress("999999").status().message())
            .find("port 999999 is out of range") != std::string::npos);
  CHECK_FALSE(ParseListenAddress("[::1]").ok());
  CHECK(IsLoopbackHost("127.0.0.2"));
  CHECK(IsLoopbackHost("LOCALHOST"));
  CHECK(IsLoopbackHost("::1"));
  CHECK_FALSE(IsLoopbackHost("0.0.0.0"));
  CHECK_FALSE(IsLoopbackHost("10.0.0.1"));
  CHECK_FALSE(IsLoopbackHost("127.0.0.1.evil.example"));
  // A port already taken is an error, not a crash.
  RunApi served("shiyudian-resnet-tf-dist/profile_0_tiny");
  WebApi& api = served.api;
  TestServer first(&api);
  REQUIRE(first.port() > 0);
  ServeOptions o;
  o.address = ListenAddress{"127.0.0.1", first.port()};
  std::atomic<bool> stop{false};
  absl::Status s = ServeHttp(&api, o, &stop);
  CHECK_FALSE(s.ok());
  CHECK_THAT(std::string(s.message()), Catch::Contains("cannot listen"));
}

}  // namespace
}  // namespace tfprof
