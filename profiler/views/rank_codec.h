// A RankProfile as bytes and back, so that rank summaries made on other
// machines (Dask workers: python/tfprof/fleet.py) can be analyzed together
// without their events travelling. The bytes are a small JSON document
// ({"format": "tfprof.rank_profile", "version": 2, ...}); a profile
// survives the round trip exactly.
#ifndef TFPROF_PROFILER_VIEWS_RANK_CODEC_H_
#define TFPROF_PROFILER_VIEWS_RANK_CODEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "profiler/views/ranks.h"

namespace tfprof {

std::string EncodeRankProfile(const RankProfile& profile);

// An error (naming `what`, e.g. the file or "rank summary 3") for bytes that
// are not an encoded profile of this version.
absl::StatusOr<RankProfile> DecodeRankProfile(const std::string& bytes,
                                              const std::string& what);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_RANK_CODEC_H_
