#pragma once
// Where the tests find the source tree, this build's executables and the example models.
// (TSREPRO_SOURCE_DIR and friends come from the tsrepro_test_support target.)

#include <string>

namespace tsrepro_test {

inline const std::string kSourceDir = TSREPRO_SOURCE_DIR;
inline const std::string kBinaryDir = TSREPRO_BINARY_DIR;
inline const std::string kTsrepro = kBinaryDir + "/tsrepro";
inline const std::string kRunner = kBinaryDir + "/tsrepro-runner";
inline const std::string kModels = kSourceDir + "/examples/models/";
inline const std::string kFixtures = kSourceDir + "/tests/fixtures/";
// Debian's interpreter, the one that sees python3-torch (the python3 first on PATH may not).
inline const std::string kPython = "/usr/bin/python3";

inline std::string source_path(const std::string& relative) { return kSourceDir + "/" + relative; }
inline std::string model_path(const std::string& file) { return kModels + file; }

}  // namespace tsrepro_test
