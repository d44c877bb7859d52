#include "profiler/base/file.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
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

// The temporary file being written (RemovePendingTemporaryFile): its name
// is filled while g_pending is kClaimed, and read only while it is kNamed.
constexpr int kFree = 0, kClaimed = 1, kNamed = 2;
std::atomic<int> g_pending{kFree};
static_assert(std::atomic<int>::is_always_lock_free,
              "read from a signal handler");
char g_pending_name[4096];

// Holds off SIGINT, SIGTERM and SIGHUP on this thread while it lives: a
// temporary file is created and named (or renamed and forgotten) as one.
class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
    ::pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t old_;
};

// Names `tmp` as the pending temporary file, if no other is; returns whether
// it is (then ReleasePending once it is renamed or removed).
bool ClaimPending(const std::string& tmp) {
  int expected = kFree;
  if (tmp.size() >= sizeof(g_pending_name) ||
      !g_pending.compare_exchange_strong(expected, kClaimed)) {
    return false;
  }
  std::memcpy(g_pending_name, tmp.c_str(), tmp.size() + 1);
  g_pending.store(kNamed);
  return true;
}

void ReleasePending(bool claimed) {
  if (claimed) g_pending.store(kFree);
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

namespace {

// Writes `contents` to what `path` opens (a device, a pipe, a descriptor of
// this process such as /dev/stdout), in place: it cannot be renamed over.
// `append`: after what the file holds (standard output sent to a file,
// which holds what was printed before).
absl::Status WriteInPlace(const std::string& path, const std::string& contents,
                          bool append) {
  int fd = ::open(path.c_str(),
                  O_WRONLY | (append ? O_APPEND : O_CREAT | O_TRUNC), 0666);
  if (fd < 0) return Errno(path, "cannot open for writing");
  absl::Status s = WriteAll(fd, contents, path);
  if (::close(fd) != 0 && s.ok()) s = Errno(path, "write failed");
  return s;
}

// Whether `path` names a descriptor of a process (/dev/stdout, /dev/fd/N,
// /proc/self/fd/N, or a name in a directory that is one of those).
bool DescriptorPath(const std::string& path) {
  auto is_fd_dir = [](const std::string& dir) {
    return dir == "/dev/fd" || (dir.rfind("/proc/", 0) == 0 && dir.size() > 3 &&
                                dir.compare(dir.size() - 3, 3, "/fd") == 0);
  };
  if (path == "/dev/stdout" || path == "/dev/stderr") return true;
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return false;
  const std::string dir = path.substr(0, slash);
  if (is_fd_dir(dir)) return true;
  char* real = ::realpath(dir.c_str(), nullptr);
  if (real == nullptr) return false;
  const bool fd_dir = is_fd_dir(real);
  std::free(real);
  return fd_dir;
}

// Where the bytes written to `path` go: the file at the end of its chain
// of symbolic links (each relative one read from its own directory), which
// is written through, not replaced by a file of its own; `descriptor` when
// a step of the chain names a descriptor (written in place).
struct WriteTarget {
  std::string path;
  bool descriptor = false;
};

WriteTarget FollowLinks(const std::string& path) {
  std::string at = path;
  for (int hop = 0; hop < 40; ++hop) {
    if (DescriptorPath(at)) return {at, true};
    struct stat st;
    if (::lstat(at.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return {at};
    char link[4096];
    const ssize_t n = ::readlink(at.c_str(), link, sizeof(link) - 1);
    if (n <= 0) return {at};
    std::string next(link, static_cast<size_t>(n));
    if (next[0] != '/') {
      const size_t slash = at.rfind('/');
      next = (slash == std::string::npos ? "" : at.substr(0, slash + 1)) + next;
    }
    at = next;
  }
  return {path, true};  // a loop: opening it says so
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
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is a directory, expected a file name"));
  }
  const WriteTarget where = FollowLinks(path);
  if (where.descriptor || (exists && !S_ISREG(st.st_mode))) {
    // What the process printed to that descriptor through stdio (std::cout
    // included) goes first.
    if (where.descriptor) std::fflush(nullptr);
    return WriteInPlace(path, contents,
                        where.descriptor && exists && S_ISREG(st.st_mode));
  }
  const std::string& target = where.path;
  std::string tmpl = target + ".tmp.XXXXXX";
  int fd;
  bool claimed;
  {
    SignalsHeld held;
    fd = ::mkstemp(tmpl.data());
    if (fd < 0) return Errno(path, "cannot create a temporary file next to it");
    claimed = ClaimPending(tmpl);
  }
  absl::Status written = WriteAll(fd, contents, path);
  if (!written.ok()) {
    ::close(fd);
    ::unlink(tmpl.c_str());
    ReleasePending(claimed);
    return written;
  }
  // mkstemp creates the file 0600: a file written over keeps its mode (and,
  // where allowed, its owner); a new one gets the usual permissions.
  if (exists) {
    ::fchmod(fd, st.st_mode & 07777);
    if (::fchown(fd, st.st_uid, st.st_gid) != 0) {
      // (Only the superuser may give a file away: it stays ours.)
    }
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    absl::Status s = Errno(path, "write failed");
    ::unlink(tmpl.c_str());
    ReleasePending(claimed);
    return s;
  }
  SignalsHeld held;
  if (::rename(tmpl.c_str(), target.c_str()) != 0) {
    absl::Status s = Errno(path, "cannot rename the temporary file into place");
    ::unlink(tmpl.c_str());
    ReleasePending(claimed);
    return s;
  }
  ReleasePending(claimed);
  return absl::OkStatus();
}

void RemovePendingTemporaryFile() {
  // (A signal between rename and release removes nothing: the name is gone.)
  if (g_pending.load() == kNamed) ::unlink(g_pending_name);
}

namespace {

absl::Status CannotOpen(const std::string& path) {
  return absl::NotFoundError(
      absl::StrCat(path, ": cannot open (", std::strerror(errno), ")"));
}

}  // namespace

absl::StatusOr<InputFile> InputFile::Open(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return CannotOpen(path);
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is a directory, expected a file"));
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return CannotOpen(path);
  // The size of the file opened (it may have been replaced since stat).
  if (::fstat(fd, &st) != 0) {
    absl::Status s = CannotOpen(path);
    ::close(fd);
    return s;
  }
  return InputFile(path, fd,
                   S_ISREG(st.st_mode) ? static_cast<int64_t>(st.st_size) : -1);
}

absl::StatusOr<InputFile> InputFile::OpenRegular(const std::string& path) {
  absl::StatusOr<uint64_t> size = RegularFileSize(path);
  if (!size.ok()) return size.status();
  return Open(path);
}

InputFile::InputFile(InputFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(other.size_) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<size_t> InputFile::Read(void* buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::read(fd_, static_cast<char*>(buf) + done, n - done);
    if (got < 0) {
      if (errno == EINTR) continue;
      return absl::DataLossError(
          absl::StrCat(path_, ": read error (", std::strerror(errno), ")"));
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

absl::Status InputFile::ReadAt(uint64_t offset, size_t n, void* buf) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd_, static_cast<char*>(buf) + done, n - done,
                                static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return absl::DataLossError(
          absl::StrCat(path_, ": read error (", std::strerror(errno), ")"));
    }
    if (got == 0) {
      return absl::DataLossError(absl::StrCat(path_, ": short read: wanted ", n,
                                              " bytes at offset ", offset,
                                              " (file truncated?)"));
    }
    done += static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> RegularFileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return CannotOpen(path);
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file"));
  }
  return static_cast<uint64_t>(st.st_size);
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  absl::StatusOr<InputFile> file = InputFile::Open(path);
  if (!file.ok()) return file.status();
  std::string data;
  // A regular file in one piece (one byte more to see its end).
  size_t chunk =
      file->size() >= 0 ? static_cast<size_t>(file->size()) + 1 : 1 << 16;
  for (;;) {
    const size_t old = data.size();
    data.resize(old + chunk);
    absl::StatusOr<size_t> n = file->Read(data.data() + old, chunk);
    if (!n.ok()) return n.status();
    data.resize(old + *n);
    if (*n < chunk) break;  // Read() stops short only at the end
    chunk = 1 << 20;
  }
  return data;
}

}  // namespace tfprof
