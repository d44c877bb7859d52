// A deterministic (seeded) generator of realistic ProfileProto files of any
// size: nested name scopes, op types, a random dataflow graph, steps on a
// CPU and GPU streams, memory records and Python call stacks. The output is
// produced in pieces (one node at a time), so files beyond protobuf's 2 GiB
// message limit can be written.
#ifndef TFPROF_TOOLS_SYNTHETIC_PROFILE_H_
#define TFPROF_TOOLS_SYNTHETIC_PROFILE_H_

#include <cstdint>
#include <functional>
#include <string>

namespace tfprof {

struct GenOptions {
  int64_t nodes = 10000;
  int64_t steps = 1;
  int64_t depth = 6;  // name-scope levels above each op
  uint64_t seed = 1;
};

// Calls `sink` with consecutive pieces whose concatenation is one serialized
// ProfileProto.
void GenerateProfile(const GenOptions& options,
                     const std::function<void(const std::string&)>& sink);

}  // namespace tfprof

#endif  // TFPROF_TOOLS_SYNTHETIC_PROFILE_H_
