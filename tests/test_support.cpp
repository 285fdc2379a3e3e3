#include "tests/test_support.h"

#include <fstream>

namespace tsrepro::testing {

nlohmann::json example_manifest() {
  std::ifstream in(model_path("MANIFEST.json"));
  return nlohmann::json::parse(in);
}

}  // namespace tsrepro::testing
