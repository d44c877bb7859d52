// gzip: compressing (pprof files) and decompressing (.gz traces, pprof
// files read back), with one decoder for both.
#ifndef TFPROF_PROFILER_BASE_GZIP_H_
#define TFPROF_PROFILER_BASE_GZIP_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tfprof {

// Whether `data` starts with gzip's magic bytes.
bool IsGzip(absl::string_view data);

// `data` gzip-compressed at zlib's `level` (1 fastest .. 9 smallest; -1
// zlib's default, 6).
absl::StatusOr<std::string> Gzip(absl::string_view data, int level = -1);

// Where decompressed bytes go: reserve(n) returns room for n more bytes (or
// nullptr when memory is exhausted), commit(n) counts n bytes written there.
struct GunzipSink {
  std::function<char*(size_t n)> reserve;
  std::function<void(size_t n)> commit;
};

// Decompresses gzip data, members one after another, into `sink`. Errors
// start with `name` (when not empty): truncated or corrupt data, more than
// `max_bytes` of output, out of memory.
absl::Status GunzipInto(absl::string_view data, const std::string& name,
                        size_t max_bytes, const GunzipSink& sink);

// `data` decompressed into a string (at most 2 GiB).
absl::StatusOr<std::string> Gunzip(absl::string_view data);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_GZIP_H_
