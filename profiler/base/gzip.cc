#include "profiler/base/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"

namespace tfprof {
namespace {

std::string Prefix(const std::string& name) {
  return name.empty() ? "" : name + ": ";
}

}  // namespace

bool IsGzip(absl::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

absl::StatusOr<std::string> Gzip(absl::string_view data, int level) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return absl::InternalError("zlib init failed");
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[1 << 16];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = deflate(&zs, Z_FINISH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      deflateEnd(&zs);
      return absl::InternalError("gzip compression failed");
    }
    out.append(buf, sizeof(buf) - zs.avail_out);
  } while (rc != Z_STREAM_END);
  deflateEnd(&zs);
  return out;
}

absl::Status GunzipInto(absl::string_view data, const std::string& name,
                        size_t max_bytes, const GunzipSink& sink) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 15 + 16) != Z_OK) {
    return absl::InternalError(absl::StrCat(Prefix(name), "zlib init failed"));
  }
  constexpr size_t kChunk = 1 << 16;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(
      std::min<size_t>(data.size(), std::numeric_limits<uInt>::max()));
  size_t total = 0;
  absl::Status status;
  for (;;) {
    char* buf = sink.reserve(kChunk);
    if (buf == nullptr) {
      status = absl::ResourceExhaustedError(
          absl::StrCat(Prefix(name), "out of memory decompressing gzip data"));
      break;
    }
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = kChunk;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    sink.commit(kChunk - zs.avail_out);
    total += kChunk - zs.avail_out;
    if (total > max_bytes) {
      status = absl::ResourceExhaustedError(
          absl::StrCat(Prefix(name), "gzip data decompresses to more than ",
                       max_bytes >> 20, " MiB; not loaded"));
      break;
    }
    if (rc == Z_STREAM_END) {
      const size_t consumed = data.size() - zs.avail_in;
      // Another gzip member may follow.
      if (zs.avail_in > 0 && IsGzip(data.substr(consumed, 2)) &&
          inflateReset(&zs) == Z_OK) {
        continue;
      }
      break;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      status = absl::DataLossError(absl::StrCat(Prefix(name),
                                                "truncated gzip data (after ",
                                                total, " decompressed bytes)"));
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      status = absl::DataLossError(
          absl::StrCat(Prefix(name), "corrupt gzip data (",
                       zs.msg ? zs.msg : "inflate error", ")"));
      break;
    }
  }
  inflateEnd(&zs);
  return status;
}

absl::StatusOr<std::string> Gunzip(absl::string_view data) {
  std::string out;
  size_t used = 0;
  GunzipSink sink{[&](size_t n) {
                    out.resize(used + n);
                    return out.data() + used;
                  },
                  [&](size_t n) { used += n; }};
  absl::Status s = GunzipInto(data, "", size_t{1} << 31, sink);
  if (!s.ok()) return s;
  out.resize(used);
  return out;
}

}  // namespace tfprof
