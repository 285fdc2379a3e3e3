#pragma once
// The minify output directory: OUT/checkpoints/<N>_nodes/ after every accepted step and
// OUT/minified/ at the end, each a complete case directory with repro.py, repro.cpp and the
// CMakeLists.txt that builds it. Every directory is written under a temporary name and renamed
// into place, so a minify killed at any moment leaves only whole checkpoints behind.

#include <optional>
#include <string>

#include "tsrepro/case.h"
#include "tsrepro/minify.h"
#include "tsrepro/writer.h"

namespace tsrepro {

// The settings a reproducer of a minify state needs: the minify's backend, comparison and
// timeout, and the state's expected failure. Inputs always come from the case's inputs.pt:
// after cut-nodes a state's inputs are reference values, which no seed can regenerate.
ReproSettings repro_settings_for(const MinifyOptions& options, const std::string& command_line);

class CheckpointWriter {
 public:
  // `out_dir` is created when missing. Leftovers of a killed write (hidden temporary
  // directories) are removed: they were never accepted.
  CheckpointWriter(std::string out_dir, ReproSettings settings);

  // Writes OUT/checkpoints/<N>_nodes/ (N = compute nodes) and returns its path. `inputs_source`:
  // as write_case's (the state's values are exactly those of that file).
  std::string write_checkpoint(const Case& state, const std::string& inputs_source = "") const;
  // Writes OUT/minified/ and returns its path.
  std::string write_final(const Case& state) const;

  const std::string& out_dir() const { return out_dir_; }

 private:
  std::string write(const Case& state, const std::string& dir, const std::string& inputs_source = "") const;

  std::string out_dir_;
  ReproSettings settings_;
};

// The checkpoint with the fewest compute nodes in OUT/checkpoints, if any.
std::optional<std::string> smallest_checkpoint(const std::string& out_dir);

}  // namespace tsrepro
