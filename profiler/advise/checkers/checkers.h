// The checkers, one file each in this folder. tfprof's own three come
// first (advise runs them by default), then ours. advisor.cc keeps the list.
#ifndef TFPROF_PROFILER_ADVISE_CHECKERS_CHECKERS_H_
#define TFPROF_PROFILER_ADVISE_CHECKERS_CHECKERS_H_

#include <memory>

#include "profiler/advise/advisor.h"

namespace tfprof {

// tfprof's own.
std::unique_ptr<Checker> NewAcceleratorUtilizationChecker();
std::unique_ptr<Checker> NewOperationChecker();
std::unique_ptr<Checker> NewExpensiveOperationChecker();
// Ours.
std::unique_ptr<Checker> NewHostDeviceCopyChecker();
std::unique_ptr<Checker> NewCpuFallbackChecker();
std::unique_ptr<Checker> NewAcceleratorIdleChecker();
std::unique_ptr<Checker> NewStepTimeChecker();
std::unique_ptr<Checker> NewFlopsCoverageChecker();
std::unique_ptr<Checker> NewMfuChecker();
std::unique_ptr<Checker> NewMemoryChecker();
std::unique_ptr<Checker> NewLayoutConversionChecker();

}  // namespace tfprof

#endif  // TFPROF_PROFILER_ADVISE_CHECKERS_CHECKERS_H_
