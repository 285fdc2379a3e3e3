// The sweep's executors as a registry (sweep/executor.h): one folder and one table line each, and
// the settings each one declares, checked before a sweep starts a job.

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "sweep/executor.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

namespace fs = std::filesystem;

// What a UserError thrown by `make` says; empty where none was thrown.
template <typename Make>
std::string refusal(Make make) {
  try {
    make();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(ExecutorRegistry, EveryFolderIsOneTableLineAndEveryLineAFolder) {
  std::vector<std::string> folders;
  for (const fs::directory_entry& entry : fs::directory_iterator(fs::path(TSREPRO_SOURCE_DIR) / "sweep/executors"))
    if (entry.is_directory()) {
      folders.push_back(entry.path().filename().string());
      EXPECT_TRUE(fs::exists(entry.path() / "executor.cpp")) << entry.path();
    }
  std::sort(folders.begin(), folders.end());
  std::vector<std::string> names = executor_names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(folders, names);
  EXPECT_NE(std::find(names.begin(), names.end(), "local"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "slurm"), names.end());
}

TEST(ExecutorRegistry, AnUnknownExecutorIsRefusedNamingTheKnownOnes) {
  const std::string why = refusal([] { make_executor("kubernetes", {"tsrepro", "/tmp", {}}); });
  EXPECT_NE(why.find("--executor kubernetes: no such executor"), std::string::npos) << why;
  EXPECT_NE(why.find("local, slurm"), std::string::npos) << why;
}

TEST(ExecutorOptions, EachKeyAsDeclaredRepeatableOnesInOrder) {
  const std::vector<ExecutorOptionSpec> accepted = {{"partition", "a partition"}, {"arg", "a flag", true}};
  const ExecutorOptions options("demo", {"arg=--mem=4G", "partition=gpu", "arg=--account=x"}, accepted);
  EXPECT_EQ(options.text("partition"), "gpu");
  EXPECT_EQ(options.text("missing", "fallback"), "fallback");
  EXPECT_EQ(options.texts("arg"), (std::vector<std::string>{"--mem=4G", "--account=x"}));
  EXPECT_EQ(options.positive_int("missing", 7), 7);

  EXPECT_EQ(refusal([&] {
              ExecutorOptions("demo", {"partition=a", "partition=b"}, accepted);
            }),
            "--executor-opt partition: given twice (the demo executor takes one)");
  EXPECT_EQ(refusal([&] { ExecutorOptions("demo", {"=x"}, accepted); }), "--executor-opt =x: not KEY=VALUE");
  const std::string unknown = refusal([&] { ExecutorOptions("demo", {"nodes=3"}, accepted); });
  EXPECT_EQ(unknown,
            "--executor-opt nodes: the demo executor takes no such setting; it takes partition (a "
            "partition), arg (a flag)");
  for (const char* bad : {"jobs=", "jobs=two", "jobs=2x", "jobs=-1", "jobs=0"})
    EXPECT_NE(refusal([&] {
                ExecutorOptions("demo", {bad}, {{"jobs", "n"}}).positive_int("jobs", 1);
              }).find("wants a whole number >= 1"),
              std::string::npos)
        << bad;
  EXPECT_EQ(ExecutorOptions("demo", {"jobs=12"}, {{"jobs", "n"}}).positive_int("jobs", 1), 12);
}

}  // namespace
}  // namespace tsrepro
