// tsrepro-runner: a persistent worker process (runner/worker/worker_loop.cpp). The tsrepro CLI forks its
// workers from a zygote instead (runner/worker/zygote.h); this executable serves everyone else: the
// tests, the TSREPRO_AFTER library, and the CLI where no zygote could start.

#include <iostream>
#include <string>

#include "runner/case/extension_libraries.h"
#include "runner/worker/worker_loop.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--version") {
    std::cout << "tsrepro-runner " << TSREPRO_VERSION << "\n";
    return 0;
  }
  try {
    tsrepro::load_extension_libraries();  // TSREPRO_LOAD_LIBRARY, as the CLI set it
  } catch (const std::exception& e) {
    std::cerr << "tsrepro-runner: " << e.what() << "\n";
    return 2;
  }
  return tsrepro::serve_runner_requests();
}
