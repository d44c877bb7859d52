// The web UI's HTTP server: the embedded page (assets.h) and the JSON API
// (api.h), read-only, on loopback unless told otherwise.
#ifndef TFPROF_PROFILER_WEB_SERVER_H_
#define TFPROF_PROFILER_WEB_SERVER_H_

#include <atomic>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "profiler/web/api.h"

namespace tfprof {

struct ListenAddress {
  std::string host;  // an IP address or a name ("localhost")
  int port = 0;      // 0: any free port
};

// Parses "PORT", ":PORT", "HOST:PORT" or "[IPV6]:PORT"; a missing host is
// 127.0.0.1.
absl::StatusOr<ListenAddress> ParseListenAddress(const std::string& text);

// Whether a host is this machine only (127.0.0.0/8, ::1, localhost).
bool IsLoopbackHost(const std::string& host);

struct ServeOptions {
  ListenAddress address;
  int threads = 8;  // connections served at once
  // Told the page's URL once the socket is bound, and warnings (e.g. a
  // non-loopback address). Called on the serving thread.
  std::function<void(const std::string& url)> on_listening;
  std::function<void(const std::string& warning)> on_warning;
};

// Serves until *stop becomes true (checked ten times a second). Errors: the
// address cannot be bound.
absl::Status ServeHttp(WebApi* api, const ServeOptions& options,
                       const std::atomic<bool>* stop);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_WEB_SERVER_H_
