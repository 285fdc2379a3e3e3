#pragma once
// A one-node Slurm cluster on localhost for one test (tests/fixtures/slurm/start_cluster.sh): the
// sweep's Slurm executor test on Debian 12 and its PyTorch 2 backends' test on Debian 13.

#include <string>

namespace tsrepro_test {

class SlurmCluster {
 public:
  explicit SlurmCluster(const std::string& dir);
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  bool started() const { return started_; }
  // Slurm cannot run here (not root, packages missing, a slurmd that gives up): the test skips.
  bool skipped() const { return skipped_; }
  const std::string& why_not() const { return why_not_; }
  // SLURM_CONF for sbatch, squeue and the sweep.
  std::string conf() const { return dir_ + "/slurm.conf"; }

 private:
  std::string dir_, why_not_;
  bool started_ = false, skipped_ = false;
};

}  // namespace tsrepro_test
