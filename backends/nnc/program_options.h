#pragma once
// The nnc backend's options (backends/nnc/options.h) as this process's fuser switches are set.

#include <string>
#include <vector>

namespace tsrepro {

std::vector<std::string> nnc_options_of_this_program();

}  // namespace tsrepro
