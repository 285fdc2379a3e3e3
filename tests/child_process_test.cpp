// The one child-process module (process/child_process.h, issue 44) with real programs: streams
// read without deadlock, a time limit that ends what the child started, a wait that reaps only
// its own child, and the sweep's local executor beside another one in the same process.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "process/child_process.h"
#include "sweep/executor.h"
#include "tests/support/files.h"

namespace tsrepro {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

ChildSpec shell(const std::string& script) {
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.out = Stream::pipe();
  spec.err = Stream::pipe();
  return spec;
}

// Whether `pid` is gone: no such process, or a zombie that init has yet to reap.
bool gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';
}

// Boost.Process's ipstreams read stdout to its end before stderr: a child that filled its stderr
// pipe (64 KiB) first waited forever for a reader.
TEST(RunChild, ReadsAMegabyteOfStderrWrittenBeforeStdout) {
  const ChildRun run = run_child(shell("head -c 1048576 /dev/zero | tr '\\0' e >&2; echo done"), 60s);
  ASSERT_TRUE(run.finished()) << run.status_text();
  EXPECT_TRUE(run.exited_with(0)) << run.status_text();
  EXPECT_EQ(run.err.size(), 1048576u);
  EXPECT_EQ(run.err.find_first_not_of('e'), std::string::npos);
  EXPECT_EQ(run.out, "done\n");
}

// The --test command, the report's repro.py: a child that started another and hangs. The limit
// ends both, and run_child returns at the limit although the grandchild held the stdout pipe.
TEST(RunChild, ATimeLimitEndsTheChildAndWhatItStarted) {
  const auto started = Clock::now();
  const ChildRun run = run_child(shell("sleep 300 & echo $!; wait"), 1s);
  const auto took = Clock::now() - started;
  EXPECT_TRUE(run.timed_out);
  EXPECT_FALSE(run.finished());
  EXPECT_EQ(run.exit_code(), -1);
  EXPECT_LT(took, 20s);
  ASSERT_FALSE(run.out.empty()) << "the grandchild's pid was not read before the limit";
  const pid_t grandchild = static_cast<pid_t>(std::stol(run.out));
  for (int i = 0; i < 100 && !gone(grandchild); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(gone(grandchild)) << "the grandchild " << grandchild << " outlived the time limit";
}

TEST(RunChild, FeedsStdinSetsTheEnvironmentAndSaysHowTheChildEnded) {
  ChildSpec spec = shell("cat; echo \"$TSREPRO_CHILD_TEST-${HOME:-unset}\"; kill -SEGV $$");
  spec.in = Stream::pipe();
  spec.environment = {"TSREPRO_CHILD_TEST=set", "HOME"};
  const ChildRun run = run_child(spec, 60s, "fed\n");
  EXPECT_EQ(run.out, "fed\nset-unset\n");
  EXPECT_EQ(run.exit_code(), 128 + SIGSEGV);
  EXPECT_EQ(run.status_text(), "killed by SIGSEGV");

  const ChildRun missing = run_child({{"tsrepro-no-such-program"}, {}, "", Stream::null(), Stream::null()});
  EXPECT_FALSE(missing.started);
  EXPECT_NE(missing.status_text().find("tsrepro-no-such-program"), std::string::npos) << missing.status_text();
  EXPECT_EQ(find_program("tsrepro-no-such-program"), "");
  EXPECT_EQ(find_program("sh").empty(), false);
}

TEST(RunChild, WritesTheStreamsToFiles) {
  tsrepro_test::TempDir tmp;
  ChildSpec spec = shell("echo to-out; echo to-err >&2");
  spec.out = Stream::file(tmp / "log");
  spec.err = Stream::as_stdout();
  EXPECT_TRUE(run_child(spec).exited_with(0));
  EXPECT_EQ(tsrepro_test::read_text(tmp / "log"), "to-out\nto-err\n");
}

// Each Child reaps its own process and no other: the sweep's waitpid(-1) took whichever child of
// the process ended first, a worker's or the report's included.
TEST(Child, EachWaitReapsItsOwnChildOnly) {
  ChildSpec slow = shell("sleep 1; exit 3"), quick = shell("exit 5");
  slow.out = slow.err = quick.out = quick.err = Stream::null();
  Child a(slow), b(quick);
  EXPECT_EQ(b.wait_for(30s).value_or(-1) >> 8, 5);
  EXPECT_TRUE(a.running());
  const std::optional<int> status = a.wait_for(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(WEXITSTATUS(*status), 3);
}

TEST(Child, ItsDestructorKillsAndReapsAChildStillRunning) {
  pid_t pid = -1;
  {
    ChildSpec spec = shell("sleep 300");
    spec.own_process_group = true;
    Child child(spec);
    pid = child.pid();
    EXPECT_TRUE(child.running());
  }
  EXPECT_NE(::kill(pid, 0), 0) << "the child is still there (not even a zombie may stay)";
}

// The compile server's and a worker's pipes: a reader that has gone is a false, never a SIGPIPE
// that ends this process (its disposition left at the default, as the CLI leaves it).
TEST(WriteAll, AReaderThatHasGoneIsAFalseNotASignal) {
  struct sigaction before {
  }, default_action{};
  default_action.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &default_action, &before);
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  ::close(ends[0]);
  EXPECT_FALSE(write_all(ends[1], std::string(1 << 20, 'x')));
  ::close(ends[1]);
  ::sigaction(SIGPIPE, &before, nullptr);
}

// A process that is no child of ours (as the zygote's workers are not) registered as a KillTarget:
// a SIGTERM to the process that holds it reaches it. The holder is a fork of this test; the target
// a `sleep` whose parent shell has exited.
TEST(KillTarget, ATerminationSignalReachesAProcessThatIsNoChildOfOurs) {
  const ChildRun started = run_child(shell("sleep 300 >/dev/null 2>&1 & echo $!"), 30s);
  ASSERT_TRUE(started.exited_with(0)) << started.status_text();
  const pid_t target = static_cast<pid_t>(std::stol(started.out));
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = fork_copy();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    ::close(ready[0]);
    KillTarget registered(target, /*leads_group=*/false);
    end_children_on_termination_signals();
    if (::write(ready[1], "r", 1) != 1) ::_exit(3);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ::kill(holder, SIGTERM);
  const int status = reap(holder);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << wait_status_text(status);
  for (int i = 0; i < 250 && !gone(target); ++i) std::this_thread::sleep_for(20ms);
  const bool ended = gone(target);
  if (!ended) ::kill(target, SIGKILL);
  EXPECT_TRUE(ended) << "the registered process " << target << " outlived the holder's SIGTERM";
}

// Two local executors in one process, each with its own jobs: each job stands in for
// `tsrepro sweep-job DIR` by writing DIR/exit_code after a while (the contract of job.h), the
// first executor's slower than the second's. With waitpid(-1) the quick executor reaped the slow
// one's children and the slow one waited forever, or threw.
TEST(LocalExecutor, TwoInOneProcessEachReapTheirOwnJobs) {
  tsrepro_test::TempDir tmp;
  const fs::path job_program = tmp / "sweep-job.sh";
  tsrepro_test::write_text(job_program, "#!/bin/sh\nsleep \"$(cat \"$2/delay\")\"\necho 0 > \"$2/exit_code\"\n");
  fs::permissions(job_program, fs::perms::owner_all);
  const auto jobs_of = [&](const std::string& name, const char* delay, size_t count) {
    std::vector<Job> jobs;
    for (size_t i = 0; i < count; ++i) {
      const fs::path dir = tmp / (name + std::to_string(i));
      fs::create_directories(dir);
      tsrepro_test::write_text(dir / "delay", delay);
      jobs.push_back({dir.string(), {}, {}});
    }
    return jobs;
  };
  const std::vector<Job> slow = jobs_of("slow", "0.6", 3), quick = jobs_of("quick", "0.05", 6);
  std::unique_ptr<Executor> first = make_executor("local", {job_program.string(), tmp.path().string(), {"jobs=2"}}),
                            second = make_executor("local", {job_program.string(), tmp.path().string(), {"jobs=2"}});
  size_t slow_done = 0, quick_done = 0;
  std::thread slow_thread([&] { first->run(slow, [&](size_t done, size_t) { slow_done = done; }); });
  second->run(quick, [&](size_t done, size_t) { quick_done = done; });
  slow_thread.join();
  EXPECT_EQ(slow_done, slow.size());
  EXPECT_EQ(quick_done, quick.size());
  for (const std::vector<Job>* jobs : {&slow, &quick})
    for (const Job& job : *jobs) EXPECT_TRUE(job_finished(job.dir)) << job.dir;
}

}  // namespace
}  // namespace tsrepro
