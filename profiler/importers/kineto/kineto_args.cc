#include "profiler/importers/kineto/kineto_args.h"

#include <string>

namespace tfprof {
namespace trace_internal {

void ShapeArgs::Clear() {
  dims.clear();
  types.clear();
  values.clear();
  has_dims = has_types = has_values = false;
}

bool ShapeArgs::Read(JsonReader* reader, absl::string_view key,
                     JsonReader::Value& value,
                     std::optional<absl::string_view> name, bool* handled) {
  const bool is_dims = key == "Input Dims", is_types = key == "Input type";
  *handled = is_dims || is_types || key == "Concrete Inputs";
  if (!*handled) return true;
  // Only ops with a FLOP formula need them (the name comes before the args
  // in PyTorch's traces; without one they are read). Of duplicate keys the
  // first counts.
  bool& seen = is_dims ? has_dims : is_types ? has_types : has_values;
  if (seen || (name.has_value() && !HasTorchFlops(*name))) {
    return reader->Skip(value);
  }
  seen = true;
  return is_dims    ? reader->ReadIntLists(value, &dims)
         : is_types ? reader->ReadStrings(value, &types)
                    : reader->ReadStrings(value, &values);
}

TorchOpArgs ShapeArgs::Args() const {
  TorchOpArgs a;
  for (size_t i = 0; i < dims.size(); ++i) {
    a.dims.emplace_back(
        dims.values.begin() + static_cast<long>(dims.begin[i]),
        dims.values.begin() + static_cast<long>(dims.begin[i + 1]));
  }
  for (size_t i = 0; i < types.size(); ++i) a.types.emplace_back(types.at(i));
  for (size_t i = 0; i < values.size(); ++i) {
    a.values.emplace_back(values.at(i));
  }
  return a;
}

namespace {

// One deviceProperties entry: {"id", "name", "numSms", "computeMajor",
// "computeMinor", ...}.
bool ReadDevice(JsonReader* reader, JsonReader::Value& device,
                KinetoHeader* header) {
  if (!JsonReader::IsObject(device)) return reader->Skip(device);
  DeviceInfo info;
  std::optional<int64_t> id;
  const bool ok = reader->ForEachField(
      device, [&](absl::string_view k, JsonReader::Value& v) {
        JsonScalar x;
        if (!reader->Read(v, &x)) return false;
        if (k == "id") id = x.Int();
        if (k == "name") info.name = std::string(x.String().value_or(""));
        if (k == "numSms") info.units = x.Int().value_or(0);
        if (k == "computeMajor") {
          info.cc_major = static_cast<int32_t>(x.Int().value_or(0));
        }
        if (k == "computeMinor") {
          info.cc_minor = static_cast<int32_t>(x.Int().value_or(0));
        }
        return true;
      });
  if (ok && id.has_value()) header->devices.emplace_back(*id, info);
  return ok;
}

// distributedInfo: {"backend", "rank", "world_size", "pg_config", ...}.
bool ReadDistributedInfo(JsonReader* reader, JsonReader::Value& info,
                         RankInfo* rank) {
  if (!JsonReader::IsObject(info)) return reader->Skip(info);
  return reader->ForEachField(
      info, [&](absl::string_view k, JsonReader::Value& v) {
        if (k != "rank" && k != "world_size" && k != "backend") {
          return reader->Skip(v);
        }
        JsonScalar x;
        if (!reader->Read(v, &x)) return false;
        if (k == "rank") rank->rank = x.Int().value_or(-1);
        if (k == "world_size") rank->world_size = x.Int().value_or(0);
        if (k == "backend") {
          rank->backend = std::string(x.String().value_or(""));
        }
        return true;
      });
}

}  // namespace

bool ReadHeaderField(JsonReader* reader, absl::string_view key,
                     JsonReader::Value& value, KinetoHeader* header) {
  if (key == "with_flops" || key == "record_shapes") {
    JsonScalar v;
    if (!reader->Read(value, &v)) return false;
    Recording& r = header->recording;
    r.known = true;
    (key == "with_flops" ? r.with_flops : r.record_shapes) =
        v.Int().value_or(0) != 0;
    return true;
  }
  if (key == "distributedInfo") {
    return ReadDistributedInfo(reader, value, &header->rank);
  }
  if (key == "baseTimeNanoseconds") {
    JsonScalar v;
    if (!reader->Read(value, &v)) return false;
    header->rank.base_ns = v.Int().value_or(0);
    return true;
  }
  if (key != "deviceProperties" || !JsonReader::IsArray(value)) {
    return reader->Skip(value);
  }
  return reader->ForEachElement(value, [&](JsonReader::Value& device) {
    return ReadDevice(reader, device, header);
  });
}

std::string AllocatorName(int64_t device_type, int64_t device_id) {
  if (device_type == 0) return "cpu";
  if (device_type == 1) return absl::StrCat("GPU_", device_id);
  return absl::StrCat("device_type_", device_type, "_", device_id);
}

}  // namespace trace_internal
}  // namespace tfprof
