// The env-var workflow's files: run directory, subject case directories, minifier launcher, and
// the minifier subprocess.

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <mutex>
#include <sstream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "repro/after/dump.h"
#include "process/child_process.h"
#include "repro/shell_literal.h"
#include "repro/template_fill.h"
#include "repro/templates_after.h"  // generated from repro/templates/after/
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

namespace fs = std::filesystem;

namespace tsrepro {
namespace {

std::string self_executable() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("?") : self.string();
}

// Everything after the case directory in the minify command, one argument each.
std::vector<std::string> minify_arguments(const std::string& case_dir, const Subject& subject,
                                          const std::optional<Verdict>& failure) {
  std::vector<std::string> args = {"minify", case_dir, "--backend", subject.run.backend};
  for (const auto& [key, value] : subject.run.backend_options) {
    args.push_back("--backend-opt");
    args.push_back(key + "=" + value);
  }
  args.push_back("-o");
  args.push_back(case_dir + "-minified");
  // Accuracy failures are kept as such; anything else must stay the same failure.
  if (failure && failure->status == Status::Accuracy) args.push_back("--accuracy");
  return args;
}

std::string workflow_command_line() {
  return "TSREPRO_AFTER workflow in " + self_executable() + " (pid " + std::to_string(::getpid()) + ")";
}

}  // namespace

spdlog::logger& after_log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto made = spdlog::stderr_color_mt("tsrepro.after");
    made->set_pattern("[tsrepro %H:%M:%S] [%^%l%$] %v");
    made->set_level(spdlog::level::info);
    if (const char* level = std::getenv("TSREPRO_LOG")) made->set_level(spdlog::level::from_str(level));
    return made;
  }();
  return *logger;
}

std::string run_directory(const std::string& root) {
  bool made_now = false;
  const std::string dir = claim_run_directory(root, made_now);
  if (made_now) after_log().info("this run's cases go to {}", dir);
  return dir;
}

std::string write_subject(const std::string& run_dir, const Subject& subject, const std::optional<Verdict>& failure,
                          int level) {
  const std::string dir = (fs::path(run_dir) / subject.name).string();
  Case c = subject.c;
  c.expected.reset();
  if (failure) c.expected = ExpectedFailure{subject.run, failure->status, failure->signature};
  c.provenance["source"] = "TSREPRO_AFTER";
  c.provenance["subject"] = subject.name;
  c.provenance["program"] = self_executable();
  c.provenance["pid"] = ::getpid();

  std::map<std::string, std::string> extra;
  if (failure) {
    extra = reproducer_files(c, ReproSettings{*c.expected, workflow_command_line()});
  }
  if (level >= 2 || !failure)
    extra["minify.sh"] = fill_template(templates::after_minify, {{"COMMAND", minify_command(dir, subject, failure)}});
  write_case(c, dir, /*replace=*/true, extra);
  if (extra.count("minify.sh")) {
    std::error_code ignored;  // not executable is still `sh minify.sh`
    fs::permissions(fs::path(dir) / "minify.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add, ignored);
  }
  return dir;
}

std::string minify_command(const std::string& case_dir, const Subject& subject, const std::optional<Verdict>& failure) {
  std::string command = shell_quoted(tsrepro_executable());
  for (const std::string& arg : minify_arguments(case_dir, subject, failure)) command += " " + shell_quoted(arg);
  return command;
}

int run_minifier(const std::string& case_dir, const Subject& subject, const std::optional<Verdict>& failure) {
  const std::string log_path = case_dir + "-minified.log";
  after_log().info("minifying {} in a subprocess (log: {})", case_dir, log_path);
  ChildSpec spec;
  spec.argv = {tsrepro_executable()};
  for (std::string& argument : minify_arguments(case_dir, subject, failure)) spec.argv.push_back(std::move(argument));
  spec.out = Stream::file(log_path);
  spec.err = Stream::as_stdout();
  const ChildRun run = run_child(spec);
  if (!run.started) {
    after_log().error("could not start the minifier {}: {}", tsrepro_executable(), run.start_error);
    return -1;
  }
  const int exit_code = run.exit_code();
  const std::string repro = case_dir + "-minified/minified/repro.py";
  if (exit_code == 0)
    after_log().info("minified repro: {}   (run: /usr/bin/python3 {})", repro, repro);
  else if (exit_code == 3)
    after_log().warn("the minifier did not see {} fail on its own (see {}): the failure may need the program's state",
                     case_dir, log_path);
  else
    after_log().warn("the minifier exited {} (see {})", exit_code, log_path);
  return exit_code;
}

std::string tsrepro_executable() {
  if (const char* env = std::getenv("TSREPRO_BIN")) return env;
  for (const char* dir : {TSREPRO_BUILD_BIN_DIR, TSREPRO_INSTALL_BIN_DIR}) {
    const fs::path candidate = fs::path(dir) / "tsrepro";
    if (fs::exists(candidate)) return candidate.string();
  }
  const std::string found = find_program("tsrepro");
  return found.empty() ? std::string("tsrepro") : found;
}

}  // namespace tsrepro
