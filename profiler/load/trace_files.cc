#include "profiler/load/trace_files.h"

#include <glob.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "profiler/base/file.h"
#include "profiler/base/gzip.h"
#include "profiler/base/wire.h"

namespace tfprof {
namespace {

bool LooksLikeTraceName(const std::string& name) {
  for (const char* suffix : {".json", ".json.gz", ".pb", ".pb.gz"}) {
    if (absl::EndsWith(name, suffix)) return true;
  }
  return false;
}

std::string Head(const std::string& path, size_t limit);

// Whether the first bytes of a file can begin an XSpace: its top-level
// fields are planes, errors, warnings and host names (all length-
// delimited), and its first plane's fields are an XPlane's (id a varint,
// name, lines, metadata and stats length-delimited). A pprof profile
// (sample types of two varints, then samples, mappings, ... string table)
// is not.
bool HeadLooksLikeXSpace(std::string_view head) {
  int fields = 0;
  bool plane_checked = false;
  while (!head.empty()) {
    wire::Reader r(head);
    uint32_t field = 0;
    int wt = 0;
    uint64_t n = 0;
    if (!r.Next(&field, &wt)) return r.ok() && fields > 0;
    if (field > 4 || wt != wire::kBytes) return false;
    if (!r.Varint(&n)) return fields > 0;  // the head ends in the length
    const size_t header = static_cast<size_t>(
        r.pos() - reinterpret_cast<const uint8_t*>(head.data()));
    const size_t avail = head.size() - header;
    if (field == 1 && !plane_checked) {
      plane_checked = true;
      wire::Reader p(head.substr(header, std::min<uint64_t>(n, avail)));
      uint32_t f = 0;
      int w = 0;
      while (p.Next(&f, &w)) {
        const int want = f == 1 ? wire::kVarint : f <= 6 ? wire::kBytes : -1;
        if (want >= 0 && w != want) return false;
        p.Skip(w);
      }
    }
    ++fields;
    if (n >= avail) return true;  // the head ends inside this field
    head = head.substr(header + n);
  }
  return fields > 0;
}

// A directory's files that are not traces (a run's notes, a reference, a
// pprof profile) are left out: a JSON trace's first MiB names its
// traceEvents (or it is a bare event array); a .pb file's first MiB reads
// as an XSpace.
// Where a JSON document in `head` begins: after a UTF-8 byte order mark and
// whitespace (npos: nothing there).
size_t JsonStart(const std::string& head) {
  const size_t bom = absl::StartsWith(head, "\xEF\xBB\xBF") ? 3 : 0;
  return head.find_first_not_of(" \t\r\n", bom);
}

bool DirectoryEntryIsTrace(const std::string& path) {
  if (absl::EndsWith(path, ".pb") || absl::EndsWith(path, ".pb.gz")) {
    // (A file that cannot be read is kept: its load then says why.)
    const std::string head = Head(path, 1 << 20);
    return head.empty() || HeadLooksLikeXSpace(head);
  }
  const std::string head = Head(path, 1 << 20);
  const size_t first = JsonStart(head);
  if (first == std::string::npos) return false;
  return head[first] == '[' ||
         head.find("\"traceEvents\"") != std::string::npos;
}

absl::Status AddDirectory(const std::string& dir,
                          std::vector<std::string>* out) {
  std::error_code ec;
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code file_ec;
    if (!entry.is_regular_file(file_ec)) continue;
    const std::string name = entry.path().filename().string();
    const std::string path = entry.path().string();
    if (LooksLikeTraceName(name) && DirectoryEntryIsTrace(path)) {
      found.push_back(path);
    }
  }
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, ": cannot list the directory (", ec.message(), ")"));
  }
  if (found.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir,
        ": no trace files in the directory (*.json, *.json.gz, *.pb, "
        "*.pb.gz)"));
  }
  // A TensorBoard profile directory: each host's XSpace
  // (<host>.xplane.pb) is the capture, and xprof wrote the host's other
  // files (<host>.trace.json.gz, <host>.overview_page.pb, ...) from it.
  std::set<std::string> hosts;  // "<dir>/<host>."
  for (const std::string& f : found) {
    for (const char* suffix : {".xplane.pb", ".xplane.pb.gz"}) {
      if (absl::EndsWith(f, suffix)) {
        hosts.insert(f.substr(0, f.size() - std::strlen(suffix) + 1));
      }
    }
  }
  const auto derived = [&](const std::string& f) {
    if (absl::EndsWith(f, ".xplane.pb") || absl::EndsWith(f, ".xplane.pb.gz")) {
      return false;
    }
    for (const std::string& h : hosts) {
      if (absl::StartsWith(f, h)) return true;
    }
    return false;
  };
  found.erase(std::remove_if(found.begin(), found.end(), derived), found.end());
  std::sort(found.begin(), found.end());
  out->insert(out->end(), found.begin(), found.end());
  return absl::OkStatus();
}

absl::Status AddGlob(const std::string& pattern,
                     std::vector<std::string>* out) {
  glob_t g{};
  const int rc = glob(pattern.c_str(), 0, nullptr, &g);
  if (rc != 0) {
    globfree(&g);
    return absl::NotFoundError(
        absl::StrCat(pattern, ": no file matches the pattern"));
  }
  std::vector<std::string> found(g.gl_pathv, g.gl_pathv + g.gl_pathc);
  globfree(&g);
  std::sort(found.begin(), found.end());
  out->insert(out->end(), found.begin(), found.end());
  return absl::OkStatus();
}

// The first `limit` bytes of a file, decompressed when it is gzip.
std::string Head(const std::string& path, size_t limit) {
  // Only the first `limit` bytes of the file are read: a gzip file's first
  // `limit` compressed bytes hold at least as many decompressed ones.
  absl::StatusOr<InputFile> file = InputFile::OpenRegular(path);
  if (!file.ok()) return "";
  absl::StatusOr<std::string> raw = std::string();
  const size_t want =
      file->size() >= 0 ? std::min<size_t>(limit, file->size()) : limit;
  raw->resize(want);
  size_t got = 0;
  while (got < want) {
    absl::StatusOr<size_t> n = file->Read(raw->data() + got, want - got);
    if (!n.ok() || *n == 0) break;
    got += *n;
  }
  raw->resize(got);
  if (!IsGzip(*raw)) {
    if (raw->size() > limit) raw->resize(limit);
    return std::move(*raw);
  }
  std::string out;
  size_t used = 0;
  GunzipSink sink;
  sink.reserve = [&out, &used, limit](size_t n) -> char* {
    if (used >= limit) return nullptr;  // enough: stop
    out.resize(used + n);
    return out.data() + used;
  };
  sink.commit = [&used](size_t n) { used += n; };
  // Stopping early is an error to the decoder; the bytes so far are kept.
  GunzipInto(*raw, path, limit, sink).IgnoreError();
  out.resize(std::min(used, limit));
  return out;
}

// The integer after "key": within `text` from `from` (-1 when absent).
int64_t IntAfterKey(const std::string& text, size_t from, size_t to,
                    const std::string& key) {
  const size_t k = text.find(absl::StrCat("\"", key, "\""), from);
  if (k == std::string::npos || k >= to) return -1;
  size_t p = k + key.size() + 2;
  while (p < to && (text[p] == ' ' || text[p] == ':' || text[p] == '\n' ||
                    text[p] == '\t' || text[p] == '\r')) {
    ++p;
  }
  size_t e = p;
  while (e < to && absl::ascii_isdigit(static_cast<unsigned char>(text[e]))) {
    ++e;
  }
  int64_t v = -1;
  if (e == p || !absl::SimpleAtoi(text.substr(p, e - p), &v)) return -1;
  return v;
}

// Kineto's distributedInfo object: its rank and world size.
TraceRankTag KinetoRank(const std::string& head) {
  TraceRankTag tag;
  const size_t at = head.find("\"distributedInfo\"");
  if (at == std::string::npos) return tag;
  const size_t open = head.find('{', at);
  if (open == std::string::npos) return tag;
  // The object's end: braces counted outside strings.
  int depth = 0;
  bool in_string = false;
  size_t close = head.size();
  for (size_t i = open; i < head.size(); ++i) {
    const char c = head[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      close = i;
      break;
    }
  }
  tag.rank = IntAfterKey(head, open, close, "rank");
  tag.world_size =
      std::max<int64_t>(0, IntAfterKey(head, open, close, "world_size"));
  return tag;
}

bool ReadVarint(const std::string& d, size_t* p, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *p < d.size(); shift += 7) {
    const uint8_t b = static_cast<uint8_t>(d[(*p)++]);
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// An XSpace's first host name (field 4), read from its top-level fields
// without parsing the planes.
std::string XSpaceHost(const std::string& d) {
  size_t p = 0;
  while (p < d.size()) {
    uint64_t tag = 0, v = 0;
    if (!ReadVarint(d, &p, &tag)) return "";
    switch (tag & 7) {
      case 0:
        if (!ReadVarint(d, &p, &v)) return "";
        break;
      case 1:
        p += 8;
        break;
      case 5:
        p += 4;
        break;
      case 2:
        if (!ReadVarint(d, &p, &v) || v > d.size() - p) return "";
        if ((tag >> 3) == 4) return d.substr(p, v);
        p += v;
        break;
      default:
        return "";
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandTracePath(
    const std::string& trace_path) {
  std::vector<std::string> files;
  for (absl::string_view item :
       absl::StrSplit(trace_path, ',', absl::SkipEmpty())) {
    const std::string path(item);
    std::error_code ec;
    absl::Status s = absl::OkStatus();
    if (std::filesystem::is_directory(path, ec)) {
      s = AddDirectory(path, &files);
    } else if (path.find_first_of("*?[") != std::string::npos &&
               !std::filesystem::exists(path, ec)) {
      s = AddGlob(path, &files);
    } else {
      files.push_back(path);  // opening it reports a missing file
    }
    if (!s.ok()) return s;
  }
  std::set<std::string> seen;
  std::vector<std::string> unique;
  for (std::string& f : files) {
    if (seen.insert(f).second) unique.push_back(std::move(f));
  }
  return unique;
}

TraceRankTag PeekTraceRank(const std::string& path) {
  std::string head = Head(path, 1 << 20);
  const size_t first = JsonStart(head);
  if (first == std::string::npos) return {};
  if (head[first] == '{' || head[first] == '[') return KinetoRank(head);
  if (!absl::EndsWith(path, ".pb") && !absl::EndsWith(path, ".pb.gz")) {
    return {};
  }
  TraceRankTag tag;
  tag.host = XSpaceHost(Head(path, size_t{1} << 31));
  return tag;
}

std::vector<RankFiles> GroupByRank(const std::vector<std::string>& files) {
  std::vector<std::tuple<int64_t, std::string, std::string>> tagged;
  std::set<std::pair<int64_t, std::string>> keys;
  for (const std::string& f : files) {
    TraceRankTag t = PeekTraceRank(f);
    if (t.rank >= 0) t.host.clear();  // a PyTorch rank is the rank
    tagged.emplace_back(t.rank, t.host, f);
    if (t.rank >= 0 || !t.host.empty()) keys.insert({t.rank, t.host});
  }
  if (keys.size() < 2) {
    RankFiles one;
    if (keys.size() == 1) {
      one.rank = keys.begin()->first;
      one.host = keys.begin()->second;
    }
    one.files = files;
    return {one};
  }
  std::map<std::pair<int64_t, std::string>, RankFiles> groups;
  std::vector<RankFiles> untagged;
  for (auto& [rank, host, file] : tagged) {
    if (rank < 0 && host.empty()) {
      untagged.push_back(RankFiles{-1, "", {file}});
      continue;
    }
    RankFiles& g = groups[{rank, host}];
    g.rank = rank;
    g.host = host;
    g.files.push_back(file);
  }
  std::vector<RankFiles> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  for (RankFiles& g : untagged) out.push_back(std::move(g));
  return out;
}

}  // namespace tfprof
