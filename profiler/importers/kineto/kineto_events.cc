#include "profiler/importers/kineto/kineto_events.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace tfprof {
namespace trace_internal {

IdKey MakeIdKey(const JsonScalar& v, StringTable* strings) {
  IdKey key;
  if (v.type == JsonScalar::Type::kInt64) {
    key.value = v.i;
    key.text = IdKey::kNumber;
    return key;
  }
  std::optional<std::string> text = v.IdText();
  if (!text.has_value()) return key;
  int64_t number;
  if (absl::SimpleAtoi(*text, &number) && absl::StrCat(number) == *text) {
    key.value = number;
    key.text = IdKey::kNumber;
  } else {
    key.text = Intern(strings, *text);
  }
  return key;
}

bool IsGpuCategory(absl::string_view cat) {
  return cat == "kernel" || cat == "Kernel" || cat == "gpu_memcpy" ||
         cat == "Memcpy" || cat == "gpu_memset" || cat == "Memset";
}

bool IsRuntimeCategory(absl::string_view cat) {
  return cat == "cuda_runtime" || cat == "Runtime" || cat == "cuda_driver" ||
         cat == "Driver" || cat == "hip_runtime" || cat == "hip_driver" ||
         cat == "xpu_runtime" || cat == "privateuse1_runtime" ||
         cat == "mtia_runtime";
}

WorkKind WorkKindOf(absl::string_view category) {
  return absl::StrContains(category, "emcpy")   ? WorkKind::kMemcpy
         : absl::StrContains(category, "emset") ? WorkKind::kMemset
                                                : WorkKind::kKernel;
}

bool IsGpuSideNonWork(absl::string_view cat) {
  return cat == "gpu_user_annotation" || cat == "cuda_sync" ||
         cat == "cuda_profiler_range" || cat == "gpu_instant_event";
}

std::optional<int64_t> ProfilerStep(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, "ProfilerStep#")) return std::nullopt;
  int64_t step;
  // Negative steps mean "average" to tfprof: not a step marker.
  if (!absl::SimpleAtoi(name, &step) || step < 0) return std::nullopt;
  return step;
}

std::string Component(absl::string_view name) {
  if (ProfilerStep(name).has_value()) return "ProfilerStep";
  return ScopeComponent(name);
}

std::string OpType(absl::string_view name) {
  if (ProfilerStep(name).has_value()) return "ProfilerStep";
  if (name.empty()) return "_unnamed";
  return std::string(name);
}

std::string LaunchText(const EventFields& f) {
  auto dims = [](const JsonInts& d) {  // [864, 1, 1] -> "864,1,1"
    return absl::StrJoin(d.values, d.values + d.size, ",");
  };
  return absl::StrCat("regs:", f.registers.Int().value_or(0),
                      " shm:", f.shared_memory.Int().value_or(0),
                      " grid:", dims(f.grid), " block:", dims(f.block));
}

JsonScalar* EventFields::ArgSlot(absl::string_view key) {
  switch (key.size()) {
    case 3:
      if (key == "Seq") return &seq;
      break;
    case 4:
      if (key == "Addr") return &addr;
      break;
    case 5:
      if (key == "flops") return &flops;
      if (key == "Bytes") return &bytes;
      break;
    case 6:
      if (key == "device") return &device;
      if (key == "stream") return &stream;
      break;
    case 7:
      if (key == "seq_num") return &seq_num;
      break;
    case 9:
      if (key == "Device Id") return &device_id;
      break;
    case 10:
      if (key == "Call stack") return &call_stack;
      break;
    case 11:
      if (key == "correlation") return &correlation;
      if (key == "External id") return &external_id;
      if (key == "external id") return &external_id_lower;
      if (key == "Device Type") return &device_type;
      break;
    case 13:
      if (key == "shared memory") return &shared_memory;
      break;
    case 15:
      if (key == "Total Allocated") return &total_allocated;
      break;
    case 18:
      if (key == "Process Group Name") return &process_group;
      break;
    case 20:
      if (key == "registers per thread") return &registers;
      break;
  }
  return nullptr;
}

bool ReadEvent(JsonReader* reader, JsonReader::Value& event, EventFields* f,
               ShapeArgs* shapes) {
  *f = EventFields();
  shapes->Clear();
  return ReadTraceEvent(
      reader, event, f, [&](absl::string_view key, JsonReader::Value& value) {
        if (key == "grid" && f->grid.size == 0) {
          return reader->ReadInts(value, &f->grid);
        }
        if (key == "block" && f->block.size == 0) {
          return reader->ReadInts(value, &f->block);
        }
        bool shape = false;
        if (!shapes->Read(reader, key, value, f->name.String(), &shape)) {
          return false;
        }
        if (shape) return true;
        return reader->ReadFirst(value, f->ArgSlot(key));
      });
}

}  // namespace trace_internal
}  // namespace tfprof
