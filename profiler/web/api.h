// The web UI's JSON API: read-only requests on a loaded profile (and an
// optional base run) answered with the same data as the command line's
// -output json. No sockets here: the server (server.h) hands each request
// over as a path and its query parameters, which keeps the router testable
// and fuzzable on its own.
#ifndef TFPROF_PROFILER_WEB_API_H_
#define TFPROF_PROFILER_WEB_API_H_

#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "profiler/load/loader.h"
#include "profiler/session/session.h"
#include "profiler/views/options.h"
#include "profiler/views/result.h"
#include "profiler/views/views.h"

namespace tfprof {

struct WebReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// Query parameters in the order the request gave them (a name may repeat).
using WebParams = std::vector<std::pair<std::string, std::string>>;

// How the command line names the session's inputs ("--profile_path=p") and
// its base's ("--base_profile_path=p"), shown in the commands the page
// prints.
struct WebInputFlags {
  std::string current;
  std::string base;
};

// Limits on what one request may ask for.
inline constexpr size_t kMaxParamBytes = 4096;
inline constexpr size_t kMaxParams = 64;
inline constexpr size_t kMaxPageRows = 5000;
inline constexpr int kMaxLevels = 64;

class WebApi {
 public:
  // Answers from `session` (and its base, if it has one: the diff), which
  // must outlive this object. `defaults` are the options a request starts
  // from (the shell's current options).
  WebApi(Session* session, WebInputFlags flags, Options defaults);

  // Answers GET `path` (which starts with /api/). Never fails: errors are
  // 4xx replies with {"error": "..."}. Safe to call from several threads:
  // requests run side by side (each query on views of its own, see
  // session.h), sharing only the cache of results below.
  WebReply Get(const std::string& path, const WebParams& params);

  // The endpoints, for the help text and the docs: path and one line.
  static const std::vector<std::pair<std::string, std::string>>& Endpoints();

 private:
  std::string InfoJson() const;
  WebReply View(const WebParams& params);
  WebReply Diff(const WebParams& params);
  WebReply Steps(const WebParams& params);
  WebReply Summary();
  WebReply Memory();
  WebReply Advise(const WebParams& params);
  WebReply Timeline(const WebParams& params);
  WebReply Ranks();
  WebReply RanksTimeline(const WebParams& params);
  // The result of a view query, from the cache or run now.
  absl::StatusOr<std::shared_ptr<const ResultTree>> Query(ViewKind view,
                                                          const Options& opts);

  Session* session_;
  WebInputFlags flags_;
  Options defaults_;
  std::mutex mu_;  // guards the cache (never held while a query runs)
  // The last queries, most recent first (expanding a node repeats one).
  std::list<std::pair<std::string, std::shared_ptr<const ResultTree>>> cache_;
  // The answers that depend on the profile only: /api/info made at once
  // (no lock), the steps and summary on first request (the page asks for
  // them on every load), once.
  const std::string info_json_;
  std::once_flag steps_once_, summary_once_, memory_once_;
  std::string steps_json_, summary_json_, memory_json_;
  StepTable steps_;  // the whole table, for step=N (made with steps_json_)
  // The memory page: live allocations listed, points per allocator.
  static constexpr int64_t kMemoryTop = 50;
  static constexpr size_t kMemoryPoints = 4000;
};

// A word as a POSIX shell reads it back: as is, or in single quotes.
std::string ShellQuote(const std::string& word);

// "tfprof <input flags> <view> <options that differ from defaults>", each
// word quoted for a POSIX shell where it needs it.
std::string EquivalentCommand(const std::string& input_flags,
                              const std::string& command, const Options& opts);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_WEB_API_H_
