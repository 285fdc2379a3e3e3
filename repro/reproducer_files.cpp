// reproducer_files (include/tsrepro/writer.h): every file the writers put beside a case.

#include "repro/reproducer_case.h"
#include "runner/graph/strict_fusion.h"
#include "tsrepro/writer.h"

namespace tsrepro {

std::map<std::string, std::string> reproducer_files(const Case& c, const ReproSettings& settings) {
  const ReproModules modules = repro_modules(c, settings);
  std::map<std::string, std::string> files = {{"repro.py", repro_py_source(c, settings, modules)},
                                              {"repro.cpp", repro_cpp_source(c, settings, modules)},
                                              {"CMakeLists.txt", repro_cmake_source()}};
  if (settings.failure.status == Status::Accuracy || settings.failure.run.backward)
    files["tsrepro_compare.h"] = repro_cpp_compare_header();
  if (has_strict_fusion_blocks(*c.graph)) files["tsrepro_strict_fusion.h"] = repro_cpp_strict_fusion_header();
  if (modules.case_module && modules.case_module->size() > kInlineModuleBytes)
    files["case_module.pt"] = *modules.case_module;
  return files;
}

}  // namespace tsrepro
