// Helpers shared by the tests: where the sources, test data and the shared
// corpus are, and small file utilities.
#ifndef TFPROF_TESTS_TEST_UTIL_H_
#define TFPROF_TESTS_TEST_UTIL_H_

#include <stdexcept>
#include <string>

#include "google/protobuf/text_format.h"

namespace tfprof {
namespace testing {

// A message from protobuf text; throws (failing the test) if it does not
// parse.
template <typename T>
T ParseTextProto(const std::string& text) {
  T msg;
  if (!google::protobuf::TextFormat::ParseFromString(text, &msg)) {
    throw std::runtime_error("bad text proto: " + text.substr(0, 80));
  }
  return msg;
}

// The repository root.
std::string SourceDir();
// The real inputs bundled with the sources: testdata/corpus.
std::string BundledCorpusDir();
// The wider corpus: $TFPROF_CORPUS, else ../shared/corpus beside the
// repository. A fresh clone has none.
std::string CorpusDir();
// Whether `path` names a file this process can read.
bool Readable(const std::string& path);
// A corpus file by its path relative to the corpus root: the bundled copy when
// testdata/corpus has it, else the wider corpus's (which may not exist).
std::string CorpusFile(const std::string& rel);
// Whether `rel` can be read from either place. When it cannot, prints
// "skipped: corpus not found at <dir> (<rel>)" so that the caller can return.
bool HaveCorpusFile(const std::string& rel);
// A fresh temporary directory for one test.
std::string TempDir();
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& contents);

}  // namespace testing
}  // namespace tfprof

#endif  // TFPROF_TESTS_TEST_UTIL_H_
