// Fuzzes option, output-spec, flag and gate-condition parsing.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/flags.h"
#include "profiler/advise/gates.h"
#include "profiler/views/options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> tokens = absl::StrSplit(text, ' ');
  tfprof::Options opts;
  if (tfprof::ParseOptionTokens(tokens, 0, &opts).ok()) {
    (void)tfprof::ValidateOptions(opts);
    (void)tfprof::OptionsToString(opts);
  }
  (void)tfprof::cli::ParseFlags(tokens);
  (void)tfprof::ParseCondition(text);
  tfprof::OutputKind type;
  std::map<std::string, std::string> kv;
  (void)tfprof::ParseOutput(text, &type, &kv);
  return 0;
}
