#pragma once
// TSREPRO_AFTER / TSREPRO_LEVEL / TSREPRO_DIR, read and checked: the one reading of them, shared
// by the linked workflow (tsrepro/after.h) and the preloaded one (libtsrepro_capture.so), which
// links libtorch alone. Torch-free.

#include <string>

namespace tsrepro {

// What the variables asked for.
struct AfterSettings {
  enum class Stage { Off, Graph, Fusion };
  Stage stage = Stage::Off;
  int level = 1;
  std::string dir = "tsrepro_out";

  // Throws tsrepro::UserError naming the variable for a value it cannot take
  // ("TSREPRO_LEVEL=7: expected 1, 2, 3 or 4").
  static AfterSettings from_environment();
};

// TSREPRO_DIR/run_<YYYYmmdd-HHMMSS>-pid_<pid>/ of this process, made on first use (made_now
// says so). Never an existing directory: a clash (a reused pid within a second) gets a -2, -3...
// suffix. A forked child gets a directory of its own. $TSREPRO_RUN_DIR, when set, is used as it
// is (a helper process of a run that has one). `owner`: the process the directory is named after
// and held for, when not this one (the Python shim asks `tsrepro after --claim-run-dir --pid`).
// Throws UserError naming TSREPRO_DIR.
std::string claim_run_directory(const std::string& root, bool& made_now, int owner = 0);

// The name of a subject's case directory in the run directory: "graph_<id>" for the whole graph,
// "fusion_<id>_group_<group>" for one of its fusion groups. `tsrepro after --id <id>` writes it
// (repro/after/compiled_module.cpp); libtsrepro_capture.so looks for it afterwards.
inline std::string subject_directory_name(int id, int fusion_group = -1) {
  return fusion_group < 0 ? "graph_" + std::to_string(id)
                          : "fusion_" + std::to_string(id) + "_group_" + std::to_string(fusion_group);
}

}  // namespace tsrepro
