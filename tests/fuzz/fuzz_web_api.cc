// Fuzzes the web UI's request router: each input is a request target
// ("/api/view?view=scope&max_depth=3"), split and percent-decoded as the
// server does, and answered on a small profile with itself as the base
// (so /api/diff runs too). Every answer must be JSON with a status.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "profiler/views/views.h"
#include "profiler/web/api.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

std::string Decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(
          std::strtol(s.substr(i + 1, 2).c_str(), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

tfprof::WebParams ParseQuery(const std::string& query) {
  tfprof::WebParams params;
  size_t start = 0;
  while (start <= query.size()) {
    size_t amp = query.find('&', start);
    if (amp == std::string::npos) amp = query.size();
    const std::string pair = query.substr(start, amp - start);
    const size_t eq = pair.find('=');
    if (!pair.empty()) {
      params.emplace_back(
          Decode(pair.substr(0, eq)),
          eq == std::string::npos ? "" : Decode(pair.substr(eq + 1)));
    }
    start = amp + 1;
  }
  return params;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static tfprof::Session* session = [] {
    auto s = new tfprof::Session(tfprof::SmallProfile(), tfprof::InputPaths());
    s->SetBase(std::make_unique<tfprof::Session>(tfprof::SmallProfile(),
                                                 tfprof::InputPaths()));
    return s;
  }();
  static tfprof::WebApi api(
      session,
      tfprof::WebInputFlags{"--profile_path=p", "--base_profile_path=p"},
      tfprof::Options());
  const std::string target(reinterpret_cast<const char*>(data), size);
  const size_t q = target.find('?');
  tfprof::WebReply r =
      api.Get(target.substr(0, q),
              ParseQuery(q == std::string::npos ? "" : target.substr(q + 1)));
  if (r.status < 200 || r.status > 599 || r.body.empty()) std::abort();
  return 0;
}
