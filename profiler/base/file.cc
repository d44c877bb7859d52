#include "profiler/base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace tfprof {
namespace {

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

absl::Status Errno(const std::string& path, const char* what) {
  return absl::UnavailableError(
      absl::StrCat(path, ": ", what, " (", std::strerror(errno), ")"));
}

// Writes all of `contents` to `fd`, retrying interrupted writes.
absl::Status WriteAll(int fd, const std::string& contents,
                      const std::string& path) {
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno(path, "write failed");
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFileAtomic(const std::string& path,
                             const std::string& contents,
                             const std::vector<std::string>& protected_paths) {
  if (path.empty()) return absl::InvalidArgumentError("empty output path");
  for (const std::string& p : protected_paths) {
    if (!p.empty() && SameFile(path, p)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": refusing to overwrite an input file of this profile"));
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is a directory, expected a file name"));
  }
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A device or pipe (/dev/stdout, a fifo): write to it directly; it
    // cannot be replaced by renaming.
    int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) return Errno(path, "cannot open for writing");
    absl::Status s = WriteAll(fd, contents, path);
    if (::close(fd) != 0 && s.ok()) s = Errno(path, "write failed");
    return s;
  }
  std::string tmpl = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return Errno(path, "cannot create a temporary file next to it");
  absl::Status written = WriteAll(fd, contents, path);
  if (!written.ok()) {
    ::close(fd);
    ::unlink(tmpl.c_str());
    return written;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    absl::Status s = Errno(path, "write failed");
    ::unlink(tmpl.c_str());
    return s;
  }
  // mkstemp creates the file 0600; give it the usual permissions.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmpl.c_str(), 0666 & ~mask);
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    absl::Status s = Errno(path, "cannot rename the temporary file into place");
    ::unlink(tmpl.c_str());
    return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::FILE*> OpenInputFile(const std::string& path,
                                         size_t* size) {
  *size = 0;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open (", std::strerror(errno), ")"));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is a directory, expected a file"));
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open (", std::strerror(errno), ")"));
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    *size = static_cast<size_t>(st.st_size);
  }
  return f;
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  size_t size = 0;
  absl::StatusOr<std::FILE*> opened = OpenInputFile(path, &size);
  if (!opened.ok()) return opened.status();
  std::FILE* f = *opened;
  std::string data;
  data.reserve(size);
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) data.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) {
    return absl::DataLossError(absl::StrCat(path, ": read error"));
  }
  return data;
}

}  // namespace tfprof
