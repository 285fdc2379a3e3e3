#pragma once
// Reading --backend-opt values into a backend's typed options (backends/<id>/options.h): one
// strictness for every backend and every reader, the runner's factory and the writers alike.

#include <optional>
#include <string>

#include "tsrepro/backend.h"

namespace tsrepro {

// A 0/1 option (also true/false, on/off); `fallback` when absent. Throws UserError on anything else.
bool option_flag(const BackendOptions& options, const std::string& key, bool fallback);

// An option with a fixed set of values, `fallback` when absent. Throws UserError naming the values.
std::string option_choice(const BackendOptions& options, const std::string& key,
                          std::initializer_list<const char*> choices, const std::string& fallback);

// A count of 1 or more; nullopt when absent. Throws UserError on anything else.
std::optional<size_t> option_count(const BackendOptions& options, const std::string& key);

// bisect=STAGE[:SUBSYSTEM:KEEP] (`tsrepro explain --passes`' switch of PyTorch's CompilerBisector,
// backends/pt2_compile_server.py): nullopt when absent; UserError where it is not of that form
// (STAGE and SUBSYSTEM identifiers, KEEP a count from 0 or "all"). Whether the torch in use has the
// stage and subsystem, the compile server says.
struct BisectPoint {
  std::string text;       // as given: "inductor:lowerings:3"
  std::string stage;      // "inductor"
  std::string subsystem;  // "lowerings"; empty where only a stage is given
  std::string keep;       // "3" or "all"; empty with the subsystem
};
std::optional<BisectPoint> option_bisect_point(const BackendOptions& options);

// A reproducer runs a backend whole: passes=K and bisect=... (`tsrepro explain --passes`' stops
// inside a backend) are refused in its section with UserError.
void refuse_pass_stop_in_reproducer(const BackendOptions& options);

}  // namespace tsrepro
