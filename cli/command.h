#pragma once
// A `tsrepro` subcommand. Each lives in one file, cli/<name>_command.cpp: its flags, the checks
// CLI11 cannot make, and its body. main.cpp only lists them (all_commands) and dispatches.
// A command returns the process exit code; bad input throws tsrepro::UserError (exit 2).

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tsrepro::cli {

// What a command gets besides its own flags.
struct Invocation {
  std::vector<std::string> libraries;  // --load-library: loaded before any command runs
  std::string command_line;            // as typed, for the reproducers' headers
};

class Command {
 public:
  virtual ~Command() = default;
  // Adds the subcommand and its flags to `app`. The flags' values live in the command;
  // --load-library goes into `invocation`.
  virtual CLI::App* add_to(CLI::App& app, Invocation& invocation) = 0;
  // Called after parsing: throws CLI::ParseError for what CLI11 cannot check itself.
  virtual void check_flags() const {}
  // Whether it runs graphs in worker processes: their zygote starts before torch runs anything.
  virtual bool runs_workers() const { return false; }
  // The case directory it reads, if any: the libraries its case.json records are loaded with
  // --load-library's, before anything else.
  virtual std::string case_dir() const { return ""; }
  virtual int run(const Invocation& invocation) = 0;
};

std::unique_ptr<Command> make_import_command();
std::unique_ptr<Command> make_after_command();
std::unique_ptr<Command> make_run_command();
std::unique_ptr<Command> make_explain_command();
std::unique_ptr<Command> make_minify_command();
std::unique_ptr<Command> make_report_command();
std::unique_ptr<Command> make_sweep_command();
std::unique_ptr<Command> make_sweep_job_command();

// Every subcommand, in the order `tsrepro --help` lists them.
inline std::vector<std::unique_ptr<Command>> all_commands() {
  std::vector<std::unique_ptr<Command>> commands;
  for (auto make : {make_import_command, make_after_command, make_run_command, make_explain_command,
                    make_minify_command, make_report_command, make_sweep_command, make_sweep_job_command})
    commands.push_back(make());
  return commands;
}

// --load-library on every command that loads or runs graphs (repeatable; TSREPRO_LOAD_LIBRARY too).
void add_load_library_flag(CLI::App& cmd, std::vector<std::string>& libraries);

// A command's result as one JSON object: `--json` prints it on stdout, `--json-file FILE` writes it
// to FILE (atomically: FILE is whole or absent), which is how a sweep's jobs hand their result to the
// sweep (sweep/job.h) whatever else the command prints. `what` completes "print ... as one JSON object".
struct JsonResultFlags {
  bool print = false;
  std::string file;
  bool wanted() const { return print || !file.empty(); }
  // Prints and/or writes `result` as the flags ask.
  void give(const std::string& result_json) const;
};
void add_json_result_flags(CLI::App& cmd, JsonResultFlags& flags, const std::string& what);

}  // namespace tsrepro::cli
