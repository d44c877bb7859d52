// Loads a ProfileProto with the installed tfprof library, prints the
// parameter count, and compares the profile with itself (Diff's public
// report).
#include <iostream>

#include "profiler/tfprof.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer PROFILE\n";
    return 2;
  }
  auto profiler = tfprof::Profiler::FromFile(argv[1]);
  if (!profiler.ok()) {
    std::cerr << profiler.status().message() << "\n";
    return 1;
  }
  auto options = tfprof::ProfileOptionBuilder::TrainableVariablesParameter();
  options.set_output("none");
  auto root = (*profiler)->ProfileNameScope(options);
  if (!root.ok()) return 1;
  std::cout << "parameters: " << root->total_parameters() << "\n";
  auto base = tfprof::Profiler::FromFile(argv[1]);
  if (!base.ok()) return 1;
  (*profiler)->SetBase(std::move(*base));
  auto diff = (*profiler)->Diff("scope", options);
  if (!diff.ok()) {
    std::cerr << diff.status().message() << "\n";
    return 1;
  }
  std::cout << "diff root: " << diff->rows.front().base_value << " -> "
            << diff->rows.front().current_value << "\n";
  return 0;
}
