// Which backends read options from the running program, and where each does it.

#include "backends/program_options.h"

#include "backends/nnc/program_options.h"

namespace tsrepro {

std::vector<std::string> options_of_this_program(const std::string& backend) {
  if (backend == "nnc") return nnc_options_of_this_program();
  return {};
}

}  // namespace tsrepro
