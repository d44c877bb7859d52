// Loading a binary ProfileProto straight into the model: the file is read in
// blocks and decoded one top-level field (one node) at a time, without
// building protobuf message objects, so memory stays close to the model's
// own size and files beyond protobuf's 2 GiB message limit load too.
#ifndef TFPROF_PROFILER_LOAD_PROFILE_READER_H_
#define TFPROF_PROFILER_LOAD_PROFILE_READER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "profiler/model/model.h"

namespace tfprof {

// Whether the bytes look like protobuf text format (nothing but printable
// characters and whitespace in the first 4 KiB) rather than binary.
bool LooksLikeProtoText(std::string_view bytes);

// A model from a ProfileProto message (Model::ToProfileProto's inverse).
absl::StatusOr<Model> ModelFromProfileProto(const tfpb::ProfileProto& profile);

// Decodes the serialized bytes of a ProfileProto. `source` names the input in
// error messages.
absl::StatusOr<Model> DecodeProfileProto(std::string_view bytes,
                                         const std::string& source);

struct ProfileFileResult {
  Model model;
  int64_t bytes_read = 0;
};

// Reads a binary ProfileProto file block by block (regular files, pipes and
// devices alike). `progress`, if set, is called with the bytes read so far.
// Returns kFailedPrecondition if the file looks like protobuf text format,
// which the caller parses the ordinary way. `block_size` (0: the default of
// 8 MiB) is the size of the reads; tests make it tiny.
absl::StatusOr<ProfileFileResult> ReadProfileProtoFile(
    const std::string& path,
    const std::function<void(int64_t)>& progress = nullptr,
    size_t block_size = 0);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_LOAD_PROFILE_READER_H_
