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

ProfileSource SourceOf(TraceFormat format) {
  switch (format) {
    case TraceFormat::kKineto:
      return ProfileSource::kPyTorch;
    case TraceFormat::kXSpace:
      return ProfileSource::kXSpace;
    case TraceFormat::kTfTimeline:
      break;
  }
  return ProfileSource::kTensorFlow;
}

}  // namespace tfprof
