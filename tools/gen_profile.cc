// Writes a synthetic but realistic ProfileProto of any size, deterministically
// (seeded), streamed to the file so that any size can be written.
//
// Usage: gen_profile OUT --nodes=N [--steps=S] [--depth=D] [--seed=K]
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/numbers.h"
#include "tools/synthetic_profile.h"

namespace {

int64_t Flag(int argc, char** argv, const std::string& name, int64_t def) {
  const std::string prefix = "--" + name + "=";
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    int64_t v;
    if (a.rfind(prefix, 0) == 0 &&
        absl::SimpleAtoi(a.substr(prefix.size()), &v)) {
      return v;
    }
  }
  return def;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: gen_profile OUT --nodes=N [--steps=S] [--depth=D] "
                 "[--seed=K]\n");
    return 2;
  }
  tfprof::GenOptions o;
  o.nodes = Flag(argc, argv, "nodes", 10000);
  o.steps = Flag(argc, argv, "steps", 1);
  o.depth = Flag(argc, argv, "depth", 6);
  o.seed = static_cast<uint64_t>(Flag(argc, argv, "seed", 1));
  const std::string out = argv[1];
  const std::string tmp = out + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "gen_profile: %s: %s\n", tmp.c_str(),
                 std::strerror(errno));
    return 1;
  }
  int64_t bytes = 0;
  bool ok = true;
  tfprof::GenerateProfile(o, [&](const std::string& piece) {
    if (ok && std::fwrite(piece.data(), 1, piece.size(), f) != piece.size()) {
      ok = false;
    }
    bytes += static_cast<int64_t>(piece.size());
  });
  if (std::fclose(f) != 0) ok = false;
  if (!ok || std::rename(tmp.c_str(), out.c_str()) != 0) {
    std::fprintf(stderr, "gen_profile: cannot write %s: %s\n", out.c_str(),
                 std::strerror(errno));
    std::remove(tmp.c_str());
    return 1;
  }
  std::printf("%s: %lld nodes, %lld steps, %.1f MB\n", out.c_str(),
              static_cast<long long>(o.nodes), static_cast<long long>(o.steps),
              bytes / 1e6);
  return 0;
}
