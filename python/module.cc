// The extension module tfprof._tfprof: the library's session and public
// Profiler for the pure-Python package in python/tfprof (see
// g3doc/python.md). Results cross as the library renders them (JSON, text)
// or as serialized protos; the Python side only reshapes them.
#include <pybind11/pybind11.h>

#include "absl/strings/str_cat.h"
#include "profiler/base/protos.h"
#include "profiler/load/loader.h"
#include "python/binding.h"

namespace py = pybind11;

namespace tfprof {
namespace python {
namespace {

// tfprof.TfprofError, created when the module is imported.
PyObject* g_error = nullptr;

const char* CodeName(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case absl::StatusCode::kNotFound:
      return "NOT_FOUND";
    case absl::StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case absl::StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case absl::StatusCode::kOutOfRange:
      return "OUT_OF_RANGE";
    case absl::StatusCode::kAborted:
      return "ABORTED";
    case absl::StatusCode::kDataLoss:
      return "DATA_LOSS";
    case absl::StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case absl::StatusCode::kUnimplemented:
      return "UNIMPLEMENTED";
    default:
      return "INTERNAL";
  }
}

}  // namespace

void ThrowIfError(const absl::Status& s) {
  if (s.ok()) return;
  py::gil_scoped_acquire gil;
  py::object error = py::reinterpret_borrow<py::object>(g_error);
  py::object exc = error(std::string(s.message()));
  exc.attr("code") = CodeName(s.code());
  PyErr_SetObject(g_error, exc.ptr());
  throw py::error_already_set();
}

void ParseArgument(const std::string& what, const std::string& bytes,
                   google::protobuf::Message* msg) {
  ThrowIfError(ParseProto(what, bytes, /*text_first=*/false, msg).status());
}

py::bytes ToBytes(const google::protobuf::Message& msg) {
  if (!msg.IsInitialized()) {
    ThrowIfError(absl::InternalError(
        absl::StrCat("cannot serialize ", msg.GetTypeName())));
  }
  return py::bytes(DeterministicBytes(msg));
}

}  // namespace python
}  // namespace tfprof

PYBIND11_MODULE(_tfprof, m) {
  m.doc() =
      "tfprof's C++ library: loaded runs (Session) and the TensorFlow-style "
      "Profiler. Use the tfprof package, not this module.";
  tfprof::python::g_error = PyErr_NewException(
      "tfprof.TfprofError", PyExc_RuntimeError,
      py::dict(py::arg("__doc__") =
                   "An error of tfprof's library, with the message the "
                   "command line prints; .code names its kind "
                   "(INVALID_ARGUMENT, NOT_FOUND, ...).")
          .ptr());
  m.attr("TfprofError") =
      py::reinterpret_borrow<py::object>(tfprof::python::g_error);
  tfprof::python::DefineSession(m);
  tfprof::python::DefineProfiler(m);
  tfprof::python::DefineRanks(m);
}
