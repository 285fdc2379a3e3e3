#include "tests/support/slurm_cluster.h"

#include "tests/support/paths.h"
#include "tests/support/process.h"

namespace tsrepro_test {

SlurmCluster::SlurmCluster(const std::string& dir) : dir_(dir) {
  const ShellResult start =
      run_shell(shell_quoted(source_path("tests/fixtures/slurm/start_cluster.sh")) + " " + shell_quoted(dir) + " 2>&1");
  started_ = start.exit_code == 0;
  why_not_ = start.output;
  skipped_ = start.exit_code == 77;
}

SlurmCluster::~SlurmCluster() {
  run_shell(shell_quoted(source_path("tests/fixtures/slurm/stop_cluster.sh")) + " " + shell_quoted(dir_));
}

}  // namespace tsrepro_test
