// Transparent huge pages for the heap, when the machine offers them.
#ifndef TFPROF_CLI_HUGEPAGES_H_
#define TFPROF_CLI_HUGEPAGES_H_

namespace tfprof {
namespace cli {

// Loading a large profile touches gigabytes of fresh memory, and with 4 KiB
// pages the page faults cost more than the parsing (twice the whole load
// time, measured on a 200 MB profile). glibc (2.35 and later) can ask for
// transparent huge pages for its heap (tunable glibc.malloc.hugetlb=1), but
// reads tunables only at start-up: so when the kernel gives huge pages on
// request ("[madvise]" in /sys/kernel/mm/transparent_hugepage/enabled) and
// the process was started without the tunable, this sets it and executes the
// program once more, with the same arguments. It does nothing when
// GLIBC_TUNABLES is already set, when TFPROF_HUGEPAGES=0, or on any failure
// (the program then simply goes on).
void MaybeReexecWithHugePages(char** argv);

}  // namespace cli
}  // namespace tfprof

#endif  // TFPROF_CLI_HUGEPAGES_H_
