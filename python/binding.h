// Helpers shared by the Python binding's files (python/): turning a
// Status into the Python exception tfprof.TfprofError (with the message the
// command line prints), and parsing protos handed over as bytes.
#ifndef TFPROF_PYTHON_BINDING_H_
#define TFPROF_PYTHON_BINDING_H_

#include <pybind11/pybind11.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace tfprof {
namespace python {

// Raises tfprof.TfprofError(message, code name) unless `s` is ok.
void ThrowIfError(const absl::Status& s);

template <typename T>
T ValueOrThrow(absl::StatusOr<T> v) {
  ThrowIfError(v.status());
  return std::move(*v);
}

// Parses `bytes` into `msg`, binary first, then text (as TensorFlow's
// NewProfiler parses a graph); `what` names the argument in the error.
void ParseArgument(const std::string& what, const std::string& bytes,
                   google::protobuf::Message* msg);

// The message's binary form as Python bytes.
pybind11::bytes ToBytes(const google::protobuf::Message& msg);

// Registers Session (loaded runs) and Profiler (the TF-style API).
void DefineSession(pybind11::module_& m);
void DefineProfiler(pybind11::module_& m);
// rank_summary / analyze_ranks (several ranks, e.g. on Dask workers).
void DefineRanks(pybind11::module_& m);

}  // namespace python
}  // namespace tfprof

#endif  // TFPROF_PYTHON_BINDING_H_
