// tsrepro_base's one source (CMakeLists.txt): the library exists to own the shared settings and the
// precompiled header (torch/script.h, nlohmann/json.hpp, spdlog) that every target reuses.
