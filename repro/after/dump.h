#pragma once
// What the env-var workflow writes: the run directory, a subject's case directory (with its
// reproducers and minifier launcher), and the minifier run in a subprocess.

#include <optional>
#include <string>

#include "tsrepro/after.h"
#include "tsrepro/case.h"
#include "tsrepro/run_spec.h"
#include "tsrepro/verdict.h"

namespace spdlog {
class logger;
}

namespace tsrepro {

// The workflow's log: stderr, level from TSREPRO_LOG (info by default).
spdlog::logger& after_log();

// A graph the workflow may have to report: the whole graph, or one fusion group.
struct Subject {
  std::string name;  // "graph_1", "fusion_1_group_0": the case directory's name
  Case c;            // graph, specs, real input values
  RunSpec run;       // the program's backend against the interpreter
};

// claim_run_directory (tsrepro/after_settings.h), said in the log when made.
std::string run_directory(const std::string& root);

// Writes RUN/<subject.name>/ atomically, replacing an earlier dump of the same subject (level 3
// writes before running, then again once the failure is known). With a failure: case.json
// records it and repro.py, repro.cpp and CMakeLists.txt come along; from level 2, minify.sh.
// Returns the directory.
std::string write_subject(const std::string& run_dir, const Subject& subject, const std::optional<Verdict>& failure,
                          int level);

// The exact `tsrepro minify` command for a written subject (shell-quoted), its output going to
// RUN/<name>-minified.
std::string minify_command(const std::string& case_dir, const Subject& subject, const std::optional<Verdict>& failure);

// Runs the minifier on a written subject in a subprocess, its output in RUN/<name>-minified.log,
// and says in the log what came of it. Returns the minifier's exit code (-1: could not start).
int run_minifier(const std::string& case_dir, const Subject& subject, const std::optional<Verdict>& failure);

// The tsrepro executable: $TSREPRO_BIN, else the build tree's or the install's, else PATH.
std::string tsrepro_executable();

}  // namespace tsrepro
