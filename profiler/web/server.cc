#include "profiler/web/server.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <chrono>
#include <exception>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"
#include "profiler/base/gzip.h"
#include "profiler/base/json_writer.h"
#include "profiler/web/assets.h"

namespace tfprof {
namespace {

constexpr size_t kMaxBodyBytes = 16 * 1024;  // GET only: no body is needed
constexpr int kReadTimeoutSeconds = 5;  // a slow client lets go of a thread
constexpr int kWriteTimeoutSeconds = 30;
// Replies compressed (off loopback only) when larger than this.
constexpr size_t kGzipMinBytes = 1024;
// Set by the pre-routing handler on requests whose replies we gzip.
constexpr char kGzipHeader[] = "X-Tfprof-Gzip";

void ReplyError(httplib::Response& res, int status, const std::string& msg) {
  res.status = status;
  res.set_content(absl::StrCat("{\"error\": ", JsonQuote(msg), "}\n"),
                  "application/json");
}

// The Host header's host, without its port ("[::1]:80" -> "::1").
std::string HostOfHeader(const std::string& header) {
  if (!header.empty() && header[0] == '[') {
    const size_t close = header.find(']');
    return close == std::string::npos ? header : header.substr(1, close - 1);
  }
  return header.substr(0, header.find(':'));
}

// Security headers on every reply: the page runs only its own scripts.
void AddHeaders(httplib::Response& res) {
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Content-Security-Policy",
                 "default-src 'self'; img-src 'self' data:; "
                 "style-src 'self'; script-src 'self'; object-src 'none'");
}

// Compression. The HTTP library would Brotli-compress text and JSON replies
// at Brotli's default quality (11) for any client that accepts it: seconds
// for a megabyte of generated JSON, far more than making it. So the
// pre-routing handler takes Accept-Encoding off the request (the library
// then compresses nothing) and, off loopback, marks requests that accept
// gzip; their replies are gzipped here at level 1 (tens of milliseconds a
// megabyte, 5-10x smaller for our JSON). On loopback nothing is compressed:
// copying the bytes is cheaper than any compression.
void TakeOverCompression(const httplib::Request& req, bool loopback) {
  // The library hands handlers a const view of its own, non-const request.
  auto& mutable_req = const_cast<httplib::Request&>(req);
  const std::string accept = req.get_header_value("Accept-Encoding");
  mutable_req.headers.erase("Accept-Encoding");
  mutable_req.headers.erase(kGzipHeader);
  if (!loopback && absl::StrContains(absl::AsciiStrToLower(accept), "gzip")) {
    mutable_req.headers.emplace(kGzipHeader, "1");
  }
}

void SetBody(const httplib::Request& req, httplib::Response& res,
             std::string body, const std::string& content_type) {
  if (body.size() >= kGzipMinBytes && req.has_header(kGzipHeader)) {
    absl::StatusOr<std::string> gz = Gzip(body, /*level=*/1);
    if (gz.ok()) {
      res.set_header("Content-Encoding", "gzip");
      res.set_header("Vary", "Accept-Encoding");
      body = *std::move(gz);
    }
  }
  res.set_content(std::move(body), content_type);
}

void ServeAsset(const httplib::Request& req, const std::string& name,
                httplib::Response& res) {
  const Asset* a = FindAsset(name);
  if (a == nullptr) {
    res.status = 404;
    res.set_content("not found\n", "text/plain; charset=utf-8");
    return;
  }
  SetBody(req, res, std::string(a->body), std::string(a->content_type));
  res.set_header("Cache-Control", "no-cache");
}

// The query of a request target, each parameter split at its first '='
// (a value may hold '=': a -map rule "a=>b", a regex) and percent-decoded
// ('+' is a space), in the order given.
WebParams QueryParams(const std::string& target) {
  WebParams params;
  const size_t q = target.find('?');
  if (q == std::string::npos) return params;
  const std::string query = target.substr(q + 1);
  size_t at = 0;
  while (at <= query.size()) {
    size_t end = query.find('&', at);
    if (end == std::string::npos) end = query.size();
    const std::string part = query.substr(at, end - at);
    if (!part.empty()) {
      const size_t eq = part.find('=');
      const std::string key = part.substr(0, eq);
      const std::string value =
          eq == std::string::npos ? std::string() : part.substr(eq + 1);
      params.emplace_back(httplib::detail::decode_url(key, true),
                          httplib::detail::decode_url(value, true));
    }
    at = end + 1;
  }
  return params;
}

void ServeApi(WebApi* api, const httplib::Request& req,
              httplib::Response& res) {
  const WebParams params = QueryParams(req.target);
  WebReply reply = api->Get(req.path, params);
  res.status = reply.status;
  SetBody(req, res, std::move(reply.body), reply.content_type);
  res.set_header("Cache-Control", "no-store");
}

void Route(httplib::Server& svr, WebApi* api, bool loopback) {
  svr.set_pre_routing_handler(
      [loopback](const httplib::Request& req, httplib::Response& res) {
        AddHeaders(res);
        TakeOverCompression(req, loopback);
        // On loopback, only pages of this machine may call us (a web page
        // elsewhere cannot reach us through a rebound DNS name).
        if (loopback && req.has_header("Host") &&
            !IsLoopbackHost(HostOfHeader(req.get_header_value("Host")))) {
          ReplyError(res, 403, "this server answers only to localhost names");
          return httplib::Server::HandlerResponse::Handled;
        }
        if (req.method != "GET" && req.method != "HEAD") {
          res.set_header("Allow", "GET, HEAD");
          ReplyError(res, 405, "read-only: only GET and HEAD are served");
          return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
      });
  svr.Get("/", [](const httplib::Request& req, httplib::Response& res) {
    ServeAsset(req, "index.html", res);
  });
  svr.Get("/favicon.ico",
          [](const httplib::Request& req, httplib::Response& res) {
            ServeAsset(req, "favicon.svg", res);
          });
  svr.Get(R"(/static/([A-Za-z0-9_.-]+))",
          [](const httplib::Request& req, httplib::Response& res) {
            ServeAsset(req, req.matches[1], res);
          });
  svr.Get(R"(/api/[a-z_]+)",
          [api](const httplib::Request& req, httplib::Response& res) {
            ServeApi(api, req, res);
          });
  svr.set_error_handler([](const httplib::Request& req,
                           httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string what = res.status == 404 ? "not found" : "bad request";
    ReplyError(res, res.status,
               absl::StrCat(what, ": ", req.path.substr(0, 80)));
  });
  svr.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        ReplyError(res, 500, "internal error");
      });
}

}  // namespace

absl::StatusOr<ListenAddress> ParseListenAddress(const std::string& text) {
  ListenAddress a;
  a.host = "127.0.0.1";
  std::string port = text;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find("]:");
    if (close == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "' is not [IPV6]:PORT"));
    }
    a.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else if (const size_t colon = text.rfind(':'); colon != std::string::npos) {
    if (colon > 0) a.host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (absl::SimpleAtoi(port, &a.port) && (a.port < 0 || a.port > 65535)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "': port ", a.port,
                     " is out of range (0 to 65535; 0 picks a free one)"));
  }
  if (!absl::SimpleAtoi(port, &a.port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text,
                     "' has no port number (want PORT or HOST:PORT, "
                     "e.g. 127.0.0.1:8080; port 0 picks a free one)"));
  }
  return a;
}

bool IsLoopbackHost(const std::string& host) {
  const std::string h = absl::AsciiStrToLower(host);
  if (h == "localhost" || absl::EndsWith(h, ".localhost") || h == "::1") {
    return true;
  }
  in_addr v4{};
  return inet_pton(AF_INET, h.c_str(), &v4) == 1 &&
         (ntohl(v4.s_addr) >> 24) == 127;
}

absl::Status ServeHttp(WebApi* api, const ServeOptions& options,
                       const std::atomic<bool>* stop) {
  const ListenAddress& at = options.address;
  const bool loopback = IsLoopbackHost(at.host);
  httplib::Server svr;
  const size_t threads = static_cast<size_t>(std::max(1, options.threads));
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  svr.set_payload_max_length(kMaxBodyBytes);
  svr.set_read_timeout(kReadTimeoutSeconds, 0);
  svr.set_write_timeout(kWriteTimeoutSeconds, 0);
  svr.set_keep_alive_timeout(kReadTimeoutSeconds);
  // SO_REUSEADDR only: the library's default adds SO_REUSEPORT, with which
  // a second server on a port in use would share it instead of failing.
  svr.set_socket_options([](int sock) {
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  Route(svr, api, loopback);
  const int port = at.port == 0
                       ? svr.bind_to_any_port(at.host)
                       : (svr.bind_to_port(at.host, at.port) ? at.port : -1);
  if (port < 0) {
    return absl::UnavailableError(
        absl::StrCat("--http: cannot listen on ", at.host, ":", at.port,
                     " (in use, or not an address of this machine)"));
  }
  if (!loopback && options.on_warning) {
    options.on_warning(absl::StrCat(
        "warning: serving on ", at.host,
        ", not loopback: anyone who can reach this address can read the "
        "profile"));
  }
  const std::string host =
      at.host.find(':') != std::string::npos ? "[" + at.host + "]" : at.host;
  if (options.on_listening) {
    options.on_listening(absl::StrCat("http://", host, ":", port, "/"));
  }
  std::atomic<bool> done{false};
  std::thread watcher([&svr, &done, stop] {
    while (!stop->load() && !done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    svr.stop();
  });
  const bool served = svr.listen_after_bind();
  done.store(true);
  watcher.join();
  if (!served && !stop->load()) {
    return absl::InternalError("--http: the server stopped unexpectedly");
  }
  return absl::OkStatus();
}

}  // namespace tfprof
