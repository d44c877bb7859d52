// The corpus inputs the tests load: every file of a format tfprof claims.
#ifndef TFPROF_TESTS_CORPUS_UTIL_H_
#define TFPROF_TESTS_CORPUS_UTIL_H_

#include <string>
#include <vector>

#include "profiler/load/loader.h"

namespace tfprof {
namespace testing {

struct CorpusCase {
  std::string name;
  InputPaths paths;
};

// Every loadable input set of ../shared/corpus.
std::vector<CorpusCase> CorpusCases();

// tf-testdata/current: graph + run_meta + op log + checkpoint.
InputPaths TfTestData(const std::string& version = "current");

// The most torch.cuda.max_allocated() read after a profiled step of a
// gpu-h200-2026 run (torch_refs.json; `run` as "resnet"), or -1 when the
// corpus is not there.
double TorchMaxAllocated(const std::string& run);

}  // namespace testing
}  // namespace tfprof

#endif  // TFPROF_TESTS_CORPUS_UTIL_H_
