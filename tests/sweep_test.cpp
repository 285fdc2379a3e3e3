// `tsrepro sweep` end to end on the bundled zoo (examples/zoo: two real NNC bugs, frac's in two
// models, and a healthy model): the groups, sweep.json, the repros, an interrupted sweep going
// on, and bad input.

#include <signal.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/expectations.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/slurm_cluster.h"

namespace {

using namespace tsrepro_test;

const std::string kZoo = source_path("examples/zoo");

json read_sweep(const std::string& out) { return json::parse(read_text(fs::path(out) / "sweep.json")); }

// Each bug's models, as sets, keyed by the bug's backend and representative.
std::set<std::set<std::string>> bug_models(const json& sweep) {
  std::set<std::set<std::string>> groups;
  for (const json& bug : sweep["bugs"]) groups.insert(bug["models"].get<std::set<std::string>>());
  return groups;
}

const std::set<std::set<std::string>> kExpectedGroups = {{"frac_mlp", "phase_conv"}, {"round_head"}};

TEST(SweepCli, TheExampleZooGivesTwoBugsOneOfThemInTwoModels) {
  TempDir tmp;
  const std::string out = tmp / "out";
  const Result r = tsrepro({"sweep", kZoo, "-o", out, "-j", "2"}, {tmp.path().string(), 600});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.stray_processes, 0u);
  EXPECT_NE(r.err.find("ETA"), std::string::npos) << "no progress line\n" << r.describe();

  const json sweep = read_sweep(out);
  EXPECT_TRUE(sweep.value("finished", false));
  EXPECT_EQ(bug_models(sweep), kExpectedGroups) << sweep["bugs"].dump(1);
  EXPECT_EQ(sweep["bugs"].size(), 2u) << sweep["bugs"].dump(1);
  for (const json& bug : sweep["bugs"]) {
    SCOPED_TRACE(bug.dump());
    // nnc on libtorch 1.13; on 2.6 jit and ofi fuse with NNC too, and the bug lists all three.
    const auto backends = bug.value("backends", std::vector<std::string>{});
    EXPECT_NE(std::find(backends.begin(), backends.end(), "nnc"), backends.end());
    EXPECT_EQ(bug.value("signature", ""), "accuracy:float32");
    EXPECT_EQ(bug.value("runs", 0), 4);  // the first run and --repeat 3
    EXPECT_EQ(bug.value("failed_runs", 0), 4);
    EXPECT_FALSE(bug.value("flaky", true));
    EXPECT_LE(bug.value("final_nodes", 99), 3);
    EXPECT_LT(bug.value("final_nodes", 99), bug.value("original_nodes", 0));
    ASSERT_TRUE(bug["repro"].is_string());
    EXPECT_TRUE(fs::exists(fs::path(out) / bug["repro"].get<std::string>()));
    EXPECT_TRUE(fs::exists(fs::path(out) / bug.value("repro_cpp", "missing")));
    EXPECT_TRUE(fs::exists(fs::path(out) / bug.value("issue", "missing")));
  }
  // The representative is the smallest model of its bug.
  for (const json& bug : sweep["bugs"]) {
    if (bug["models"].size() == 2) {
      EXPECT_EQ(bug.value("representative", ""), "phase_conv");
    }
  }
  for (const json& model : sweep["models"]) {
    if (model.value("name", "") != "healthy_cnn") continue;
    for (const auto& [backend, result] : model["results"].items())
      EXPECT_EQ(result.value("status", ""), "pass") << backend;
  }

  SKIP_WITHOUT_PYTHON_TORCH();
  for (const json& bug : sweep["bugs"]) {
    const Result py = run_cmd(kPython, {(fs::path(out) / bug["repro"].get<std::string>()).string()}, {"", 300});
    EXPECT_EQ(py.exit_code, 1) << py.describe();
  }
}

// index.html in a real browser: Chromium, headless, loads it from disk; its DOM has every bug's
// row and drawing, and its screenshot is not blank.
TEST(SweepCli, TheIndexPageRendersEveryBugInAHeadlessBrowser) {
  LIBTORCH_INDEPENDENT_TEST();
  std::string chromium = run_shell("command -v chromium").output;
  chromium = chromium.substr(0, chromium.find('\n'));
  if (chromium.empty()) GTEST_SKIP() << "Debian's chromium is not installed (scripts/bootstrap.sh installs it)";
  TempDir tmp;
  const std::string out = tmp / "out";
  const Result r = tsrepro({"sweep", kZoo, "-o", out, "--backends", "nnc"}, {tmp.path().string(), 600});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json sweep = read_sweep(out);
  ASSERT_EQ(sweep["bugs"].size(), 2u);

  // Chromium as root needs --no-sandbox; its profile goes to the test's own directory.
  const Args browser = {"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + (tmp / "profile")};
  Args dump = browser;
  dump.insert(dump.end(), {"--dump-dom", "file://" + out + "/index.html"});
  const Result dom = run_cmd(chromium, dump, {tmp.path().string(), 120, {"HOME=" + tmp.path().string()}});
  ASSERT_EQ(dom.exit_code, 0) << dom.describe();
  for (const json& bug : sweep["bugs"]) {
    const std::string id = bug["id"];
    EXPECT_NE(dom.out.find("id=\"row-" + id + "\""), std::string::npos) << id << " has no row\n" << dom.out;
    EXPECT_NE(dom.out.find("<h2 id=\"" + id + "\""), std::string::npos) << id << " has no section";
  }
  EXPECT_GE(std::count(dom.out.begin(), dom.out.end(), '\n'), 10);
  size_t drawings = 0;
  for (size_t at = dom.out.find("<svg"); at != std::string::npos; at = dom.out.find("<svg", at + 1)) ++drawings;
  EXPECT_EQ(drawings, 4u) << "a graph and a plot per bug";
  EXPECT_NE(dom.out.find("aten::frac"), std::string::npos);
  EXPECT_NE(dom.out.find("aten::round"), std::string::npos);
  // Where in the compiler, for each bug (issue 54): inside NNC's kernel of the group with its op.
  size_t bisected = 0;
  for (size_t at = dom.out.find("Bisected to: NNC's kernel of fusion group"); at != std::string::npos;
       at = dom.out.find("Bisected to: NNC's kernel of fusion group", at + 1))
    ++bisected;
  EXPECT_EQ(bisected, 2u) << "a pass per bug";

  Args shoot = browser;
  shoot.insert(shoot.end(),
               {"--screenshot=" + (tmp / "page.png"), "--window-size=1200,1400", "file://" + out + "/index.html"});
  const Result shot = run_cmd(chromium, shoot, {tmp.path().string(), 120, {"HOME=" + tmp.path().string()}});
  ASSERT_EQ(shot.exit_code, 0) << shot.describe();
  const Result colours = run_cmd(kPython, {source_path("tests/fixtures/png_colors.py"), tmp / "page.png"});
  ASSERT_EQ(colours.exit_code, 0) << colours.describe();
  EXPECT_GT(std::stoi(colours.out), 100) << "the screenshot is (nearly) blank";
}

// A flaky failure (inject:flaky-accuracy fails every second evaluation of a worker): the sweep's
// rerun gives its rate, the bug is labelled flaky, and its minify keeps candidates that fail once
// in --repeat runs.
TEST(SweepCli, AFlakyFailureIsLabelledWithItsRate) {
  LIBTORCH_INDEPENDENT_TEST();
  TempDir tmp;
  fs::create_directories(tmp / "zoo");
  write_text(tmp / "zoo/zoo.json", json{{"models",
                                         {{{"name", "chain"},
                                           {"model", kModels + "chain100_scripted.pt"},
                                           {"inputs", kModels + "chain100_scripted.inputs.pt"}}}}}
                                       .dump());
  const std::string out = tmp / "out";
  const Result r = tsrepro({"sweep", tmp / "zoo", "-o", out, "--backends", "jit,inject:flaky-accuracy@aten::relu"},
                           {tmp.path().string(), 600});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json sweep = read_sweep(out);
  ASSERT_EQ(sweep["bugs"].size(), 1u) << sweep.dump(1);
  const json& bug = sweep["bugs"][0];
  EXPECT_TRUE(bug.value("flaky", false)) << bug.dump();
  EXPECT_EQ(bug.value("runs", 0), 4);         // the first run, then --repeat 3 in a fresh worker:
  EXPECT_EQ(bug.value("failed_runs", 0), 3);  // fails, passes, fails
  EXPECT_LE(bug.value("final_nodes", 99), 3);
  EXPECT_NE(read_text(fs::path(out) / "index.html").find("flaky: 3 of 4"), std::string::npos);
  const std::string issue = read_text(fs::path(out) / bug.value("issue", "missing"));
  EXPECT_NE(issue.find("The failure is flaky: tsrepro saw it in"), std::string::npos) << issue;
  const json expected = json::parse(read_text(fs::path(out) / "bugs" / "bug-1" / "minified" / "case.json"));
  EXPECT_EQ(expected["expected_failure"]["run"].value("repeat", 0), 3) << expected.dump();
}

// Killed midway, the same command goes on: finished jobs are not run again, and the bugs are the
// same as an uninterrupted sweep's. Under nnc alone (the backend both bugs are NNC's): the zoo's
// four models are four run jobs, enough to kill it after three, at a third of the full sweep's cost.
TEST(SweepCli, AKilledSweepGoesOnWhereItStopped) {
  LIBTORCH_INDEPENDENT_TEST();
  TempDir tmp;
  const std::string out = tmp / "out";
  std::atomic<bool> stop_watching{false};
  auto killer = std::async(std::launch::async, [&] {
    while (!stop_watching) {
      size_t finished_runs = 0;
      for (const std::string& job : list_dir(fs::path(out) / "jobs" / "run"))
        finished_runs += fs::exists(fs::path(out) / "jobs" / "run" / job / "exit_code") ? 1 : 0;
      if (finished_runs >= 3) {
        for (const std::string& entry : list_dir("/proc")) {
          if (!std::isdigit(static_cast<unsigned char>(entry[0]))) continue;
          const std::string cmdline = read_text("/proc/" + entry + "/cmdline");
          if (cmdline.rfind(kTsrepro + '\0' + "sweep" + '\0', 0) == 0 && cmdline.find(out) != std::string::npos)
            ::kill(-static_cast<pid_t>(std::stol(entry)), SIGKILL);
        }
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  });
  const Args sweep = {"sweep", kZoo, "-o", out, "--backends", "nnc"};
  const Result first = tsrepro(sweep, {tmp.path().string(), 600});
  stop_watching = true;
  ASSERT_TRUE(killer.get()) << "the sweep ended before it could be killed\n" << first.describe();
  ASSERT_FALSE(first.exited) << first.describe();

  std::map<std::string, fs::file_time_type> imported;
  for (const std::string& job : list_dir(fs::path(out) / "jobs" / "import"))
    imported[job] = fs::last_write_time(fs::path(out) / "jobs" / "import" / job / "exit_code");
  ASSERT_EQ(imported.size(), 4u);

  const Result resumed = tsrepro(sweep, {tmp.path().string(), 600});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.describe();
  EXPECT_NE(resumed.err.find("going on"), std::string::npos) << resumed.describe();
  for (const auto& [job, time] : imported)
    EXPECT_EQ(fs::last_write_time(fs::path(out) / "jobs" / "import" / job / "exit_code"), time) << job << " ran again";
  EXPECT_EQ(bug_models(read_sweep(out)), kExpectedGroups);
}

// --executor slurm: each phase is an sbatch --array on a real Slurm, with the same result (under nnc
// alone, as the killed sweep: what is tested is the executor, not the backends).
TEST(SweepCli, TheSlurmExecutorGivesTheSameBugs) {
  LIBTORCH_INDEPENDENT_TEST();
  TempDir tmp;
  SlurmCluster cluster(tmp / "slurm");
  if (cluster.skipped()) GTEST_SKIP() << "Slurm cannot run here: " << cluster.why_not();
  ASSERT_TRUE(cluster.started()) << cluster.why_not();
  const std::string out = tmp / "out";
  const Result r = tsrepro({"sweep", kZoo, "-o", out, "--backends", "nnc", "--executor", "slurm", "--executor-opt",
                            "partition=sweep", "--executor-opt", "time=10:00"},
                           {tmp.path().string(), 600, {"SLURM_CONF=" + cluster.conf()}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(bug_models(read_sweep(out)), kExpectedGroups);
  // Every phase went through Slurm: its array scripts and the tasks' logs are there.
  EXPECT_GE(list_dir(fs::path(out) / "slurm").size(), 8u);  // a list and a script per phase
  EXPECT_FALSE(list_dir(fs::path(out) / "slurm" / "logs").empty());
}

TEST(SweepCli, BadInputIsRefusedInOneLineNamingIt) {
  TempDir tmp;
  for (const char* dir : {"bad_zoo", "missing_zoo", "taken", "other"}) fs::create_directories(tmp / dir);
  write_text(tmp / "bad_zoo/zoo.json", "{not json");
  write_text(tmp / "missing_zoo/zoo.json", R"({"models": [{"name": "a", "model": "nowhere/model.pt"}]})");
  write_text(tmp / "taken/something", "x");
  write_text(tmp / "other/sweep-settings.json",
             R"({"zoo": "/elsewhere", "backends": ["jit"], "repeat": 3, "timeout_seconds": 300.0})");
  const std::vector<std::pair<Args, std::string>> cases = {
      {{"sweep", tmp / "no_such_zoo", "-o", tmp / "o1"}, "no_such_zoo: not a directory"},
      {{"sweep", tmp / "bad_zoo", "-o", tmp / "o2"}, "zoo.json: not a zoo manifest"},
      {{"sweep", tmp / "missing_zoo", "-o", tmp / "o3"}, "nowhere/model.pt does not exist"},
      {{"sweep", kZoo, "-o", tmp / "o4", "--backends", "jit,bogus"}, "bogus"},
      {{"sweep", kZoo, "-o", tmp / "taken"}, "taken: exists and is not a sweep's output directory"},
      {{"sweep", kZoo, "-o", tmp / "other"}, "an earlier sweep used other settings (backends: [\"jit\"])"},
      // Each executor checks its own settings, before any job or file (sweep/executor.h).
      {{"sweep", kZoo, "-o", tmp / "o5", "--executor-opt", "partition=gpu"},
       "--executor-opt partition: the local executor takes no such setting; it takes jobs"},
      {{"sweep", kZoo, "-o", tmp / "o6", "--executor", "slurm", "--executor-opt", "jobs=4"},
       "--executor-opt jobs: the slurm executor takes no such setting; it takes partition"},
      // Before the zoo: the option takes one KEY=VALUE, not the zoo after it.
      {{"sweep", "--executor-opt", "jobs=0", kZoo, "-o", tmp / "o7"},
       "--executor-opt jobs=0: the local executor wants a whole number >= 1"},
      {{"sweep", kZoo, "-o", tmp / "o8", "--executor-opt", "jobs"}, "--executor-opt jobs: not KEY=VALUE"},
      // --backend-opt: for each swept backend that takes the key, checked as run checks it.
      {{"sweep", kZoo, "-o", tmp / "o9", "--backends", "jit", "--backend-opt", "config=x=1"},
       "--backend-opt config=x=1: none of the swept backends (jit) takes config"},
      {{"sweep", kZoo, "-o", tmp / "o10", "--backend-opt", "strategy=sideways"}, "strategy"},
      {{"sweep", kZoo, "-o", tmp / "o11", "--backend-opt", "inline"}, "--backend-opt inline: write key=value"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = tsrepro(args, {tmp.path().string()});
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    EXPECT_NE(r.err.find(message), std::string::npos) << r.describe();
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.describe();
  }
  for (const char* never_made : {"o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8", "o9", "o10", "o11"})
    EXPECT_FALSE(fs::exists(tmp / never_made)) << never_made;
}

}  // namespace
