#pragma once
// Helpers of the command-line tests: run the real `tsrepro` executable as a subprocess (own
// process group, watchdog, captured stdout/stderr, stray-worker check), temporary directories,
// and the expectations several test files share. Torch-free on purpose.

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

extern char** environ;

namespace cli_test {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Args = std::vector<std::string>;

inline const std::string kSourceDir = TSREPRO_SOURCE_DIR;
inline const std::string kTsrepro = std::string(TSREPRO_BINARY_DIR) + "/tsrepro";
inline const std::string kModels = kSourceDir + "/examples/models/";
inline const std::string kFixtures = kSourceDir + "/tests/fixtures/";

// ------------------------------------------------------------------------------------------------
// Small file helpers.

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Names in a directory (not recursive), sorted; empty when it does not exist.
inline std::set<std::string> list_dir(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.insert(it->path().filename().string());
  return names;
}

inline std::string join(const std::set<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return "{" + s + "}";
}

// Hidden siblings an interrupted atomic write would leave: ".NAME.tmp-*".
inline std::vector<std::string> temp_siblings(const fs::path& dir, const std::string& name) {
  std::vector<std::string> found;
  for (const std::string& n : list_dir(dir))
    if (n.rfind("." + name + ".tmp-", 0) == 0) found.push_back(n);
  return found;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tsrepro-cli-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + std::string(std::strerror(errno)));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// ------------------------------------------------------------------------------------------------
// Running tsrepro.

// Processes of a process group that are still alive (zombies excluded: PID 1 in a container need
// not reap orphans).
inline std::vector<pid_t> live_members_of_group(pid_t pgid) {
  std::vector<pid_t> members;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return members;
  while (const dirent* entry = ::readdir(proc)) {
    if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
    const std::string stat = read_text(std::string("/proc/") + entry->d_name + "/stat");
    const auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(close_paren + 1));
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (!(fields >> state >> ppid >> pgrp)) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') members.push_back(static_cast<pid_t>(std::atol(entry->d_name)));
  }
  ::closedir(proc);
  return members;
}

struct Result {
  Args args;
  bool exited = false;  // WIFEXITED
  int exit_code = -1;   // WEXITSTATUS when exited
  int term_signal = 0;  // WTERMSIG when killed by a signal
  bool watchdog_fired = false;
  size_t stray_processes = 0;  // live processes left in the child's process group after it ended
  std::string out, err;
  double seconds = 0;

  std::string describe() const {
    std::ostringstream s;
    s << "command: tsrepro";
    for (size_t i = 1; i < args.size(); ++i) s << " '" << args[i] << "'";
    s << "\n";
    if (exited)
      s << "exit status: " << exit_code << "\n";
    else
      s << "killed by signal " << term_signal << (watchdog_fired ? " (test watchdog)" : "") << "\n";
    s << "stdout (" << out.size() << " bytes):\n" << out.substr(0, 4000) << "\nstderr (" << err.size() << " bytes):\n"
      << err.substr(0, 4000) << "\n";
    return s.str();
  }

  json stdout_json() const { return json::parse(out); }  // throws unless stdout is exactly one JSON value
};

struct RunOptions {
  // A constructor, not an aggregate: callers write {tmpdir}, {tmpdir, watchdog} or all three.
  RunOptions(std::string tmpdir = "", double watchdog_s = 120, std::vector<std::string> env = {})
      : tmpdir(std::move(tmpdir)), watchdog_s(watchdog_s), env(std::move(env)) {}
  std::string tmpdir;            // TMPDIR for the child ("" = inherit)
  double watchdog_s;             // SIGKILL the child's process group after this long
  std::vector<std::string> env;  // extra KEY=VALUE for the child (TSREPRO_* are not inherited)
};

inline std::string make_capture_file(int* fd) {
  std::string pattern = (fs::temp_directory_path() / "tsrepro-cli-capture-XXXXXX").string();
  *fd = ::mkstemp(pattern.data());
  if (*fd < 0) throw std::runtime_error("mkstemp failed: " + std::string(std::strerror(errno)));
  return pattern;
}

inline Result run_cmd(const std::string& program, const Args& tail, const RunOptions& options = {}) {
  Result r;
  r.args.push_back(program);
  r.args.insert(r.args.end(), tail.begin(), tail.end());

  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    if (kv.rfind("TSREPRO_", 0) == 0) continue;
    if (!options.tmpdir.empty() && kv.rfind("TMPDIR=", 0) == 0) continue;
    env.push_back(kv);
  }
  if (!options.tmpdir.empty()) env.push_back("TMPDIR=" + options.tmpdir);
  env.insert(env.end(), options.env.begin(), options.env.end());

  std::vector<char*> argv, envp;
  for (std::string& a : r.args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);

  int out_fd = -1, err_fd = -1;
  const std::string out_path = make_capture_file(&out_fd);
  const std::string err_path = make_capture_file(&err_fd);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  const auto started = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int spawn_error = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out_fd);
  ::close(err_fd);
  if (spawn_error != 0) {
    ::unlink(out_path.c_str());
    ::unlink(err_path.c_str());
    r.err = "posix_spawn(" + program + ") failed: " + std::strerror(spawn_error);
    return r;
  }

  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (elapsed > options.watchdog_s && !r.watchdog_fired) {
      r.watchdog_fired = true;
      ::kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  r.exited = WIFEXITED(status);
  if (r.exited) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);

  // A worker may take a moment to notice its parent is gone; give it a second, then clean up.
  for (int i = 0; i < 100 && !live_members_of_group(pid).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  r.stray_processes = live_members_of_group(pid).size();
  if (r.stray_processes > 0) ::kill(-pid, SIGKILL);

  r.out = read_text(out_path);
  r.err = read_text(err_path);
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  return r;
}

inline Result tsrepro(const Args& args, const RunOptions& options = {}) { return run_cmd(kTsrepro, args, options); }

// Configures (Release; this build's libtorch where the test knows it) and builds a CMake
// project. Returns the failing step's result, or the build's.
inline Result cmake_build(const std::string& source, const std::string& build, std::vector<std::string> extra = {}) {
  std::vector<std::string> configure = {"-S", source, "-B", build, "-DCMAKE_BUILD_TYPE=Release"};
#ifdef TSREPRO_TORCH_DIR
  configure.push_back(std::string("-DTorch_DIR=") + TSREPRO_TORCH_DIR);
#endif
  configure.insert(configure.end(), extra.begin(), extra.end());
  const Result cmake = run_cmd("/usr/bin/cmake", configure, {"", 300});
  if (cmake.exit_code != 0) return cmake;
  return run_cmd("/usr/bin/cmake", {"--build", build, "-j", "2"}, {"", 600});
}

// Runs several tsrepro commands concurrently (a few at a time); results in order.
inline std::vector<Result> tsrepro_all(const std::vector<Args>& commands, const RunOptions& options = {}) {
  const size_t width = std::max(2u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<Result> results(commands.size());
  for (size_t begin = 0; begin < commands.size(); begin += width) {
    std::vector<std::future<Result>> batch;
    for (size_t i = begin; i < std::min(commands.size(), begin + width); ++i)
      batch.push_back(std::async(std::launch::async, [&, i] { return tsrepro(commands[i], options); }));
    for (size_t i = 0; i < batch.size(); ++i) results[begin + i] = batch[i].get();
  }
  return results;
}

// ------------------------------------------------------------------------------------------------
// Shared expectations.

// The verdict JSON of `run --json`, after checking the process ended with `exit_code`.
inline json expect_verdict(const Result& r, int exit_code, const std::string& status) {
  SCOPED_TRACE(r.describe());
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, exit_code);
  EXPECT_EQ(r.stray_processes, 0u) << "a worker outlived tsrepro\n";
  json j;
  try {
    j = r.stdout_json();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "stdout is not exactly one JSON object: " << e.what() << "\n";
    return json::object();
  }
  EXPECT_TRUE(j.is_object());
  if (!j.is_object()) return json::object();
  for (const char* key : {"status", "phase", "signature", "message", "outputs", "seconds"})
    EXPECT_TRUE(j.contains(key)) << "verdict lacks \"" << key << "\"\n";
  EXPECT_EQ(j.value("status", ""), status);
  if (j.contains("outputs")) {
    EXPECT_TRUE(j["outputs"].is_array());
  }
  return j;
}

inline void expect_pass(const Result& r) {
  const json j = expect_verdict(r, 0, "pass");
  if (!j.contains("outputs") || !j["outputs"].is_array()) return;
  EXPECT_FALSE(j["outputs"].empty()) << "a passing verdict compares at least one output\n" << r.describe();
  for (const json& o : j["outputs"]) EXPECT_TRUE(o.value("ok", false)) << o.dump() << "\n" << r.describe();
  EXPECT_EQ(j.value("signature", "?"), "") << r.describe();
}

// Bad input: exit 2, nothing on stdout, exactly one stderr line "tsrepro: error: ..." that names
// what is at fault.
inline void expect_bad_input(const Result& r, const std::string& must_mention) {
  SCOPED_TRACE(r.describe());
  EXPECT_TRUE(r.exited) << "tsrepro did not exit normally\n";
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("tsrepro: error: ", 0), 0u) << "stderr should start with \"tsrepro: error: \"\n";
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr should be exactly one line\n";
  if (!r.err.empty()) {
    EXPECT_EQ(r.err.back(), '\n');
  }
  EXPECT_NE(r.err.find(must_mention), std::string::npos) << "stderr should name '" << must_mention << "'\n";
  EXPECT_EQ(r.stray_processes, 0u);
}

// `tsrepro import` that must fail as bad input and leave `dir` exactly as it was (no CASE, no
// ".CASE.tmp-*" sibling, no scratch directories: TMPDIR points at `dir`).
inline void expect_import_rejected(const TempDir& dir, const Args& args, const std::string& case_path,
                            const std::string& must_mention) {
  const std::set<std::string> before = list_dir(dir.path());
  const Result r = tsrepro(args, {dir.path().string()});
  expect_bad_input(r, must_mention);
  EXPECT_FALSE(fs::exists(fs::symlink_status(case_path))) << case_path << " was left behind\n" << r.describe();
  const fs::path parent = fs::path(case_path).parent_path();
  EXPECT_TRUE(temp_siblings(parent, fs::path(case_path).filename().string()).empty())
      << "hidden temp sibling left in " << parent << ": " << join(list_dir(parent));
  EXPECT_EQ(list_dir(dir.path()), before) << "the directory changed\n" << r.describe();
}

inline Args import_args(const std::string& source, const std::string& inputs, const std::string& out) {
  return {"import", source, "--inputs", inputs, "-o", out};
}

inline Args import_spec_args(const std::string& source, const std::string& spec, const std::string& out) {
  return {"import", source, "--input-spec", spec, "-o", out};
}

inline json read_case_json(const std::string& case_dir) {
  try {
    return json::parse(read_text(fs::path(case_dir) / "case.json"));
  } catch (const std::exception& e) {
    ADD_FAILURE() << case_dir << "/case.json does not parse: " << e.what();
    return json::object();
  }
}

// Whether the Debian python at /usr/bin/python3 can import torch (to write inputs fixtures).
inline bool system_python_has_torch() {
  static const bool has = [] {
    const Result r = run_cmd("/usr/bin/python3", {"-c", "import torch"});
    return r.exited && r.exit_code == 0;
  }();
  return has;
}

// A case imported once and shared read-only by several runs (per test suite where a fixture holds
// it: under ctest, each test is its own process and imports it again).
struct SharedCase {
  std::unique_ptr<TempDir> dir;
  std::string path;
  Result import;

  void create(const Args& import_tail_without_output) {
    dir = std::make_unique<TempDir>();
    path = *dir / "case";
    Args args = import_tail_without_output;
    args.push_back("-o");
    args.push_back(path);
    import = tsrepro(args);
  }
  void destroy() { dir.reset(); }
  bool ok() const { return import.exited && import.exit_code == 0 && fs::exists(fs::path(path) / "case.json"); }
};

}  // namespace cli_test
