// Files: reading inputs (errors name the file) and writing outputs safely.
#ifndef TFPROF_PROFILER_BASE_FILE_H_
#define TFPROF_PROFILER_BASE_FILE_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tfprof {

// Reads a whole file. Errors name the file.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// Opens an input file for reading (the caller closes it). Errors name the
// file: missing or unreadable, or a directory. *size receives the size of a
// regular file, else 0 (a pipe or a device: read until the end).
absl::StatusOr<std::FILE*> OpenInputFile(const std::string& path, size_t* size);

// Writes `contents` to `path` via a temporary file in the same directory that
// is renamed into place, so readers never see a partial file and a failed
// write leaves the previous file intact. Refuses to write over any of
// `protected_paths` (the profile's input files).
absl::Status WriteFileAtomic(
    const std::string& path, const std::string& contents,
    const std::vector<std::string>& protected_paths = {});

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_FILE_H_
