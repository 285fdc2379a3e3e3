#pragma once
// A backend's options as the running program has set them: the capture library (capture/) judges
// a graph it captured under the backend that stands for the program, set the way the program set
// its JIT switches, so that the check compiles the graph as the program did. Torch-only (the
// capture compiles these files into its own library).

#include <string>
#include <vector>

namespace tsrepro {

// The --backend-opt values ("inline=0", ...) of `backend` that this process's settings imply;
// empty for a backend whose options no process setting implies.
std::vector<std::string> options_of_this_program(const std::string& backend);

}  // namespace tsrepro
