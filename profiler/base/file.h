// Files: reading inputs (errors name the file) and writing outputs safely.
#ifndef TFPROF_PROFILER_BASE_FILE_H_
#define TFPROF_PROFILER_BASE_FILE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tfprof {

// An input file open for reading, the one way the library reads files.
// Every error names the file.
class InputFile {
 public:
  // Opens `path`: errors for a missing or unreadable file and a directory.
  // Pipes and devices are read until their end.
  static absl::StatusOr<InputFile> Open(const std::string& path);
  // Opens a regular file only (without opening anything else, so a FIFO
  // never blocks): "not a regular file" otherwise.
  static absl::StatusOr<InputFile> OpenRegular(const std::string& path);

  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  const std::string& path() const { return path_; }
  // The size of a regular file; -1 for a pipe or a device.
  int64_t size() const { return size_; }

  // Reads up to `n` bytes from the current position into `buf`: fewer only
  // at the end of the file, 0 there.
  absl::StatusOr<size_t> Read(void* buf, size_t n);
  // Reads exactly `n` bytes at `offset` (a short read is an error that says
  // the file may be truncated).
  absl::Status ReadAt(uint64_t offset, size_t n, void* buf);

 private:
  InputFile(std::string path, int fd, int64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  std::string path_;
  int fd_ = -1;
  int64_t size_ = -1;
};

// The size of the regular file at `path` (errors as OpenRegular's).
absl::StatusOr<uint64_t> RegularFileSize(const std::string& path);

// Reads a whole file. Errors name the file.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// Writes `contents` to `path` via a temporary file in the same directory that
// is renamed into place, so readers never see a partial file and a failed
// write leaves the previous file intact. Refuses to write over any of
// `protected_paths` (the profile's input files).
absl::Status WriteFileAtomic(
    const std::string& path, const std::string& contents,
    const std::vector<std::string>& protected_paths = {});

// Removes the temporary file a WriteFileAtomic is writing now, if any (of
// writes on several threads, the first one's). Async-signal-safe: for a
// handler of SIGINT or SIGTERM that ends the process mid-write, so that no
// "<out>.tmp.XXXXXX" is left behind.
void RemovePendingTemporaryFile();

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_FILE_H_
