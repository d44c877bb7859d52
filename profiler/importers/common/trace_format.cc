#include "profiler/importers/common/trace_format.h"

namespace tfprof {

const char* TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kTfTimeline:
      return "tf_timeline";
    case TraceFormat::kKineto:
      return "kineto";
    case TraceFormat::kXSpace:
      return "xspace";
  }
  return "unknown";
}

}  // namespace tfprof
