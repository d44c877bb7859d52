// The web page's files (HTML, JavaScript, CSS), embedded in the binary at
// build time from profiler/web/static/ (tools/embed_assets.cc writes the
// table), so the server needs no files and no network at run time.
#ifndef TFPROF_PROFILER_WEB_ASSETS_H_
#define TFPROF_PROFILER_WEB_ASSETS_H_

#include <string_view>
#include <vector>

namespace tfprof {

struct Asset {
  std::string_view name;          // the file name, e.g. "app.js"
  std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
  std::string_view body;
};

// Every embedded file.
const std::vector<Asset>& Assets();

// The file called `name` exactly, or null.
const Asset* FindAsset(std::string_view name);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_WEB_ASSETS_H_
