#pragma once
// The one way tsrepro runs another program (issue 44): argv and environment in; each standard
// stream inherited, dropped, a file, or a pipe; a time limit that kills the child's whole process
// group (what it started too); and a wait that reaps this child alone, never another part's.
//
// Why our own and not Boost.Process, which the design card named and which tsrepro used until
// issue 44 (Debian 12 ships Boost 1.74, Debian 13 1.83):
//   - reading a child's stdout and stderr both to their end needs Boost.Asio there (async_pipe);
//     reading one ipstream and then the other deadlocks on a child that fills the second pipe
//     first (tests/child_process_test.cpp keeps that case);
//   - the zygote (runner/worker/zygote.h) forks copies of this process without exec, which
//     Boost.Process does not do; its workers must still be ended like every other child, so the
//     registry of what a termination signal reaches (KillTarget below) has to be ours anyway;
//   - "the first of these children to end", which the sweep's local executor waits for, is not
//     in its v1 API (only per-child wait/running), and a waitpid(-1) beside it reaps children
//     that other parts of the process started;
//   - 1.74's child::wait_for was seen here to wait its whole timeout for a child that had already
//     exited; child::running(), a non-blocking wait, polled, would do instead: a nuisance, not a
//     reason on its own;
//   - v2 (Boost 1.80 on) replaces v1 with another API, and later releases deprecate v1: one code
//     base for both Debian lines would be written against the old one.
// What it does offer (a child in a process group of its own through bp::group, an environment,
// a working directory) is a few lines of posix_spawn here. posix_spawn and poll do all of it in
// one small file.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace tsrepro {

// Where one standard stream of a child goes (stdin: where it comes from).
struct Stream {
  enum class Kind {
    Inherit,   // this process's own
    Null,      // /dev/null
    File,      // `path`: written (truncated, or appended to), or read for stdin
    Pipe,      // run_child: captured (stdin: fed `input`); Child: a pipe this process holds
    AsStdout,  // stderr only: wherever stdout goes
  };
  Kind kind = Kind::Inherit;
  std::string path;
  bool append = false;

  static Stream inherit() { return {}; }
  static Stream null() { return {Kind::Null, "", false}; }
  static Stream file(std::string path, bool append = false) { return {Kind::File, std::move(path), append}; }
  static Stream pipe() { return {Kind::Pipe, "", false}; }
  static Stream as_stdout() { return {Kind::AsStdout, "", false}; }
};

struct ChildSpec {
  // argv[0]: a path, or a program name looked up on PATH.
  std::vector<std::string> argv;
  // NAME=VALUE entries set in the child's environment over this process's; a bare NAME unsets it.
  std::vector<std::string> environment;
  std::string working_dir;  // empty: this process's
  Stream in = Stream::null(), out = Stream::inherit(), err = Stream::inherit();
  // The child leads a process group of its own, so that one signal ends it and everything it
  // started. A child in our group instead gets the terminal's Ctrl-C with us. run_child with a
  // time limit always gives it its own group.
  bool own_process_group = false;
};

// How a child ended, as run_child saw it.
struct ChildRun {
  bool started = false;
  std::string start_error;  // why it did not start (the program not found, ...)
  bool timed_out = false;   // killed at the time limit, with its process group
  int wait_status = 0;      // waitpid's status where it ended by itself
  std::string out, err;     // what it wrote to a Stream::pipe()

  bool finished() const { return started && !timed_out; }
  bool exited_with(int code) const;
  // Its exit status, or 128 + the signal that ended it (a shell's $?); -1 where it did not finish.
  int exit_code() const;
  // "exit status 3", "killed by SIGSEGV", "no answer within 120 s", "could not start: ...".
  std::string status_text() const;
};

// Runs `spec` to its end, or to `time_limit` (then its process group is killed). Streams given as
// Stream::pipe() are read while it runs, both at once (no deadlock on a child that fills one pipe
// before it writes the other), and stdin as a pipe is fed `input` and closed.
ChildRun run_child(const ChildSpec& spec, std::optional<std::chrono::duration<double>> time_limit = std::nullopt,
                   const std::string& input = "");

// A process that a termination signal to this one must reach (see below), registered for as
// long as this object lives. Every Child holds one; the zygote's workers, which are the zygote's
// children and not this process's, are registered through one too (runner/worker/worker_client.cpp),
// so that a SIGTERM to the CLI reaches a worker's process group (its compile server with it), as
// it reaches an exec'd tsrepro-runner.
class KillTarget {
 public:
  KillTarget() = default;
  // `pid`, and its process group where it leads one.
  KillTarget(pid_t pid, bool leads_group);
  ~KillTarget() { release(); }
  KillTarget(KillTarget&& other) noexcept;
  KillTarget& operator=(KillTarget&& other) noexcept;
  KillTarget(const KillTarget&) = delete;
  KillTarget& operator=(const KillTarget&) = delete;

  // SIGKILL to it, and to its group where it leads one (ESRCH where it is gone: nothing happens).
  void kill() const;
  // No longer passed a termination signal: it has ended (its pid may be reused).
  void release();

 private:
  pid_t pid_ = -1;
  bool leads_group_ = false;
};

// A child that runs while this process works: a server talked to over pipes, a job among others.
// Destroying one that still runs kills it (its group, where it has one) and reaps it: a Child never
// outlives its owner as a zombie.
class Child {
 public:
  explicit Child(const ChildSpec& spec);  // throws std::runtime_error naming the program where it cannot start
  ~Child();
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // This side of a Stream::pipe() stream: write to stdin, read stdout and stderr; -1 otherwise.
  int stdin_fd() const { return in_; }
  int stdout_fd() const { return out_; }
  int stderr_fd() const { return err_; }
  void close_stdin();

  // Its wait status once it has ended (reaped then); nullopt while it runs.
  std::optional<int> try_wait();
  int wait();
  std::optional<int> wait_for(std::chrono::duration<double> limit);
  bool running() { return !try_wait().has_value(); }
  // SIGKILL to it, and to its process group where it leads one.
  void kill();

 private:
  friend ChildRun run_child(const ChildSpec&, std::optional<std::chrono::duration<double>>, const std::string&);
  void release_pipes();
  void release();

  pid_t pid_ = -1;
  KillTarget target_;  // registered while it runs
  int in_ = -1, out_ = -1, err_ = -1;
  std::optional<int> status_;
};

// Writes all of `data` to a child's pipe (or any descriptor), through interrupted and short
// writes; false where the reader has gone. Never raises SIGPIPE, whatever this process's
// disposition of it: the signal is blocked in this thread for each write (process-wide
// SIG_IGN would also change what every other write of the process does).
bool write_all(int fd, const std::string& data);

// From here on, a SIGINT, SIGTERM or SIGHUP to this process is passed on, as SIGTERM, to every
// Child it runs (to the child's process group where it leads one) before the signal ends this
// process as it would have. For the CLI: a Ctrl-C or a scheduler's SIGTERM must not leave a --test
// command or a sweep's jobs running on, orphaned. A copy forked after it is installed keeps it
// until it execs: the CLI installs it after the zygote's fork.
void end_children_on_termination_signals();

// The worker zygote's two needs (runner/worker/zygote.h), here so that fork and wait live in this
// module alone: a copy of this process that runs on without exec (fork's result: 0 in the copy,
// its pid here, -1 where it failed), and the reaping of one child by pid (blocks until it ends;
// its wait status, -1 where it is no child of this process).
pid_t fork_copy();
int reap(pid_t pid);

// `name` looked up on PATH as execvp would; empty where it is not there. A name with a slash is
// returned as it is where it exists.
std::string find_program(const std::string& name);

// "exit status 3", "killed by SIGSEGV": a wait status in words.
std::string wait_status_text(int wait_status);

}  // namespace tsrepro
