// The ranks report (profiler/views/ranks.h) as text, CSV or JSON.
#ifndef TFPROF_PROFILER_RENDER_RENDER_RANKS_H_
#define TFPROF_PROFILER_RENDER_RENDER_RANKS_H_

#include <string>

#include "profiler/views/ranks.h"

namespace tfprof {

// Notes, each rank's clock offset, a rank x step table of wall, compute,
// communication (exposed), wait and idle time, the job's steps with their
// spread across ranks, and the stragglers with their causes.
std::string RenderRanksText(const RanksReport& report);
// One row per rank and step: rank,file,offset_micros,
// offset_uncertainty_micros,step,wall_micros,compute_micros,
// communication_micros,exposed_communication_micros,wait_micros,idle_micros.
std::string RenderRanksCsv(const RanksReport& report);
// {"ranks": [{rank, file, offset_micros, offset_uncertainty_micros,
// alignment, matched, steps: [...]}], "steps": [...], "stragglers": [{step,
// rank, delay_micros, collective, cause, cause_micros, cause_excess_micros}],
// "straggler_floor_micros", "collectives_matched", "backend", "world_size",
// "notes"}.
std::string RenderRanksJson(const RanksReport& report);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_RENDER_RANKS_H_
